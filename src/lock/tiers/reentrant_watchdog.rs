//! `reentrant-watchdog` — Redisson's design: a hash owner → hold count, a lease renewed by a
//! watchdog every TTL/3 while held, and waiters woken by a published release message.
//!
//! | step | sends (`static/locks/reentrant-watchdog/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: a free lock's hash gets `owner → 1`; our own, count + 1; lease reset | `{depth, 0}` held; `{0, lease left}` busy |
//! | release | `release-1.lua`: count − 1; at 0 delete and publish | 1; 0 not ours any more: lost |
//! | renew, every TTL/3 | `renew.lua`: lease reset while the hash has our field | 1 renewed; 0 gone: stop |
//!
//! # Guarantee
//! Mutual exclusion across instances however long the business work takes (the watchdog keeps
//! the lease alive while the holder is alive), re-entry by the same owner without deadlock,
//! only the owner can release, and a dead holder's lock expires one lease after its death.
//!
//! Redisson's defaults are a 30 s lease renewed every 10 s (TTL/3); here the lease is the
//! room's `ttl_ms`, renewed every `ttl_ms / 3`. Like Redisson's `lock(leaseTime)`, the setting
//! `lease: fixed` turns the watchdog off: the lease then ends after `ttl_ms` whatever the
//! holder is doing, the `lua-release` defect back on the same tier.
//!
//! # Known defect
//! The watchdog runs inside the holder's process. A whole-process pause (a GC stop, `SIGSTOP`,
//! a VM freeze) longer than the lease stops the renewals too: the lease expires, a second
//! holder enters, and when the first resumes it still believes it holds the lock and writes a
//! stale value.

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/reentrant-watchdog/acquire-1.lua"
    ))
});
static RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/reentrant-watchdog/release-1.lua"
    ))
});
static RENEW: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/reentrant-watchdog/renew.lua"
    ))
});

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(
        Tier::ReentrantWatchdog,
        crate::lock::TierLock::Steps(&ReentrantWatchdog),
    )]
}

pub struct ReentrantWatchdog;

impl Technique for ReentrantWatchdog {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let lock = ACQUIRE
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        vec![Step::acquire(lock)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        // Redisson throws IllegalMonitorStateException on a 0: the engine counts a lost release.
        let unlock = RELEASE
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        vec![Step::release(unlock)]
    }

    fn renew(&self, on: &On<'_>) -> Option<Step> {
        let renew = RENEW
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        Some(Step::renew(renew))
    }

    fn reentrant(&self) -> bool {
        true
    }
}
