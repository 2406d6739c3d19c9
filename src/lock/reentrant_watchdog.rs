//! `reentrant-watchdog` — Redisson's design: a hash owner → hold count, a lease renewed by a
//! watchdog every TTL/3 while held, and waiters woken by a published release message.
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

use async_trait::async_trait;
use oversell_api::settings::LeaseMode;
use redis::Script;

use super::renewals::Renewals;
use super::{riding, riding_out, Attempt, Held, Keep, Lock, LockCx};
use crate::ground_truth::record;
use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

static ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("reentrant_acquire.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("reentrant_release.lua")));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("reentrant_renew.lua")));

pub struct ReentrantWatchdog {
    /// Whether each fresh acquire also takes a fencing token (the `fenced` tier).
    fencing: bool,
}

impl ReentrantWatchdog {
    pub fn plain() -> Self {
        ReentrantWatchdog { fencing: false }
    }

    pub fn fencing() -> Self {
        ReentrantWatchdog { fencing: true }
    }
}

#[async_trait]
impl Lock for ReentrantWatchdog {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        // With the lock in the resource store, the sale's read rides behind the acquire.
        let (depth, extra, read) = match riding::acquire_with_read(cx).await? {
            Some(((depth, extra), read)) => (depth, extra, read),
            None => {
                let mut conn = cx.conn().await?;
                let (depth, extra): (i64, i64) = ACQUIRE
                    .key(cx.keys.reentrant_lock())
                    .key(cx.keys.fence_counter())
                    .arg(cx.settings.ttl_ms)
                    .arg(cx.owner)
                    .arg(if self.fencing { "1" } else { "0" })
                    .invoke_async(&mut conn)
                    .await?;
                if depth == 1 {
                    if let Err(err) = cx.replicated(&mut conn).await {
                        // Not on enough replicas: give the fresh hold back, and fail.
                        let _ = self.release(cx, Held::plain()).await;
                        return Err(err);
                    }
                }
                (depth, extra, None)
            }
        };
        let Ok(depth @ 1..) = u32::try_from(depth) else {
            return Ok(Attempt::busy(extra));
        };
        // Only the first hold starts a watchdog; a re-entry rides on the outer one. A fixed
        // lease (Redisson's `lock(leaseTime)`) starts none at all.
        let keep = if depth == 1 && cx.settings.lease == LeaseMode::Watchdog {
            Keep::Renewing {
                _renewals: watchdog(cx),
            }
        } else {
            Keep::Nothing
        };
        Ok(Attempt::Acquired(Held {
            fence: self.fencing.then_some(extra as u64),
            depth,
            read,
            _keep: keep,
        }))
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        // Stop renewing before giving the lock back.
        drop(held);
        let left: i64 = riding_out(cx, || async {
            let mut conn = cx.conn().await?;
            Ok(RELEASE
                .key(cx.keys.reentrant_lock())
                .arg(cx.settings.ttl_ms)
                .arg(cx.owner)
                .arg(cx.keys.released_channel())
                .invoke_async(&mut conn)
                .await?)
        })
        .await?;
        if left == -1 {
            // Redisson throws IllegalMonitorStateException here: the only moment a holder
            // whose lease ran out learns it.
            cx.lost_release().await?;
        }
        Ok(())
    }

    fn reentrant(&self) -> bool {
        true
    }
}

/// Renews the lease every TTL/3 until the hold ends (drop) or the lock is no longer ours.
fn watchdog(cx: &LockCx<'_>) -> Renewals {
    let store: RedisPool = cx.store.pool().clone();
    let truth: RedisPool = cx.truth.clone();
    let keys = cx.keys.clone();
    let owner = cx.owner.to_owned();
    let instance = cx.instance.to_owned();
    let ttl_ms = cx.settings.ttl_ms;
    Renewals::every_third_of(ttl_ms, move || {
        let (store, truth, keys) = (store.clone(), truth.clone(), keys.clone());
        let (owner, instance) = (owner.clone(), instance.clone());
        async move {
            match renew(&store, &keys, &owner, ttl_ms).await {
                Ok(true) => {
                    if let Err(err) = record::renewal(&truth, &keys, &instance, &owner).await {
                        tracing::debug!(%err, "renewal not recorded on the timeline");
                    }
                    true
                }
                Ok(false) => false, // expired or released: nothing left to renew
                // Redisson logs a failed renewal and stops renewing. This one tries again at
                // the next tick: with a lock store that fails over (Sentinel) a renewal can
                // fail for a second or two while the lease still has seconds left, and giving
                // up then would drop a lock its holder still holds. A renewal that finds the
                // lock gone or someone else's (Ok(false) above) does stop.
                Err(err) => {
                    tracing::warn!(%err, "watchdog renewal failed; retrying");
                    true
                }
            }
        }
    })
}

async fn renew(
    store: &RedisPool,
    keys: &Keys,
    owner: &str,
    ttl_ms: u64,
) -> Result<bool, StoreError> {
    let mut conn = store.conn().await?;
    let renewed: i64 = RENEW
        .key(keys.reentrant_lock())
        .arg(ttl_ms)
        .arg(owner)
        .invoke_async(&mut conn)
        .await?;
    Ok(renewed == 1)
}
