//! The tiers, a file each, declared here so a reader finds each one by its `mod` line (as
//! mini-redis declares its commands). Each file opens with what its tier guarantees and what
//! breaks it, and says which tiers it locks for (`fn locks()`); a Redis tier's Lua is the
//! files of `static/locks/<tier>/` (the lab's presets for that rung), which its file includes.
//! A file of this folder left out of the list below fails `tier_checks` (the tests).

use oversell_api::tier::Tier;

use super::TierLock;

mod atomic_expiry;
mod custom;
mod fair;
mod fenced;
mod local;
mod lua_release;
mod none;
mod postgres;
pub(super) mod redlock;
mod reentrant_watchdog;
mod setnx;
mod setnx_expire;
mod uuid_owner;
mod zookeeper;

/// Every tier file's locks.
pub(super) fn tier_locks() -> Vec<(Tier, TierLock)> {
    [
        atomic_expiry::locks(),
        custom::locks(),
        fair::locks(),
        fenced::locks(),
        local::locks(),
        lua_release::locks(),
        none::locks(),
        postgres::locks(),
        redlock::locks(),
        reentrant_watchdog::locks(),
        setnx::locks(),
        setnx_expire::locks(),
        uuid_owner::locks(),
        zookeeper::locks(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
