//! What a locked sale sends and reads back, as calls the lock carries for it (`composed.rs`):
//! the read (`enter.lua`: the stock, and the overlap clock), the write (`commit.lua`: the new
//! stock, the ledger entry, the overlap count), and what their replies say.

use std::sync::LazyLock;

use oversell_api::tier::Tier;
use serde::Serialize;

use crate::composed::{self, Call, Lua};
use crate::error::AppError;
use crate::redis_pool::StoreError;

use super::{Order, SaleCx};

// Kept with their sources, so that they can be composed with the lock's steps (`composed.rs`).
static ENTER: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("enter.lua")));
static COMMIT: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("commit.lua")));

/// The read, for the sale of `cx.owner`: with the fencing token the acquire takes, if it takes
/// one ([`composed::ACQUIRED`], given by the lock wherever the read is sent).
pub(super) fn read(cx: &SaleCx<'_>) -> Call {
    let keys = cx.keys;
    ENTER
        .call()
        .key(keys.stock())
        .key(keys.exits())
        .key(keys.fence_seen())
        .key(keys.stale_writes_rejected())
        .key(keys.timeline())
        .key(keys.generation())
        .arg(composed::ACQUIRED)
        .arg(cx.instance)
        .arg(&cx.owner)
        .arg(&cx.generation)
}

/// What the read gives: the stock, the exits so far (the overlap clock) and Redis' time in µs.
pub(super) struct Entry {
    pub(super) stock: i64,
    pub(super) exits: i64,
    pub(super) enter_us: i64,
}

/// The read's reply; `None` when the fencing token is already stale.
pub(super) fn entered(
    reply: Option<redis::RedisResult<redis::Value>>,
    fence: Option<u64>,
) -> Result<Option<Entry>, AppError> {
    let reply =
        reply.ok_or_else(|| AppError::Internal("a read gave fewer replies than calls".into()))?;
    let (stock, exits, enter_us): (i64, i64, i64) =
        composed::reply(reply).map_err(StoreError::from)?;
    let stale = stock < 0 && fence.is_some();
    Ok((!stale).then_some(Entry {
        stock,
        exits,
        enter_us,
    }))
}

/// The write a sale makes on its way out of the critical section: the order, the stock it
/// leaves, and what the ledger entry records of the sale's hold.
pub(super) struct Write<'a> {
    pub(super) order: &'a Order,
    pub(super) order_id: &'a str,
    pub(super) new_stock: i64,
    pub(super) depth: u32,
    /// Redis' clock at the read, and the instance's when the read reached the sale.
    pub(super) enter_us: i64,
    pub(super) read_us: i64,
}

/// When a locked sale's section passed its steps, in µs since the Unix epoch: `enter_us` on
/// the resource store's clock (its read, `enter.lua`); `read_us` and `write_us` on the
/// instance's, when the read's replies reached the sale and when its write was built to be
/// sent. On one host the two clocks are one, so the ledger splits a section's time inside
/// into the store's answer reaching the instance, the instance's work, and the write reaching
/// the store (`loadtest run`'s `Inside` line, `bench/turn-split.py`); across hosts only
/// `enter_us` and `exit_us` compare.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct SectionTimes {
    enter_us: i64,
    read_us: i64,
    write_us: i64,
}

/// The instance's clock, in µs since the Unix epoch (0 for a clock set before 1970).
pub(super) fn instance_clock_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
        })
}

/// The write, with its ledger entry, and the overlap count on the way out (`commit.lua`); with
/// no write (too little stock), the way out alone.
pub(super) fn commit(
    cx: &SaleCx<'_>,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
    fence: Option<u64>,
) -> Result<Call, AppError> {
    let entry = match &write {
        Some(w) => {
            let times = SectionTimes {
                enter_us: w.enter_us,
                read_us: w.read_us,
                write_us: instance_clock_us(),
            };
            ledger_entry(cx, w.order, w.order_id, fence, w.depth, Some(times))?
        }
        None => String::new(),
    };
    Ok(COMMIT
        .call()
        .key(cx.keys.stock())
        .key(cx.keys.ledger())
        .key(cx.keys.items_sold())
        .key(cx.keys.exits())
        .key(cx.keys.overlaps())
        .key(cx.keys.fence_seen())
        .key(cx.keys.stale_writes_rejected())
        .key(cx.keys.timeline())
        .key(cx.keys.generation())
        .key(cx.keys.initial_stock())
        .arg(exits_at_enter)
        .arg(
            write
                .as_ref()
                .map(|w| w.new_stock.to_string())
                .unwrap_or_default(),
        )
        .arg(write.as_ref().map_or(0, |w| w.order.qty))
        .arg(entry)
        .arg(fence.map(|f| f.to_string()).unwrap_or_default())
        .arg(cx.instance)
        .arg(&cx.owner)
        .arg(&cx.generation)
        .arg(u64::try_from(cx.began.elapsed().as_micros()).unwrap_or(u64::MAX)))
}

/// What `commit.lua` did, read once from its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Committed {
    /// The write is in: stock, ledger entry, items sold; `oversold`: how many of its items
    /// were beyond the room's initial stock.
    Sold { oversold: u64 },
    /// No write was asked for (too little stock): the section was only left.
    SoldOut,
    /// The fencing token was older than one the stock had seen: the write was refused.
    Stale,
    /// The room was reset after this sale read: nothing written.
    Reset,
}

pub(super) fn committed(reply: redis::RedisResult<redis::Value>) -> Result<Committed, StoreError> {
    let (outcome, _overlaps, oversold): (String, i64, u64) = composed::reply(reply)?;
    Ok(match outcome.as_str() {
        "sold" => Committed::Sold { oversold },
        "sold_out" => Committed::SoldOut,
        "stale" => Committed::Stale,
        "reset" => Committed::Reset,
        other => {
            return Err(StoreError::Failed(redis::RedisError::from((
                redis::ErrorKind::Client,
                "commit.lua answered an outcome it never gives",
                other.to_owned(),
            ))))
        }
    })
}

/// The ledger entry, as JSON; the scripts append Redis' clock times to it.
#[derive(Serialize)]
struct LedgerEntry<'a> {
    order_id: &'a str,
    buyer: &'a str,
    qty: u32,
    instance: &'a str,
    tier: Tier,
    fence: Option<u64>,
    /// How many holds the owner had at the write: 2 proves the nested re-entry happened.
    depth: u32,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    times: Option<SectionTimes>,
}

/// The order as the JSON the ledger stores.
pub(super) fn ledger_entry(
    cx: &SaleCx<'_>,
    order: &Order,
    order_id: &str,
    fence: Option<u64>,
    depth: u32,
    times: Option<SectionTimes>,
) -> Result<String, AppError> {
    let entry = LedgerEntry {
        order_id,
        buyer: &order.buyer,
        qty: order.qty,
        instance: cx.instance,
        tier: cx.settings.tier,
        fence,
        depth,
        times,
    };
    serde_json::to_string(&entry).map_err(|e| AppError::Internal(e.to_string()))
}
