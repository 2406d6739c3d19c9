//! `lua-release` — a unique value per holder; release is one Lua compare-and-delete.
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire | `SET lock owner NX PX ttl` (`set_nx_px.lua`) | `{1, 0}` taken; `{0, lease left}` busy |
//! | release | compare-and-delete (`lua_release.lua`) | 1 deleted; 0 gone or someone else's: lost |
//!
//! Two round trips for the lock.
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

use super::steps::{Lua, On, Reply, Step, Technique};

static SET_NX_PX: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("set_nx_px.lua")));
static COMPARE_AND_DELETE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("lua_release.lua")));

pub struct LuaRelease;

impl Technique for LuaRelease {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let set = SET_NX_PX
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        vec![Step::script(set, Reply::TakenOrLeaseLeft)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let delete = COMPARE_AND_DELETE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.keys.released_channel());
        vec![Step::script(delete, Reply::LostIf(0))]
    }
}
