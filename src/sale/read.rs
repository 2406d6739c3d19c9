//! The read: `enter.lua` reads the stock and notes the overlap clock. Its plan, in owned form,
//! rides behind the acquire that takes the lock (`lock/riding.rs`) or is sent by the holder
//! before this sale (a cohort's pass); a reentrant lock's nested hold goes around it.

use std::sync::LazyLock;

use crate::composed::{self, Call, Lua};
use crate::error::AppError;
use crate::keys::Keys;
use crate::lock::cohort::ReadReplies;
use crate::lock::steps::{On, Technique};
use crate::lock::{engine, riding};
use crate::lock::{Lock, LockCx, LockError};
use crate::redis_pool::StoreError;

use super::SaleCx;

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
    ttl_ms: u64,
    /// A reentrant lock's steps, for its nested hold around the read.
    nested: Option<&'static dyn Technique>,
    /// The room's reset generation when the sale began.
    generation: String,
}

impl ReadPlan {
    pub(super) fn of(cx: &SaleCx<'_>, lock: &dyn Lock) -> ReadPlan {
        ReadPlan {
            keys: cx.keys.clone(),
            instance: cx.instance.to_owned(),
            owner: cx.owner.clone(),
            ttl_ms: cx.settings.ttl_ms,
            nested: lock.steps().filter(|_| lock.reentrant()),
            generation: cx.generation.clone(),
        }
    }

    /// The read's calls, for one round trip: `enter.lua`, and for a reentrant lock the nested
    /// re-entry before it and the nested release after it, under the lock's owner.
    pub(super) fn calls(&self, lock_owner: &str, fence: Option<u64>) -> Vec<Call> {
        self.calls_with_token(lock_owner, token_arg(fence))
    }

    /// The read's calls to send behind the acquire that takes the lock, in its script
    /// (`lock/riding.rs`): the read carries the fencing token that acquire takes, if it takes
    /// one (`fenced`'s).
    pub(super) fn calls_behind_acquire(&self, lock_owner: &str) -> Vec<Call> {
        self.calls_with_token(lock_owner, composed::ACQUIRED.to_owned())
    }

    fn calls_with_token(&self, lock_owner: &str, token: String) -> Vec<Call> {
        let read = enter(
            &self.keys,
            &self.instance,
            &self.owner,
            token,
            &self.generation,
        );
        let on = On {
            keys: &self.keys,
            owner: lock_owner,
            ttl_ms: self.ttl_ms,
        };
        match self.nested.and_then(|lock| riding::nested(lock, &on)) {
            Some(nested) => {
                let mut calls = vec![nested.again.0, read];
                calls.extend(nested.back.calls);
                calls
            }
            None => vec![read],
        }
    }
}

/// The read, with a reentrant lock's nested hold around it: the lock is taken again by the
/// same owner, as a sale calling a helper that locks too would (with a non-reentrant lock this
/// would wait for itself), and the nested hold is given back after the read. One round trip
/// when the steps can ride together; none when the previous holder sent it (`ahead`). Returns
/// the read and the hold depth at it (2 proves the re-entry).
pub(super) async fn read(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    depth: u32,
    fence: Option<u64>,
    ahead: Option<ReadReplies>,
) -> Result<(Entered, u32), AppError> {
    // The nested hold's steps, when they ride with the read.
    let nested = match (lock.steps(), lock.reentrant() && riding::shares_server(lcx)) {
        (Some(steps), true) => riding::nested(steps, &lcx.on()),
        _ => None,
    };
    let replies = match ahead {
        Some(replies) => replies,
        None if !lock.reentrant() || nested.is_some() => {
            let calls = ReadPlan::of(cx, lock).calls(lcx.owner, fence);
            let calls: Vec<&Call> = calls.iter().collect();
            let mut conn = cx.redis.conn().await?;
            composed::run_in_order(&mut conn, &calls).await
        }
        None => return read_one_by_one(cx, lcx, lock, fence).await,
    };
    let mut replies = replies.map_err(StoreError::from)?.into_iter();
    let mut next = || {
        replies
            .next()
            .ok_or_else(|| AppError::Internal("a read gave fewer replies than calls".into()))
    };
    if !lock.reentrant() {
        return Ok((entered(next()?, fence)?, depth));
    }
    let (again, read) = (next()?, next()?);
    let nested =
        nested.ok_or_else(|| AppError::Internal("a nested hold that cannot ride".into()))?;
    let back = nested.back.answer(&mut replies);
    let Some(depth) = riding::reentered(nested.again.1, again)? else {
        // Someone else holds the lock: this owner lost it before its read. Its release will
        // find that out and record it.
        return Err(AppError::LockLost);
    };
    engine::released_in_trip(lcx, nested.back.reply, back).await?;
    Ok((entered(read, fence)?, depth))
}

/// The reentrant read when the nested hold cannot ride with it (the lock lives on another
/// server than the stock): re-entry, read and nested release one after the other.
async fn read_one_by_one(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    fence: Option<u64>,
) -> Result<(Entered, u32), AppError> {
    let nested = lock.acquire(lcx).await.map_err(|err| match err {
        LockError::Timeout => AppError::Internal("re-entry timed out".into()),
        LockError::HolderDied => AppError::HolderDied,
        LockError::Store(err) => err.into(),
    })?;
    let depth = nested.depth;
    let mut conn = cx.redis.conn().await?;
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

/// Reads the stock and notes the overlap clock (`enter.lua`), for the sale of `owner`.
/// A fencing token as the scripts take it: `''` for the unfenced tiers.
fn token_arg(fence: Option<u64>) -> String {
    fence.map(|f| f.to_string()).unwrap_or_default()
}

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
