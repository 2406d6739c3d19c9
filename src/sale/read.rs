//! The read: `enter.lua` reads the stock and notes the overlap clock. Its calls, as data, ride
//! behind the acquire that takes the lock or are sent by the holder before this sale (a
//! cohort's pass); a reentrant lock puts its nested hold around them (`Lock::around`).

use std::sync::LazyLock;

use crate::composed::{self, Call, Lua};
use crate::error::AppError;
use crate::keys::Keys;
use crate::lock::{Lock, LockCx, TripReplies};
use crate::redis_pool::StoreError;

use super::{lock_failed, SaleCx};

// Kept with its source, so that it can be composed with the lock's steps (`composed.rs`).
static ENTER: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("enter.lua")));

/// What the read gives: the stock, the exits so far (the overlap clock) and Redis' time in µs.
pub(super) struct Entry {
    pub(super) stock: i64,
    pub(super) exits: i64,
    pub(super) enter_us: i64,
}

/// The read, or `None` when the fencing token is already stale.
pub(super) type Entered = Option<Entry>;

/// A sale's read in owned form: enough for another sale to send it (a cohort's pass).
pub(super) struct ReadPlan {
    keys: Keys,
    instance: String,
    /// The sale's owner, for the ground truth.
    owner: String,
    /// The room's reset generation when the sale began.
    generation: String,
}

impl ReadPlan {
    pub(super) fn of(cx: &SaleCx<'_>) -> ReadPlan {
        ReadPlan {
            keys: cx.keys.clone(),
            instance: cx.instance.to_owned(),
            owner: cx.owner.clone(),
            generation: cx.generation.clone(),
        }
    }

    /// The read's calls under a lock that took fencing token `fence` (if any).
    pub(super) fn calls(&self, fence: Option<u64>) -> Vec<Call> {
        vec![self.enter(token_arg(fence))]
    }

    /// The read's calls to send behind the acquire that takes the lock, in its script
    /// (`composed.rs`): the read carries the fencing token that acquire takes, if it takes
    /// one (`fenced`'s).
    pub(super) fn calls_behind_acquire(&self) -> Vec<Call> {
        vec![self.enter(composed::ACQUIRED.to_owned())]
    }

    fn enter(&self, token: String) -> Call {
        enter(
            &self.keys,
            &self.instance,
            &self.owner,
            token,
            &self.generation,
        )
    }
}

/// The read, with a reentrant lock's nested hold around it: the lock is taken again by the
/// same owner, as a sale calling a helper that locks too would (with a non-reentrant lock this
/// would wait for itself), and the nested hold is given back after the read. One round trip
/// when the lock's calls can ride with the read; none when the read was sent already
/// (`ahead`: with the acquire, or by the previous holder). Returns the read and the hold depth
/// at it (2 proves the re-entry).
pub(super) async fn read(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    depth: u32,
    fence: Option<u64>,
    ahead: Option<TripReplies>,
) -> Result<(Entered, u32), AppError> {
    let trip = match ahead {
        Some(trip) => trip,
        None => match lock.around(lcx, ReadPlan::of(cx).calls(fence)) {
            Some(wrapped) => {
                let calls: Vec<&Call> = wrapped.calls.iter().collect();
                let mut conn = cx.resource.conn().await?;
                let replies = composed::run_in_order(&mut conn, &calls).await;
                TripReplies::new(wrapped.nesting, replies)
            }
            None => return read_one_by_one(cx, lcx, lock, fence).await,
        },
    };
    let opened = match trip.open(lcx).await {
        Ok(opened) => opened,
        Err(err) => return Err(lock_failed(cx, err).await),
    };
    let read = opened
        .replies
        .into_iter()
        .next()
        .ok_or_else(|| AppError::Internal("a read gave fewer replies than calls".into()))?;
    Ok((entered(read, fence)?, opened.depth.unwrap_or(depth)))
}

/// The reentrant read when the nested hold cannot ride with it (the lock lives on another
/// server than the stock): re-entry, read and nested release one after the other.
async fn read_one_by_one(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    fence: Option<u64>,
) -> Result<(Entered, u32), AppError> {
    let nested = match lock.acquire_again(lcx).await {
        Ok(nested) => nested,
        Err(err) => return Err(lock_failed(cx, err).await),
    };
    let depth = nested.depth;
    let mut conn = cx.resource.conn().await?;
    let read = enter(
        cx.keys,
        cx.instance,
        &cx.owner,
        token_arg(fence),
        &cx.generation,
    )
    .invoke(&mut conn)
    .await;
    lock.release(lcx, nested).await?;
    Ok((entered(read, fence)?, depth))
}

/// A fencing token as the scripts take it: `''` for the unfenced tiers.
fn token_arg(fence: Option<u64>) -> String {
    fence.map(|f| f.to_string()).unwrap_or_default()
}

/// Reads the stock and notes the overlap clock (`enter.lua`), for the sale of `owner`.
/// `token`: the fencing token ([`token_arg`]), or [`composed::ACQUIRED`]; `generation`: the
/// room's reset generation when the sale began.
fn enter(keys: &Keys, instance: &str, owner: &str, token: String, generation: &str) -> Call {
    ENTER
        .call()
        .key(keys.stock())
        .key(keys.exits())
        .key(keys.fence_seen())
        .key(keys.stale_writes_rejected())
        .key(keys.timeline())
        .key(keys.generation())
        .arg(token)
        .arg(instance)
        .arg(owner)
        .arg(generation)
}

/// `enter.lua`'s reply; `None` when the fencing token is already stale.
fn entered(
    reply: redis::RedisResult<redis::Value>,
    fence: Option<u64>,
) -> Result<Entered, StoreError> {
    let (stock, exits, enter_us): (i64, i64, i64) = composed::reply(reply)?;
    let stale = stock < 0 && fence.is_some();
    Ok((!stale).then_some(Entry {
        stock,
        exits,
        enter_us,
    }))
}
