//! The deduct step of `POST /sale`, deliberately the articles' read-check-write:
//! acquire → `GET stock` → business work → `SET stock n-qty` + ledger entry → release.
//!
//! The ground truth is written by the same scripts that read and write the stock
//! (`enter.lua`, `commit.lua`), so it costs no extra round trip: a locked sale is
//! acquire + enter + commit + release, plus whatever the tier's lock itself needs.
//!
//! Round trips are what a waiting buyer waits for, so steps that can ride together do, in the
//! order the articles give them (`lock/riding.rs`), composed into one script per round trip
//! (`composed/`): with the lock in the resource store, `lua-release` is acquire + enter
//! (the enter only if the acquire took the lock), commit + release (2 round trips, not 4),
//! and the reentrant tiers acquire + re-entry + enter + nested release, commit + release
//! (2, not 6). Under
//! `wait: cohort` (`lock/cohort.rs`) a holder hands the lock to the next buyer of its instance
//! and that buyer's enter rides behind the holder's commit: one round trip per sale.
//!
//! This file is the sale as it runs, top to bottom, one way: [`sell`] hands its read to the
//! lock (`lock::Section`), which takes the lock and gives the read's replies back; the critical
//! section reads them, checks, does the business work and says how it leaves (with the order,
//! sold out, or giving up) as one write; the lock leaves with that write and gives its reply
//! back, which the sale answers. Beside it:
//!
//! - `scripts`: the read (`enter.lua`) and the write (`commit.lua`) as calls, and the ledger
//!   entry the write appends.
//! - `context`: what a sale needs from the instance ([`SaleCx`]), and the lock's view of it.
//! - `door`: the sold-out sign, read before queueing for the lock.
//! - `atomic_deduct`: the `none` tier's one-script sale; `run`: the sale as the API runs it.
//!
//! At three moments of the section (the read done, the work starting, the write next) the sale
//! hands control to the lock's hook ([`Section::hook`]): a room with faults armed strikes its holder's
//! faults there; a plain sale goes straight on.

mod atomic_deduct;
mod context;
mod door;
mod run;
mod scripts;

pub use context::SaleCx;
pub use run::run_sale;

use oversell_api::tier::Tier;
use redis::{RedisResult, Value};
use serde::Serialize;

use crate::composed::Call;
use crate::error::AppError;
use crate::lock::{Interrupted, LockError, Moment, Section};
use crate::metrics::SaleRecord;
use crate::redis_pool::StoreError;
use context::lock_cx;
use door::at_the_door;
use scripts::{ledger_entry, Write};

/// One sale under the room's tier: acquire, the critical section (read, check, business work),
/// leave with the write, answer. What the sale met on the way goes in `met`.
pub async fn sell(cx: &SaleCx<'_>, order: &Order, met: &mut SaleRecord) -> Result<Sold, AppError> {
    let Some(lock) = cx.lock else {
        return sell_lock_free(cx, order).await;
    };
    let lcx = lock_cx(cx, lock);
    if let Some(sold_out) = at_the_door(cx, lcx.hook.is_some(), order).await {
        met.turned_away = true;
        return Err(sold_out);
    }
    // Built once, as data: a waiter under pubsub may try several times, and a cohort's holder
    // may send it for this sale.
    let read = [scripts::read(cx)];
    let (mut section, read) = match Section::enter(&**lock, lcx, &read).await {
        Ok(entered) => entered,
        Err(err) => return Err(lock_failed(cx, err).await),
    };
    met.lock_wait = Some(section.waited);
    let leaving = match read {
        Ok(replies) => critical_section(cx, &mut section, order, replies, met).await,
        Err(err) => Err(Stop::Refused(lock_failed(cx, err).await)),
    };
    let (call, way_out) = match leaving {
        Ok(leaving) => leaving,
        Err(Stop::Died) => {
            section.die();
            return Err(AppError::HolderDied);
        }
        Err(Stop::Refused(err)) => {
            section.let_go().await;
            return Err(err);
        }
    };
    let left = section.leave(&call).await?;
    met.passed = left.passed;
    answer(cx, way_out, left.reply, met).await
}

/// Why a critical section ended without its write.
enum Stop {
    /// The holder died holding the lock: it stays where it is.
    Died,
    /// The sale is refused: the lock is let go.
    Refused(AppError),
}

/// How a critical section leaves: every way writes through `commit.lua` (the overlap count's
/// exit), with the order or without.
enum WayOut {
    /// With the order: sold, if the write goes in.
    Sold {
        order_id: String,
        stock_left: i64,
        fence: Option<u64>,
    },
    /// Without: too little stock.
    SoldOut { stock: i64, requested: u32 },
    /// Without: a nested lock the sale took in its work failed, or the holder learnt before
    /// its write that its lock was lost.
    GaveUp(LockError),
}

/// Read, check, business work: the write the section leaves with, and which way it leaves.
async fn critical_section(
    cx: &SaleCx<'_>,
    section: &mut Section<'_>,
    order: &Order,
    read: Vec<RedisResult<Value>>,
    met: &mut SaleRecord,
) -> Result<(Call, WayOut), Stop> {
    let read_us = instance_clock_us();
    let depth = section.depth;
    let reply = read.into_iter().next().unwrap_or(Ok(Value::Nil));
    let (stock, exits, enter_us): (i64, i64, i64) = reply
        .and_then(|reply| Ok(redis::from_redis_value(reply)?))
        .map_err(|err| Stop::Refused(StoreError::from(err).into()))?;
    if stock < 0 && section.fence.is_some() {
        // The fencing check refused this holder's token: a newer one was seen.
        met.stale_write_rejected = true;
        return Err(Stop::Refused(AppError::LockLost { newer_wrote: true }));
    }
    if let Err(Interrupted::Died) = at(section, Moment::Read).await {
        return Err(Stop::Died);
    }
    // The write carries the token the section holds when it is sent: the one the lock was
    // taken with, unless the hook sent the write where no token is checked.
    let leave = |write: Option<Write>, way_out, fence| {
        let call = scripts::commit(cx, exits, write, fence).map_err(Stop::Refused)?;
        Ok((call, way_out))
    };
    let qty = i64::from(order.qty);
    if stock < qty {
        if stock <= 0 {
            cx.signals.sold_out.saw(cx.keys.room());
        }
        let requested = order.qty;
        return leave(None, WayOut::SoldOut { stock, requested }, section.fence);
    }
    match at(section, Moment::WorkStarts).await {
        Ok(()) => {}
        Err(Interrupted::GaveUp(err)) => return leave(None, WayOut::GaveUp(err), section.fence),
        Err(Interrupted::Died) => return Err(Stop::Died),
    }
    // A zero-length sleep would still wait for the timer's next tick (up to 1 ms).
    if cx.settings.business_ms > 0 {
        tokio::time::sleep(cx.settings.business()).await;
    }
    match at(section, Moment::BeforeWrite).await {
        Ok(()) => {}
        Err(Interrupted::GaveUp(err)) => return leave(None, WayOut::GaveUp(err), section.fence),
        Err(Interrupted::Died) => return Err(Stop::Died),
    }
    let order_id = uuid::Uuid::now_v7().to_string();
    let write = Write {
        order,
        order_id: &order_id,
        new_stock: stock - qty,
        depth,
        enter_us,
        read_us,
        write_us: instance_clock_us(),
    };
    let stock_left = stock - qty;
    let fence = section.fence;
    leave(
        Some(write),
        WayOut::Sold {
            order_id: order_id.clone(),
            stock_left,
            fence,
        },
        fence,
    )
}

/// Hands control to the lock's hook at `moment` of the section; a plain sale has none.
async fn at(section: &mut Section<'_>, moment: Moment) -> Result<(), Interrupted> {
    match section.hook {
        None => Ok(()),
        Some(hook) => hook.in_section(section, moment).await,
    }
}

/// The sale's answer, from the way it left and what `commit.lua` replied.
async fn answer(
    cx: &SaleCx<'_>,
    way_out: WayOut,
    reply: RedisResult<Value>,
    met: &mut SaleRecord,
) -> Result<Sold, AppError> {
    let (outcome, _overlaps, oversold): (String, i64, u64) = reply
        .and_then(|reply| Ok(redis::from_redis_value(reply)?))
        .map_err(StoreError::from)?;
    let tier = cx.settings.tier;
    match (way_out, outcome.as_str()) {
        (WayOut::GaveUp(err), _) => Err(lock_failed(cx, err).await),
        // The room was reset after this sale read: nothing written.
        (_, "reset") => Err(AppError::RoomReset { read: true }),
        (WayOut::SoldOut { stock, requested }, _) => Err(AppError::SoldOut {
            stock_left: stock,
            requested,
        }),
        (
            WayOut::Sold {
                order_id,
                stock_left,
                fence,
            },
            "sold",
        ) => {
            met.oversold = oversold;
            let instance = cx.instance.to_owned();
            Ok(Sold {
                order_id,
                stock_left,
                instance,
                tier,
                fence,
            })
        }
        // The fencing token was older than one the stock had seen: the write was refused.
        (WayOut::Sold { .. }, "stale") => {
            met.stale_write_rejected = true;
            Err(AppError::LockLost { newer_wrote: true })
        }
        (WayOut::Sold { .. }, other) => {
            Err(AppError::Internal(format!("a write answered {other:?}")))
        }
    }
}

/// The instance's clock, in µs since the Unix epoch (0 for a clock set before 1970).
fn instance_clock_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
        })
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
        LockError::Lost => AppError::LockLost { newer_wrote: false },
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
