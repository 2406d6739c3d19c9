//! `wait: cohort` — lock cohorting (Dice, Marathe and Shavit, "Lock Cohorting: A General
//! Technique for Designing NUMA Locks", PPoPP 2012), with an instance in the role of the NUMA
//! node and the Redis lock in the role of the global lock.
//!
//! The buyers of one instance queue for a room's lock in memory, first come first served. Only
//! the buyer at the head of the queue waits for the Redis lock (as `pubsub` does). A holder that
//! leaves its critical section while another buyer of its instance waits hands the Redis lock
//! it holds straight to that buyer: no release, no acquire, no pub/sub hop. The successor's read
//! even rides in the holder's last round trip, right behind the holder's write (one composed
//! script, run in order: the write, then the read). It does so at most `passes` times in a
//! row, and only while at least half the lease is left; then it releases the lock in Redis,
//! and the next buyer of its instance lets that release's message go by before trying, so the
//! waiters of every instance race for it on equal footing (its own included).
//!
//! # Guarantee
//! The tier's, no more and no less: every sale is still acquire → read → (business) → write →
//! release with the lock held across the read and the write. A pass is a release to the next
//! sale and an acquire by it, done in memory because both live in the same process; the Redis
//! lock keeps the value of the cohort's first holder (the tier's release compares it), and the
//! ground truth is written per sale as ever (`sale/enter.lua`, `sale/commit.lua`): a sale
//! handed the lock is a new critical section of a new owner, on the timeline and in the
//! overlap count. A successor is never handed less than half the lease a fresh acquire gives
//! (counted, conservatively, from before the acquire began), so with a business step shorter
//! than half the lease no pass makes a section outlive its lease.
//!
//! # Known defect
//! Whatever breaks the tier breaks it here too, and is shown as plainly: a freeze stops the
//! whole instance, the lease runs out, another instance takes the lock, and the frozen
//! holder's write overlaps (counted); no pass follows it, since less than half the lease is
//! left. A crash takes the cohort down with the process; its lock ends with its lease.
//!
//! The price is fairness across instances: one acquire sells up to `passes + 1` times in a row
//! on one instance while the others wait, and after its release every instance's head of queue
//! races for the lock again, its own included, so the same instance may win several times
//! running (`bench/selling-rate.sh` reports the longest run). The pass bound and the courtesy
//! after a release keep the others from starving (tested), but the order is no longer the
//! order buyers arrived in.
//!
//! # Why it exists
//! With every buyer of every instance racing for the lock, each release wakes one
//! waiter per instance, most of them lose, and every hand-off costs a release, a pub/sub hop
//! and an acquire. A local pass costs none of them.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use oversell_api::tier::Tier;
use tokio::sync::oneshot;
use tokio::time::Instant;

use oversell_api::settings::WaitStrategy;

use super::{Held, Lock, LockCx, LockError, TripReplies};
use crate::composed::Call;
use crate::lock_store::LockStoreKind;

/// How long the next buyer waits for the message of its cohort's release before trying anyway
/// (a lost message, a subscriber reconnecting). The message takes one pub/sub hop, well under
/// a millisecond on an idle machine.
const COURTESY: Duration = Duration::from_millis(20);

/// One queue per room and tier on this instance. The map is a std `Mutex`: it is looked up
/// briefly, never across an `.await`.
#[derive(Default)]
pub struct Cohorts {
    queues: Mutex<HashMap<(String, Tier), Arc<Queue>>>,
}

impl Cohorts {
    pub fn queue(&self, room: &str, tier: Tier) -> Arc<Queue> {
        let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        queues.entry((room.to_owned(), tier)).or_default().clone()
    }
}

/// The buyers of one instance waiting for one room's lock, in order of arrival.
#[derive(Default)]
pub struct Queue {
    /// A std `Mutex`: every use is a few instructions, never across an `.await`.
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Whether a buyer of this instance has the turn (it waits for the Redis lock or holds
    /// it). Everyone else queues behind it.
    busy: bool,
    waiting: VecDeque<Waiter>,
}

/// A buyer in the queue.
struct Waiter {
    start: oneshot::Sender<Start>,
    /// Set when a holder has chosen this buyer as its successor and started its read: the
    /// buyer then waits for the lock past its deadline, since its read is already on its way.
    /// Shared with the buyer, hence an atomic; both sides touch it under the queue's lock,
    /// which orders them.
    claimed: Arc<AtomicBool>,
    /// The buyer's read, left with its place in the queue so that the holder before it can
    /// send it in its own last round trip: its calls, as data, the fencing token to come where
    /// an argument is [`crate::composed::ACQUIRED`].
    read: Option<Vec<Call>>,
    /// The room's reset generation when the buyer's sale began: a lock is passed only within
    /// one (a reset deletes the lock a cohort holds).
    generation: String,
}

/// How a buyer's turn starts.
pub enum Start {
    /// Take the Redis lock. `after_release`: this instance's cohort has just released it, so
    /// let the release message go by first.
    Lead { after_release: bool },
    /// The previous holder handed over the lock it holds, and the replies to this buyer's
    /// read when it sent it ahead.
    Passed(Baton, Option<TripReplies>),
}

/// The buyer a holder chose to hand the lock to.
pub struct Successor {
    start: oneshot::Sender<Start>,
    /// Its read, to send right after the holder's write under the lock's fencing token; empty
    /// when it reads on its own.
    pub(super) read: Vec<Call>,
}

/// The Redis lock as it goes from sale to sale within a cohort.
pub struct Baton {
    pub(super) held: Held,
    pub(super) lease: Lease,
}

/// What a cohort knows of the lock it passes around, besides the hold itself (which carries the
/// owner of the sale that took it: every sale of the cohort releases, renews and re-enters
/// under it).
pub struct Lease {
    /// When the acquire that took it began: the lease runs from no earlier than this.
    taken_at: Instant,
    /// Passes made so far.
    passes: u32,
    /// The room's reset generation of the sale that took it.
    generation: String,
}

impl Baton {
    /// The lock a sale just took in Redis, under its own owner.
    fn taken(mut held: Held, owner: &str, taken_at: Instant, generation: &str) -> Baton {
        held.owner = Some(owner.to_owned());
        Baton {
            held,
            lease: Lease {
                taken_at,
                passes: 0,
                generation: generation.to_owned(),
            },
        }
    }

    /// The owner the lock carries in Redis.
    #[cfg(test)]
    fn owner(&self) -> &str {
        self.held.owner.as_deref().unwrap_or_default()
    }
}

impl Lease {
    /// Whether another pass is allowed: fewer than `max` so far, and at least half the lease
    /// left.
    fn may_pass(&self, max: u32, lease: Duration) -> bool {
        self.passes < max && self.taken_at.elapsed() < lease / 2
    }
}

impl Queue {
    /// Waits for this buyer's turn, at most until `deadline` (unless a holder has already
    /// started its read). `read`: the buyer's read, for a holder to send ahead; `generation`:
    /// the room's reset generation when its sale began.
    pub async fn turn(
        self: &Arc<Self>,
        deadline: Instant,
        read: Option<Vec<Call>>,
        generation: &str,
    ) -> Result<(Turn, Start), LockError> {
        let claimed = Arc::new(AtomicBool::new(false));
        let mut rx = {
            let mut state = self.lock();
            if !state.busy {
                state.busy = true;
                let start = Start::Lead {
                    after_release: false,
                };
                return Ok((self.turn_guard(), start));
            }
            let (start, rx) = oneshot::channel();
            state.waiting.push_back(Waiter {
                start,
                claimed: claimed.clone(),
                read,
                generation: generation.to_owned(),
            });
            rx
        };
        let start = match tokio::time::timeout_at(deadline, &mut rx).await {
            Ok(started) => started.map_err(|_| ()),
            Err(_) => {
                let gave_up = {
                    let _state = self.lock();
                    let claimed = claimed.load(Relaxed);
                    if !claimed {
                        // Closed under the queue's lock: no holder can choose us any more,
                        // and whoever looks at our place finds it empty.
                        rx.close();
                    }
                    !claimed
                };
                match gave_up {
                    // What was handed over just before we closed is ours, used not dropped.
                    true => rx.try_recv().map_err(|_| ()),
                    // Our read is on its way with the lock: wait for both.
                    false => rx.await.map_err(|_| ()),
                }
            }
        };
        // A sender is never dropped unsent while its task lives; should one be, we give up.
        let start = start.map_err(|_| LockError::Timeout)?;
        Ok((self.turn_guard(), start))
    }

    fn turn_guard(self: &Arc<Self>) -> Turn {
        Turn {
            queue: self.clone(),
            handed_on: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands the turn to the next buyer still waiting, or ends it when nobody is.
    fn hand_on(&self, after_release: bool) {
        let mut state = self.lock();
        while let Some(next) = state.waiting.pop_front() {
            // A buyer who gave up has closed its end; the turn goes to the one after.
            if next.start.send(Start::Lead { after_release }).is_ok() {
                return;
            }
        }
        state.busy = false;
    }
}

/// A buyer's turn at the head of its instance's queue: it waits for the Redis lock or holds
/// it. Dropped without being handed on (an error, a panic), it hands the turn to the next
/// buyer; a lock it held is then left to its lease, as a dropped [`Held`] is.
pub struct Turn {
    queue: Arc<Queue>,
    handed_on: bool,
}

impl Turn {
    /// Chooses the buyer this sale hands the lock to when it leaves now: the first one still
    /// waiting, if the baton may pass again and that buyer's sale began in the room's reset
    /// generation the lock was taken in (else it takes the lock afresh, after a release).
    /// Asked at the write, as late as possible; the chosen buyer waits for the lock past its
    /// deadline.
    pub(super) fn successor(&self, held: &Lease, max: u32, lease: Duration) -> Option<Successor> {
        if !held.may_pass(max, lease) {
            return None;
        }
        let mut state = self.queue.lock();
        while let Some(next) = state.waiting.front() {
            // A buyer who gave up closed its end under this lock: it cannot be chosen.
            if next.start.is_closed() {
                state.waiting.pop_front();
                continue;
            }
            if next.generation != held.generation {
                return None;
            }
            let next = state.waiting.pop_front()?;
            next.claimed.store(true, Relaxed);
            return Some(Successor {
                start: next.start,
                read: next.read.unwrap_or_default(),
            });
        }
        None
    }

    /// Hands the lock, and the replies to the successor's read, to the successor. Gives the
    /// lock back only if the successor's task is gone: the caller releases it then.
    pub(super) fn pass(
        mut self,
        to: Successor,
        mut baton: Baton,
        read: Option<TripReplies>,
    ) -> Result<(), Box<(Turn, Baton)>> {
        baton.lease.passes += 1;
        match to.start.send(Start::Passed(baton, read)) {
            Ok(()) => {
                self.handed_on = true;
                Ok(())
            }
            Err(Start::Passed(mut back, _)) => {
                back.lease.passes -= 1;
                Err(Box::new((self, back)))
            }
            Err(Start::Lead { .. }) => unreachable!("a pass is sent as Passed"),
        }
    }

    /// The lock is released in Redis: the next buyer of this instance, if any, takes its turn
    /// after letting the release message go by.
    pub(super) fn released(mut self) {
        self.handed_on = true;
        self.queue.hand_on(true);
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if !self.handed_on {
            self.queue.hand_on(false);
        }
    }
}

/// A sale's place in its instance's cohort while it holds the lock (kept in its [`Held`]):
/// its turn at the head of the queue, what the cohort knows of the lock, and how many passes
/// in a row the settings allow.
pub(super) struct Member {
    pub(super) turn: Turn,
    pub(super) lease: Lease,
    pub(super) passes: u32,
}

/// Takes the lock for the sale of `cx.owner` as a cohort does: in this instance's queue first;
/// then from the previous holder of the instance, with this sale's read (`cx.read`) already
/// done in that holder's last round trip, or, at the head of the queue, from Redis through the
/// tier's own acquire (which waits as `pubsub` does), until the settings' deadline.
pub(super) async fn acquire<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    passes: u32,
) -> Result<Held, LockError> {
    let deadline = Instant::now() + cx.settings.wait_deadline();
    let queue = cx.signals.cohorts.queue(cx.keys.room(), cx.settings.tier);
    // A reentrant lock's nested hold cannot ride around a read sent ahead when the lock lives
    // on another server than the stock: that buyer reads on its own.
    let ahead = !lock.reentrant() || cx.store.kind() == LockStoreKind::Shared;
    let read = cx.read.filter(|_| ahead).map(<[Call]>::to_vec);
    let (turn, start) = queue.turn(deadline, read, cx.generation).await?;
    let (Baton { mut held, lease }, read) = match start {
        Start::Passed(baton, read) => (baton, read),
        // On an error the turn is dropped, which hands it to the next buyer.
        Start::Lead { after_release } => (lead(lock, cx, after_release, deadline).await?, None),
    };
    // A lead's read may have ridden with its acquire (already in the hold).
    if let Some(read) = read {
        held.read = Some(Box::new(read));
    }
    held.cohort = Some(Box::new(Member {
        turn,
        lease,
        passes,
    }));
    Ok(held)
}

/// Takes the Redis lock for the head of the queue, through the tier's own acquire (which waits
/// as `pubsub` does), until `deadline`. Right after this instance's cohort released it, first
/// lets the release message reach this instance, as it reaches the others.
async fn lead<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    after_release: bool,
    deadline: Instant,
) -> Result<Baton, LockError> {
    if after_release {
        let signal = cx.signals.room(cx.keys.room());
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(COURTESY.min(left), signal.notified()).await;
    }
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(LockError::Timeout);
    }
    // The tier's acquire waits at most the settings' deadline: give it what is left of ours.
    // It waits as `pubsub` does (the queue is this cohort's, already waited in).
    let mut settings = *cx.settings;
    settings.wait_deadline_ms = (left.as_millis() as u64).max(1);
    settings.wait = WaitStrategy::PubSub;
    let cx = LockCx {
        settings: &settings,
        ..*cx
    };
    let taken_at = Instant::now();
    let held = lock.acquire(&cx).await?;
    Ok(Baton::taken(held, cx.owner, taken_at, cx.generation))
}

/// Before a cohort releases the Redis lock: forgets a release message this instance heard
/// while nobody here was waiting (a `Notify` keeps one), so that the courtesy of the next
/// buyer waits for this release's message, not for an old one.
pub(super) fn forget_old_release(cx: &LockCx<'_>) {
    let signal = cx.signals.room(cx.keys.room());
    let _ = signal.notified().now_or_never();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> Arc<Queue> {
        Arc::new(Queue::default())
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    fn baton() -> Baton {
        Baton::taken(Held::plain(), "first-owner", Instant::now(), "g1")
    }

    /// Queues a buyer in a task of its own; its start (or its timeout) comes out of the handle.
    fn queued(
        q: &Arc<Queue>,
        deadline: Instant,
    ) -> tokio::task::JoinHandle<Result<(Turn, Start), LockError>> {
        let q = q.clone();
        tokio::spawn(async move { q.turn(deadline, None, "g1").await })
    }

    async fn until_waiting(q: &Queue, n: usize) {
        while q.lock().waiting.len() < n {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn the_first_buyer_leads_and_the_next_gets_the_lead_after_a_release() {
        let q = queue();
        let (first, start) = q.turn(far(), None, "g1").await.unwrap();
        assert!(matches!(
            start,
            Start::Lead {
                after_release: false
            }
        ));
        let second = queued(&q, far());
        until_waiting(&q, 1).await;
        first.released();
        let (_turn, start) = second.await.unwrap().unwrap();
        assert!(matches!(
            start,
            Start::Lead {
                after_release: true
            }
        ));
    }

    #[tokio::test]
    async fn a_holder_passes_at_most_max_times_then_must_release() {
        let q = queue();
        let (mut turn, _) = q.turn(far(), None, "g1").await.unwrap();
        let mut baton = baton();
        for pass in 1..=2 {
            let next = queued(&q, far());
            until_waiting(&q, 1).await;
            let to = turn.successor(&baton.lease, 2, Duration::from_secs(10));
            let to = to.expect("a waiting buyer, passes left");
            assert!(turn.pass(to, baton, None).is_ok());
            let (next_turn, start) = next.await.unwrap().unwrap();
            let Start::Passed(passed, None) = start else {
                panic!("pass {pass}: the lock was not handed over");
            };
            assert_eq!(passed.lease.passes, pass);
            assert_eq!(passed.owner(), "first-owner", "the lock keeps its owner");
            (turn, baton) = (next_turn, passed);
        }
        let _waiting = queued(&q, far());
        until_waiting(&q, 1).await;
        assert!(
            turn.successor(&baton.lease, 2, Duration::from_secs(10))
                .is_none(),
            "a third pass"
        );
    }

    #[tokio::test]
    async fn no_pass_once_half_the_lease_is_gone() {
        let q = queue();
        let (turn, _) = q.turn(far(), None, "g1").await.unwrap();
        let taken_at = Instant::now() - Duration::from_millis(600);
        let baton = Baton::taken(Held::plain(), "o", taken_at, "g1");
        let _waiting = queued(&q, far());
        until_waiting(&q, 1).await;
        let lease = Duration::from_millis(1_000);
        assert!(turn.successor(&baton.lease, 100, lease).is_none());
        assert!(turn
            .successor(&baton.lease, 100, Duration::from_millis(1_300))
            .is_some());
    }

    #[tokio::test]
    async fn no_pass_to_a_buyer_whose_sale_began_after_a_reset() {
        let q = queue();
        let (turn, _) = q.turn(far(), None, "g1").await.unwrap();
        let after_reset = {
            let q = q.clone();
            tokio::spawn(async move { q.turn(far(), None, "g2").await })
        };
        until_waiting(&q, 1).await;
        // The lock was taken in g1 and the reset deleted it: the g2 buyer takes its own.
        assert!(turn
            .successor(&baton().lease, 8, Duration::from_secs(10))
            .is_none());
        turn.released();
        let (_turn, start) = after_reset.await.unwrap().unwrap();
        assert!(matches!(start, Start::Lead { .. }));
    }

    #[tokio::test]
    async fn a_buyer_who_gave_up_is_skipped() {
        let q = queue();
        let (turn, _) = q.turn(far(), None, "g1").await.unwrap();
        let gave_up = queued(&q, Instant::now() + Duration::from_millis(20));
        assert!(matches!(gave_up.await.unwrap(), Err(LockError::Timeout)));
        let stays = queued(&q, far());
        until_waiting(&q, 2).await;
        let to = turn
            .successor(&baton().lease, 8, Duration::from_secs(10))
            .expect("the buyer still waiting");
        assert!(turn.pass(to, baton(), None).is_ok());
        let (_turn, start) = stays.await.unwrap().unwrap();
        assert!(matches!(start, Start::Passed(..)));
        assert!(q.lock().waiting.is_empty());
    }

    #[tokio::test]
    async fn a_chosen_successor_waits_past_its_deadline() {
        let q = queue();
        let (turn, _) = q.turn(far(), None, "g1").await.unwrap();
        let chosen = queued(&q, Instant::now() + Duration::from_millis(30));
        until_waiting(&q, 1).await;
        let to = turn
            .successor(&baton().lease, 8, Duration::from_secs(10))
            .unwrap();
        // The holder's last round trip takes longer than the successor's deadline.
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(turn.pass(to, baton(), None).is_ok());
        let (_turn, start) = chosen.await.unwrap().unwrap();
        assert!(matches!(start, Start::Passed(..)));
    }

    #[tokio::test]
    async fn a_turn_dropped_on_an_error_hands_the_lead_on() {
        let q = queue();
        let (turn, _) = q.turn(far(), None, "g1").await.unwrap();
        let next = queued(&q, far());
        until_waiting(&q, 1).await;
        drop(turn);
        let (turn, start) = next.await.unwrap().unwrap();
        assert!(matches!(
            start,
            Start::Lead {
                after_release: false
            }
        ));
        drop(turn);
        assert!(!q.lock().busy, "nobody left: the queue is free");
    }
}
