//! What a locked sale sends, as calls the lock carries for it (`composed/`): the read
//! (`enter.lua`, replying the stock, the overlap clock and Redis' time), the write
//! (`commit.lua`: the new stock, the ledger entry, the overlap count; replying what it did,
//! the overlaps and the items oversold), and the ledger entry the write appends. Their replies
//! are read where the sale answers (`sale/mod.rs`).

use std::sync::LazyLock;

use oversell_api::tier::Tier;
use serde::Serialize;

use crate::composed::{self, Call, Lua};
use crate::error::AppError;

use super::{Order, SaleCx};

// Kept with their sources, so that they can be composed with the lock's steps (`composed/`).
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
        .arg(cx.generation)
}

/// The write a sale makes on its way out of the critical section: the order, the stock it
/// leaves, and what the ledger entry records of the sale's hold.
pub(super) struct Write<'a> {
    pub(super) order: &'a Order,
    pub(super) order_id: &'a str,
    pub(super) new_stock: i64,
    pub(super) depth: u32,
    /// Redis' clock at the read, and the instance's when the read reached the sale and when
    /// the write was built.
    pub(super) enter_us: i64,
    pub(super) read_us: i64,
    pub(super) write_us: i64,
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
                write_us: w.write_us,
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
        .arg(cx.generation)
        .arg(u64::try_from(cx.began.elapsed().as_micros()).unwrap_or(u64::MAX)))
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
