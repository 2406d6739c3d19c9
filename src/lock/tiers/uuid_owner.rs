//! `uuid-owner` — a unique value per holder; release is `GET`, compare, `DEL` as two steps.
//!
//! | step | sends (`static/locks/uuid-owner/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: `SET lock owner NX PX ttl`; busy: `PTTL lock` | 1 taken; `{0, lease left}` busy |
//! | release 1 | `release-1.lua`: `GET lock`, compare | 1 ours: go on; 0 anything else: stop, not ours |
//! | release 2 | `release-2.lua`: `DEL lock`, publish | 1 |
//!
//! # Guarantee
//! A holder no longer deletes a lock it can *see* is someone else's: the slow-business case of
//! `atomic-expiry` is mostly fixed.
//!
//! # Known defect
//! Check-then-act is not atomic. If the lease runs out between the `GET` (which saw our value)
//! and the `DEL`, another buyer takes the lock in that gap and our `DEL` deletes theirs.

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/uuid-owner/acquire-1.lua"
    ))
});
static CHECK: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/uuid-owner/release-1.lua"
    ))
});
static DELETE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/uuid-owner/release-2.lua"
    ))
});

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::UuidOwner, crate::lock::TierLock::Steps(&UuidOwner))]
}

pub struct UuidOwner;

impl Technique for UuidOwner {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let set = ACQUIRE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        vec![Step::acquire(set)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let check = CHECK.call().key(on.keys.lock()).arg(on.owner);
        let delete = DELETE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        // The gap: the lease may run out between these two.
        vec![Step::release(check), Step::release(delete)]
    }
}
