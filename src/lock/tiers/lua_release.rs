//! `lua-release` — a unique value per holder; release is one Lua compare-and-delete.
//!
//! | step | sends (`static/locks/lua-release/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: `SET lock owner NX PX ttl`; busy: `PTTL lock` | 1 taken; `{0, lease left}` busy |
//! | release | `release-1.lua`: compare-and-delete, publish | 1 deleted; 0 gone or someone else's: lost |
//!
//! The compare and the delete run as one script, which Redis runs atomically: nothing can take
//! the lock between the `GET` that sees our value and the `DEL`, `uuid-owner`'s gap.
//!
//! # Guarantee
//! A holder only ever deletes its own lock: zero foreign releases, and no deadlock (the lease
//! expires). The articles' "diamond" tier.
//!
//! # Known defect
//! The lease is fixed. Business work longer than the lease still lets a second holder in while
//! the first is working: overlapping critical sections, lost updates, oversell. The first
//! holder finds out only at its release, which finds the lock gone or someone else's: counted
//! as a lost release.

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/lua-release/acquire-1.lua"
    ))
});
/// The compare-and-delete; Redlock's release on each master too.
pub(in crate::lock) static COMPARE_AND_DELETE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/lua-release/release-1.lua"
    ))
});

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::LuaRelease, crate::lock::TierLock::Steps(&LuaRelease))]
}

pub struct LuaRelease;

impl Technique for LuaRelease {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let set = ACQUIRE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        vec![Step::acquire(set)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let delete = COMPARE_AND_DELETE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        vec![Step::release(delete)]
    }
}
