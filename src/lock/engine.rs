//! The engine: runs a lock described as steps (`steps.rs`), the built-in Redis tiers and the
//! lab's locks alike. The tier says what each step sends and how its reply reads; the engine
//! does everything around the steps, so a tier file shows none of it:
//!
//! - sends each step as one round trip, in order, on one connection, or, when the lock lives
//!   in the stock's Redis and the acquire is one step, with the sale's read riding behind it
//!   (`riding.rs`);
//! - after a fresh hold, waits for replicas (`WAIT`, [`LockCx::replicated`]), and gives the
//!   lock back when too few have it;
//! - starts the watchdog of a renew step (`renewals.rs`);
//! - hands control to the hook between the first and second acquire step and between the
//!   first and second release step (`hook.rs`), where a holder may die or pause;
//! - tries a release again while a lock store of its own fails over ([`through_failover`]);
//! - records in the ground truth what a release saw: a lost release, a foreign release
//!   (`release_record.rs`, shared with the release that rides with the sale's write).
//!
//! Waiting for a busy lock is the wait loop's (`wait.rs`, `cohort.rs`), around every tier.

use std::time::Duration;

use async_trait::async_trait;
use oversell_api::settings::LeaseMode;

use super::hook::{Go, Point};
use super::lease_stamp::Stamped;
use super::release_record::released;
use super::renewals::{RenewConn, Watchdog};
use super::replies::{self, Took};
use super::riding::{self, Wrapped};
use super::send::{send, Env};
use super::steps::{Step, Technique};
use super::{Attempt, Held, Keep, Lock, LockCx};
use crate::composed::Call;
use crate::lab::conns::LabConns;
use crate::lab::LabLock;
use crate::redis_pool::{Conn, StoreError};

/// A built-in tier's steps behind the [`Lock`] interface.
pub struct Stepped(pub &'static dyn Technique);

#[async_trait]
impl Lock for Stepped {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        attempt(cx, &self.stamped(cx), Via::Store).await
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        release(cx, &self.stamped(cx), Via::Store, held).await
    }

    fn reentrant(&self) -> bool {
        self.0.reentrant()
    }

    fn queues(&self) -> bool {
        self.0.queues()
    }

    fn call_key(&self, cx: &LockCx<'_>) -> Option<String> {
        self.0.call_key(&cx.on())
    }

    fn around(&self, cx: &LockCx<'_>, calls: Vec<Call>) -> Option<Wrapped> {
        riding::nested(cx, &self.stamped(cx), calls)
    }

    fn release_behind(&self, cx: &LockCx<'_>) -> Option<riding::Release> {
        riding::release_behind(cx, self.stamped(cx).release(&cx.on()))
    }
}

impl Stepped {
    /// The tier's steps as they are sent: each stamped with its lease where the lock store is
    /// the resource store (`lease_stamp.rs`).
    fn stamped(&self, cx: &LockCx<'_>) -> Stamped<'static> {
        Stamped {
            inner: self.0,
            stamps: riding::shares_server(cx),
        }
    }
}

/// Where a lock's steps are sent.
#[derive(Clone, Copy)]
pub enum Via<'a> {
    /// The lock store, from its pool.
    Store,
    /// A lab room's own connection to the lock store, logged in as the room's user.
    Lab(&'a LabConns, &'a LabLock),
}

impl Via<'_> {
    async fn conn(&self, cx: &LockCx<'_>) -> Result<Conn, StoreError> {
        match self {
            Via::Store => cx.conn().await,
            Via::Lab(conns, lab) => conns.conn(cx.store, cx.keys, lab).await,
        }
    }
}

/// One attempt at the lock: its acquire steps in order, until one finds it busy.
pub async fn attempt(
    cx: &LockCx<'_>,
    lock: &dyn Technique,
    via: Via<'_>,
) -> Result<Attempt, StoreError> {
    let on = cx.on();
    let steps = lock.acquire(&on);
    let mut held = Held::plain();
    let mut conn = via.conn(cx).await?;
    // The first step's reply, when the sale's read rode with it.
    let rode = riding::acquire_with_read(cx, lock, &steps, &mut conn).await?;
    let mut rode = rode.map(|(answer, read)| {
        held.read = Some(read);
        answer
    });
    let env = Env {
        store: cx.store,
        resource: cx.resource,
        on,
    };
    for (i, step) in steps.iter().enumerate() {
        if i == 1 && cx.at(Point::BetweenAcquireSteps).await == Go::HolderDied {
            return Ok(Attempt::HolderDied);
        }
        let answer = match rode.take() {
            Some(answer) => answer,
            None => send(&mut conn, step, &env).await?,
        };
        match replies::took(step.reply, answer)? {
            Took::Held { depth, fence } => (held.depth, held.fence) = (depth, fence),
            Took::Busy(lease_left) => return Ok(Attempt::Busy { lease_left }),
        }
    }
    // A re-entry writes nothing new: only a fresh hold waits for replicas and renews.
    if held.depth > 1 {
        return Ok(Attempt::Acquired(held));
    }
    if cx.settings.sync_replicas > 0 {
        if let Err(err) = cx.replicated(&mut conn).await {
            // Not on enough replicas: give back what was taken, and fail this acquire.
            let _ = release(cx, lock, via, Held::plain()).await;
            return Err(err);
        }
    }
    if cx.settings.lease == LeaseMode::Watchdog {
        if let Some(step) = lock.renew(&env.on) {
            held._keep = watchdog(cx, step, via, conn);
        }
    }
    Ok(Attempt::Acquired(held))
}

/// Renews the lease with `step` on the watchdog's schedule while the hold lasts.
fn watchdog(cx: &LockCx<'_>, step: Step, via: Via<'_>, conn: Conn) -> Keep {
    let conn = match via {
        Via::Store => RenewConn::Pool(cx.store.pool().clone()),
        Via::Lab(..) => RenewConn::Kept(conn),
    };
    let watchdog = Watchdog {
        step,
        conn,
        store: cx.store.clone(),
        resource: cx.resource.clone(),
        keys: cx.keys.clone(),
        owner: cx.owner.to_owned(),
        instance: cx.instance.to_owned(),
        ttl_ms: cx.settings.ttl_ms,
        gives_up: cx.hook.is_some_and(|hook| hook.renewals_give_up()),
        counts: cx.metrics.renewals(cx.settings.tier),
    };
    Keep::Renewing {
        _renewals: watchdog.start(),
    }
}

/// Gives the lock back: its release steps in order, until one says there is nothing more to
/// do. Renewals stop first.
pub async fn release(
    cx: &LockCx<'_>,
    lock: &dyn Technique,
    via: Via<'_>,
    held: Held,
) -> Result<(), StoreError> {
    drop(held);
    let env = Env {
        store: cx.store,
        resource: cx.resource,
        on: cx.on(),
    };
    for (i, step) in lock.release(&env.on).iter().enumerate() {
        if i == 1 {
            // Between two release steps: where `uuid-owner`'s lease may run out.
            cx.at(Point::BetweenReleaseSteps).await;
        }
        let answer = through_failover(cx, || async {
            let mut conn = via.conn(cx).await?;
            send(&mut conn, step, &env).await
        })
        .await;
        if !released(cx, step.reply, answer, i == 0).await? {
            break;
        }
    }
    Ok(())
}

/// Runs a release against a lock store of its own until it answers (at most
/// [`RELEASE_FAILOVER_WAIT`]): after a failover the first try meets a connection to the dead
/// primary, and only a release that reaches the new one can tell the holder its lock is gone.
/// A release that was sent and went unanswered is not sent again: the store may have run it,
/// and a second plain `DEL` would delete the lock of whoever took it in between.
async fn through_failover<T, F, Fut>(cx: &LockCx<'_>, mut op: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let until = tokio::time::Instant::now() + RELEASE_FAILOVER_WAIT;
    loop {
        match op().await {
            Err(err @ StoreError::Unavailable(_))
                if !err.may_have_run()
                    && cx.store.waits_out_outages()
                    && tokio::time::Instant::now() < until =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            done => return done,
        }
    }
}

/// How long a release keeps trying a lock store of its own that does not answer.
const RELEASE_FAILOVER_WAIT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    //! The engine against steps whose scripts answer as written, on a real `redis-server`:
    //! which steps it sends, how it reads their replies, what a release records.
    use oversell_api::settings::WaitStrategy;

    use super::super::steps::{On, Reply, Request};
    use super::super::test_cx::{settings, TestCx, OWNER};
    use super::*;
    use crate::composed::Lua;
    use crate::launch::redis_server::RedisServer;
    use crate::lock_store::LockStore;
    use crate::redis_pool::RedisPool;

    /// A lock whose steps are scripts that note in `<lock>:sent` that they ran, then answer
    /// as written.
    struct Scripted {
        acquire: Vec<&'static Lua>,
        release: Vec<&'static Lua>,
    }

    fn answering(reply: &str) -> &'static Lua {
        let source = format!("redis.call('RPUSH', KEYS[1] .. ':sent', ARGV[1]) return {reply}");
        Box::leak(Box::new(Lua::new(Box::leak(source.into_boxed_str()))))
    }

    fn steps(scripts: &[&'static Lua], name: &str, reply: Reply, on: &On<'_>) -> Vec<Step> {
        let step = |(i, lua): (usize, &&'static Lua)| Step {
            request: Request::Script(
                lua.call()
                    .key(on.keys.lock())
                    .arg(format!("{name}-{}", i + 1)),
            ),
            reply,
        };
        scripts.iter().enumerate().map(step).collect()
    }

    impl Technique for Scripted {
        fn acquire(&self, on: &On<'_>) -> Vec<Step> {
            steps(&self.acquire, "acquire", Reply::Contract, on)
        }
        fn release(&self, on: &On<'_>) -> Vec<Step> {
            steps(&self.release, "release", Reply::ContractObserved, on)
        }
    }

    /// A Redis of the test's own, as the lock store and the resource store both.
    fn shared(redis: &RedisServer) -> TestCx {
        let pool = RedisPool::new(&redis.url()).unwrap();
        let spin = settings(WaitStrategy::Spin { sleep_ms: 10 }, 1_000);
        TestCx::new(LockStore::shared(&pool), pool, spin)
    }

    async fn sent(test: &TestCx) -> Vec<String> {
        let mut conn = test.resource.conn().await.unwrap();
        let key = format!("{}:sent", test.keys.lock());
        redis::cmd("LRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await
            .unwrap()
    }

    async fn lost_releases(test: &TestCx) -> Option<i64> {
        let mut conn = test.resource.conn().await.unwrap();
        let key = test.keys.lost_releases();
        redis::cmd("GET")
            .arg(key)
            .query_async(&mut conn)
            .await
            .unwrap()
    }

    async fn set_lock(test: &TestCx, holder: &str) {
        let mut conn = test.resource.conn().await.unwrap();
        let key = test.keys.lock();
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg(holder)
            .query_async(&mut conn)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn an_acquire_step_that_finds_the_lock_busy_is_the_last_one_sent() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let lock = Scripted {
            acquire: vec![answering("{0, 750}"), answering("1")],
            release: vec![],
        };
        let busy = attempt(&test.cx(), &lock, Via::Store).await.unwrap();
        let Attempt::Busy { lease_left } = busy else {
            panic!("a busy first step took the lock");
        };
        assert_eq!(lease_left, Some(Duration::from_millis(750)));
        assert_eq!(sent(&test).await, ["acquire-1"]);
    }

    #[tokio::test]
    async fn every_acquire_step_runs_in_order_and_the_last_says_depth_and_token() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let lock = Scripted {
            acquire: vec![answering("1"), answering("{2, 7}")],
            release: vec![],
        };
        let taken = attempt(&test.cx(), &lock, Via::Store).await.unwrap();
        let Attempt::Acquired(held) = taken else {
            panic!("the last step took the lock, the engine did not");
        };
        assert_eq!((held.depth, held.fence), (2, Some(7)));
        assert_eq!(sent(&test).await, ["acquire-1", "acquire-2"]);
        // The first step going on and the second finding it busy: busy.
        let lock = Scripted {
            acquire: vec![answering("1"), answering("0")],
            release: vec![],
        };
        let busy = attempt(&test.cx(), &lock, Via::Store).await.unwrap();
        assert!(matches!(busy, Attempt::Busy { lease_left: None }));
    }

    #[tokio::test]
    async fn a_release_that_stops_on_someone_elses_lock_is_a_lost_release() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let lock = Scripted {
            acquire: vec![],
            release: vec![answering("0"), answering("1")],
        };
        set_lock(&test, "another-holder").await;
        release(&test.cx(), &lock, Via::Store, Held::plain())
            .await
            .unwrap();
        // It stopped at its first step, and the holder learnt it had lost the lock.
        assert_eq!(sent(&test).await, ["release-1"]);
        assert_eq!(lost_releases(&test).await, Some(1));
    }

    /// A lock store of its own that stops answering while a release is on its way: the store
    /// reads the release after it resumes and runs it. Sent once, it runs once; sent again after
    /// the timeout, a plain `DEL` would also delete whoever took the lock in between.
    #[tokio::test]
    async fn a_release_sent_and_unanswered_is_not_sent_again() {
        let redis = RedisServer::start().unwrap();
        let pool = RedisPool::new(&redis.url()).unwrap();
        let spin = settings(WaitStrategy::Spin { sleep_ms: 10 }, 1_000);
        let test = TestCx::new(LockStore::single(&redis.url()).unwrap(), pool, spin);
        assert!(test.store.waits_out_outages());
        let lock = Scripted {
            acquire: vec![],
            release: vec![answering("1")],
        };
        // A release before the stall: the store's connection made and the script loaded, as a
        // running fleet's are (else the stalled `EVALSHA` would only be told `NOSCRIPT`).
        release(&test.cx(), &lock, Via::Store, Held::plain())
            .await
            .unwrap();
        let mut conn = test.resource.conn().await.unwrap();
        let _: () = redis::cmd("DEL")
            .arg(format!("{}:sent", test.keys.lock()))
            .query_async(&mut conn)
            .await
            .unwrap();
        set_lock(&test, OWNER).await;
        let signal = |sig| assert_eq!(unsafe { libc::kill(redis.pid() as i32, sig) }, 0);
        signal(libc::SIGSTOP);
        let answer = release(&test.cx(), &lock, Via::Store, Held::plain()).await;
        signal(libc::SIGCONT);
        let err = answer.expect_err("a stopped store answers nothing");
        assert!(err.may_have_run(), "{err}");
        // Read after the resume, on the same server: everything sent has run by then.
        assert_eq!(sent(&test).await, ["release-1"]);
    }

    #[tokio::test]
    async fn a_release_of_the_owners_own_lock_runs_every_step_and_loses_nothing() {
        let redis = RedisServer::start().unwrap();
        let test = shared(&redis);
        let lock = Scripted {
            acquire: vec![],
            release: vec![answering("1"), answering("1")],
        };
        set_lock(&test, OWNER).await;
        release(&test.cx(), &lock, Via::Store, Held::plain())
            .await
            .unwrap();
        assert_eq!(sent(&test).await, ["release-1", "release-2"]);
        assert_eq!(lost_releases(&test).await, None);
        // A step that stops on the owner's own lock (nothing more to do) is no loss either.
        let lock = Scripted {
            acquire: vec![],
            release: vec![answering("0"), answering("1")],
        };
        release(&test.cx(), &lock, Via::Store, Held::plain())
            .await
            .unwrap();
        assert_eq!(lost_releases(&test).await, None);
    }
}
