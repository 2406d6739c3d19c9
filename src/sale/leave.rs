//! The way out of the critical section: the write (`commit.lua`), and the lock leaving with it
//! ([`Leaving`]): whatever the lock sends behind the write in its round trip (its release, or
//! a cohort's pass with the next buyer's read: [`Lock::exit_behind`]), or still held, to be let
//! go after the sale on its own.

use std::sync::LazyLock;

use crate::composed::{self, Call, Lua};
use crate::lock::{Held, Lock, LockCx};
use crate::redis_pool::StoreError;

use super::SaleCx;

// Kept with its source, so that it can be composed with the lock's steps (`composed.rs`).
static COMMIT: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("commit.lua")));

/// The lock on its way out of a sale. It leaves at the write, with whatever the lock sends
/// behind it, or after the sale, on its own.
pub(super) struct Leaving {
    /// `None` once gone (released, passed on, or its holder dead).
    held: Option<Held>,
    pub(super) fence: Option<u64>,
    pub(super) depth: u32,
}

impl Leaving {
    pub(super) fn new(held: Held) -> Self {
        Leaving {
            fence: held.fence,
            depth: held.depth,
            held: Some(held),
        }
    }

    /// The holder is dead: the lock stays where it is (no release, no pass), and renewals
    /// stop; an in-process guard goes, as it would with its process.
    pub(super) fn die(&mut self) {
        drop(self.held.take());
    }

    /// The holder is paused: its lease is no longer renewed.
    pub(super) fn stop_renewing(&mut self) {
        if let Some(held) = self.held.as_mut() {
            held.stop_renewing();
        }
    }

    /// The lock, if the sale still holds it: to be let go on its own.
    pub(super) fn left(self) -> Option<Held> {
        self.held
    }
}

/// The write a sale makes on its way out of the critical section.
pub(super) struct Write<'a> {
    pub(super) new_stock: i64,
    pub(super) qty: u32,
    pub(super) entry: &'a str,
}

/// Leaves the critical section, making the write when there is one, with whatever the lock
/// sends behind it in the same round trip. Returns what `commit.lua` did.
pub(super) async fn leave(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    leaving: &mut Leaving,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
) -> Result<Committed, StoreError> {
    let commit = commit(cx, exits_at_enter, write, leaving.fence);
    let mut conn = cx.resource.conn().await?;
    let exit = match leaving.held.take().map(|held| lock.exit_behind(lcx, held)) {
        Some(Ok(exit)) => exit,
        Some(Err(held)) => {
            leaving.held = Some(held);
            return outcome(commit.invoke(&mut conn).await);
        }
        None => return outcome(commit.invoke(&mut conn).await),
    };
    let calls: Vec<&Call> = std::iter::once(&commit).chain(&exit.calls).collect();
    let (mine, theirs) = match composed::run_in_order(&mut conn, &calls).await {
        Ok(mut replies) => (replies.remove(0), Ok(replies)),
        Err(err) => (Err(err.clone()), Err(err)),
    };
    if let Err(err) = exit.answered(lock, lcx, theirs).await {
        // The sale's outcome stands; the lock is left to its lease.
        tracing::warn!(%err, tier = %lcx.settings.tier, "release failed");
    }
    outcome(mine)
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

fn outcome(reply: redis::RedisResult<redis::Value>) -> Result<Committed, StoreError> {
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

/// The write and the overlap count on the way out (`commit.lua`).
fn commit(
    cx: &SaleCx<'_>,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
    fence: Option<u64>,
) -> Call {
    COMMIT
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
        .arg(write.as_ref().map_or(0, |w| w.qty))
        .arg(write.as_ref().map_or("", |w| w.entry))
        .arg(fence.map(|f| f.to_string()).unwrap_or_default())
        .arg(cx.instance)
        .arg(&cx.owner)
        .arg(&cx.generation)
        .arg(u64::try_from(cx.began.elapsed().as_micros()).unwrap_or(u64::MAX))
}
