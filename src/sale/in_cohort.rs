//! A sale under `wait: cohort` (`lock/cohort.rs`): the lock taken in Redis by the cohort's
//! lead, or handed over by the previous sale of the instance with this sale's read already
//! done; left by handing it on, or releasing it.

use std::time::Instant;

use crate::error::AppError;
use crate::faults::FaultPoints;
use crate::lock::cohort::{self, Baton, ReadAhead, Start};
use crate::lock::{Lock, LockCx};
use crate::lock_store::LockStoreKind;

use super::context::lock_cx;
use super::leave::{Leaving, Left};
use super::read::ReadPlan;
use super::store_fault::claim_store_fault;
use super::{critical_section, lock_failed, lock_timeout, release, Order, SaleCx, Sold};

/// A sale under `wait: cohort` (see `lock/cohort.rs`): the same critical section, entered with
/// a lock this sale took in Redis or was handed by the previous sale of its instance (with its
/// read already done, in that sale's last round trip), and left by handing the lock on or
/// releasing it.
pub(super) async fn sell_in_cohort(
    cx: &SaleCx<'_>,
    lock: &dyn Lock,
    faults: &FaultPoints<'_>,
    order: &Order,
    passes: u32,
) -> Result<Sold, AppError> {
    let waited = Instant::now();
    let deadline = tokio::time::Instant::now() + cx.settings.wait_deadline();
    let queue = cx.signals.cohorts.queue(cx.keys.room(), cx.settings.tier);
    let Ok((turn, start)) = queue
        .turn(deadline, read_ahead(cx, lock), &cx.generation)
        .await
    else {
        return Err(lock_timeout(cx).await);
    };
    let store_fault = std::sync::Mutex::new(None);
    let held_replicas = std::sync::Mutex::new(None);
    let (baton, read) = match start {
        Start::Passed(baton, read) => (baton, read),
        Start::Lead { after_release } => {
            // Only a sale that takes the lock in Redis can meet a lock-store fault.
            *store_fault.lock().unwrap_or_else(|p| p.into_inner()) =
                claim_store_fault(cx, faults).await;
            let read = ReadPlan::of(cx).calls_behind_acquire();
            let lcx = LockCx {
                read: Some(&read),
                ..lock_cx(cx, &cx.owner, faults, &store_fault, &held_replicas)
            };
            // On an error the turn is dropped, which hands it to the next buyer.
            match cohort::lead(lock, &lcx, after_release, deadline).await {
                Ok(baton) => (baton, None),
                Err(err) => return Err(lock_failed(cx, err).await),
            }
        }
    };
    cx.metrics.lock_wait(cx.settings.tier, waited.elapsed());
    // Every sale of the cohort acts on the lock under the owner that took it in Redis; the
    // ground truth still names this sale (`cx.owner`).
    let owner = baton.owner().to_owned();
    let lcx = lock_cx(cx, &owner, faults, &store_fault, &held_replicas);
    let (mut held, lease) = baton.into_parts();
    // A lead's read may have ridden with its acquire.
    let read = read.or(held.read.take().map(|read| *read));
    let next = || turn.successor(&lease, passes, cx.settings.ttl());
    let mut leaving = Leaving::new(held, &next, true);
    let result = critical_section(cx, &lcx, lock, &mut leaving, order, read).await;
    let left = leaving.left();
    match left {
        Left::Passing(held, to, read) => {
            match turn.pass(to, Baton::from_parts(held, lease), read) {
                Ok(()) => cx.metrics.lock_passed(cx.settings.tier),
                // The successor's task is gone.
                Err(back) => {
                    let (turn, baton) = *back;
                    cohort::forget_old_release(&lcx);
                    release(lock, &lcx, baton.into_parts().0).await;
                    turn.released();
                }
            }
        }
        Left::Holding(held) => {
            cohort::forget_old_release(&lcx);
            release(lock, &lcx, held).await;
            turn.released();
        }
        Left::Released => turn.released(),
    }
    result
}

/// This sale's read in a form the holder before it can send (a cohort's pass), or `None`
/// when it cannot ride there: a reentrant tier whose lock lives on another server.
fn read_ahead(cx: &SaleCx<'_>, lock: &dyn Lock) -> Option<ReadAhead> {
    if lock.reentrant() && cx.store.kind() != LockStoreKind::Shared {
        return None;
    }
    let plan = ReadPlan::of(cx);
    Some(Box::new(move |fence: Option<u64>| plan.calls(fence)))
}
