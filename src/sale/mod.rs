//! The deduct step of `POST /sale`, deliberately the articles' read-check-write:
//! acquire → `GET stock` → business work → `SET stock n-qty` + ledger entry → release.
//!
//! The ground truth is written by the same scripts that read and write the stock
//! (`enter.lua`, `commit.lua`), so it costs no extra round trip: a locked sale is
//! acquire + enter + commit + release, plus whatever the tier's lock itself needs.
//!
//! Round trips are what a waiting buyer waits for, so steps that can ride together do, in the
//! order the articles give them (`lock/riding.rs`), composed into one script per round trip
//! (`composed.rs`): with the lock in the resource store, `lua-release` is acquire + enter
//! (the enter only if the acquire took the lock), commit + release (2 round trips, not 4),
//! and the reentrant tiers acquire + re-entry + enter + nested release, commit + release
//! (2, not 6). Under
//! `wait: cohort` (`lock/cohort.rs`) a holder hands the lock to the next buyer of its instance
//! and that buyer's enter rides behind the holder's commit: one round trip per sale.
//!
//! This file is the sale as it runs, top to bottom: [`sell`] acquires, the critical section
//! reads, checks, does the business work and writes, and the lock is let go. Beside it:
//!
//! - `read`: the read (`enter.lua`) and its plan, which can ride with the acquire or be sent
//!   by the holder before (a cohort's pass).
//! - `leave`: the write (`commit.lua`) and the lock on its way out ([`Leaving`]): released in
//!   the write's round trip, handed to a successor, or released on its own after.
//! - `in_cohort`: the sale under `wait: cohort`, the same critical section entered with a lock
//!   taken or handed over.
//! - `context`: what a sale needs from the instance ([`SaleCx`]), and the lock's view of it.
//! - `store_fault`: claiming a lock-store fault before the acquire.
//! - `door`: the sold-out sign, read before queueing for the lock.
//! - `ledger`: the ledger entry a write appends.
//! - `partition_strike`: the network cut a holder meets as it starts its work.
//! - `atomic_deduct`: the `none` tier's one-script sale; `run`: the sale as the API runs it.

mod atomic_deduct;
mod context;
mod door;
mod in_cohort;
mod leave;
mod ledger;
mod partition_strike;
mod read;
mod run;
mod store_fault;

pub use context::SaleCx;
pub use run::run_sale;

use std::time::{Duration, Instant};

use oversell_api::settings::WaitStrategy;
use oversell_api::tier::Tier;
use serde::Serialize;

use crate::error::AppError;
use crate::faults::{self, FaultKind};
use crate::lock::{Held, Lock, LockCx, LockError, TripReplies};
use crate::redis_pool::StoreError;
use context::lock_cx;
use door::at_the_door;
use in_cohort::sell_in_cohort;
use leave::{leave, Committed, Leaving, Left, Write};
use ledger::ledger_entry;
use read::{read, Entry, ReadPlan};
use store_fault::claim_store_fault;

/// One sale under the room's tier: acquire, the critical section (read, check, business work,
/// write), release.
pub async fn sell(cx: &SaleCx<'_>, order: &Order) -> Result<Sold, AppError> {
    let tier = cx.settings.tier;
    let Some(lock) = cx.locks.get(tier) else {
        return sell_lock_free(cx, order).await;
    };
    if let Some(sold_out) = at_the_door(cx, order).await {
        cx.metrics.turned_away(tier);
        return Err(sold_out);
    }
    let faults = cx.fault_points();
    if let WaitStrategy::Cohort { passes } = cx.settings.wait {
        // `none` has no lock to pass, `local` no lock beyond the instance, and the queues of
        // ZooKeeper, PostgreSQL and `fair` are already first come first served across the
        // fleet, their places bound to their owners (a node, a session, a queue entry): a pass
        // within one instance would jump them.
        if !matches!(tier, Tier::None | Tier::Local | Tier::Fair) && !tier.queues_in_store() {
            return sell_in_cohort(cx, lock, &faults, order, passes).await;
        }
    }
    let store_fault = std::sync::Mutex::new(claim_store_fault(cx, &faults).await);
    let held_replicas = std::sync::Mutex::new(None);
    let lcx = lock_cx(cx, &cx.owner, &faults, &store_fault, &held_replicas);
    // Built once: a waiter under pubsub may try several times.
    let read = ReadPlan::of(cx).calls_behind_acquire();
    let acquiring = LockCx {
        read: Some(&read),
        ..lcx
    };
    // An unlock that overtakes its own acquire runs first and finds nothing; the acquire
    // lands after it, and the buyer leaves without the lock its watchdog goes on renewing.
    let overtaken = faults
        .claim(FaultKind::RenewalOutlivesRelease)
        .await
        .is_some();
    if overtaken {
        release(lock, &lcx, Held::plain()).await;
    }
    let waited = Instant::now();
    let mut held = match lock.acquire(&acquiring).await {
        Ok(held) => held,
        Err(err) => return Err(lock_failed(cx, err).await),
    };
    if overtaken {
        held.abandon_renewing();
        return Err(AppError::AcquireAbandoned);
    }
    cx.metrics.lock_wait(tier, waited.elapsed());
    // The read, when it rode with the acquire.
    let read = held.read.take().map(|read| *read);
    let mut leaving = Leaving::new(held, &|| None, false);
    let result = critical_section(cx, &lcx, lock, &mut leaving, order, read).await;
    match leaving.left() {
        Left::Released => {}
        Left::Holding(held) => release(lock, &lcx, held).await,
        Left::Passing(..) => unreachable!("only a cohort passes the lock"),
    }
    result
}

/// Read, check, business work, write; the lock leaves as `leaving` says.
async fn critical_section(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    leaving: &mut Leaving<'_>,
    order: &Order,
    read_ahead: Option<TripReplies>,
) -> Result<Sold, AppError> {
    let fence = leaving.fence;
    let (entered, depth) = read(cx, lcx, lock, leaving.depth, fence, read_ahead).await?;
    let Some(Entry {
        stock,
        exits,
        enter_us,
    }) = entered
    else {
        return Err(AppError::LockLost);
    };
    if lcx.faults.claim(FaultKind::CrashHolding).await.is_some() {
        faults::crash("holding the lock");
    }
    // The same death for the room alone: nothing more is sent, the lock is left as it is.
    if lcx.faults.claim(FaultKind::HolderDies).await.is_some() {
        leaving.die();
        return Err(AppError::HolderDied);
    }
    let qty = i64::from(order.qty);
    if stock < qty {
        if stock <= 0 {
            cx.signals.sold_out.saw(cx.keys.room());
        }
        if leave(cx, lcx, lock, leaving, exits, None).await? == Committed::Reset {
            return Err(AppError::RoomReset { read: true });
        }
        return Err(AppError::SoldOut {
            stock_left: stock,
            requested: order.qty,
        });
    }
    // A helper that locks too, called in the work: the nested step `reentrant-nested` makes on
    // every sale, here for any tier. A lock that does not know its owner waits for itself.
    if lcx.faults.claim(FaultKind::NestedLock).await.is_some() {
        match lock.acquire_again(lcx).await {
            Ok(again) => lock.release(lcx, again).await?,
            Err(err) => {
                // The sale gives up: it leaves the section without writing.
                leave(cx, lcx, lock, leaving, exits, None).await?;
                return Err(lock_failed(cx, err).await);
            }
        }
    }
    // A partition strikes as the holder starts its work: it works on, cut off or not.
    if let Some(fault) = lcx.faults.claim(FaultKind::Partition).await {
        partition_strike::strike(lcx, &fault).await;
    }
    // A zero-length sleep would still wait for the timer's next tick (up to 1 ms).
    if cx.settings.business_ms > 0 {
        tokio::time::sleep(cx.settings.business()).await;
    }
    // Read done, write not yet: the articles' GC pause strikes here.
    if let Some(fault) = lcx.faults.claim(FaultKind::Freeze).await {
        faults::freeze(Duration::from_millis(fault.ms));
    }
    // Here too the instance's CPU runs out: the process runs on, its renewals wait for a worker.
    if let Some(fault) = lcx.faults.claim(FaultKind::CpuStarve).await {
        faults::starve_runtime(Duration::from_millis(fault.ms)).await;
    }
    // The same pause for the room alone: its renewals stop with it, as a paused process's do.
    if let Some(fault) = lcx.faults.claim(FaultKind::HolderPause).await {
        leaving.stop_renewing();
        tokio::time::sleep(Duration::from_millis(fault.ms)).await;
    }
    let order_id = uuid::Uuid::now_v7().to_string();
    let entry = ledger_entry(cx, order, &order_id, fence, depth, Some(enter_us))?;
    let write = Write {
        new_stock: stock - qty,
        qty: order.qty,
        entry: &entry,
    };
    match leave(cx, lcx, lock, leaving, exits, Some(write)).await? {
        Committed::Sold => Ok(Sold {
            order_id,
            stock_left: stock - qty,
            instance: cx.instance.to_owned(),
            tier: cx.settings.tier,
            fence,
        }),
        Committed::Stale => Err(AppError::LockLost),
        Committed::Reset => Err(AppError::RoomReset { read: true }),
        Committed::SoldOut => Err(AppError::Internal("a write answered sold out".into())),
    }
}

/// Gives the lock back on its own round trip; a failure leaves it to its lease.
async fn release(lock: &dyn Lock, lcx: &LockCx<'_>, held: Held) {
    if let Err(err) = lock.release(lcx, held).await {
        // The sale's outcome stands; the lock is left to its lease.
        tracing::warn!(%err, tier = %lcx.settings.tier, "release failed");
    }
}

/// Most items one order may buy.
pub const MAX_QTY: u32 = 10;
/// Longest buyer id, in bytes.
pub const MAX_BUYER_LEN: usize = 64;

/// One buyer's request, validated by [`Order::new`], the only way to make one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    buyer: String,
    qty: u32,
}

impl Order {
    /// An order of `qty` items (1..=[`MAX_QTY`]) for `buyer` (1..=[`MAX_BUYER_LEN`] bytes).
    pub fn new(buyer: String, qty: u32) -> Result<Order, String> {
        if !(1..=MAX_QTY).contains(&qty) {
            return Err(format!("qty must be 1..={MAX_QTY}, got {qty}"));
        }
        if buyer.is_empty() || buyer.len() > MAX_BUYER_LEN {
            return Err(format!("buyer must be 1..={MAX_BUYER_LEN} bytes"));
        }
        Ok(Order { buyer, qty })
    }
}

/// What a successful sale returns to the buyer.
#[derive(Debug, Clone, Serialize)]
pub struct Sold {
    pub order_id: String,
    pub stock_left: i64,
    pub instance: String,
    pub tier: Tier,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
}

async fn sell_lock_free(cx: &SaleCx<'_>, order: &Order) -> Result<Sold, AppError> {
    let order_id = uuid::Uuid::now_v7().to_string();
    let entry = ledger_entry(cx, order, &order_id, None, 0, None)?;
    match atomic_deduct::sell(cx.resource, cx.keys, order.qty, &entry, cx.instance).await? {
        Ok(stock_left) => Ok(Sold {
            order_id,
            stock_left,
            instance: cx.instance.to_owned(),
            tier: cx.settings.tier,
            fence: None,
        }),
        Err(stock) => Err(AppError::SoldOut {
            stock_left: stock,
            requested: order.qty,
        }),
    }
}

/// A lock this sale could not have (or found lost), as the sale answers it.
async fn lock_failed(cx: &SaleCx<'_>, err: LockError) -> AppError {
    match err {
        LockError::Timeout => lock_timeout(cx).await,
        LockError::HolderDied => AppError::HolderDied,
        LockError::WaiterDied => AppError::WaiterDied,
        LockError::Lost => AppError::LockLost,
        LockError::Store(err) => err.into(),
    }
}

/// A buyer who gave up on the lock: counted (best effort, the 503 goes out regardless).
async fn lock_timeout(cx: &SaleCx<'_>) -> AppError {
    let result = async {
        let mut conn = cx.resource.conn().await?;
        let _: i64 = redis::cmd("INCR")
            .arg(cx.keys.lock_timeouts())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(())
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(%err, "could not count a lock timeout");
    }
    AppError::LockTimeout {
        deadline_ms: cx.settings.wait_deadline_ms,
    }
}
