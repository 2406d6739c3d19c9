//! Waiting for a held lock: spin (sleep, retry) or pub/sub (sleep until a release is published,
//! at most the lock's remaining lease; which waiter of this instance a release wakes is
//! `signals.rs`'s). Every wait ends at the settings' deadline. A cohort
//! (`cohort.rs`) queues an instance's buyers in memory first; the one at the head waits here,
//! as pub/sub does.
//!
//! The loop names the points around an attempt where the hook may act (`hook.rs`): before and
//! after each attempt, and when one finds the lock busy, where a buyer may die in line or
//! subscribe late ([`SubscriptionGap`]): in line, a release published in the gap is kept for
//! it; out of line, it is lost.

use std::time::Duration;

use oversell_api::settings::WaitStrategy;
use tokio::time::Instant;

use super::hook::{Go, Point, SubscriptionGap};
use super::parked::{self, Parked};
use super::signals::{Place, ReleaseSignals};
use super::{Attempt, Held, Lock, LockCx, LockError};
use crate::redis_pool::StoreError;

/// A pub/sub wait with no known lease (a `setnx` lock has none) still re-checks this often.
const UNKNOWN_LEASE_RECHECK: Duration = Duration::from_millis(200);
/// How often a buyer looks again while a Sentinel-backed store is failing over.
const OUTAGE_RETRY: Duration = Duration::from_millis(100);

pub(super) async fn until_acquired<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
) -> Result<Held, LockError> {
    in_line(lock, cx, Newcomer::LetsWaitersGoFirst).await
}

/// The same for an owner who holds the lock already (a nested step): a reentrant lock lets
/// it in at once, so it must not stand behind this instance's buyers who wait — for its own
/// release, which would come only after it.
pub(super) async fn again<L: Lock + ?Sized>(lock: &L, cx: &LockCx<'_>) -> Result<Held, LockError> {
    in_line(lock, cx, Newcomer::TriesAtOnce).await
}

/// Whether a buyer who joins this instance's line behind buyers waiting for a release lets
/// them go first.
#[derive(PartialEq)]
enum Newcomer {
    LetsWaitersGoFirst,
    TriesAtOnce,
}

async fn in_line<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    newcomer: Newcomer,
) -> Result<Held, LockError> {
    let deadline = Instant::now() + cx.settings.wait_deadline();
    let pubsub = matches!(
        cx.settings.wait,
        WaitStrategy::PubSub | WaitStrategy::Cohort { .. }
    );
    // In line before the first attempt, so a release right after it is not missed: the
    // buyer's own signal keeps a wake-up that comes while it is trying (`signals.rs`).
    let mut place = cx.signals.join(cx.keys.room(), cx.owner);
    // Behind older buyers of this instance who wait for a release, a newcomer lets them go
    // first: it tries when a release finds it at the front, or after a short while. A lock
    // that queues its buyers in the store gives a place there only to a buyer who tries.
    let mut behind = pubsub
        && !lock.queues()
        && newcomer == Newcomer::LetsWaitersGoFirst
        && place.behind_a_waiter();
    // A queued buyer's next attempt, already waiting in the store for its call.
    let mut parked: Option<Parked> = None;
    loop {
        if std::mem::take(&mut behind) {
            let left = deadline.saturating_duration_since(Instant::now());
            let woken = place.waiter.signal.notified();
            let _ = tokio::time::timeout(UNKNOWN_LEASE_RECHECK.min(left), woken).await;
        }
        if let Some(hook) = cx.hook {
            hook.at(cx, Point::BeforeAttempt).await;
        }
        // The attempt says how much longer this buyer waits: a queue keeps its place no longer.
        let mut now = *cx.settings;
        let left = deadline.saturating_duration_since(Instant::now());
        now.wait_deadline_ms = (left.as_millis() as u64).max(1);
        let attempt = lock
            .try_acquire(&LockCx {
                settings: &now,
                parked: parked.as_ref(),
                ..*cx
            })
            .await;
        parked = None;
        // An attempt that took the lock and gave it back because too few replicas had it
        // (`sync_replicas`) took it too: what acts after a taking attempt acts after it.
        let took = matches!(
            &attempt,
            Ok(Attempt::Acquired(_)) | Err(StoreError::NotReplicated { .. })
        );
        let after = match cx.hook {
            Some(hook) => hook.at(cx, Point::AfterAttempt { took }).await,
            None => Go::On,
        };
        let lease_left = match attempt {
            // The buyer never saw this hold: it starts no watchdog for it (the hold is dropped
            // unreleased, as a timed-out client has nothing to release) and asks again.
            Ok(Attempt::Acquired(held)) if after == Go::ReplyLost => {
                tracing::debug!(owner = cx.owner, "lock acquired, reply lost: trying again");
                drop(held);
                continue;
            }
            Ok(Attempt::Acquired(held)) => {
                tracing::debug!(owner = cx.owner, depth = held.depth, "lock acquired");
                place.served = true;
                return Ok(held);
            }
            Ok(Attempt::HolderDied) => return Err(LockError::HolderDied),
            Ok(Attempt::Busy { lease_left }) => {
                tracing::debug!(owner = cx.owner, ?lease_left, "lock busy");
                place.waits();
                let go = match cx.hook {
                    Some(hook) => hook.at(cx, Point::Busy).await,
                    None => Go::On,
                };
                match go {
                    // Dead in line: no more attempts, no word to the lock store.
                    Go::WaiterDied => return Err(LockError::WaiterDied),
                    Go::SubscribeAfter(gap) if pubsub => {
                        let subscriber = Subscriber {
                            signals: cx.signals,
                            room: cx.keys.room(),
                            owner: cx.owner,
                        };
                        match after_gap(gap, subscriber, place, lease_left, deadline).await {
                            Gap::WaitAsUsual(kept) => place = kept,
                            Gap::TryAgain(late) => {
                                place = late;
                                continue;
                            }
                            Gap::GaveUp => return Err(LockError::Timeout),
                        }
                    }
                    _ => {}
                }
                lease_left
            }
            // A Sentinel store failing over, or too few replicas in sync: both pass, so the
            // buyer tries again until its deadline, and is told which of the two it was.
            Err(err @ StoreError::Unavailable(_)) if cx.store.waits_out_outages() => {
                tracing::debug!(%err, "lock store unavailable; trying again");
                wait_out(err, deadline).await?;
                continue;
            }
            // Too few replicas in sync, or too few Redlock masters answering: either may
            // recover (a replica catches up, a master restarts) before the deadline.
            Err(err @ (StoreError::NotReplicated { .. } | StoreError::NoQuorum { .. })) => {
                wait_out(err, deadline).await?;
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(LockError::Timeout);
        }
        match cx.settings.wait {
            WaitStrategy::Spin { sleep_ms } => {
                tokio::time::sleep(Duration::from_millis(sleep_ms).min(left)).await
            }
            // The head of a cohort's queue waits as pub/sub does; a buyer a lock will call by
            // name waits in the store, its next attempt parked behind the call.
            WaitStrategy::PubSub | WaitStrategy::Cohort { .. } => {
                let bound = lease_left.unwrap_or(UNKNOWN_LEASE_RECHECK).min(left);
                parked = parked::next_attempt(lock, cx, bound).await.unwrap_or(None);
                if parked.is_none() {
                    let woken = place.waiter.signal.notified();
                    let _ = tokio::time::timeout(bound, woken).await;
                }
            }
        }
    }
}

/// How a wait goes on after a subscription gap.
enum Gap<'s> {
    /// No gap, or one spent in line: the wait below goes on, with the buyer's place.
    WaitAsUsual(Place<'s>),
    /// A late subscriber woken by a release, or at the lease it saw: it tries again.
    TryAgain(Place<'s>),
    /// A late subscriber that slept to its deadline: it gives up without another look.
    GaveUp,
}

/// Who listens for a room's release messages, and where: what a late subscriber joins.
struct Subscriber<'s, 'a> {
    signals: &'s ReleaseSignals,
    room: &'a str,
    owner: &'a str,
}

/// A gap spent in line, as every wait here is (the place is taken before the first attempt),
/// keeps a release in the gap for the buyer as a permit. A gap spent out of line is a client
/// that subscribes only after its failed attempt: a release in the gap reaches nobody.
/// Subscribed at last, that client waits for the next release without looking at the lock
/// again, at most the lease it saw or to its deadline, and gives up there, as a `tryLock`
/// whose wait time is spent returns false.
async fn after_gap<'s>(
    SubscriptionGap { gap, in_line }: SubscriptionGap,
    subscriber: Subscriber<'s, '_>,
    place: Place<'s>,
    lease_left: Option<Duration>,
    deadline: Instant,
) -> Gap<'s> {
    let gap = gap.min(deadline.saturating_duration_since(Instant::now()));
    if in_line {
        tokio::time::sleep(gap).await;
        return Gap::WaitAsUsual(place);
    }
    drop(place);
    tokio::time::sleep(gap).await;
    let late = subscriber.signals.join(subscriber.room, subscriber.owner);
    late.waits();
    let left = deadline.saturating_duration_since(Instant::now());
    let bound = lease_left.unwrap_or(UNKNOWN_LEASE_RECHECK).min(left);
    let woken = late.waiter.signal.notified();
    match tokio::time::timeout(bound, woken).await {
        Err(_) if bound == left => Gap::GaveUp,
        _ => Gap::TryAgain(late),
    }
}

/// Sleeps before the next attempt, or gives `err` back when the deadline comes first.
async fn wait_out(err: StoreError, deadline: Instant) -> Result<(), LockError> {
    if Instant::now() + OUTAGE_RETRY >= deadline {
        return Err(LockError::Store(err));
    }
    tokio::time::sleep(OUTAGE_RETRY).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The wait loop against a lock whose attempts answer as scripted, on tokio's paused clock:
    //! when each attempt is made, and how the wait ends, exactly.
    use std::collections::VecDeque;

    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use oversell_api::settings::Settings;

    use super::super::test_cx::{settings, TestCx, NOWHERE};
    use super::super::ReleaseSignals;
    use super::*;
    use crate::lock_store::LockStore;
    use crate::redis_pool::RedisPool;

    /// What one attempt answers.
    #[derive(Clone, Copy)]
    enum Answer {
        Busy(Option<u64>),
        Taken,
        Died,
        Unavailable,
        NoQuorum,
    }

    /// A lock whose attempts answer as scripted, in order; the last answer repeats. It notes
    /// the paused clock's time of each attempt, in ms since the wait began.
    struct Scripted {
        answers: Mutex<VecDeque<Answer>>,
        began: Instant,
        at: Mutex<Vec<u64>>,
    }

    impl Scripted {
        fn new(answers: &[Answer]) -> Scripted {
            Scripted {
                answers: Mutex::new(answers.iter().copied().collect()),
                began: Instant::now(),
                at: Mutex::new(Vec::new()),
            }
        }

        fn attempts_at(&self) -> Vec<u64> {
            self.at.lock().unwrap().clone()
        }
    }

    #[async_trait]
    impl Lock for Scripted {
        async fn try_acquire(&self, _cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
            let ms = self.began.elapsed().as_millis() as u64;
            self.at.lock().unwrap().push(ms);
            let answer = {
                let mut answers = self.answers.lock().unwrap();
                match answers.len() {
                    1 => answers[0],
                    _ => answers
                        .pop_front()
                        .expect("a script of at least one answer"),
                }
            };
            match answer {
                Answer::Busy(lease_ms) => Ok(Attempt::Busy {
                    lease_left: lease_ms.map(Duration::from_millis),
                }),
                Answer::Taken => Ok(Attempt::Acquired(Held::plain())),
                Answer::Died => Ok(Attempt::HolderDied),
                Answer::Unavailable => Err(StoreError::Unavailable("scripted".into())),
                Answer::NoQuorum => Err(StoreError::NoQuorum {
                    answered: 1,
                    nodes: 3,
                    quorum: 2,
                }),
            }
        }

        async fn release(&self, _cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
            Ok(())
        }
    }

    /// Waits for `lock` as `settings` say, on a lock store of its own (`own_store`) or the
    /// shared one, with `signals` hearing the room's release messages.
    async fn wait(
        lock: &Scripted,
        settings: &Settings,
        own_store: bool,
        signals: &ReleaseSignals,
    ) -> Result<Held, LockError> {
        let resource = RedisPool::new(NOWHERE).unwrap();
        let store = match own_store {
            true => LockStore::single(NOWHERE).unwrap(),
            false => LockStore::shared(&resource),
        };
        let test = TestCx::new(store, resource, *settings);
        let cx = LockCx {
            signals,
            ..test.cx()
        };
        until_acquired(lock, &cx).await
    }

    /// A buyer of this instance already waits for the room's release.
    fn a_buyer_waiting<'s>(signals: &'s ReleaseSignals) -> crate::lock::signals::Place<'s> {
        let waiting = signals.join("test", "earlier-buyer");
        waiting.waits();
        waiting
    }

    #[tokio::test(start_paused = true)]
    async fn a_newcomer_lets_the_buyers_who_wait_go_first() {
        let signals = ReleaseSignals::default();
        let _earlier = a_buyer_waiting(&signals);
        let lock = Scripted::new(&[Answer::Taken]);
        let pubsub = settings(WaitStrategy::PubSub, 60_000);
        assert!(wait(&lock, &pubsub, true, &signals).await.is_ok());
        // No release came: it tried at the recheck, not before.
        assert_eq!(
            lock.attempts_at(),
            [UNKNOWN_LEASE_RECHECK.as_millis() as u64]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_holder_taking_its_lock_again_does_not_wait_behind_buyers_waiting_for_it() {
        let signals = ReleaseSignals::default();
        let _earlier = a_buyer_waiting(&signals);
        let lock = Scripted::new(&[Answer::Taken]);
        let pubsub = settings(WaitStrategy::PubSub, 60_000);
        let resource = RedisPool::new(NOWHERE).unwrap();
        let test = TestCx::new(LockStore::single(NOWHERE).unwrap(), resource, pubsub);
        let cx = LockCx {
            signals: &signals,
            ..test.cx()
        };
        assert!(again(&lock, &cx).await.is_ok());
        assert_eq!(lock.attempts_at(), [0]);
    }

    #[tokio::test(start_paused = true)]
    async fn spin_sleeps_its_interval_between_attempts_and_takes_the_lock_when_free() {
        let lock = Scripted::new(&[Answer::Busy(None), Answer::Busy(None), Answer::Taken]);
        let spin = settings(WaitStrategy::Spin { sleep_ms: 20 }, 1_000);
        let held = wait(&lock, &spin, false, &ReleaseSignals::default()).await;
        assert!(held.is_ok());
        assert_eq!(lock.attempts_at(), [0, 20, 40]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lock_never_free_times_out_at_the_deadline_after_a_last_attempt() {
        let lock = Scripted::new(&[Answer::Busy(None)]);
        let spin = settings(WaitStrategy::Spin { sleep_ms: 30 }, 100);
        let waited = wait(&lock, &spin, false, &ReleaseSignals::default()).await;
        assert!(matches!(waited, Err(LockError::Timeout)));
        // The last sleep is cut to the deadline, where one more attempt is made.
        assert_eq!(lock.attempts_at(), [0, 30, 60, 90, 100]);
    }

    #[tokio::test(start_paused = true)]
    async fn pubsub_tries_again_when_the_release_is_heard_not_when_the_lease_ends() {
        let lock = Scripted::new(&[Answer::Busy(Some(10_000)), Answer::Taken]);
        let signals = Arc::new(ReleaseSignals::default());
        let publisher = signals.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(7)).await;
            publisher.released("test", "released");
        });
        let pubsub = settings(WaitStrategy::PubSub, 60_000);
        assert!(wait(&lock, &pubsub, false, &signals).await.is_ok());
        assert_eq!(lock.attempts_at(), [0, 7]);
    }

    #[tokio::test(start_paused = true)]
    async fn pubsub_with_no_message_tries_again_when_the_lease_runs_out_or_at_the_recheck() {
        // A lease the tier knows: the lock may be free when it ends (its holder died).
        let lock = Scripted::new(&[Answer::Busy(Some(50)), Answer::Taken]);
        let pubsub = settings(WaitStrategy::PubSub, 60_000);
        let signals = ReleaseSignals::default();
        assert!(wait(&lock, &pubsub, false, &signals).await.is_ok());
        assert_eq!(lock.attempts_at(), [0, 50]);
        // No lease at all (`setnx`): the wait still looks again.
        let lock = Scripted::new(&[Answer::Busy(None), Answer::Taken]);
        assert!(wait(&lock, &pubsub, false, &signals).await.is_ok());
        let recheck = UNKNOWN_LEASE_RECHECK.as_millis() as u64;
        assert_eq!(lock.attempts_at(), [0, recheck]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lock_store_of_its_own_is_waited_out_the_shared_one_is_not() {
        let spin = settings(WaitStrategy::Spin { sleep_ms: 20 }, 5_000);
        let signals = ReleaseSignals::default();
        let answers = [Answer::Unavailable, Answer::Unavailable, Answer::Taken];
        let lock = Scripted::new(&answers);
        assert!(wait(&lock, &spin, true, &signals).await.is_ok());
        let retry = OUTAGE_RETRY.as_millis() as u64;
        assert_eq!(lock.attempts_at(), [0, retry, 2 * retry]);
        // The resource store down: nothing can be sold, the buyer is told at once.
        let lock = Scripted::new(&answers);
        let told = wait(&lock, &spin, false, &signals).await;
        assert!(matches!(
            told,
            Err(LockError::Store(StoreError::Unavailable(_)))
        ));
        assert_eq!(lock.attempts_at(), [0]);
    }

    #[tokio::test(start_paused = true)]
    async fn no_quorum_is_retried_until_the_deadline_then_reported_as_such() {
        let lock = Scripted::new(&[Answer::NoQuorum]);
        let spin = settings(WaitStrategy::Spin { sleep_ms: 20 }, 350);
        let told = wait(&lock, &spin, false, &ReleaseSignals::default()).await;
        assert!(matches!(
            told,
            Err(LockError::Store(StoreError::NoQuorum { .. }))
        ));
        // Retried while a retry still fits before the deadline: the attempt at 300 is the
        // last (300 + 100 ≥ 350).
        assert_eq!(lock.attempts_at(), [0, 100, 200, 300]);
    }

    /// A release published 100 ms into a 300 ms subscription gap, with a lease of 10 s seen
    /// and a deadline at 2 s: what each way of subscribing makes of it, and when.
    async fn gap_with_a_release_inside(
        in_line: bool,
        signals: &Arc<ReleaseSignals>,
    ) -> (Gap<'_>, u64) {
        let place = signals.join("test", "buyer");
        place.waits();
        let publisher = signals.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            publisher.released("test", "released");
        });
        let began = Instant::now();
        let subscriber = Subscriber {
            signals,
            room: "test",
            owner: "buyer",
        };
        let lease = Some(Duration::from_secs(10));
        let deadline = began + Duration::from_secs(2);
        let gap = SubscriptionGap {
            gap: Duration::from_millis(300),
            in_line,
        };
        let gap = after_gap(gap, subscriber, place, lease, deadline).await;
        (gap, began.elapsed().as_millis() as u64)
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_subscriber_misses_the_release_in_its_gap_and_sleeps_to_its_deadline() {
        let signals = Arc::default();
        let (gap, at) = gap_with_a_release_inside(false, &signals).await;
        assert!(matches!(gap, Gap::GaveUp));
        assert_eq!(at, 2_000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_buyer_in_line_through_the_gap_keeps_the_release_and_tries_at_its_end() {
        let signals = Arc::default();
        let (gap, at) = gap_with_a_release_inside(true, &signals).await;
        let Gap::WaitAsUsual(place) = gap else {
            panic!("the gap spent in line goes on to the usual wait");
        };
        assert_eq!(at, 300);
        // The release heard during the gap is kept: the wait ends at once.
        let kept = place.waiter.signal.notified();
        assert!(tokio::time::timeout(Duration::ZERO, kept).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_holder_that_dies_between_its_steps_ends_the_wait_at_once() {
        let lock = Scripted::new(&[Answer::Died, Answer::Taken]);
        let spin = settings(WaitStrategy::Spin { sleep_ms: 20 }, 1_000);
        let told = wait(&lock, &spin, false, &ReleaseSignals::default()).await;
        assert!(matches!(told, Err(LockError::HolderDied)));
        assert_eq!(lock.attempts_at(), [0]);
    }
}
