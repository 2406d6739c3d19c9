//! `atomic-expiry` — `SET lock v NX PX ttl` in one command; `DEL` to release.
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire | `SET lock owner NX PX ttl`, `PTTL lock` (one pipeline) | `OK` taken; nil busy, for the `PTTL` left |
//! | release | `DEL lock` | — |
//!
//! Two round trips for the lock.
//!
//! # Guarantee
//! Mutual exclusion while the business work is shorter than the lease, and no deadlock: a dead
//! holder's lock always expires.
//!
//! # Known defect
//! The value is not checked on release. When the work outlasts the lease, the lock expires,
//! buyer B takes it, and A's `DEL` then deletes *B's* lock — letting C in beside B. Foreign
//! releases and overlapping critical sections follow.
//!
//! The articles use a fixed value; here the value is the holder's id, which this tier never
//! reads — it is there only so the ground truth can see whose lock a `DEL` removed.

use super::steps::{On, Reply, Step, Technique};

pub struct AtomicExpiry;

/// `SET lock owner NX PX ttl`: the atomic take-with-lease, shared with `uuid-owner`. The lease
/// left is asked in the same round trip, so a waiter sleeps at most until the holder's lease
/// really ends, not a whole TTL.
pub(super) fn set_nx_px(on: &On<'_>) -> Step {
    let mut pipe = redis::pipe();
    pipe.cmd("SET")
        .arg(on.keys.lock())
        .arg(on.owner)
        .arg("NX")
        .arg("PX")
        .arg(on.ttl_ms)
        .pttl(on.keys.lock());
    Step::commands(pipe, Reply::TakenOrLeaseLeft)
}

impl Technique for AtomicExpiry {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        vec![set_nx_px(on)]
    }

    fn release(&self, _on: &On<'_>) -> Vec<Step> {
        vec![Step::del()]
    }
}
