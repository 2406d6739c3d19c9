//! A sale's critical section as the lock runs it: the sale hands over its read as calls (data)
//! and gets their replies back with the lock held ([`Section::enter`]), works, and hands over
//! its write the same way to leave ([`Section::leave`]). Everything between is the lock's:
//!
//! - the acquire, waiting as the settings say, in a cohort when they ask for one (`cohort.rs`);
//! - where the read goes: riding with the acquire (`riding.rs`), sent by the previous holder of
//!   a cohort with its own write, inside a reentrant lock's nested hold ([`Lock::around`]), or,
//!   when that hold cannot ride with it, one by one after a re-entry;
//! - where the lock goes with the write (`exit.rs`): its release riding behind it, or a
//!   cohort's pass with the next buyer's read, or, when nothing can ride, let go on its own
//!   after it; without a write ([`Section::let_go`]), let go on its own;
//! - the owner the lock carries in the store: a sale handed the lock within a cohort acts on it
//!   under the owner that took it, while its own calls still name the sale;
//! - the moments of the section where the lock's hook may act ([`Section::hook`], `hook.rs`).
//!
//! # What it guarantees
//! The same calls in the same order as the sale made them itself before: acquire, read,
//! (work), write, release, with the lock held across the read and the write.

use std::time::{Duration, Instant};

use redis::{RedisResult, Value};

use super::hook::StepHook;
use super::{exit, Held, Lock, LockCx, LockError, TripReplies};
use crate::composed::{self, Call};
use crate::redis_pool::StoreError;

pub use super::exit::Left;

/// The replies to the sale's read, one per call, or why the read failed (the lock is still
/// held then, and let go with [`Section::let_go`]).
pub type Read = Result<Vec<RedisResult<Value>>, LockError>;

/// A sale's hold on the lock, from its read to its write. Ended by [`Section::leave`] (with a
/// write), [`Section::let_go`] (without) or [`Section::die`]; dropped otherwise (a panic), the
/// lock is left to its lease.
pub struct Section<'a> {
    lock: &'a dyn Lock,
    /// The sale's view of the lock, under its own owner.
    cx: LockCx<'a>,
    /// The owner the lock carries in the store: the sale's own, or that of the cohort's first
    /// holder when the lock was passed to it.
    owner: String,
    held: Held,
    /// The fencing token the lock was taken with, for the fenced tiers.
    pub fence: Option<u64>,
    /// How many holds the owner had at the read (2 proves a reentrant lock's nested re-entry).
    pub depth: u32,
    /// How long the sale waited for the lock.
    pub waited: Duration,
    /// What acts at the section's moments (`hook.rs`): the fault layer, or nothing.
    pub hook: Option<&'a dyn StepHook>,
}

impl<'a> Section<'a> {
    /// Takes the lock and reads: `read` rides with the acquire, or comes with the lock from
    /// the previous holder of this instance, or is sent once the lock is held. An error: the
    /// lock was not taken.
    pub async fn enter(
        lock: &'a dyn Lock,
        cx: LockCx<'a>,
        read: &[Call],
    ) -> Result<(Section<'a>, Read), LockError> {
        let waited = Instant::now();
        let mut held = lock
            .acquire(&LockCx {
                read: Some(read),
                ..cx
            })
            .await?;
        let ahead = held.read.take();
        let mut section = Section {
            lock,
            cx,
            owner: held.owner.clone().unwrap_or_else(|| cx.owner.to_owned()),
            fence: held.fence,
            depth: held.depth,
            waited: waited.elapsed(),
            hook: cx.hook,
            held,
        };
        let read = section.read(ahead.map(|trip| *trip), read).await;
        Ok((section, read))
    }

    /// The read's replies: those that came with the lock (`ahead`), or sent now.
    async fn read(&mut self, ahead: Option<TripReplies>, read: &[Call]) -> Read {
        let cx = LockCx {
            owner: &self.owner,
            ..self.cx
        };
        let trip = match ahead {
            Some(trip) => trip,
            None => match self.lock.around(&cx, read.to_vec()) {
                Some(wrapped) => {
                    let calls: Vec<&Call> = wrapped.calls.iter().collect();
                    let mut conn = cx.resource.conn().await?;
                    let replies = composed::run_holding(&mut conn, &calls, self.fence).await;
                    TripReplies::new(wrapped.nesting, replies)
                }
                None => {
                    let (replies, depth) = one_by_one(self.lock, &cx, read, self.fence).await?;
                    self.depth = depth;
                    return Ok(replies);
                }
            },
        };
        let opened = trip.open(&cx).await?;
        self.depth = opened.depth.unwrap_or(self.depth);
        Ok(opened.replies)
    }

    /// The lock, for a step the sale takes in its work (a nested acquire).
    pub fn lock(&self) -> &'a dyn Lock {
        self.lock
    }

    /// The sale's own view of the lock (under the sale's owner), not borrowed from the section.
    pub(super) fn sale_cx(&self) -> LockCx<'a> {
        self.cx
    }

    /// The lock's view of the section, under the owner the lock carries in the store.
    pub fn cx(&self) -> LockCx<'_> {
        LockCx {
            owner: &self.owner,
            ..self.cx
        }
    }

    /// The holder is dead: the lock stays where it is (no release, no pass), and renewals
    /// stop; an in-process guard goes, as it would with its process.
    pub fn die(self) {
        drop(self.held);
    }

    /// The holder's task dies but its process lives on: the watchdog, a task of the process,
    /// goes on renewing the lock after the hold is dropped (the `worker-dies` fault).
    pub fn orphan_renewals(&mut self) {
        self.held.orphan_renewals();
    }

    /// The holder is paused: its lease is no longer renewed.
    pub fn stop_renewing(&mut self) {
        self.held.stop_renewing();
    }

    /// Leaves with the sale's last call (its write), and ends the hold: the call is sent with
    /// whatever the lock sends behind it in the same round trip (its release, or a cohort's
    /// pass with the next buyer's read), or alone, the lock then let go after it (`exit.rs`).
    /// Returns the call's reply.
    pub async fn leave(self, last: &Call) -> Result<Left, StoreError> {
        let (lock, cx, owner, held) = self.ending();
        let cx = LockCx {
            owner: &owner,
            ..cx
        };
        exit::leave(lock, &cx, held, last).await
    }

    /// Ends the hold without a write (the read failed, or the sale gave up): the lock is let
    /// go on its own round trips.
    pub async fn let_go(self) {
        let (lock, cx, owner, held) = self.ending();
        let cx = LockCx {
            owner: &owner,
            ..cx
        };
        exit::logged(&cx, exit::let_go(lock, &cx, held).await);
    }

    /// The section taken apart to end its hold: the lock, the sale's view of it, the owner the
    /// lock carries in the store, and the hold.
    fn ending(self) -> (&'a dyn Lock, LockCx<'a>, String, Held) {
        (self.lock, self.cx, self.owner, self.held)
    }
}

/// The read when a reentrant lock's nested hold cannot ride with it (the lock lives on another
/// server than the stock): re-entry, read and nested release one after the other. Returns the
/// replies and the hold depth at the read.
async fn one_by_one(
    lock: &dyn Lock,
    cx: &LockCx<'_>,
    read: &[Call],
    fence: Option<u64>,
) -> Result<(Vec<RedisResult<Value>>, u32), LockError> {
    let nested = lock.acquire_again(cx).await?;
    let depth = nested.depth;
    let mut conn = cx.resource.conn().await?;
    let mut replies = Vec::with_capacity(read.len());
    for call in read {
        let reply = composed::run_holding(&mut conn, &[call], fence).await;
        replies.push(reply.and_then(|mut one| one.pop().unwrap_or(Ok(Value::Nil))));
    }
    lock.release(cx, nested).await?;
    Ok((replies, depth))
}
