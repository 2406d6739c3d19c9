//! `fair` — Redisson's fair lock (`RedissonFairLock`, what `redisson.getFairLock` returns; 001
//! builds its Redlock example out of three of them, lines 244–246): `reentrant-watchdog`'s
//! hash and watchdog, handed out in the order the buyers came, by a queue kept in the lock
//! store beside the lock.
//!
//! | step | sends (`static/locks/fair/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: lapsed places leave the front of the queue; our own lock, count + 1; a free lock owed to nobody before us, ours; else a place at the end (or ours kept) | `{depth, 0}` held; `{0, come back within}` busy |
//! | release | `release-1.lua`: count − 1; at 0 delete, and call the first live place by name (a note in its call list, and a message unless its attempt is parked there) | 1; 0 not ours any more: lost |
//! | renew, every TTL/3 | `renew.lua`: lease reset while the hash has our field | 1 renewed; 0 gone: stop |
//!
//! The queue is a list of owners (`<lock>:queue`) and the time each place lapses
//! (`<lock>:timeouts`, a sorted set), both by the lock store's own clock (`TIME`), never an
//! instance's. A waiter keeps its place by coming back for it, at least every third of the
//! lease (the busy reply says when); a place lapses a lease after its owner last came, or at
//! the end of that owner's wait if sooner. The release publishes `next:<owner>` on the room's
//! release channel, and the instance where that owner waits wakes it alone (`wait.rs`): one
//! waiter woken per hand-off in the whole fleet, the one whose turn it is. It also pushes a
//! note to `<lock>:call:<owner>` ([`Keys::call_of`]): a waiter does not wait for the message
//! and then send its attempt, its next attempt already waits in the store behind a blocking
//! pop of that list (`parked.rs`), so the store runs it, with the sale's read, the moment the
//! release ends, and the hand-off costs no trip to an instance and back. A waiter parked so
//! marks itself, and its call is published to nobody: no instance wakes for it.
//!
//! # Guarantee
//! Everything `reentrant-watchdog` guarantees, and first come first served: a buyer who
//! queued before another gets the lock before it, whatever instance each came through, so
//! nobody starves while the lock is busy. A free lock owed to a queued buyer is not taken
//! by a newcomer (no barging).
//!
//! # Known defect
//! `reentrant-watchdog`'s: a whole-process pause longer than the lease lets a second holder
//! in. And Redisson's documented cost of a queue: a waiter that dies in it (its process
//! killed, its task gone) is still first in line, and the lock stays free and unused until
//! its place lapses. Redisson waits its `threadWaitTime` (5 s by default) per dead waiter;
//! here a place lapses one lease after its owner last came back, and a waiter that gives up
//! at its deadline has its place lapse at that deadline, so the next buyer's turn comes
//! without anyone having to clean up.

use std::sync::LazyLock;

use crate::keys::Keys;
use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/fair/acquire-1.lua")));
static RELEASE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/fair/release-1.lua")));
static RENEW: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/fair/renew.lua")));

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::Fair, crate::lock::TierLock::Steps(&Fair))]
}

pub struct Fair;

/// The lab's four keys, as a lab lock gets them (`crate::lab`), for `fair`'s hash: the lock,
/// the fencing-token counter (unused), the waiters' queue and when each place lapses.
fn keyed(call: crate::composed::Call, keys: &Keys) -> crate::composed::Call {
    let lock = keys.reentrant_lock();
    call.key(&lock)
        .key(keys.fence_counter())
        .key(Keys::queue_of(&lock))
        .key(Keys::timeouts_of(&lock))
}

impl Technique for Fair {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let lock = keyed(ACQUIRE.call(), on.keys)
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel())
            .arg(on.wait_ms);
        vec![Step::acquire(lock)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let unlock = keyed(RELEASE.call(), on.keys)
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        vec![Step::release(unlock)]
    }

    fn renew(&self, on: &On<'_>) -> Option<Step> {
        let renew = keyed(RENEW.call(), on.keys).arg(on.owner).arg(on.ttl_ms);
        Some(Step::renew(renew))
    }

    fn reentrant(&self) -> bool {
        true
    }

    fn queues(&self) -> bool {
        true
    }

    fn call_key(&self, on: &On<'_>) -> Option<String> {
        Some(Keys::call_of(&on.keys.reentrant_lock(), on.owner))
    }
}

#[cfg(test)]
mod tests {
    //! The scripts on a real `redis-server`: who gets the lock, in what order, and who is
    //! called.
    use std::time::Duration;

    use futures_util::StreamExt;
    use oversell_api::settings::WaitStrategy;

    use super::*;
    use crate::launch::redis_server::RedisServer;
    use crate::lock::engine::{attempt, release, Stepped, Via};
    use crate::lock::test_cx::{settings, TestCx};
    use crate::lock::Lock;
    use crate::lock::{Attempt, Held, LockCx};
    use crate::lock_store::LockStore;
    use crate::redis_pool::RedisPool;

    fn shared(redis: &RedisServer) -> TestCx {
        let pool = RedisPool::new(&redis.url()).unwrap();
        let pubsub = settings(WaitStrategy::PubSub, 5_000);
        TestCx::new(LockStore::shared(&pool), pool, pubsub)
    }

    fn as_owner<'a>(test: &'a TestCx, owner: &'a str) -> LockCx<'a> {
        LockCx { owner, ..test.cx() }
    }

    /// One attempt by `owner`: its hold, or `None` and how soon it is to come back.
    async fn try_as(test: &TestCx, owner: &str) -> Result<Held, Option<Duration>> {
        match attempt(&as_owner(test, owner), &Fair, Via::Store).await {
            Ok(Attempt::Acquired(held)) => Ok(held),
            Ok(Attempt::Busy { lease_left }) => Err(lease_left),
            Ok(Attempt::HolderDied) => panic!("no fault was armed"),
            Err(err) => panic!("{owner}: {err}"),
        }
    }

    async fn release_as(test: &TestCx, owner: &str, held: Held) {
        release(&as_owner(test, owner), &Fair, Via::Store, held)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn the_lock_goes_to_the_buyers_in_the_order_they_queued_not_to_a_newcomer() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let a = try_as(&test, "a").await.expect("a free lock");
        for owner in ["b", "c"] {
            let Err(Some(back)) = try_as(&test, owner).await else {
                panic!("{owner}: held by a, and told when to come back");
            };
            // Come back within a third of the lease (1 s here): that keeps the place.
            assert!(back <= Duration::from_millis(333), "{back:?}");
        }
        release_as(&test, "a", a).await;
        // Free, but owed to b: neither c nor a newcomer takes it.
        assert!(try_as(&test, "c").await.is_err());
        assert!(try_as(&test, "newcomer").await.is_err());
        let b = try_as(&test, "b").await.expect("b's turn");
        // Re-entry by the holder is not a turn: it never waits behind the queue.
        let again = try_as(&test, "b").await.expect("b re-enters");
        assert_eq!(again.depth, 2);
        release_as(&test, "b", again).await;
        release_as(&test, "b", b).await;
        assert!(try_as(&test, "newcomer").await.is_err(), "c is before it");
        let c = try_as(&test, "c").await.expect("c's turn");
        release_as(&test, "c", c).await;
        assert!(try_as(&test, "newcomer").await.is_ok());
    }

    /// A subscriber to the room's release channel, as an instance has.
    async fn listening(redis: &RedisServer, test: &TestCx) -> redis::aio::PubSub {
        let client = redis::Client::open(redis.url()).unwrap();
        let mut pubsub = client.get_async_pubsub().await.unwrap();
        pubsub
            .subscribe(test.keys.released_channel())
            .await
            .unwrap();
        pubsub
    }

    /// The first release message `pubsub` hears, within 5 s.
    async fn first_message(pubsub: &mut redis::aio::PubSub) -> String {
        let mut messages = pubsub.on_message();
        let heard = tokio::time::timeout(Duration::from_secs(5), messages.next()).await;
        heard.unwrap().unwrap().get_payload().unwrap()
    }

    #[tokio::test]
    async fn a_release_calls_the_first_buyer_in_line_by_name() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let mut pubsub = listening(&redis, &test).await;
        let a = try_as(&test, "a").await.unwrap();
        assert!(try_as(&test, "b").await.is_err());
        assert!(try_as(&test, "c").await.is_err());
        release_as(&test, "a", a).await;
        let message = first_message(&mut pubsub).await;
        assert_eq!(message, "next:b");
    }

    #[tokio::test]
    async fn a_place_whose_buyer_stopped_coming_back_lapses_and_the_next_one_is_served() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let a = try_as(&test, "a").await.unwrap();
        // b will wait 30 ms more at most, then is gone without a word: its place lapses then.
        let mut brief = test.settings;
        brief.wait_deadline_ms = 30;
        let b = LockCx {
            settings: &brief,
            ..as_owner(&test, "b")
        };
        assert!(matches!(
            attempt(&b, &Fair, Via::Store).await.unwrap(),
            Attempt::Busy { .. }
        ));
        assert!(try_as(&test, "c").await.is_err());
        release_as(&test, "a", a).await;
        // c is told to come back when b's place lapses, and is served then.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let c = loop {
            match try_as(&test, "c").await {
                Ok(held) => break held,
                Err(back) => {
                    assert!(tokio::time::Instant::now() < deadline, "c never served");
                    let back = back.expect("a time to come back");
                    assert!(back <= Duration::from_millis(30), "{back:?}");
                    tokio::time::sleep(back).await;
                }
            }
        };
        release_as(&test, "c", c).await;
    }

    /// How many clients wait in a blocking command on `redis` right now.
    async fn blocked_clients(test: &TestCx) -> i64 {
        let mut conn = test.resource.conn().await.unwrap();
        let info: String = redis::cmd("INFO")
            .arg("clients")
            .query_async(&mut conn)
            .await
            .unwrap();
        let line = info.lines().find(|l| l.starts_with("blocked_clients:"));
        line.and_then(|l| l[16..].trim().parse().ok()).unwrap()
    }

    /// Until exactly `count` clients wait in a blocking command, at most 10 s.
    async fn until_blocked(test: &TestCx, count: i64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while blocked_clients(test).await != count {
            assert!(
                tokio::time::Instant::now() < deadline,
                "never {count} blocked"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A lease of a minute: a queued buyer would come back for its place only after 20 s.
    fn long_lease(redis: &RedisServer) -> TestCx {
        let mut test = shared(redis);
        test.settings.ttl_ms = 60_000;
        test.settings.wait_deadline_ms = 30_000;
        test
    }

    #[tokio::test]
    async fn a_queued_buyers_next_attempt_waits_in_the_store_and_runs_when_its_call_comes() {
        let redis = RedisServer::start().unwrap();
        let test = long_lease(&redis);
        let a = try_as(&test, "a").await.unwrap();
        // The sale's read rides behind the attempt, as in a sale: one script in the store.
        static READ: LazyLock<Lua> = LazyLock::new(|| Lua::new("return redis.call('TIME')"));
        let read = [READ.call()];
        let b = LockCx {
            read: Some(&read),
            ..as_owner(&test, "b")
        };
        let mut pubsub = listening(&redis, &test).await;
        // No release message reaches this test's buyers (no instance listens for them): only
        // the attempt parked in the store can serve b before it comes back, 20 s on.
        let (held, ()) = tokio::join!(
            tokio::time::timeout(Duration::from_secs(10), Stepped(&Fair).acquire(&b)),
            async {
                until_blocked(&test, 1).await;
                release_as(&test, "a", a).await;
            }
        );
        let held = held.expect("served by the release").expect("b holds it");
        assert_eq!(held.depth, 1);
        assert!(held.read.is_some(), "the read came back with the lock");
        let mut conn = test.resource.conn().await.unwrap();
        let holds: Option<u32> = redis::cmd("HGET")
            .arg(test.keys.reentrant_lock())
            .arg("b")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(holds, Some(1));
        assert_eq!(blocked_clients(&test).await, 0);
        // b's call went to its parked attempt alone; c, queued without parking, is called by
        // the message, the first one anybody published.
        assert!(try_as(&test, "c").await.is_err());
        release_as(&test, "b", held).await;
        let message = first_message(&mut pubsub).await;
        assert_eq!(message, "next:c");
    }

    #[tokio::test]
    async fn a_buyer_who_leaves_while_parked_leaves_no_attempt_behind_in_the_store() {
        let redis = RedisServer::start().unwrap();
        let test = long_lease(&redis);
        let a = try_as(&test, "a").await.unwrap();
        let b = as_owner(&test, "b");
        tokio::select! {
            _ = Stepped(&Fair).acquire(&b) => panic!("a holds the lock"),
            () = until_blocked(&test, 1) => {}
        }
        // b's request is gone: its connection closes, and the store forgets its wait.
        until_blocked(&test, 0).await;
        release_as(&test, "a", a).await;
        let mut conn = test.resource.conn().await.unwrap();
        let lock: Vec<String> = redis::cmd("HKEYS")
            .arg(test.keys.reentrant_lock())
            .query_async(&mut conn)
            .await
            .unwrap();
        // Free, and owed to b until its place lapses: nobody took it in b's name.
        assert!(lock.is_empty(), "{lock:?}");
        assert!(try_as(&test, "c").await.is_err());
    }

    #[tokio::test]
    async fn a_queue_nobody_comes_back_to_goes_with_its_last_lease() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let _a = try_as(&test, "a").await.unwrap();
        assert!(try_as(&test, "b").await.is_err());
        let mut conn = test.resource.conn().await.unwrap();
        let lock = test.keys.reentrant_lock();
        for key in [Keys::queue_of(&lock), Keys::timeouts_of(&lock)] {
            let ttl: i64 = redis::cmd("PTTL")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .unwrap();
            // The lease is 1 s here: no queue key is left behind for good.
            assert!((1..=1_000).contains(&ttl), "{key}: {ttl}");
        }
    }
}
