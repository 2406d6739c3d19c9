//! The way out of the critical section: the write (`commit.lua`), and the lock leaving with it
//! ([`Leaving`]): handed to a local successor, released in the write's round trip, or still
//! held, to be released after the sale on its own.

use std::sync::LazyLock;

use crate::composed::{self, Call, Lua};
use crate::lock::cohort::{self, Successor};
use crate::lock::{Held, Lock, LockCx, TripReplies};
use crate::redis_pool::StoreError;

use super::SaleCx;

// Kept with its source, so that it can be composed with the lock's steps (`composed.rs`).
static COMMIT: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("commit.lua")));

/// Chooses, at the write, the buyer to hand the lock to (a cohort's), if any.
pub(super) type NextHolder<'a> = &'a (dyn Fn() -> Option<Successor> + Sync);

/// The lock on its way out of a sale. It leaves at the write: handed to a local successor
/// when a cohort has one waiting (the successor's read riding behind the write), else released
/// in the write's round trip when the release can ride with it (`lock/riding.rs`), else
/// released after the sale, on its own.
pub(super) struct Leaving<'a> {
    /// `None` once released.
    pub(super) held: Option<Held>,
    pub(super) fence: Option<u64>,
    pub(super) depth: u32,
    next: NextHolder<'a>,
    /// Whether this is a cohort's lock, which forgets old release messages before releasing.
    cohort: bool,
    /// The successor chosen at the write, and the replies to its read.
    passing: Option<(Successor, Option<TripReplies>)>,
}

/// Where the lock is once the sale is over.
pub(super) enum Left {
    Released,
    /// To be handed to a local successor, with the replies to the read sent for it.
    Passing(Held, Successor, Option<TripReplies>),
    /// Still held: the sale ended before its write, or the release could not ride with it.
    Holding(Held),
}

impl<'a> Leaving<'a> {
    pub(super) fn new(held: Held, next: NextHolder<'a>, cohort: bool) -> Self {
        Leaving {
            fence: held.fence,
            depth: held.depth,
            held: Some(held),
            next,
            cohort,
            passing: None,
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

    pub(super) fn left(self) -> Left {
        match (self.held, self.passing) {
            (None, _) => Left::Released,
            (Some(held), Some((to, read))) => Left::Passing(held, to, read),
            (Some(held), None) => Left::Holding(held),
        }
    }
}

/// The write a sale makes on its way out of the critical section.
pub(super) struct Write<'a> {
    pub(super) new_stock: i64,
    pub(super) qty: u32,
    pub(super) entry: &'a str,
}

/// Leaves the critical section, making the write when there is one, and lets the lock go as
/// [`Leaving`] says. Returns what `commit.lua` did.
pub(super) async fn leave(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    leaving: &mut Leaving<'_>,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
) -> Result<Committed, StoreError> {
    let commit = commit(cx, exits_at_enter, write, leaving.fence);
    let mut conn = cx.resource.conn().await?;
    if let Some(mut to) = (leaving.next)() {
        // A pass: the successor's read rides right behind this write, inside the lock's
        // nested hold for a reentrant lock.
        let mut calls = vec![commit];
        let theirs = Some(to.read(leaving.fence)).filter(|read| !read.is_empty());
        let nesting = theirs.and_then(|read| lock.around(lcx, read)).map(|read| {
            calls.extend(read.calls);
            read.nesting
        });
        let refs: Vec<&Call> = calls.iter().collect();
        let replies = composed::run_in_order(&mut conn, &refs).await;
        let (mine, theirs) = match replies {
            Ok(mut replies) => {
                let mine = replies.remove(0);
                (Ok(mine), Ok(replies))
            }
            Err(err) => (Err(err.clone()), Err(err)),
        };
        leaving.passing = Some((to, nesting.map(|n| TripReplies::new(n, theirs))));
        return outcome(mine?);
    }
    let Some(release) = lock.release_behind(lcx) else {
        return outcome(commit.invoke(&mut conn).await);
    };
    if leaving.cohort {
        cohort::forget_old_release(lcx);
    }
    // Stop renewing before giving the lock back, as the tier's own release does.
    drop(leaving.held.take());
    let calls: Vec<&Call> = std::iter::once(&commit).chain(&release.calls).collect();
    let mut replies = composed::run_in_order(&mut conn, &calls).await?.into_iter();
    let committed = replies
        .next()
        .ok_or_else(|| StoreError::Unavailable("a composed script gave no reply".into()))?;
    if let Err(err) = release.answered(lcx, &mut replies).await {
        // The sale's outcome stands; the lock is left to its lease.
        tracing::warn!(%err, tier = %lcx.settings.tier, "release failed");
    }
    outcome(committed)
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
