//! Where something outside the lock may act while a sale runs it: the points between its steps
//! ([`Point`]) and the moments of its critical section ([`Moment`]). A plain sale has no hook
//! (`LockCx::hook` is `None`) and every point costs it one branch; a room with faults armed
//! gets its lock wrapped in the fault layer (`faulty/`), which is the one hook there is.
//!
//! # Why a hook, not the faults themselves
//! The lesson of a lock is acquire, read, write, release. The faults that reproduce each
//! article's defect strike between exactly those steps, so the code that runs the steps (the
//! wait loop, the engine, the section) names the places, and only the layer knows what, if
//! anything, strikes there.

use std::time::Duration;

use async_trait::async_trait;

use super::{LockCx, LockError, Section};
use crate::faults::Fault;

/// A point between a lock's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Just before an attempt at the lock.
    BeforeAttempt,
    /// Just after one; `took`: it took the lock (or took it and gave it back for want of
    /// replicas).
    AfterAttempt { took: bool },
    /// Between the first and the second step of an acquire.
    BetweenAcquireSteps,
    /// Between the first and the second step of a release.
    BetweenReleaseSteps,
    /// A fresh hold is written, before it waits for replicas to have it.
    LockWritten,
    /// An attempt found the lock busy, before the buyer waits.
    Busy,
    /// A release is about to send the delete of its lock node (the ZooKeeper tiers).
    BeforeDelete,
}

/// How a lock's run goes on from a [`Point`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    On,
    /// The holder stopped dead between its acquire steps: nothing more is sent.
    HolderDied,
    /// The buyer stopped dead in line: no more attempts.
    WaiterDied,
    /// The attempt's reply never reached the buyer (after an attempt that took the lock): it
    /// knows nothing of the hold it got, and sends the same attempt again at once.
    ReplyLost,
    /// The buyer subscribes to release messages only after this gap (`wait.rs`).
    SubscribeAfter(SubscriptionGap),
    /// The release's delete is lost on a connection loss; `retried`: the release sends it
    /// again until it lands, else it gives up on it.
    DeleteLost {
        retried: bool,
    },
}

/// The time a buyer that found the lock busy takes to subscribe to release messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriptionGap {
    pub gap: Duration,
    /// Whether the buyer keeps its place in line through the gap (a release meanwhile is kept
    /// for it) or leaves it (a release meanwhile reaches nobody).
    pub in_line: bool,
}

/// A moment of a critical section, where the sale hands control to the hook
/// ([`Section::at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// The read is done.
    Read,
    /// The business work starts.
    WorkStarts,
    /// The work is done, the write not yet sent.
    BeforeWrite,
}

/// Why a critical section cannot go on to its write.
pub enum Interrupted {
    /// The holder died holding the lock: it stays where it is.
    Died,
    /// A lock the work took failed, or the holder's extend before its write found the lock
    /// no longer its own: the sale gives up, leaving without its write.
    GaveUp(LockError),
}

/// What acts at the points and moments of a lock's run.
#[async_trait]
pub trait StepHook: Send + Sync {
    async fn at(&self, cx: &LockCx<'_>, point: Point) -> Go;

    async fn in_section(
        &self,
        section: &mut Section<'_>,
        moment: Moment,
    ) -> Result<(), Interrupted>;

    /// Whether a watchdog started now stops at its first failed renewal instead of trying
    /// again at the next tick.
    fn renewals_give_up(&self) -> bool;

    /// The lock-store fault this sale claimed and that has yet to strike, if any: a tier
    /// whose algorithm it changes reads it (`redlock.rs`).
    fn claimed_store_fault(&self) -> Option<Fault>;
}
