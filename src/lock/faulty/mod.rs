//! The fault layer: a room's lock wrapped, for one sale, when the room has faults armed
//! ([`Locks::in_room`](super::Locks::in_room) puts it around the tier's lock, or the lab's).
//! It is the lock's hook (`hook.rs`): the wait loop, the engine and the section name the
//! points and moments of a sale, and this layer alone knows which fault strikes at each, claims
//! it (one claimant in the fleet wins, `faults/claim.lua`) and strikes:
//!
//! - the lock-store faults (`store_strikes.rs`), claimed before the acquire and meant for the
//!   next holder: before each attempt and right after the attempt that takes the lock;
//! - the overtaking unlock of `renewal-outlives-release`, before the acquire;
//! - between acquire steps (`crash-before-expire`, `holder-dies-between-steps`), after the
//!   attempt that took the lock (`acquire-reply-lost`), between release steps
//!   (`release-gap`), in line (`waiter-dies`, `subscribe-gap`, `late-subscriber`), as a
//!   ZooKeeper release sends its delete (`release-delete-lost`, `release-delete-retried`);
//! - in the critical section (`holder.rs`): at the read, as the work starts, before the write
//!   (where a holder may also extend its lease first, `extend.rs`).
//!
//! And one that is a lock variant more than an event, never claimed: `token-per-instance`,
//! the owner token kept in one slot of the instance (`token_slot.rs`), written by each acquire
//! and sent by each release while it is armed.
//!
//! Everything else it passes to the lock it wraps, unchanged. A room with nothing armed never
//! builds one: its sales run the lock bare, with no hook at all.

mod extend;
mod holder;
mod partition;
mod store_strikes;
mod token_slot;

pub use token_slot::TokenSlots;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use oversell_api::settings::WaitStrategy;

use super::hook::{Go, Interrupted, Moment, Point, StepHook, SubscriptionGap};
use super::riding::{Release, Wrapped};
use super::{exit, Attempt, Bare, Held, Lock, LockCx, LockError, Section};
use crate::composed::Call;
use crate::faults::{self, Fault, FaultKind, FaultPoints};
use crate::fleet_sync::RoomConfig;
use crate::lock_store::node_faults::HeldReplicas;
use crate::redis_pool::StoreError;

/// A room's lock with the room's armed faults around it, for one sale.
pub struct FaultLayer<'a> {
    lock: Bare<'a>,
    armed: Arc<[Fault]>,
    /// A lock-store fault claimed by another sale had yet to strike when the room was last
    /// loaded: this sale waits for it before its acquire.
    strike_pending: bool,
    /// The lock-store fault this sale claimed: it strikes around the next attempt that takes
    /// the lock, once. A std `Mutex`, never held across `.await`.
    claimed: Mutex<Option<Fault>>,
    /// Replicas the `failover` fault holds off during an attempt; dropped, they resume.
    held_replicas: Mutex<Option<HeldReplicas>>,
    /// This instance's token slots (`token-per-instance`), shared by every sale it serves.
    slots: &'a TokenSlots,
}

impl<'a> FaultLayer<'a> {
    /// `lock` under the faults armed for `room`.
    pub(super) fn around(
        lock: Bare<'a>,
        room: &RoomConfig,
        slots: &'a TokenSlots,
    ) -> FaultLayer<'a> {
        FaultLayer {
            lock,
            armed: room.faults.clone(),
            strike_pending: room.store_fault_pending,
            claimed: Mutex::new(None),
            held_replicas: Mutex::new(None),
            slots,
        }
    }

    /// Whether `token-per-instance` is armed here: the room's releases then send the token
    /// of the instance's slot ([`FaultLayer::release`]).
    fn shares_token(&self, cx: &LockCx<'_>) -> bool {
        self.points(cx).is_armed(FaultKind::TokenPerInstance)
    }

    fn points<'c>(&'c self, cx: &'c LockCx<'_>) -> FaultPoints<'c> {
        FaultPoints {
            armed: &self.armed,
            resource: cx.resource,
            keys: cx.keys,
            instance: cx.instance,
        }
    }

    fn claimed(&self) -> std::sync::MutexGuard<'_, Option<Fault>> {
        self.claimed.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn held_replicas(&self) -> std::sync::MutexGuard<'_, Option<HeldReplicas>> {
        self.held_replicas.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The `renewal-outlives-release` fault, when claimed: an unlock that overtakes its own
    /// acquire runs first and finds nothing; the acquire lands after it, and the buyer leaves
    /// without the lock its watchdog goes on renewing.
    async fn overtaken_by_its_unlock(&self, cx: &LockCx<'_>) -> bool {
        let claimed = self
            .points(cx)
            .claim(FaultKind::RenewalOutlivesRelease)
            .await;
        if claimed.is_some() {
            exit::logged(cx, exit::let_go(&*self.lock, cx, Held::plain()).await);
        }
        claimed.is_some()
    }

    /// Where a buyer that found the lock busy may stop: dead in line, or subscribing late.
    async fn busy(&self, cx: &LockCx<'_>) -> Go {
        let points = self.points(cx);
        if points.claim(FaultKind::WaiterDies).await.is_some() {
            return Go::WaiterDied;
        }
        // Only a buyer that waits for release messages subscribes to them.
        if matches!(cx.settings.wait, WaitStrategy::Spin { .. }) {
            return Go::On;
        }
        let claimed = match points.claim(FaultKind::SubscribeGap).await {
            Some(fault) => Some(fault),
            None => points.claim(FaultKind::LateSubscriber).await,
        };
        match claimed {
            Some(fault) => Go::SubscribeAfter(SubscriptionGap {
                gap: Duration::from_millis(fault.ms),
                in_line: fault.kind == FaultKind::SubscribeGap,
            }),
            None => Go::On,
        }
    }

    /// A ZooKeeper release about to send its delete: lost, and given up on or sent again.
    async fn before_delete(&self, cx: &LockCx<'_>) -> Go {
        let points = self.points(cx);
        if points.claim(FaultKind::ReleaseDeleteLost).await.is_some() {
            return Go::DeleteLost { retried: false };
        }
        match points.claim(FaultKind::ReleaseDeleteRetried).await {
            Some(_) => Go::DeleteLost { retried: true },
            None => Go::On,
        }
    }

    /// The point between a lock's first and second acquire step, where `setnx-expire` dies
    /// before its `EXPIRE`: the process aborts (`crash-before-expire`), or the holder alone
    /// stops dead (`holder-dies-between-steps`).
    async fn between_acquire_steps(&self, cx: &LockCx<'_>) -> Go {
        let points = self.points(cx);
        if points.claim(FaultKind::CrashBeforeExpire).await.is_some() {
            faults::crash("between two acquire steps");
        }
        match points.claim(FaultKind::HolderDiesBetweenSteps).await {
            Some(_) => Go::HolderDied,
            None => Go::On,
        }
    }
}

#[async_trait]
impl StepHook for FaultLayer<'_> {
    async fn at(&self, cx: &LockCx<'_>, point: Point) -> Go {
        match point {
            Point::BeforeAttempt => {
                let striking = self.claimed().clone();
                if let Some(fault) = striking {
                    let held = store_strikes::before_attempt(self, cx, &fault).await;
                    *self.held_replicas() = held;
                }
            }
            Point::AfterAttempt { took } => {
                // The store fault strikes after the attempt that took the lock, or that took
                // it and gave it back because too few replicas had it: the primary dies either
                // way; what the failover loses differs.
                let striking = match took {
                    true => self.claimed().take(),
                    false => None,
                };
                if let Some(fault) = striking {
                    store_strikes::after_acquire(cx, &fault).await;
                }
                // Held replicas resume now, after the primary died, unless `WAIT` resumed them.
                drop(self.held_replicas().take());
                // The attempt took the lock; its reply is lost on the way back.
                if took
                    && self
                        .points(cx)
                        .claim(FaultKind::AcquireReplyLost)
                        .await
                        .is_some()
                {
                    return Go::ReplyLost;
                }
            }
            Point::LockWritten => {
                // Replicas held off come back now: `WAIT` is how the holder learns whether
                // they got the write before the primary dies.
                drop(self.held_replicas().take());
            }
            Point::BetweenAcquireSteps => return self.between_acquire_steps(cx).await,
            Point::BetweenReleaseSteps => {
                // Where `uuid-owner`'s lease runs out.
                if let Some(fault) = self.points(cx).claim(FaultKind::ReleaseGap).await {
                    tokio::time::sleep(Duration::from_millis(fault.ms)).await;
                }
            }
            Point::Busy => return self.busy(cx).await,
            Point::BeforeDelete => return self.before_delete(cx).await,
        }
        Go::On
    }

    async fn in_section(
        &self,
        section: &mut Section<'_>,
        moment: Moment,
    ) -> Result<(), Interrupted> {
        let cx = section.sale_cx();
        let points = self.points(&cx);
        match moment {
            Moment::Read => holder::at_the_read(&points, section).await,
            Moment::WorkStarts => holder::as_the_work_starts(&points, section)
                .await
                .map_err(Interrupted::GaveUp),
            Moment::BeforeWrite => holder::before_the_write(&points, section).await,
        }
    }

    fn renewals_give_up(&self) -> bool {
        // Still the sale's to strike: it strikes right after the acquire that starts them.
        self.claimed()
            .as_ref()
            .is_some_and(|f| f.kind == FaultKind::RenewalGivesUp)
    }

    fn claimed_store_fault(&self) -> Option<Fault> {
        self.claimed().clone()
    }
}

#[async_trait]
impl Lock for FaultLayer<'_> {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        self.lock.try_acquire(cx).await
    }

    /// Under `token-per-instance`, the release sends the token it takes from the instance's
    /// slot, whoever's it is, and nothing at all when the slot is empty (the lock is left to
    /// its lease); what it records is still this holder's.
    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        if !self.shares_token(cx) {
            return self.lock.release(cx, held).await;
        }
        let Some(token) = self.slots.take(cx.keys.room()) else {
            tracing::warn!(
                owner = cx.owner,
                "token-per-instance: the slot is empty, nothing to release with"
            );
            return Ok(());
        };
        let sent = LockCx {
            sends_as: Some(&token),
            ..*cx
        };
        self.lock.release(&sent, held).await
    }

    /// The wrapped lock's acquire, with this sale's lock-store fault claimed first (or one
    /// another sale claimed waited for) and the overtaking unlock struck before it.
    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        let claimed = store_strikes::claim(self, cx).await;
        *self.claimed() = claimed;
        let overtaken = self.overtaken_by_its_unlock(cx).await;
        let held = self.lock.acquire(cx).await?;
        if self.shares_token(cx) {
            self.slots.keep(cx.keys.room(), cx.owner);
        }
        if overtaken {
            held.abandon_renewing();
            return Err(LockError::Abandoned);
        }
        Ok(held)
    }

    async fn acquire_again(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        self.lock.acquire_again(cx).await
    }

    fn reentrant(&self) -> bool {
        self.lock.reentrant()
    }

    fn queues(&self) -> bool {
        self.lock.queues()
    }

    fn call_key(&self, cx: &LockCx<'_>) -> Option<String> {
        self.lock.call_key(cx)
    }

    fn around(&self, cx: &LockCx<'_>, calls: Vec<Call>) -> Option<Wrapped> {
        self.lock.around(cx, calls)
    }

    fn release_behind(&self, cx: &LockCx<'_>) -> Option<Release> {
        // Under `token-per-instance` the release goes on its own, after the write: it reads
        // the slot once, as it is sent ([`FaultLayer::release`]).
        match self.shares_token(cx) {
            true => None,
            false => self.lock.release_behind(cx),
        }
    }
}
