//! The lock timeline and the ledger turned into `section`, `lease` and `fault` lines.
//!
//! A section opens at its `enter` (the stock it read) and closes at its owner's next `exit`
//! (how it ended); a fenced read refused at the enter (`stale`) is a section refused on the
//! spot. A section that sold is matched to its ledger order by instance and enter time (the
//! ledger's `enter_us` is the same Redis clock reading as the timeline's enter), which gives
//! its order id, buyer and quantity. Orders with no section on the timeline (its cap dropped
//! them) still become sections, from the ledger alone. A lock-free deduct is a section of no
//! length.
//!
//! A lease is the lock store's own where it stamped one (`lease` entries: `grant`, `renew`,
//! `release`, `refused_release`, each at the store's `TIME` with the deadline the key then
//! carried; `src/lock/lease_stamp.rs`, on the timeline, or a lab lock's beside its lock in the
//! lock store), and is written as observed. A locked section whose
//! owner has no stamped lease (a tier whose store stamps none yet, a grant the timeline's cap
//! dropped) gets one derived from the section, and the line says so (`source`).

use std::collections::HashMap;

use serde_json::Value;

use oversell_api::history::{Fault, Lease, LeaseSource, Line, Outcome, Renewal, Section};

/// The lines of every section, lease and fault; `ttl_us`: the lease's length, for a tier whose
/// lock has one.
pub fn lines(entries: &[Value], ledger: &[Value], ttl_us: Option<i64>) -> Vec<Line> {
    let mut sections: Vec<Section> = Vec::new();
    let mut open: HashMap<String, Vec<usize>> = HashMap::new();
    let mut renewals: HashMap<String, Vec<i64>> = HashMap::new();
    let mut faults: Vec<Fault> = Vec::new();
    let mut stamped = Stamped::default();
    for entry in entries {
        let field = |name: &str| entry.get(name).and_then(Value::as_str).unwrap_or("");
        let Ok(at) = field("at_us").parse::<i64>() else {
            continue;
        };
        let owner = field("owner").to_owned();
        let instance = field("instance").to_owned();
        let fence = field("fence").parse::<u64>().ok();
        match field("kind") {
            "enter" => {
                open.entry(owner.clone()).or_default().push(sections.len());
                sections.push(section(
                    owner,
                    instance,
                    at,
                    fence,
                    field("stock").parse().ok(),
                ));
            }
            "exit" => {
                let Some(i) = open.get_mut(&owner).and_then(Vec::pop) else {
                    continue;
                };
                let s = &mut sections[i];
                s.exit_us = Some(at);
                s.outcome = match field("outcome") {
                    "sold" => Outcome::Sold,
                    "sold_out" => Outcome::SoldOut,
                    "stale" => Outcome::StaleRefused,
                    "reset" => Outcome::Reset,
                    _ => Outcome::Open,
                };
            }
            "stale" => {
                let mut s = section(owner, instance, at, fence, None);
                s.exit_us = Some(at);
                s.outcome = Outcome::StaleRefused;
                sections.push(s);
            }
            "deduct" => {
                let left = field("stock").parse::<i64>().ok();
                let mut s = section(format!("{DEDUCT}{}", field("id")), instance, at, None, None);
                s.exit_us = Some(at);
                s.wrote = left;
                s.outcome = Outcome::Sold;
                sections.push(s);
            }
            "renew" => renewals.entry(owner).or_default().push(at),
            "lease" => stamped.add(
                owner,
                field("lease"),
                at,
                field("deadline_us").parse::<i64>().ok(),
            ),
            "fault" => {
                let ms = field("armed")
                    .split('|')
                    .nth(1)
                    .and_then(|m| m.parse::<i64>().ok());
                faults.push(Fault {
                    kind: field("fault").to_owned(),
                    target: instance,
                    from_us: at,
                    to_us: ms.filter(|ms| *ms > 0).map(|ms| at + ms * 1000),
                });
            }
            "store_fault" => faults.push(Fault {
                kind: field("fault").to_owned(),
                target: field("node").to_owned(),
                from_us: at,
                to_us: None,
            }),
            "partition" => {
                let ms = field("ms").parse::<i64>().ok();
                faults.push(Fault {
                    kind: "partition".into(),
                    target: field("isolate").to_owned(),
                    from_us: at,
                    to_us: ms.map(|ms| at + ms * 1000),
                });
            }
            _ => {}
        }
    }
    // Every section read from the timeline took the lock (a deduct took none); those made
    // from the ledger alone come after them.
    let locked = sections.len();
    settle_sales(&mut sections, ledger);
    for s in sections.iter_mut().filter(|s| s.exit_us.is_none()) {
        let struck = |f: &&Fault| f.kind.starts_with("crash") && f.target == s.instance;
        if faults
            .iter()
            .filter(struck)
            .any(|f| f.from_us >= s.enter_us)
        {
            s.outcome = Outcome::Crashed;
        }
    }
    let mut lines: Vec<Line> = Vec::with_capacity(sections.len() * 2 + faults.len());
    let observed: std::collections::HashSet<String> =
        stamped.leases.iter().map(|l| l.owner.clone()).collect();
    lines.extend(stamped.leases.into_iter().map(Line::Lease));
    if let Some(ttl_us) = ttl_us {
        let leased = sections[..locked]
            .iter()
            .filter(|s| s.exit_us != Some(s.enter_us) || s.read.is_some())
            .filter(|s| !s.owner.starts_with(DEDUCT) && !observed.contains(&s.owner));
        lines.extend(leased.map(|s| {
            let renewed = renewals.get(&s.owner).map(Vec::as_slice).unwrap_or(&[]);
            Line::Lease(lease(s, renewed, ttl_us))
        }));
    }
    lines.extend(sections.into_iter().map(Line::Section));
    lines.extend(faults.into_iter().map(Line::Fault));
    lines
}

/// The owner a lock-free deduct's section is given: it took no lock, so it has no lease.
const DEDUCT: &str = "deduct-";

/// A section's lease, derived: granted at its enter, a TTL from then and from each renewal
/// after it, released at its exit.
fn lease(s: &Section, renewed: &[i64], ttl_us: i64) -> Lease {
    Lease {
        owner: s.owner.clone(),
        granted_us: s.enter_us,
        deadline_us: Some(s.enter_us + ttl_us),
        renewals: renewed
            .iter()
            .filter(|at| **at >= s.enter_us && s.exit_us.is_none_or(|exit| **at <= exit))
            .map(|at| Renewal {
                renew_us: *at,
                deadline_us: at + ttl_us,
            })
            .collect(),
        released_us: s.exit_us,
        refused_release_us: None,
        source: LeaseSource::Derived,
    }
}

/// The leases the lock store stamped, in the order of their grants.
#[derive(Default)]
struct Stamped {
    leases: Vec<Lease>,
    /// Each owner's latest lease.
    current: HashMap<String, usize>,
}

impl Stamped {
    /// One `lease` entry: a grant opens the owner's lease, the rest go on its latest (one with
    /// no grant before it, a holder's from before the room's reset, is left out).
    fn add(&mut self, owner: String, event: &str, at: i64, deadline: Option<i64>) {
        if event == "grant" {
            self.current.insert(owner.clone(), self.leases.len());
            self.leases.push(Lease {
                owner,
                granted_us: at,
                deadline_us: deadline,
                renewals: Vec::new(),
                released_us: None,
                refused_release_us: None,
                source: LeaseSource::Store,
            });
            return;
        }
        let Some(lease) = self.current.get(&owner).map(|&i| &mut self.leases[i]) else {
            return;
        };
        match (event, deadline) {
            ("renew", Some(deadline_us)) => lease.renewals.push(Renewal {
                renew_us: at,
                deadline_us,
            }),
            ("release", _) => lease.released_us = Some(at),
            ("refused_release", _) => {
                lease.refused_release_us.get_or_insert(at);
            }
            _ => {}
        }
    }
}

fn section(
    owner: String,
    instance: String,
    at: i64,
    fence: Option<u64>,
    read: Option<i64>,
) -> Section {
    Section {
        owner,
        instance,
        enter_us: at,
        exit_us: None,
        fence,
        order_id: None,
        buyer: None,
        qty: None,
        read,
        wrote: None,
        outcome: Outcome::Open,
    }
}

/// Gives every sold section its order (by instance and enter time; a deduct by instance and
/// time), and makes a section of every order left over.
fn settle_sales(sections: &mut Vec<Section>, ledger: &[Value]) {
    let mut by_enter: HashMap<(String, i64), usize> = HashMap::new();
    for (i, s) in sections.iter().enumerate() {
        if s.outcome == Outcome::Sold {
            by_enter.insert((s.instance.clone(), s.enter_us), i);
        }
    }
    for order in ledger {
        let text = |name: &str| order.get(name).and_then(Value::as_str).map(str::to_owned);
        let int = |name: &str| order.get(name).and_then(Value::as_i64);
        let instance = text("instance").unwrap_or_default();
        let qty = int("qty").map_or(1, |q| q.max(1) as u32);
        let enter = int("enter_us").or_else(|| int("exit_us"));
        let found = enter.and_then(|at| by_enter.remove(&(instance.clone(), at)));
        let s = match found {
            Some(i) => &mut sections[i],
            None => {
                let at = enter.unwrap_or(0);
                let mut s = section(
                    format!("order-{}", text("order_id").unwrap_or_default()),
                    instance,
                    at,
                    order.get("fence").and_then(Value::as_u64),
                    None,
                );
                s.exit_us = int("exit_us");
                s.outcome = Outcome::Sold;
                sections.push(s);
                let last = sections.len() - 1;
                &mut sections[last]
            }
        };
        s.order_id = text("order_id");
        s.buyer = text("buyer");
        s.qty = Some(qty);
        if s.wrote.is_none() {
            s.wrote = s.read.map(|read| read - i64::from(qty));
        }
    }
}
