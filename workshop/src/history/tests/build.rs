//! Hand-made histories: a few operations each, with times in microseconds from 0 on one
//! clock, so every case's answer can be worked out by hand.

use crate::history::parse::History;
use oversell_api::history::{Clocks, Lease, Outcome, Request, Run, Section};

pub fn history(stock: i64, tier: &str) -> History {
    History::new(Run {
        v: oversell_api::history::VERSION,
        id: "hand-made".into(),
        room: "default".into(),
        chapter: None,
        tier: tier.into(),
        stock,
        ttl_ms: 1,
        business_ms: 0,
        clocks: Clocks {
            request: "one host".into(),
            section: "one host".into(),
            lease: "one host".into(),
            fault: "one host".into(),
            bound_us: None,
        },
    })
}

/// A request answered `status`; a 200 names its order `o-{buyer}`.
pub fn request(buyer: &str, call: i64, ret: i64, status: u16, left: Option<i64>) -> Request {
    Request {
        buyer: buyer.into(),
        qty: 1,
        call_us: call,
        return_us: ret,
        status,
        order_id: (status == 200).then(|| format!("o-{buyer}")),
        stock_left: left,
        fence: None,
        instance: Some("app1".into()),
    }
}

/// A section that sold buyer's order `o-{buyer}`, reading `read` and writing `read - 1`.
pub fn sold(buyer: &str, enter: i64, exit: i64, read: i64) -> Section {
    Section {
        owner: format!("app1:{buyer}"),
        instance: "app1".into(),
        enter_us: enter,
        exit_us: Some(exit),
        fence: None,
        order_id: Some(format!("o-{buyer}")),
        buyer: Some(buyer.into()),
        qty: Some(1),
        read: Some(read),
        wrote: Some(read - 1),
        outcome: Outcome::Sold,
    }
}

/// A section that read `read` and sold nothing.
pub fn sold_out(owner: &str, enter: i64, exit: i64, read: i64) -> Section {
    Section {
        owner: owner.into(),
        instance: "app1".into(),
        enter_us: enter,
        exit_us: Some(exit),
        fence: None,
        order_id: None,
        buyer: None,
        qty: None,
        read: Some(read),
        wrote: None,
        outcome: Outcome::SoldOut,
    }
}

/// A lease granted at `granted` to run until `deadline`, released at `released`.
pub fn lease(owner: &str, granted: i64, deadline: i64, released: Option<i64>) -> Lease {
    Lease {
        owner: owner.into(),
        granted_us: granted,
        deadline_us: Some(deadline),
        renewals: Vec::new(),
        released_us: released,
        refused_release_us: None,
        source: oversell_api::history::LeaseSource::Derived,
    }
}

/// `n` sales one after another from a stock of `initial`, each request (`b0`, `b1`, …, called
/// at 0, 100, …, answered 90 µs later) around its section: a good run.
pub fn sales(initial: i64, n: i64) -> History {
    let mut h = history(initial, "lua-release");
    for i in 0..n {
        let buyer = format!("b{i}");
        let enter = 100 * i + 20;
        h.requests.push(request(
            &buyer,
            100 * i,
            100 * i + 90,
            200,
            Some(initial - i - 1),
        ));
        h.sections
            .push(sold(&buyer, enter, enter + 50, initial - i));
        h.leases.push(lease(
            &format!("app1:{buyer}"),
            enter - 5,
            enter + 10_000,
            Some(enter + 55),
        ));
    }
    h.end = Some(oversell_api::history::End {
        at_us: 100 * n + 100,
        stock: Some(initial - n),
    });
    h
}
