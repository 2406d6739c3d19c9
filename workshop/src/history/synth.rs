//! A clean synthetic history, as a correct lock (`lua-release`, or `fenced`) would leave one:
//! sections one after another across a few instances, each request's call and return around
//! its section, the stock sold to zero and then sold-outs. The checker's tests plant faults in
//! it; the speed bench checks a million operations of it.

use super::parse::History;
use oversell_api::history::{Clocks, End, Lease, Outcome, Request, Run, Section};

/// What to make.
#[derive(Debug, Clone)]
pub struct Synth {
    /// Requests (each with its section): the history has about twice as many operations.
    pub requests: usize,
    /// Instances the sections spread over.
    pub instances: usize,
    /// A lease line per section.
    pub leases: bool,
    /// Fences rising with the sections (the `fenced` tier).
    pub fenced: bool,
}

impl Synth {
    /// `operations` operations (requests + sections), `lua-release`-like, with leases.
    pub fn operations(operations: usize) -> Synth {
        Synth {
            requests: operations / 2,
            instances: 3,
            leases: true,
            fenced: false,
        }
    }

    /// The history: the first nine tenths of the requests sell, the rest are told sold out.
    pub fn build(&self) -> History {
        let n = self.requests;
        let stock = (n - n / 10) as i64;
        let base: i64 = 1_796_000_000_000_000;
        let ttl_ms = 2_000;
        let mut history = History::new(Run {
            v: oversell_api::history::VERSION,
            id: "synthetic".into(),
            room: "default".into(),
            chapter: None,
            tier: if self.fenced { "fenced" } else { "lua-release" }.into(),
            stock,
            ttl_ms,
            business_ms: 0,
            clocks: Clocks {
                request: "client".into(),
                section: "resource store".into(),
                lease: "resource store".into(),
                fault: "launcher".into(),
                bound_us: None,
            },
        });
        history.requests.reserve(n);
        history.sections.reserve(n);
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..n {
            // A small deterministic jitter, so calls and returns interleave as real ones do.
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let jitter = ((seed >> 33) % 60) as i64;
            let enter = base + i as i64 * 100;
            let exit = enter + 60;
            let instance = format!("app{}", i % self.instances.max(1) + 1);
            let owner = format!("{instance}:{i}");
            let buyer = format!("b{i}");
            let sold = (i as i64) < stock;
            let left = stock - i as i64 - 1;
            let order_id = sold.then(|| format!("o{i}"));
            let fence = self.fenced.then_some(i as u64 + 1);
            history.requests.push(Request {
                buyer: buyer.clone(),
                qty: 1,
                call_us: enter - 30 - jitter,
                return_us: exit + 20 + jitter / 3,
                status: if sold { 200 } else { 409 },
                order_id: order_id.clone(),
                stock_left: Some(left.max(0)),
                fence,
                instance: Some(instance.clone()),
            });
            history.sections.push(Section {
                owner: owner.clone(),
                instance,
                enter_us: enter,
                exit_us: Some(exit),
                fence,
                order_id,
                buyer: sold.then_some(buyer),
                qty: sold.then_some(1),
                read: Some((left + 1).max(0)),
                wrote: sold.then_some(left),
                outcome: if sold {
                    Outcome::Sold
                } else {
                    Outcome::SoldOut
                },
            });
            if self.leases {
                history.leases.push(Lease {
                    owner,
                    granted_us: enter - 10,
                    deadline_us: Some(enter - 10 + ttl_ms as i64 * 1000),
                    renewals: Vec::new(),
                    released_us: Some(exit + 5),
                    refused_release_us: None,
                    source: oversell_api::history::LeaseSource::Derived,
                });
            }
        }
        history.end = Some(End {
            at_us: base + n as i64 * 100 + 1_000,
            stock: Some(0),
        });
        history
    }
}
