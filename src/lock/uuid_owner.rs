//! `uuid-owner` — a unique value per holder; release is `GET`, compare, `DEL` as three steps.
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire | `SET lock owner NX PX ttl`, `PTTL lock` (one pipeline) | `OK` taken; nil busy |
//! | release 1 | `GET lock` | our value: go on; anything else: stop, not ours |
//! | release 2 | `DEL lock` | — |
//!
//! Three round trips for the lock.
//!
//! # Guarantee
//! A holder no longer deletes a lock it can *see* is someone else's: the slow-business case of
//! `atomic-expiry` is mostly fixed.
//!
//! # Known defect
//! Check-then-act is not atomic. If the lease runs out between the `GET` (which saw our value)
//! and the `DEL`, another buyer takes the lock in that gap and our `DEL` deletes theirs.

use super::atomic_expiry::set_nx_px;
use super::steps::{On, Reply, Step, Technique};

pub struct UuidOwner;

impl Technique for UuidOwner {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        vec![set_nx_px(on)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let get = redis::cmd("GET").arg(on.keys.lock()).clone();
        // The gap: the lease may run out between these two.
        vec![Step::command(get, Reply::OwnedByUs), Step::del()]
    }
}
