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
//! This file is the sale as it runs, top to bottom: [`sell`] hands its read to the lock
//! (`lock::Section`), which takes the lock and gives the read's replies back; the critical
//! section checks, does the business work and hands its write to the lock to leave with.
//! Beside it:
//!
//! - `scripts`: the read (`enter.lua`) and the write (`commit.lua`) as calls, the ledger entry
//!   the write appends, and what their replies say.
//! - `context`: what a sale needs from the instance ([`SaleCx`]), the lock's view of it, and
//!   the lock-store fault it claims before the acquire.
//! - `door`: the sold-out sign, read before queueing for the lock.
//! - `partition_strike`: the network cut a holder meets as it starts its work.
//! - `atomic_deduct`: the `none` tier's one-script sale; `run`: the sale as the API runs it.

mod atomic_deduct;
mod context;
mod door;
mod partition_strike;
mod run;
mod scripts;

pub use context::SaleCx;
pub use run::run_sale;

use std::time::Duration;

use oversell_api::tier::Tier;
use serde::Serialize;

use crate::error::AppError;
use crate::faults::{self, FaultKind, FaultPoints};
use crate::lock::{LockError, Section};
use crate::redis_pool::StoreError;
use context::{claim_store_fault, lock_cx};
use door::at_the_door;
use scripts::{
    commit, committed, entered, instance_clock_us, ledger_entry, Committed, Entry, Write,
};

/// One sale under the room's tier: acquire, the critical section (read, check, business work,
/// write), release.
pub async fn sell(cx: &SaleCx<'_>, order: &Order) -> Result<Sold, AppError> {
    let tier = cx.settings.tier;
    let Some(lock) = cx.lock else {
        return sell_lock_free(cx, order).await;
    };
    if let Some(sold_out) = at_the_door(cx, order).await {
        cx.metrics.turned_away(tier);
        return Err(sold_out);
    }
    let faults = cx.fault_points();
    let store_fault = std::sync::Mutex::new(claim_store_fault(cx, &faults).await);
    let held_replicas = std::sync::Mutex::new(None);
    let lcx = lock_cx(cx, &faults, &store_fault, &held_replicas);
    // Built once, as data: a waiter under pubsub may try several times, and a cohort's holder
    // may send it for this sale.
    let read = [scripts::read(cx)];
    let (mut section, read) = match Section::enter(lock, lcx, &read).await {
        Ok(entered) => entered,
        Err(err) => return Err(lock_failed(cx, err).await),
    };
    let result = match read {
        Ok(replies) => critical_section(cx, &faults, &mut section, order, replies).await,
        Err(err) => Err(lock_failed(cx, err).await),
    };
    section.done().await;
    result
}

/// Read, check, business work, write; the lock leaves with the write.
async fn critical_section(
    cx: &SaleCx<'_>,
    faults: &FaultPoints<'_>,
    section: &mut Section<'_>,
    order: &Order,
    read: Vec<redis::RedisResult<redis::Value>>,
) -> Result<Sold, AppError> {
    let read_us = instance_clock_us();
    let (fence, depth) = (section.fence, section.depth);
    let Some(Entry {
        stock,
        exits,
        enter_us,
    }) = entered(read.into_iter().next(), fence)?
    else {
        // The fencing check refused this holder's token: a newer one was seen.
        cx.metrics.stale_write_rejected(cx.settings.tier);
        return Err(AppError::LockLost);
    };
    if faults.claim(FaultKind::CrashHolding).await.is_some() {
        faults::crash("holding the lock");
    }
    // The same death for the room alone: nothing more is sent, the lock is left as it is.
    if faults.claim(FaultKind::HolderDies).await.is_some() {
        section.die();
        return Err(AppError::HolderDied);
    }
    let qty = i64::from(order.qty);
    if stock < qty {
        if stock <= 0 {
            cx.signals.sold_out.saw(cx.keys.room());
        }
        let left = section.leave(&commit(cx, exits, None, fence)?).await?;
        if committed(left)? == Committed::Reset {
            return Err(AppError::RoomReset { read: true });
        }
        return Err(AppError::SoldOut {
            stock_left: stock,
            requested: order.qty,
        });
    }
    // A helper that locks too, called in the work: the nested step `reentrant-nested` makes on
    // every sale, here for any tier. A lock that does not know its owner waits for itself.
    if faults.claim(FaultKind::NestedLock).await.is_some() {
        let (lock, lcx) = (section.lock(), section.cx());
        match lock.acquire_again(&lcx).await {
            Ok(again) => lock.release(&lcx, again).await?,
            Err(err) => {
                // The sale gives up: it leaves the section without writing.
                let left = section.leave(&commit(cx, exits, None, fence)?).await?;
                committed(left)?;
                return Err(lock_failed(cx, err).await);
            }
        }
    }
    // A partition strikes as the holder starts its work: it works on, cut off or not.
    if let Some(fault) = faults.claim(FaultKind::Partition).await {
        partition_strike::strike(&section.cx(), &fault).await;
    }
    // A zero-length sleep would still wait for the timer's next tick (up to 1 ms).
    if cx.settings.business_ms > 0 {
        tokio::time::sleep(cx.settings.business()).await;
    }
    // Read done, write not yet: the articles' GC pause strikes here.
    if let Some(fault) = faults.claim(FaultKind::Freeze).await {
        faults::freeze(Duration::from_millis(fault.ms));
    }
    // Here too the instance's CPU runs out: the process runs on, its renewals wait for a worker.
    if let Some(fault) = faults.claim(FaultKind::CpuStarve).await {
        faults::starve_runtime(Duration::from_millis(fault.ms)).await;
    }
    // The same pause for the room alone: its renewals stop with it, as a paused process's do.
    if let Some(fault) = faults.claim(FaultKind::HolderPause).await {
        section.stop_renewing();
        tokio::time::sleep(Duration::from_millis(fault.ms)).await;
    }
    let order_id = uuid::Uuid::now_v7().to_string();
    let write = Write {
        order,
        order_id: &order_id,
        new_stock: stock - qty,
        depth,
        enter_us,
        read_us,
    };
    let left = section
        .leave(&commit(cx, exits, Some(write), fence)?)
        .await?;
    match committed(left)? {
        Committed::Sold { oversold } => {
            cx.metrics.oversold(cx.settings.tier, oversold);
            Ok(Sold {
                order_id,
                stock_left: stock - qty,
                instance: cx.instance.to_owned(),
                tier: cx.settings.tier,
                fence,
            })
        }
        Committed::Stale => {
            cx.metrics.stale_write_rejected(cx.settings.tier);
            Err(AppError::LockLost)
        }
        Committed::Reset => Err(AppError::RoomReset { read: true }),
        Committed::SoldOut => Err(AppError::Internal("a write answered sold out".into())),
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
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
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
        LockError::Abandoned => AppError::AcquireAbandoned,
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
