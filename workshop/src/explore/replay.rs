//! `loadtest explore --replay --url U`: the search's shortest break run on the real fleet.
//! The schedule is read for the fleet's own faults (`counterpart.rs`); the run is a chapter
//! made on the spot (the tier, the model's lease and stock, its buyers, that one fault) and
//! run by the chapters' own runner, so it is prepared, armed, fired, recorded and disarmed
//! as every chapter is; its history goes to the checker.

use explore::judge::Property;
use explore::lock::LockSource;
use explore::sale::Machine;
use explore::search::Found;
use oversell_api::{Tier, WaitStrategy};
use oversell_client::admin::{AdminClient, TOKEN_HINT};
use oversell_client::http::preflight;
use oversell_client::target::Targets;
use serde::Serialize;

use super::counterpart::{self, Plan};
use crate::scenario::{Check, Expect, Runner, Scenario, StoreSetup, BASE};

/// Where the fleet is, and how to reach it.
pub struct Fleet<'a> {
    pub url: &'a str,
    pub room: Option<&'a str>,
    pub token: Option<&'a str>,
}

/// What the replay found, for the words and the JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Replayed {
    /// The break replayed (`sold-twice`, `foreign-release`, `deadlock`).
    pub property: Property,
    /// The fault armed (`None`: none needed, or none the fleet has).
    pub fault: Option<oversell_api::Fault>,
    /// What the fault stands for in the schedule, or why the fleet cannot make it.
    pub because: String,
    /// Whether the fleet ran it at all.
    pub ran: bool,
    pub reproduced: bool,
    /// The fleet's ground truth after the run, and its buyers' answers.
    pub figures: std::collections::BTreeMap<String, f64>,
    /// The checker's verdict on the fleet's history, in words.
    pub checker: Option<String>,
    /// The checker's first violation, in words.
    pub first: Option<String>,
    /// What the run's ground truth had to show (`foreign_releases > 0`, a deadlock's stall),
    /// each with what it showed.
    pub checks: Vec<String>,
}

/// Why the replay could not start: the fleet unreachable, no token (bad input, exit 2).
pub struct Unreachable(pub String);

/// What the fleet's ground truth must show of a foreign release, and of a sale sold twice.
const RELEASED_ANOTHERS: &[Check] = &[Check::gt("foreign_releases", 0.0)];
const LOST_AN_UPDATE: &[Check] = &[Check::gt("lost_updates", 0.0)];

/// The model's failover is an instant; the fleet's takes seconds (Sentinel's down-after, its
/// vote, the instances following it). So a failover is replayed with the timings of
/// `failover-loses-lock`: the holder works through the failover, its lease outlasts it (the
/// break is the promoted replica without the lock, not a lease running out), and the next buyer
/// waits the failover out instead of answering 503 while the store has no primary.
const FAILOVER_WORK_MS: u64 = 9_000;
const FAILOVER_LEASE_MS: u64 = 20_000;
const FAILOVER_WAIT_MS: u64 = 15_000;

/// A chapter for the fleet: what its run must show beside the checker's verdict.
fn chapter(tier: Tier, plan: &Plan, property: Property) -> Scenario {
    let pause_ms = plan.fault.as_ref().map_or(0, |f| f.ms);
    let (expect, stock) = match property {
        // A deadlock is seen on the fleet as its chapters see one: 503s, a lock with no TTL,
        // still stuck after twice the lease, sales back after a reset (five probe buyers, so
        // the stock has five more units than the model's).
        Property::Deadlock => (Expect::StallUntilReset, plan.stock + 5),
        Property::ForeignRelease => (Expect::Figures(RELEASED_ANOTHERS), plan.stock),
        _ => (Expect::Figures(LOST_AN_UPDATE), plan.stock),
    };
    let failover = plan.fault.as_ref().map(|f| f.kind) == Some(oversell_api::FaultKind::Failover);
    let store = match failover {
        true => StoreSetup::sentinel(0),
        false => StoreSetup::ANY,
    };
    // The model's steps take no time: no business work beyond the round trips, but for a
    // failover (above). A buyer that finds the lock busy tries again every 5 ms, as the model's
    // waiter may try at any moment, until well after the pause and the lease it outlasts.
    let (ttl_ms, business_ms, wait_deadline_ms) = match failover {
        true => (FAILOVER_LEASE_MS, FAILOVER_WORK_MS, FAILOVER_WAIT_MS),
        false => (plan.ttl_ms, 0, pause_ms + 2 * plan.ttl_ms + 1_500),
    };
    Scenario {
        id: "explore-replay",
        tier,
        ttl_ms,
        business_ms,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        wait_deadline_ms,
        lease: BASE.lease,
        fault: plan.fault.clone(),
        stock,
        buyers: plan.buyers,
        connections: None,
        store,
        expect,
        ..BASE
    }
}

/// Runs `found` (a schedule of `lock`, the rung `tier`, searched on `m`) on the fleet.
pub async fn replay(
    m: &Machine,
    lock: &LockSource,
    tier: Tier,
    found: &Found,
    fleet: &Fleet<'_>,
) -> Result<Replayed, Unreachable> {
    let targets = Targets::parse(&[fleet.url], fleet.room)
        .map_err(|e| Unreachable(format!("--url {}: {e}", fleet.url)))?;
    let token = fleet
        .token
        .ok_or_else(|| Unreachable(format!("--replay needs the admin token — {TOKEN_HINT}")))?;
    let mut replayed = Replayed {
        property: found.property,
        fault: None,
        because: String::new(),
        ran: false,
        reproduced: false,
        figures: Default::default(),
        checker: None,
        first: None,
        checks: Vec::new(),
    };
    let plan = match counterpart::plan(m, tier, found) {
        Ok(plan) => plan,
        Err(none) => {
            replayed.because = none.0;
            return Ok(replayed);
        }
    };
    (replayed.fault, replayed.because) = (plan.fault.clone(), plan.because.clone());
    preflight(&targets, std::time::Duration::from_secs(5))
        .await
        .map_err(|e| Unreachable(format!("{e:#}")))?;
    let admin = AdminClient::new(&targets, Some(token.to_owned()));
    let instances = live_instances(&admin).await?;
    let runner = Runner {
        targets: &targets,
        admin: &admin,
        instances,
        spare: None,
        step: Default::default(),
    };
    let scenario = chapter(tier, &plan, found.property);
    let misfit = runner
        .misfit(&scenario)
        .await
        .map_err(|e| Unreachable(format!("{e:#}")))?;
    if let Some(why) = misfit {
        replayed.because = format!("{}; but this fleet cannot: {why}", plan.because);
        return Ok(replayed);
    }
    let run = runner
        .run(&scenario)
        .await
        .map_err(|e| Unreachable(format!("the run on {} ({}): {e:#}", fleet.url, lock.name)))?;
    replayed.ran = true;
    replayed.figures = run.figures.clone();
    replayed.checks = run
        .verdicts
        .iter()
        .map(|v| {
            let mark = if v.held { "ok" } else { "NO" };
            format!("{mark} {} — saw {}", v.check, v.seen)
        })
        .collect();
    let checked = run.check.as_ref();
    replayed.checker = Some(match checked {
        Ok(checked) => checked.cell(),
        Err(why) => format!("not checked: {why}"),
    });
    replayed.first = checked.ok().and_then(|c| c.first_en.clone());
    // A sale sold twice is the checker's to see in the history; a foreign release and a
    // deadlock are not sales the checker judges, so the run's own ground truth says them.
    let checker_saw = checked.is_ok_and(|c| !c.mutual_exclusion || !c.stock);
    replayed.reproduced = run.passed
        && match found.property {
            Property::SoldTwice | Property::TwoHolders => checker_saw,
            _ => true,
        };
    Ok(replayed)
}

async fn live_instances(admin: &AdminClient) -> Result<usize, Unreachable> {
    let listed = admin
        .request(http::Method::GET, "/instances", None)
        .await
        .map_err(|e| Unreachable(format!("{e:#}")))?;
    match listed["instances"].as_array().map_or(0, Vec::len) {
        0 => Err(Unreachable("GET /instances lists no live instance".into())),
        n => Ok(n),
    }
}

impl Replayed {
    /// The replay in words, after the search's answer.
    pub fn text(&self, url: &str) -> String {
        let mut out = format!(
            "\n  on the fleet ({url}): the {} schedule\n",
            self.property.id()
        );
        let Some(fault) = &self.fault else {
            if !self.ran {
                return out + &format!("    no fleet counterpart: {}\n", self.because);
            }
            return out + &format!("    {}\n", self.because) + &self.outcome();
        };
        let ms = match fault.ms {
            0 => String::new(),
            ms => format!(" ({ms} ms)"),
        };
        out += &format!("    fault: {}{ms}, as {}\n", fault.kind.id(), self.because);
        if !self.ran {
            return out + &format!("    not run: {}\n", self.because);
        }
        out + &self.outcome()
    }

    fn outcome(&self) -> String {
        let figure = |name: &str| self.figures.get(name).copied().unwrap_or(0.0);
        let mut out = format!(
            "    the fleet's buyers: {} sold, {} answered 503; orders {}, stock {}, lost updates \
             {}, foreign releases {}\n",
            figure("sent_ok"),
            figure("sent_503"),
            figure("orders"),
            figure("stock"),
            figure("lost_updates"),
            figure("foreign_releases"),
        );
        if let Some(checker) = &self.checker {
            out += &format!("    history checker: {checker}\n");
        }
        if let Some(first) = &self.first {
            out += &format!("    first violation: {first}\n");
        }
        if !matches!(self.property, Property::SoldTwice | Property::TwoHolders) {
            out += &format!(
                "    the checker judges the sales, and a {} is not one: the run's ground truth \
                 says it\n",
                self.property.id()
            );
        }
        for check in &self.checks {
            out += &format!("    {check}\n");
        }
        out += match self.reproduced {
            true => "  the model predicted it; the fleet did it\n",
            false => "  the model predicted it; the fleet's run held\n",
        };
        out
    }
}
