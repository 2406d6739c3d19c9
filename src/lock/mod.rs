//! The lock tiers behind one small interface ([`Lock`]: one attempt, `try_acquire`, and
//! `release`), each in its own file of `tiers/` opening with what it guarantees and what breaks
//! it. A tier's other facts (its stores, lease, waits, lab preset, grading) are its row of
//! `oversell_api::tier::TABLE`; its file says which tiers it locks for (`fn locks()`), and
//! `tiers/mod.rs` declares every file (a file left out fails the tests).
//!
//! The Redis tiers (`setnx` … `fenced`, `fair` among them) and the lab's locks (`custom`) are step lists
//! (`steps.rs`): the Lua script of each step, in order, read by the lab's contract. A Redis
//! tier's scripts are the files of `static/locks/<tier>/`, the lab's presets for that rung,
//! included as they are (the tests below hold them to it). A step tier's file repeats the
//! call-building lines another tier has too (`fenced.rs` and `reentrant_watchdog.rs` release
//! and renew alike) on purpose: a student reads one tier's file alone, start to end, as the
//! lesson of its rung, and what differs between rungs is a key or an argument in those lines.
//! One engine runs them all (`engine.rs`): it sends the steps, rides them with the sale's own
//! scripts when they share a server (`riding.rs`), waits for replicas, renews a lease with a
//! renew step (`renewals.rs`), strikes the fault points between steps, and records what a
//! release saw. The tiers that are not step lists (`none`, `local`, `redlock`, `zookeeper`,
//! `postgres`) implement [`Lock`] themselves and say why. Around every tier, the bounded wait
//! for a busy lock (spin, pub/sub) is `wait.rs`, the in-memory queue of `wait: cohort`
//! `cohort.rs`, and the lock leaving with the sale's last calls (its release, or a cohort's
//! pass with the next buyer's read) `exit.rs`. The sale meets all of them through one door,
//! [`Section`] (`section.rs`): it hands over its read and its write as calls and gets their
//! replies back, and the acquire, the riding, the passing and the release happen in here. It
//! finds its room's lock with [`Locks::in_room`] (`locks.rs`; for the lab, the room's own).
//! `atomic-deduct` takes no lock at all, so [`Locks::in_room`] has nothing for it: the sale
//! path runs its script instead (`sale/atomic_deduct.rs`).
//!
//! Locks live in the *lock store* (`cx.store`), the ground truth in the *resource store*
//! (`cx.resource`): a release step only reports what it saw (whose lock the key held before and
//! after it, `send.rs`), and the engine records that in the resource store, so a
//! lock store that fails never takes the measurement with it.

mod cohort;
mod engine;
mod exit;
mod faulty;
mod hook;
mod lease_stamp;
mod locks;
mod parked;
mod release_record;
mod renewals;
mod replies;
mod riding;
mod section;
mod send;
mod signals;
mod sold_out;
mod steps;
#[cfg(test)]
mod test_cx;
#[cfg(test)]
mod tier_checks;
mod tiers;
mod wait;

use std::time::Duration;

use async_trait::async_trait;
use oversell_api::settings::{Settings, WaitStrategy};

use crate::ground_truth::record;
use crate::keys::Keys;
use crate::lab::LabLock;
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::redis_pool::{Conn, RedisPool, StoreError};

use crate::composed::Call;
pub use hook::{Interrupted, Moment, StepHook};
pub use locks::{Locks, RoomLock};
pub use riding::{Release, TripReplies, Wrapped};
pub use section::Section;
pub use signals::ReleaseSignals;
use steps::On;

/// Everything one acquire or release needs to know.
#[derive(Clone, Copy)]
pub struct LockCx<'a> {
    /// Where the lock lives.
    pub store: &'a LockStore,
    /// The resource store: where what the lock saw is recorded.
    pub resource: &'a RedisPool,
    pub keys: &'a Keys,
    pub settings: &'a Settings,
    /// Unique per sale (and per process run): the lock value or hash field of this holder.
    /// What a release records (a lost release, a foreign one) is always this holder's.
    pub owner: &'a str,
    /// The owner the lock's steps send when it is not [`LockCx::owner`]: a token kept where
    /// the sale's own is not (the `token-per-instance` fault keeps one per instance, as a
    /// thread-local shared by every task of an event loop), so what a release sends and whose
    /// hold it ends are two things. `None`: the holder's own.
    pub sends_as: Option<&'a str>,
    /// This instance's id, for the timeline.
    pub instance: &'a str,
    pub signals: &'a ReleaseSignals,
    pub metrics: &'a Metrics,
    /// What acts between the lock's steps (`hook.rs`): `None` for a plain sale, the fault
    /// layer for a room with faults armed ([`RoomLock::hook`]).
    pub hook: Option<&'a dyn StepHook>,
    /// The sale's read (its calls, as data), for an acquire that can carry it in its round
    /// trip (`riding.rs`); `None` for a nested re-entry, which never carries one.
    pub read: Option<&'a [Call]>,
    /// The room's reset generation when the sale began (empty: none): what the lock's
    /// releases record counts only if no reset came since (a reset deletes the room's locks).
    pub generation: &'a str,
    /// A connection whose next request waits in the lock store for this buyer's call (a
    /// parked attempt, `parked.rs`): the next [`LockCx::conn`] is it, once.
    pub parked: Option<&'a parked::Parked>,
}

impl LockCx<'_> {
    /// What a lock's steps are about: the room's keys, this holder (or the owner it sends
    /// as), the lease.
    pub fn on(&self) -> On<'_> {
        On {
            keys: self.keys,
            owner: self.sends_as.unwrap_or(self.owner),
            ttl_ms: self.settings.ttl_ms,
            wait_ms: self.settings.wait_deadline_ms,
        }
    }

    /// A release that found the lock already gone or someone else's: the holder had lost it
    /// without knowing. Counted in the resource store (and marked on the timeline) and in this
    /// instance's metrics: the only signal a paused holder ever gets.
    async fn lost_release(&self) -> Result<(), StoreError> {
        self.metrics.lost_release(self.settings.tier);
        record::lost_release(
            self.resource,
            self.keys,
            self.generation,
            self.instance,
            self.owner,
        )
        .await
    }

    /// Hands control to the hook at `point` of the lock's run; without one, goes on.
    async fn at(&self, point: hook::Point) -> hook::Go {
        match self.hook {
            None => hook::Go::On,
            Some(hook) => hook.at(self, point).await,
        }
    }

    /// A connection to the lock store.
    async fn conn(&self) -> Result<Conn, StoreError> {
        if let Some(conn) = self.parked.and_then(parked::Parked::take) {
            return Ok(conn);
        }
        self.store.pool().conn().await
    }

    /// After a lock write on `conn`, with `sync_replicas` set: waits (`WAIT`) until that many
    /// replicas have the write, as Redisson's `checkLockSyncedSlaves` does. `WAIT` counts the
    /// writes of its own connection, so it must follow the lock write on the same one.
    async fn replicated(&self, conn: &mut Conn) -> Result<(), StoreError> {
        let wanted = self.settings.sync_replicas;
        // The write is done; `WAIT` is how the holder learns whether the replicas got it
        // (before a primary dies, say): the hook may act in between.
        self.at(hook::Point::LockWritten).await;
        // Behind the room's key, so that a Redis Cluster connection sends `WAIT` to the master
        // owning the lock's slot (alone, it would ask every master and answer the least).
        let (_, acked): (i64, u32) = redis::pipe()
            .exists(self.keys.lock())
            .cmd("WAIT")
            .arg(wanted)
            .arg(self.settings.sync_timeout_ms)
            .query_async(conn)
            .await?;
        if acked < wanted {
            return Err(StoreError::NotReplicated { acked, wanted });
        }
        Ok(())
    }
}

/// A lock this sale holds. Dropping it without `release` leaves the Redis lock to its lease.
pub struct Held {
    /// The fencing token, for the `fenced` tier.
    pub fence: Option<u64>,
    /// How many times the owner holds the lock after this acquire (2 = re-entered).
    pub depth: u32,
    /// The replies to the sale's read when it rode with the acquire (`riding.rs`); boxed, as a
    /// hold is passed around and is rarely carrying one.
    pub read: Option<Box<TripReplies>>,
    /// The owner the lock carries in the store while a cohort passes it from sale to sale: the
    /// owner of the sale that took it, under which every sale it is passed to releases, renews
    /// and re-enters it. `None`: the sale's own.
    owner: Option<String>,
    /// Its place in this instance's cohort (`wait: cohort`), which it hands on as it leaves;
    /// boxed, as most holds are not a cohort's.
    cohort: Option<Box<cohort::Member>>,
    _keep: Keep,
}

/// What must live exactly as long as the hold.
enum Keep {
    Nothing,
    /// The in-process mutex guard of the `local` tier.
    Local {
        _guard: tokio::sync::OwnedMutexGuard<()>,
    },
    /// The watchdog's renewals of a lock with a renew step (`renewals.rs`); aborted on drop.
    Renewing {
        _renewals: renewals::Renewals,
    },
    /// The database session whose transaction holds the lock (`postgres.rs`); closed on drop,
    /// which frees the lock, as a crashed holder's closed socket does. Boxed: a hold is
    /// passed around, and is rarely a session's.
    Session(Box<crate::pg_store::Session>),
}

impl Held {
    /// Stops renewing the lease, as a paused process does (the `holder-pause` fault). An
    /// in-process guard is kept: a paused process still holds its own mutex.
    pub fn stop_renewing(&mut self) {
        if matches!(self._keep, Keep::Renewing { .. }) {
            self._keep = Keep::Nothing;
        }
    }

    /// Leaves the hold without stopping its watchdog, which renews the lock for nobody (the
    /// `renewal-outlives-release` fault).
    pub fn abandon_renewing(mut self) {
        self.orphan_renewals();
    }

    /// Lets the watchdog's renewals run on whatever becomes of the hold: they renew the lock
    /// for nobody once it is dropped, until a renewal finds the lock no longer this owner's
    /// (the `worker-dies` and `renewal-outlives-release` faults).
    pub fn orphan_renewals(&mut self) {
        if matches!(self._keep, Keep::Renewing { .. }) {
            if let Keep::Renewing { _renewals } = std::mem::replace(&mut self._keep, Keep::Nothing)
            {
                _renewals.outlive_the_hold();
            }
        }
    }

    /// A hold with nothing attached: also what an unlock that overtook its acquire releases.
    pub(crate) fn plain() -> Self {
        Held {
            fence: None,
            depth: 1,
            read: None,
            owner: None,
            cohort: None,
            _keep: Keep::Nothing,
        }
    }

    /// A plain hold whose lease `renewals` keep alive (Redlock's extension).
    fn renewed_by(renewals: renewals::Renewals) -> Self {
        Held {
            _keep: Keep::Renewing {
                _renewals: renewals,
            },
            ..Held::plain()
        }
    }
}

/// The outcome of one attempt.
pub enum Attempt {
    Acquired(Held),
    /// Someone else holds it; `lease_left` bounds a pub/sub wait when the tier knows it.
    Busy {
        lease_left: Option<Duration>,
    },
    /// The holder died between two acquire steps (the `holder-dies-between-steps` fault):
    /// whatever the first steps wrote stays, and nothing more is sent.
    HolderDied,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("lock wait deadline passed")]
    Timeout,
    #[error("the holder died between its acquire steps (a fault)")]
    HolderDied,
    /// The buyer stopped dead while waiting in line (the `waiter-dies` fault).
    #[error("the waiter died in line (a fault)")]
    WaiterDied,
    /// A nested re-entry, or an extend before the write, found the lock gone or someone
    /// else's: the owner had lost it.
    #[error("the lock was lost while held")]
    Lost,
    /// The acquire was overtaken by its own unlock and given up, its watchdog left renewing
    /// the lock for nobody (the `renewal-outlives-release` fault).
    #[error("the acquire was abandoned behind its own unlock (a fault)")]
    Abandoned,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[async_trait]
pub trait Lock: Send + Sync {
    /// One attempt to take the lock, without waiting.
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError>;

    /// Gives the lock back. Errors leave the lock to its lease (or forever, for `setnx`).
    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError>;

    /// Takes the lock, waiting as the settings say, until the wait deadline: in a cohort
    /// (`cohort.rs`) when the settings ask for one and the tier's row allows it, with the
    /// sale's read (`cx.read`) riding with the acquire or sent ahead by the previous holder
    /// (its replies in [`Held::read`]).
    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        match cx.settings.wait {
            WaitStrategy::Cohort { passes } if cx.settings.tier.may_pass_in_cohort() => {
                cohort::acquire(self, cx, passes).await
            }
            _ => wait::until_acquired(self, cx).await,
        }
    }

    /// Takes the lock again for the owner who holds it (a nested step). A reentrant lock
    /// answers at once; one that does not know its owner waits for itself, to its deadline.
    async fn acquire_again(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        wait::again(self, cx).await
    }

    /// Whether the same owner may take the lock again while holding it.
    fn reentrant(&self) -> bool {
        false
    }

    /// Whether the lock serves its waiters in the order they queued in the store (`fair`):
    /// a buyer then tries at once, to get its place there.
    fn queues(&self) -> bool {
        false
    }

    /// The list a queueing lock's release pushes to when it is `cx.owner`'s turn, if it calls
    /// its waiters that way (see [`steps::Technique::call_key`]).
    fn call_key(&self, _cx: &LockCx<'_>) -> Option<String> {
        None
    }

    /// The sale's `calls` as one round trip's calls with this lock held by `cx.owner`: as they
    /// are, or, for a reentrant lock, inside a nested hold (the acquire again before them, the
    /// nested release after; read back with [`TripReplies::open`]). `None` when the nested
    /// hold cannot go in one trip with them: the sale then takes the lock again, sends its
    /// calls and gives the nested hold back, one after the other.
    fn around(&self, _cx: &LockCx<'_>, calls: Vec<Call>) -> Option<Wrapped> {
        (!self.reentrant()).then(|| Wrapped::plain(calls))
    }

    /// The release as calls that can follow the sale's last calls in their round trip (read
    /// back with [`Release::answered`]); `None` when it cannot ride there and is sent on its
    /// own, after.
    fn release_behind(&self, _cx: &LockCx<'_>) -> Option<Release> {
        None
    }

    /// The lock of one room, when the tier's lock is the room's own: the lab's, whose steps
    /// the room submitted (`lab`). `None`: this lock serves every room.
    fn in_room<'a>(&'a self, _lab: Option<&'a LabLock>) -> Option<Box<dyn Lock + 'a>> {
        None
    }
}

/// A lock as a room holds it: one every room of its tier shares, or one of its own.
enum Bare<'a> {
    Tier(&'a dyn Lock),
    Own(Box<dyn Lock + 'a>),
}

impl<'a> std::ops::Deref for Bare<'a> {
    type Target = dyn Lock + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Bare::Tier(lock) => *lock,
            Bare::Own(lock) => lock.as_ref(),
        }
    }
}

/// How a tier file gives its lock: as steps the engine runs (`steps.rs`), or as a [`Lock`]
/// of its own.
enum TierLock {
    Steps(&'static dyn steps::Technique),
    Own(Box<dyn Lock>),
}
