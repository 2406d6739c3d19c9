//! Waiting for a held lock: spin (sleep, retry) or pub/sub (sleep until a release is published,
//! at most the lock's remaining lease). Every wait ends at the settings' deadline. A cohort
//! (`cohort.rs`) queues an instance's buyers in memory first; the one at the head waits here,
//! as pub/sub does.
//!
//! The lock-store faults strike here, because they strike around an attempt: `failover` cuts
//! the primary's replica link just before each attempt of the sale that claimed it (so the lock
//! it takes never reaches the replica), and both it and `lock-store-restart` kill the store's
//! primary right after that sale's acquire succeeds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oversell_api::settings::WaitStrategy;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::cohort::Cohorts;
use super::sold_out::SoldOutHints;
use super::{chaos, Attempt, Held, Lock, LockCx, LockError};
use crate::redis_pool::StoreError;

/// A pub/sub wait with no known lease (a `setnx` lock has none) still re-checks this often.
const UNKNOWN_LEASE_RECHECK: Duration = Duration::from_millis(200);
/// How often a buyer looks again while a Sentinel-backed store is failing over.
const OUTAGE_RETRY: Duration = Duration::from_millis(100);

/// Wakes local waiters when the subscriber hears a room's release message.
///
/// One `Notify` per room. `notify_one` wakes a single waiter per release and instance, as
/// Redisson's semaphore does, so a release does not start a stampede of retries. The map is a
/// std `Mutex` because it is only touched briefly and never across an `.await`.
#[derive(Default)]
pub struct ReleaseSignals {
    rooms: Mutex<HashMap<String, Arc<Notify>>>,
    /// The in-memory queues of `wait: cohort`: the other half of how this instance's buyers
    /// wait for a room's lock.
    pub cohorts: Cohorts,
    /// Rooms this instance saw sold out: whether to wait for the lock at all.
    pub sold_out: SoldOutHints,
}

impl ReleaseSignals {
    pub fn room(&self, room: &str) -> Arc<Notify> {
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        rooms.entry(room.to_owned()).or_default().clone()
    }

    /// Called by the subscriber for every release message of a room.
    pub fn released(&self, room: &str) {
        self.room(room).notify_one();
    }

    /// Wakes every waiter of every room: release messages may have been lost (the subscriber
    /// reconnected), so each must look at the lock again.
    pub fn wake_all(&self) {
        let rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        for signal in rooms.values() {
            signal.notify_waiters();
        }
    }
}

pub(super) async fn until_acquired<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
) -> Result<Held, LockError> {
    let deadline = Instant::now() + cx.settings.wait_deadline();
    let signal = cx.signals.room(cx.keys.room());
    loop {
        // Register interest before trying, so a release between the failed attempt and the
        // wait is not missed.
        let notified = signal.notified();
        tokio::pin!(notified);
        let pubsub = matches!(
            cx.settings.wait,
            WaitStrategy::PubSub | WaitStrategy::Cohort { .. }
        );
        if pubsub {
            notified.as_mut().enable();
        }
        if let Some(fault) = cx.striking_fault() {
            let held = chaos::before_attempt(cx, &fault).await;
            *cx.held_replicas.lock().unwrap_or_else(|p| p.into_inner()) = held;
        }
        let attempt = lock.try_acquire(cx).await;
        // The store fault strikes after the attempt that took the lock, or that took it and
        // gave it back because too few replicas had it (`sync_replicas`): the primary dies
        // either way; what the failover loses differs.
        let took = matches!(
            &attempt,
            Ok(Attempt::Acquired(_)) | Err(StoreError::NotReplicated { .. })
        );
        if took {
            if let Some(fault) = cx.take_store_fault() {
                chaos::after_acquire(cx, &fault).await;
            }
        }
        // Held replicas resume now, after the primary died, unless `WAIT` resumed them.
        drop(cx.resume_replicas());
        let lease_left = match attempt {
            Ok(Attempt::Acquired(held)) => {
                tracing::debug!(owner = cx.owner, depth = held.depth, "lock acquired");
                return Ok(held);
            }
            Ok(Attempt::HolderDied) => return Err(LockError::HolderDied),
            Ok(Attempt::Busy { lease_left }) => {
                tracing::debug!(owner = cx.owner, ?lease_left, "lock busy");
                lease_left
            }
            // A Sentinel store failing over, or too few replicas in sync: both pass, so the
            // buyer tries again until its deadline, and is told which of the two it was.
            Err(err @ StoreError::Unavailable(_)) if cx.store.waits_out_outages() => {
                tracing::debug!(%err, "lock store unavailable; trying again");
                wait_out(err, deadline).await?;
                continue;
            }
            // Too few replicas in sync, or too few Redlock masters answering: either may
            // recover (a replica catches up, a master restarts) before the deadline.
            Err(err @ (StoreError::NotReplicated { .. } | StoreError::NoQuorum { .. })) => {
                wait_out(err, deadline).await?;
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(LockError::Timeout);
        }
        match cx.settings.wait {
            WaitStrategy::Spin { sleep_ms } => {
                tokio::time::sleep(Duration::from_millis(sleep_ms).min(left)).await
            }
            // The head of a cohort's queue waits as pub/sub does.
            WaitStrategy::PubSub | WaitStrategy::Cohort { .. } => {
                let bound = lease_left.unwrap_or(UNKNOWN_LEASE_RECHECK).min(left);
                let _ = tokio::time::timeout(bound, notified).await;
            }
        }
    }
}

/// Sleeps before the next attempt, or gives `err` back when the deadline comes first.
async fn wait_out(err: StoreError, deadline: Instant) -> Result<(), LockError> {
    if Instant::now() + OUTAGE_RETRY >= deadline {
        return Err(LockError::Store(err));
    }
    tokio::time::sleep(OUTAGE_RETRY).await;
    Ok(())
}
