//! A lease renewed on the watchdog's schedule, every lease/3, until the hold ends (the value
//! is dropped) or a renewal says the lock is no longer ours: Redisson's watchdog, for any
//! lock with a renew step (the reentrant tiers, a lab lock's).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio::time::MissedTickBehavior;

use super::replies;
use super::send::{send, Env};
use super::steps::{On, Step};
use crate::ground_truth::record;
use crate::keys::Keys;
use crate::lock_store::LockStore;
use crate::redis_pool::{Conn, RedisPool};

/// The renewal task of one hold; aborted on drop.
pub struct Renewals(AbortHandle);

impl Renewals {
    /// Calls `renew` every `ttl_ms / 3` (the first one period after the acquire, whose lease
    /// is fresh) until it answers `false`.
    pub fn every_third_of<F, Fut>(ttl_ms: u64, mut renew: F) -> Renewals
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = bool> + Send,
    {
        let period = Duration::from_millis((ttl_ms / 3).max(1));
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
            ticks.tick().await; // the first tick fires at once
            loop {
                ticks.tick().await;
                if !renew().await {
                    break;
                }
            }
        });
        Renewals(task.abort_handle())
    }
}

impl Renewals {
    /// Lets the renewals run on with nobody holding them: they stop only when a renewal finds
    /// the lock no longer this owner's (a reset, an expiry). The `renewal-outlives-release`
    /// fault's leak, on purpose.
    pub fn outlive_the_hold(self) {
        std::mem::forget(self);
    }
}

impl Drop for Renewals {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A hold's renew step, run on the watchdog's schedule by [`Watchdog::start`]: everything it
/// needs, owned by the renewal task.
pub(super) struct Watchdog {
    pub step: Step,
    pub conn: RenewConn,
    pub store: LockStore,
    pub resource: RedisPool,
    pub keys: Keys,
    pub owner: String,
    pub instance: String,
    pub ttl_ms: u64,
    /// Stop at the first failed renewal instead of trying again at the next tick (the
    /// `renewal-gives-up` fault).
    pub gives_up: bool,
    /// The instance's renewal counters for the lock's tier.
    pub counts: crate::metrics::RenewalCounters,
}

/// Where a renewal is sent.
pub(super) enum RenewConn {
    /// A connection from the pool for each renewal: after a failover, the new primary's.
    Pool(RedisPool),
    /// The connection the lock was taken on (a lab room's own login).
    Kept(Conn),
}

impl Watchdog {
    pub(super) fn start(self) -> Renewals {
        let watchdog = Arc::new(self);
        Renewals::every_third_of(watchdog.ttl_ms, move || {
            let watchdog = watchdog.clone();
            async move { watchdog.renew().await }
        })
    }

    /// One renewal; `false` when the lock is no longer ours and renewing stops.
    async fn renew(&self) -> bool {
        let renewed = async {
            let mut conn = match &self.conn {
                RenewConn::Pool(pool) => pool.conn().await?,
                RenewConn::Kept(conn) => conn.clone(),
            };
            let env = Env {
                store: &self.store,
                resource: &self.resource,
                on: On {
                    keys: &self.keys,
                    owner: &self.owner,
                    ttl_ms: self.ttl_ms,
                    // A holder waits for nothing.
                    wait_ms: 0,
                },
            };
            let answer = send(&mut conn, &self.step, &env).await?;
            replies::renewed(self.step.reply, answer)
        };
        match renewed.await {
            Ok(true) => {
                self.counts.renewed();
                let noted =
                    record::renewal(&self.resource, &self.keys, &self.instance, &self.owner);
                if let Err(err) = noted.await {
                    tracing::debug!(%err, "renewal not recorded on the timeline");
                }
                true
            }
            Ok(false) => false, // expired or released: nothing left to renew
            // Redisson logs a failed renewal and stops renewing. This one tries again at the
            // next tick: with a lock store that fails over (Sentinel) a renewal can fail for a
            // second or two while the lease still has seconds left, and giving up then would
            // drop a lock its holder still holds. A student's error stops nothing either.
            Err(err) if self.gives_up => {
                self.counts.failed();
                tracing::warn!(%err, "lease renewal failed; not scheduled again");
                false
            }
            Err(err) => {
                self.counts.failed();
                tracing::warn!(%err, "lease renewal failed; retrying");
                true
            }
        }
    }
}
