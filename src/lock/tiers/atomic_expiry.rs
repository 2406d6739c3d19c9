//! `atomic-expiry` — `SET lock v NX PX ttl` in one command; `DEL` to release.
//!
//! | step | sends (`static/locks/atomic-expiry/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: `SET lock owner NX PX ttl`; busy: `PTTL lock` | 1 taken; `{0, lease left}` busy |
//! | release | `release-1.lua`: `DEL lock`, publish | 1 |
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

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/atomic-expiry/acquire-1.lua"
    ))
});
static RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/atomic-expiry/release-1.lua"
    ))
});

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(
        Tier::AtomicExpiry,
        crate::lock::TierLock::Steps(&AtomicExpiry),
    )]
}

pub struct AtomicExpiry;

impl Technique for AtomicExpiry {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        // The lease left comes back with a busy answer, so a waiter sleeps at most until the
        // holder's lease really ends, not a whole TTL.
        let set = ACQUIRE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        vec![Step::acquire(set)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let del = RELEASE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        vec![Step::release(del)]
    }
}
