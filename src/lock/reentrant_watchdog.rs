//! `reentrant-watchdog` — Redisson's design: a hash owner → hold count, a lease renewed by a
//! watchdog every TTL/3 while held, and waiters woken by a published release message.
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire | `reentrant_acquire.lua`: a free lock's hash gets `owner → 1`; our own, count + 1; lease reset | `{depth, 0}` held; `{0, lease left}` busy |
//! | release | `reentrant_release.lua`: count − 1; at 0 delete and publish | holds left; −1 not ours any more: lost |
//! | renew, every TTL/3 | `reentrant_renew.lua`: lease reset while the hash has our field | 1 renewed; 0 gone: stop |
//!
//! Two round trips for the lock.
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

use super::steps::{Lua, On, Reply, Step, Technique};

static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("reentrant_acquire.lua")));
static RELEASE: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("reentrant_release.lua")));
static RENEW: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("reentrant_renew.lua")));

pub struct ReentrantWatchdog;

/// The acquire; `fenced`: a fresh hold also takes a token from the counter (`fenced`).
pub(super) fn acquire(on: &On<'_>, fenced: bool) -> Step {
    let call = ACQUIRE
        .call()
        .key(on.keys.reentrant_lock())
        .key(on.keys.fence_counter())
        .arg(on.ttl_ms)
        .arg(on.owner)
        .arg(if fenced { "1" } else { "0" });
    Step::script(call, Reply::Hold { fenced })
}

impl Technique for ReentrantWatchdog {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        vec![acquire(on, false)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let call = RELEASE
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.ttl_ms)
            .arg(on.owner)
            .arg(on.keys.released_channel());
        // Redisson throws IllegalMonitorStateException on a −1.
        vec![Step::script(call, Reply::LostIf(-1))]
    }

    fn renew(&self, on: &On<'_>) -> Option<Step> {
        let call = RENEW
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.ttl_ms)
            .arg(on.owner);
        Some(Step::script(call, Reply::Renewed))
    }

    fn reentrant(&self) -> bool {
        true
    }
}
