//! The database: the lock as a PostgreSQL session's advisory lock — the normal run, a holder
//! that crashes (its session ends, the lock with it, at once), a holder frozen for 5 s (it
//! keeps the lock: nobody overlaps, everybody waits), the same freeze with a session
//! timeout (the server takes the lock back: a stale write), and fencing by a sequence.
//!
//! Sources: 001 line 45 (the lock's "something" can be Redis, ZooKeeper, or a database) and
//! 000 line 75 (the shared "seat" can live in Redis or a database); neither says how. The
//! advisory locks, their queue and the session timeouts are PostgreSQL's documentation's;
//! the fencing token is Martin Kleppmann's.

use oversell_api::{Fault, FaultKind, LeaseMode, Tier};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The database chapters' source.
const DATABASE_SOURCE: &str = "001 line 45 (the lock can live in Redis, ZooKeeper, or a \
    database) and 000 line 75 (the shared seat in Redis or a database); the articles build \
    only the first two. The lock here is PostgreSQL's transaction-level advisory lock \
    (pg_advisory_xact_lock), its waiters queued by the server";

/// What the database chapters run on unless they say otherwise: PostgreSQL beside the Redis,
/// and buyers who queue in the database (the `pubsub` wait) for up to 10 s.
const DATABASE: Scenario = Scenario {
    store: StoreSetup::postgres(),
    ..BASE
};

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "postgres-normal",
        tier: Tier::Postgres,
        // Long enough that the last of 300 buyers, served one lock at a time, is still
        // answered on a slow or busy machine: the lesson is the queue, not the machine's speed.
        wait_deadline_ms: 30_000,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("orders", 100.0),
        ]),
        source: DATABASE_SOURCE,
        en: "The third place a lock can live: a database. Each buyer opens a transaction and \
             asks PostgreSQL for an advisory lock keyed by the room; the server queues the \
             waiters and wakes the next one the moment the holder commits. No key, no value, no \
             lease: the lock is the holder's session's, and ends with its transaction. Every \
             item sold once.",
        zh: "锁能放的第三个地方：数据库。每个买家开启一个事务，向 PostgreSQL 申请以房间为键的\
             咨询锁（advisory lock）；等待者由服务器排队，持锁者一提交，服务器立刻唤醒下一个。\
             没有键值，也没有租约：锁属于持锁者的会话，随事务结束而释放。每件商品只卖一次。",
        ..DATABASE
    },
    Scenario {
        id: "postgres-crash-holding",
        tier: Tier::Postgres,
        wait_deadline_ms: 3_000,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        buyers: 30,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("sent_503", 0.0),
            Check::gt("orders", 0.0),
        ]),
        source: DATABASE_SOURCE,
        en: "The holder's process dies inside the critical section. Its socket closes, the \
             server ends its session and its transaction, and the lock is free at once: nobody \
             waits out a lease (compare lua-release's stall of one lease, or ZooKeeper's of one \
             session timeout), and no buyer reaches its 3 s deadline.",
        zh: "持锁进程在临界区里崩溃。它的连接一断，服务器就结束它的会话和事务，锁当即释放：\
             没有谁要等租约到期（对比 lua-release 停顿一个租约、ZooKeeper 停顿一次会话超时），\
             也没有买家等到 3 秒的等待期限。",
        ..DATABASE
    },
    Scenario {
        id: "postgres-freeze",
        tier: Tier::Postgres,
        wait_deadline_ms: 2_000,
        fault: Some(Fault::new(FaultKind::Freeze, 5_000)),
        buyers: 30,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::gt("sent_503", 0.0),
        ]),
        source: DATABASE_SOURCE,
        en: "The holder's whole process freezes for 5 s after reading the stock: over ten \
             times the 300 ms lease of the Redis freeze chapters, and past the 1.5 s session \
             timeout of the next chapter. Its connection stays open, so its session and \
             its lock live on: nobody else gets in, no stale write, nothing oversold. The price \
             is the other way round: every buyer queued behind the frozen holder waits, and \
             those whose 2 s deadline comes first get a 503. A lock without a lease is safe \
             and unavailable at once.",
        zh: "持锁进程读完库存后整体冻结 5 秒：是 Redis 各冻结章节 300 毫秒租约的十几倍，\
             也超过了下一章 1.5 秒的会话超时。它的连接没断，\
             会话和锁也就都还在：没有别人能进来，没有陈旧写入，一件也没超卖。代价在另一头：\
             排在冻结者后面的买家全都在等，2 秒期限先到的就收到 503。没有租约的锁，\
             安全了，却也不可用了。",
        ..DATABASE
    },
    Scenario {
        id: "postgres-session-timeout",
        tier: Tier::Postgres,
        ttl_ms: 1_500,
        lease: LeaseMode::Fixed,
        fault: Some(Fault::new(FaultKind::Freeze, 5_000)),
        buyers: 30,
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: DATABASE_SOURCE,
        en: "The same freeze, but the session has a timeout (idle_in_transaction_session_timeout \
             of 1.5 s, set by `lease: fixed`): the server ends a session that sends nothing for \
             that long inside its transaction, which frees its lock. The next buyer takes it; \
             the frozen holder wakes and writes its stale stock value, and only its COMMIT, \
             too late, learns the session is gone. The timeout buys availability back at the \
             lease's price.",
        zh: "同样的冻结，但设了会话超时（idle_in_transaction_session_timeout 为 1.5 秒，\
             由 lease: fixed 打开）：会话在事务里这么久没发任何东西，服务器就结束它，锁随之释放。\
             下一个买家拿到锁；冻结的持锁者醒来后写入陈旧的库存值，直到 COMMIT 才发现会话早已没了，\
             为时已晚。超时换回了可用性，代价和租约一样。",
        ..DATABASE
    },
    Scenario {
        id: "postgres-fenced",
        tier: Tier::PostgresFenced,
        ttl_ms: 1_500,
        lease: LeaseMode::Fixed,
        fault: Some(Fault::new(FaultKind::Freeze, 5_000)),
        buyers: 30,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::gt("stale_writes_rejected", 0.0),
        ]),
        timing_sensitive: true,
        source: "001 line 45's database lock, with Martin Kleppmann's fencing token (\"How to do \
                 distributed locking\", 2016): a sequence's next value, taken under the lock",
        en: "The same timeout and freeze, but under the lock each holder takes the next value \
             of a database sequence as its token, and the stock refuses a write with a lower \
             token than it has seen: the stale write is rejected. A database hands out such a \
             token in the same round trip as the lock.",
        zh: "同样的超时和冻结，但每个持锁者在锁内从数据库序列里取下一个值作为令牌，库存只接受令牌\
             不小于它见过的最大令牌的写入：这次陈旧写入被拒绝了。数据库在加锁的同一次往返里\
             就能发出这样的围栏令牌。",
        ..DATABASE
    },
];
