//! The workshop's curriculum: every tier's defect as a named scenario, in the order of the
//! ladder, each with the outcome it must show and why, in English and Chinese.
//!
//! Timings are small so the whole catalog runs in well under a minute, and chosen so each
//! defect's window is forced wide open (see each scenario's `why`), not hoped for.
//!
//! `source` names the article (000–004, the five Chinese articles the project is built from)
//! and the lines the story is told in (line numbers of the article's text as the project keeps
//! it); what none of them says is credited to where it comes from, and where an article is
//! wrong the explanation says so instead of repeating it.
//! The Chinese keeps the terms of the glossary at the top of the zh table in
//! `static/i18n.js` (租约, 陈旧写入, 围栏令牌, 重入次数, 主从切换, 处理业务, the ladder 青铜 …
//! 钻石), with the articles' own words glossed once where they differ;
//! `loadtest/tests/curriculum_text.rs` checks both.

use oversell_api::{Fault, FaultKind, LeaseMode, Persistence, Tier, Via, WaitStrategy};

use super::{Check, Expect, Scenario, StoreSetup};

const NORMAL_TTL: u64 = 3_000;

/// The watchdog chapters: work well past the lease, and a renewal every ~67 ms that may come
/// ~130 ms late before the lease ends. With a 60 ms lease (a 20 ms renewal with 40 ms to spare)
/// a loaded machine's scheduling stall once let the lease lapse under the watchdog.
const SLOW_WORK_LEASE_MS: u64 = 200;
const SLOW_WORK_MS: u64 = 500;

/// The failure chapters: a lease long enough to outlive the store's failure, and work long
/// enough that a second holder gets in while the first still works (a failover takes ~2 s).
const STORE_FAULT_TTL: u64 = 20_000;
const STORE_FAULT_BUSINESS: u64 = 9_000;
const STORE_FAULT_DEADLINE: u64 = 15_000;

/// `redis-down`: how long the lock store stays down, and the buyers' wait deadline, well
/// inside it, so every buyer is told while the store is still gone.
const REDIS_DOWN_MS: u64 = 8_000;
const REDIS_DOWN_DEADLINE: u64 = 2_000;

/// `redlock-validity-runs-out`: a lease of "a few tens of ms" (001's figure for it), and one
/// master stopped longer than that but shorter than the per-node timeout (100 ms), so its
/// vote comes late rather than never; even if it times out, the wait was longer than the
/// lease, so the majority comes in with no validity either way.
const VALIDITY_LEASE_MS: u64 = 50;
const VALIDITY_SLOW_MS: u64 = 80;

/// The ZooKeeper chapters' source.
const ZOOKEEPER_SOURCE: &str = "001 lines 255–480 (ephemeral sequential nodes, the lowest \
    holds the lock, each waiter watches its predecessor, Curator's InterProcessMutex) and \
    481–504 (the comparison: ZooKeeper strongly consistent by design, Redis' data not; CP and AP \
    are the CAP theorem's words for it, not 001's)";

/// The ZooKeeper session timeout `oversell up` gives its instances (`ZOOKEEPER_SESSION_MS`):
/// what stands in for a lease there.
const ZOOKEEPER_SESSION_MS: u64 = 4_000;

/// The Redlock chapters' sources: the articles, the published algorithm, and its critique.
const REDLOCK_SOURCES: &str = "001 lines 96–106 and 002 lines 586–628 (Redlock: 5 masters, a \
    majority, acquire time subtracted from the lease, release on every node); 001 lines 239–250 \
    recommend Redisson's RedissonRedLock, which Redisson deprecated in 3.12.5 for RLock (its lock \
    writes now wait for the replicas) and RFencedLock; the algorithm as published by Redis' \
    author (\"Distributed Locks with Redis\", redis.io); the critique, Martin Kleppmann, \
    \"How to do distributed locking\" (2016), and the reply, \"Is Redlock safe?\" (2016)";

pub static CATALOG: &[Scenario] = &[
    Scenario {
        id: "none-race",
        tier: Tier::None,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 5_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[Check::gt("oversold", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: false,
        source: "001 lines 16–24, the stock-of-1 race (two requests read 1, both sell); 004 lines \
                 60–112, a thousand threads on one counter; the read-check-write is 002's sale() \
                 on its key inventory001, lines 55–94",
        en: "No lock: buyers read the same stock, all sell, all write n-1. More orders than \
             stock, and the counter loses updates.",
        zh: "不加锁：多个买家读到同一个库存值，都卖出、都写回 n-1。订单数超过库存（超卖），\
             后写的库存又覆盖了先写的（丢失更新）。",
    },
    Scenario {
        id: "local-one-instance",
        tier: Tier::Local,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 300,
        via: Via::Instance,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("overlaps", 0.0),
        ]),
        timing_sensitive: false,
        source: "001 lines 26–30, the local lock (synchronized / ReentrantLock) on one server; \
                 004 line 114 says the same of one JVM",
        en: "An in-process mutex is enough while one process serves every buyer.",
        zh: "只有一个进程处理全部请求时，进程内的本地锁就够了，不会超卖。",
    },
    Scenario {
        id: "local-three-instances",
        tier: Tier::Local,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[Check::gt("oversold", 0.0), Check::gt("overlaps", 0.0)]),
        timing_sensitive: false,
        source: "001 lines 32–40, a second server: each JVM's lock binds only its own threads; \
                 000 lines 43–52 tell the same with a cache",
        en: "Each instance has its own mutex: with nginx spreading buyers over the instances, \
             buyers on different instances sell at once.",
        zh: "每个实例各有一把本地锁；nginx 把买家分发到多个实例后，\
             不同实例上的买家同时进入临界区，照样超卖。",
    },
    Scenario {
        id: "setnx-crash",
        tier: Tier::Setnx,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::Spin { sleep_ms: 20 },
        wait_deadline_ms: 1_500,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::StallUntilReset,
        timing_sensitive: false,
        source: "000 lines 107–159, bronze tier (SETNX + DEL; the retry by recursion, lines \
                 126–145); the 20 ms retry is 002's sale() loop, lines 96–112 (000 line 137 and \
                 004 line 176 sleep 100 ms)",
        en: "The holder dies inside the critical section. SETNX set no lease, so nobody ever \
             deletes the lock: every later buyer waits out its deadline. Only a reset ends it. \
             The retry here is a loop, as 002 ends up writing it. 000 retries by calling itself \
             and sleeps 'so the stack does not overflow': the sleep only slows the recursion \
             down, every retry still adds a frame, and a lock that is never freed overflows the \
             stack all the same. A loop keeps one frame however long it waits.",
        zh: "青铜方案：持锁的实例在临界区里崩溃。SETNX 没有设置租约，这把锁再也没人删，\
             之后的买家全部等到超时（死锁），只能手动重置。这里的重试是一个循环，\
             也就是 002 最后改成的 while 写法。000 用递归重试，说先睡一会儿是为了不让栈溢出：\
             其实睡眠只是让递归慢下来，每次重试仍然多压一层栈，锁永远不释放时照样会栈溢出。\
             循环则不管等多久都只占一层栈。",
    },
    Scenario {
        id: "setnx-expire-crash-between",
        tier: Tier::SetnxExpire,
        ttl_ms: 1_000,
        business_ms: 5,
        wait: WaitStrategy::Spin { sleep_ms: 20 },
        wait_deadline_ms: 1_500,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::CrashBeforeExpire, 0)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::StallUntilReset,
        timing_sensitive: false,
        source: "000 lines 161–209, silver tier (SETNX, then EXPIRE); 002 lines 139–157 and 003 \
                 lines 20–29 take the same step; 004 lines 35–59 and 132–134 offer SETEX as the \
                 atomic way to set a value and its expiry",
        en: "The holder dies after SETNX and before EXPIRE: the lease was never set. Same \
             deadlock as SETNX alone, though the code 'has' a lease. 004 presents SETEX as the \
             atomic fix and a key to locking. It is atomic, but it is no lock: it has no NX, so \
             it overwrites a lock someone holds and every caller 'gets' it. The atomic pair is \
             SET key value NX PX, the next step.",
        zh: "白银方案：实例在 SETNX 之后、EXPIRE 之前崩溃，租约（文章里叫“过期时间”）根本没设上。\
             代码里看似“有”租约，结果和青铜方案一样死锁。004 把 SETEX 当作原子的解决办法，\
             说它是实现分布式锁的关键。SETEX 确实是原子的，却根本不是锁：它没有 NX，\
             会直接覆盖别人持有的锁，谁调用谁都“拿到”锁。真正原子的组合是 \
             SET key value NX PX，也就是下一级方案。",
    },
    Scenario {
        id: "setnx-expire-crash-after",
        tier: Tier::SetnxExpire,
        ttl_ms: 1_000,
        business_ms: 5,
        wait: WaitStrategy::Spin { sleep_ms: 20 },
        wait_deadline_ms: 8_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::StallThenResume,
        timing_sensitive: false,
        source: "000 lines 161–209, silver tier: what the EXPIRE does buy; 003 line 21 says the \
                 same",
        en: "The holder dies after EXPIRE: sales stall until the lease runs out, then resume on \
             their own.",
        zh: "白银方案：实例在 EXPIRE 之后崩溃。销售一直停到租约到期，之后无需干预就恢复了。",
    },
    Scenario {
        id: "atomic-expiry-slow-business",
        tier: Tier::AtomicExpiry,
        ttl_ms: 60,
        business_ms: 150,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 12,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::gt("foreign_releases", 0.0),
            Check::gt("overlaps", 0.0),
        ]),
        timing_sensitive: true,
        source: "000 lines 210–295, gold tier (SET NX PX, fixed value) and its users A, B and C \
                 (lines 262–295); also 002 lines 186–229 and 003 lines 30–38",
        en: "Work (150 ms) outlasts the lease (60 ms): the lock expires, B takes it, and A's DEL \
             then deletes B's lock, letting C in beside B.",
        zh: "黄金方案：业务耗时 150 毫秒，租约只有 60 毫秒。租约到期后 B 拿到了锁，\
             A 处理完业务再执行 DEL，删掉的却是 B 的锁；C 趁机进来，和 B 同时执行。",
    },
    Scenario {
        id: "uuid-owner-release-gap",
        tier: Tier::UuidOwner,
        ttl_ms: 600,
        business_ms: 400,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::ReleaseGap, 450)),
        stock: 100,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[Check::gt("foreign_releases", 0.0)]),
        timing_sensitive: true,
        source: "000 lines 296–365, platinum tier (UUID value, GET-compare-DEL); the pause \
                 between GET and DEL is 003's blocked client, lines 48–59",
        en: "The first holder's GET sees its own value at 400 ms, then pauses 450 ms before DEL. \
             The lease ends at 600 ms, the next buyer takes the lock, and the late DEL deletes it.",
        zh: "铂金方案：第一个持锁者在 400 毫秒时 GET 到自己的值，随后停顿 450 毫秒才执行 DEL。\
             租约在 600 毫秒到期，下一个买家拿到锁，迟到的 DEL 删掉的是别人的锁。",
    },
    Scenario {
        id: "lua-release-slow-business",
        tier: Tier::LuaRelease,
        ttl_ms: 60,
        business_ms: 150,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 12,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::eq("foreign_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: "000 lines 366–410, diamond tier (Lua compare-and-delete); the lease problem as \
                 001 lines 58–80 state it for PX 30000; 004's Jedis lock, lines 136–142, is this \
                 tier with PX 3",
        en: "The Lua release never deletes another's lock, but a fixed lease shorter than the \
             work still lets a second holder in while the first is working. 004's example sets PX \
             3: a 3 ms lease, far too short for real work.",
        zh: "钻石方案：Lua 脚本解锁不会误删别人的锁，但固定租约短于业务耗时，\
             第一个持锁者还在处理时第二个已经进来了。004 的示例写的是 PX 3，租约只有 3 毫秒，\
             对真实业务远远不够。",
    },
    Scenario {
        id: "lua-release-normal",
        tier: Tier::LuaRelease,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("foreign_releases", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
        ]),
        timing_sensitive: true,
        source: "000 lines 366–410, diamond tier; the same compare-and-delete script is in 001 \
                 lines 62–70, 002 lines 291–345, 003 lines 59–66 and 004's Jedis unlock",
        en: "With the work well inside the lease, the Lua-released lock is correct.",
        zh: "钻石方案：业务耗时远小于租约时，用 Lua 解锁的锁是正确的。",
    },
    Scenario {
        id: "reentrant-watchdog-slow-business",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: SLOW_WORK_LEASE_MS,
        business_ms: SLOW_WORK_MS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 12,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
        ]),
        timing_sensitive: true,
        source: "001 lines 140–230 and 002 lines 514–575, Redisson's watchdog: a 30 s lease \
                 renewed every 10 s (TTL/3)",
        en: "Slow work again (500 ms against a 200 ms lease), but the watchdog renews the lease \
             every TTL/3 while the holder runs (Redisson: 30 s, renewed every 10 s): no second \
             holder gets in.",
        zh: "同样是慢业务（500 毫秒的业务、200 毫秒的租约），但持锁期间看门狗每隔 TTL/3 \
             续期一次（Redisson 默认租约 30 秒、每 10 秒续期），别人进不来。",
    },
    Scenario {
        id: "reentrant-fixed-lease-slow-business",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: SLOW_WORK_LEASE_MS,
        business_ms: SLOW_WORK_MS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Fixed,
        fault: None,
        stock: 100,
        buyers: 12,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: "001 lines 158–161 and 004 lines 393–400 print Redisson's tryAcquireAsync: with \
                 leaseTime != -1 it locks for that lease and schedules no renewal, which is what \
                 lock(leaseTime) and tryLock(waitTime, leaseTime) do",
        en: "The same lock and the same slow work, with a fixed lease, as Redisson's \
             lock(leaseTime) or tryLock(waitTime, leaseTime) gives: the leaseTime != -1 branch \
             that 001 and 004 both print returns before the watchdog is started. No renewal, \
             the 200 ms lease ends during the 500 ms of work, and a second holder gets in. The \
             watchdog, not the hash, is what kept the slow work exclusive.",
        zh: "同一把锁、同样的慢业务，但租约固定，就像 Redisson 的 lock(leaseTime) 或 \
             tryLock(waitTime, leaseTime)：001 和 004 都贴出了 leaseTime != -1 这个分支，\
             它在启动看门狗之前就返回了。没有续期，200 毫秒的租约在 500 毫秒的业务中途到期，\
             第二个持锁者进来了。让慢业务保持互斥的是看门狗，而不是哈希结构。",
    },
    Scenario {
        id: "reentrant-nested",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 50,
        buyers: 50,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::eq("min_depth", 2.0),
            Check::eq("lock_timeouts", 0.0),
            Check::eq("orders", 50.0),
        ]),
        timing_sensitive: false,
        source: "002 lines 346–513, the reentrant lock on a Redis hash (HINCRBY); 004 lines \
                 430–560 walk Redisson's",
        en: "Each sale takes the lock again in a nested step (hold count 2, recorded in the \
             ledger) and does not deadlock on itself.",
        zh: "每次销售都在嵌套的步骤里再次获取同一把锁（重入次数为 2，记在订单流水里），\
             不会被自己持有的锁挡住。",
    },
    Scenario {
        id: "reentrant-watchdog-crash-holding",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: 1_000,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 8_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::StallThenResume,
        // The stall (about a lease) and the refusals (before the store is back) are timed:
        // measured in the hold-rate run.
        timing_sensitive: true,
        source: "001 lines 151–152: Redisson's watchdog guarantees no deadlock, because a machine \
                 that dies takes its watchdog with it and the key expires after the 30 s lease",
        en: "The holder dies inside the critical section, and its watchdog dies with it: nobody \
             renews the lease, and the lock frees itself when the lease (1 s here) runs out. \
             Sales stall for one lease, then resume without a reset. That is how a watchdog \
             avoids deadlock: it does not renew forever, it stops when its holder stops. \
             Compare setnx-crash, which never recovers.",
        zh: "持锁进程在临界区里崩溃，看门狗也随它一起消失：再没有人续期，租约（这里是 1 秒）\
             到期后锁自动释放。销售停顿一个租约，之后无需重置就恢复了。看门狗就是这样避免死锁的：\
             它不会无限续期，持锁者停了，它也就停了。对比 setnx-crash，那里永远恢复不了。",
    },
    Scenario {
        id: "reentrant-watchdog-freeze",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: 300,
        business_ms: 5,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Freeze, 1_200)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: "002 lines 630–639, the GC-pause story (Client 1 paused past its lease, Client 2 \
                 writes); its list of fixes, lines 641–648, names a watchdog, which is not one",
        en: "The holder's whole process freezes for 1.2 s after reading the stock. Its watchdog \
             freezes too, the 300 ms lease expires, others sell; the holder wakes and writes its \
             stale stock value over theirs. A watchdog cannot prevent this, whatever 002 \
             suggests: it stops with the process.",
        zh: "持锁进程读完库存后整体冻结 1.2 秒（类似 GC 的 stop-the-world），看门狗也跟着停了；\
             300 毫秒的租约到期，别人接着卖；它醒来后用旧的库存值覆盖了别人的写入（陈旧写入）。\
             002 把看门狗列为对策，其实没用：进程停了，看门狗也就停了。",
    },
    Scenario {
        id: "fenced-freeze",
        tier: Tier::Fenced,
        ttl_ms: 300,
        business_ms: 5,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Freeze, 1_200)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::gt("stale_writes_rejected", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
        ]),
        timing_sensitive: true,
        source: "002 lines 630–648 tell the pause and list fixes, none of them this one: fencing \
                 tokens come from Martin Kleppmann, \"How to do distributed locking\" (2016), the \
                 post 001 cites by name (line 491); Redisson's counterpart of this tier is \
                 RFencedLock",
        en: "The same freeze, but each holder gets a fencing token that only grows, and the stock \
             refuses a write whose token is lower than the highest it has seen: the stale write \
             is rejected. 002's other fixes fall short. Checking its own id before writing is \
             check-then-act again: the pause can come right after the check. A longer lease only \
             narrows the window: a pause can always be longer. A watchdog pauses with the \
             process. Only a token that the resource itself checks closes it. Redisson's \
             RFencedLock hands out the same kind of token.",
        zh: "同样的冻结，但每个持锁者都拿到一个只增不减的围栏令牌（fencing token，也译“防护令牌”），\
             库存只接受令牌不小于它见过的最大令牌的写入：这次陈旧写入被拒绝了。\
             002 列出的其他对策都不够：写之前先核对自己的标识，仍然是“先检查、后执行”，\
             停顿完全可以发生在核对之后；延长租约只是把窗口缩小，停顿总可以更长；\
             看门狗会随进程一起停下。只有由资源自己校验的令牌才能把窗口关上。\
             Redisson 的 RFencedLock 发放的也是这种令牌。",
    },
    Scenario {
        id: "atomic-deduct",
        tier: Tier::AtomicDeduct,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::ANY,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::gt("throughput_vs_lua_release", 1.0),
        ]),
        timing_sensitive: false,
        source: "004 lines 60–112 (a thousand threads on one counter) pose it; the answer, a Lua \
                 check-and-decrement (the common DECR pattern), is in none of the articles",
        en: "No lock at all: one Lua script decrements if positive and records the order. Never \
             oversells, and sells faster than any lock (compared with lua-release on the same \
             load).",
        zh: "完全不用锁：一段 Lua 脚本在库存大于零时扣减库存并记录订单。不会超卖，\
             而且比任何一种锁都快（与同样负载下的 lua-release 对比）。",
    },
    Scenario {
        id: "redis-down",
        tier: Tier::LuaRelease,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: REDIS_DOWN_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::LockStoreDown, REDIS_DOWN_MS)),
        stock: 100,
        buyers: 20,
        via: Via::Fleet,
        store: StoreSetup::single_any(),
        expect: Expect::RefusedThenResume(&[
            Check::eq("orders", 0.0),
            Check::eq("sent_503", 20.0),
            // The 503s are the store's absence (redis_unavailable), not a lock wait.
            Check::eq("lock_timeouts", 0.0),
            Check::eq("store_faults", 1.0),
            // Told while the store is still down, not hung until it comes back.
            Check::lt("max_latency_ms", REDIS_DOWN_MS as f64),
        ]),
        // The stall (about a lease) and the refusals (before the store is back) are timed:
        // measured in the hold-rate run.
        timing_sensitive: true,
        source: "001 line 92 (one Redis is a single point: once it fails, nothing can be locked) \
                 and 002 lines 667 and 677 (the single point of failure)",
        en: "The lock store's one Redis is killed as the sale starts and stays down for 8 s. \
             Nothing can be locked: every buyer keeps trying until its 2 s deadline, then gets a \
             503 (redis_unavailable), and nothing is sold. When the Redis is back, sales resume \
             by themselves. One Redis is a single point of failure, not an 'always available' \
             store. Sentinel removes it and sells on after a failover, at the price the next \
             chapter shows: the lock that was on the dead primary.",
        zh: "锁存储只有一个 Redis，开卖时它被杀掉，并且 8 秒内起不来。什么锁都加不上：\
             每个买家一直重试到 2 秒的等待期限，然后收到 503（redis_unavailable），一件也没卖出。\
             Redis 回来之后，销售自行恢复。单个 Redis 就是单点故障，谈不上“总是可用”。\
             哨兵能消除这个单点，主从切换之后照样能卖，代价见下一章：\
             死去的主节点上的那把锁丢了。",
    },
    Scenario {
        id: "failover-loses-lock",
        tier: Tier::LuaRelease,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Failover, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::sentinel(0),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: "001 line 94, 002 lines 602–604 and 681, 003 line 67: a master/replica failover \
                 loses a lock (asynchronous replication); Redis' own Sentinel and replication \
                 documentation",
        en: "The holder's lock is written on the primary, which dies before its replica got it \
             (replication is asynchronous). Sentinel promotes the replica: no lock there, so any \
             buyer who reaches the new primary while the first still works takes the 'same' \
             lock: two holders, one item sold twice. The first holder learns it only when its \
             release finds the lock gone. A watchdog would not help: it would renew a lock that \
             no longer exists.",
        zh: "持锁者的锁写在主节点上，主节点在从节点收到这把锁之前就宕机了（主从复制是异步的）。\
             哨兵把从节点提升为新主节点，新主节点上没有这把锁。第一个持锁者还在处理业务时，\
             谁先连上新主节点，谁就能拿到“同一把”锁：两个持锁者，一件商品卖了两次。第一个持锁者\
             直到释放时发现锁已不在，才知道自己早已失去了它。看门狗也无能为力：\
             它续的是一把已不存在的锁。",
    },
    Scenario {
        id: "failover-sync-replicas",
        tier: Tier::LuaRelease,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Failover, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::sentinel(1),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "not in the articles: Redisson's RLock waits for the replicas after each lock \
                 write (checkLockSyncedSlaves, on by default since RedissonRedLock was deprecated \
                 in 3.12.5); Redis' WAIT documentation, which warns that even WAIT does not make \
                 a failover lossless",
        en: "The same failover, but every lock write waits (WAIT 1) until the replica has it, \
             or the acquire fails. The lock is on the replica before the holder goes on, so the \
             promoted replica still holds it: one holder, no oversell. The price: a round trip \
             more per acquire, and 503s whenever no replica keeps up. It narrows the window, \
             it does not close it: Redis can still lose an acknowledged write in some failovers.",
        zh: "同样的主从切换，但每次加锁写入后都等待（WAIT 1）从节点收到，否则加锁失败。\
             持锁者继续处理业务之前，锁已经在从节点上了，被提升的从节点仍然持有它：\
             只有一个持锁者，没有超卖。代价是每次加锁多一次往返，而且从节点跟不上时买家会收到 503。\
             它缩小了窗口，但没有消除它：某些主从切换中 Redis 仍可能丢失已确认的写入。",
    },
    Scenario {
        id: "restart-loses-lock",
        tier: Tier::LuaRelease,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::LockStoreRestart, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::single(Persistence::None),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        timing_sensitive: true,
        source: "002 lines 688–716 list Redis' persistence (RDB, AOF); this chapter runs with \
                 none, the restart-without-fsync case of the Redlock debate (Martin Kleppmann, \
                 \"How to do distributed locking\", 2016); RDB and AOF are the next two",
        en: "The lock store's Redis dies right after the holder took the lock, and comes back \
             empty (no persistence). The lock is gone while its holder still works: the next \
             buyer takes it. The stock, in another Redis, shows the oversell.",
        zh: "持锁者刚拿到锁，锁所在的 Redis 就崩溃了，重启后数据全空（未开启持久化）。\
             持锁者还在处理业务，锁却已不在，下一个买家随即拿到了锁。\
             库存放在另一个 Redis 里，如实记下了超卖。",
    },
    Scenario {
        id: "restart-rdb-loses-recent-lock",
        tier: Tier::LuaRelease,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::LockStoreRestart, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::single(Persistence::Rdb),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        timing_sensitive: true,
        source: "002 lines 724–738, RDB persistence and its save rules (save 900 1, save 300 10, \
                 save 60 10000)",
        en: "The same crash, with RDB snapshots by the classic save rules: a snapshot after \
             900 s with one change, 300 s with 10, or 60 s with 10,000. The restarted Redis \
             loads the last snapshot, and a lock taken a moment ago is in none: RDB loses every \
             lock taken since the last snapshot, so the next buyer takes it and the stock shows \
             the oversell. Snapshots protect data that changes slowly, not a lock that lives \
             for seconds.",
        zh: "同样的崩溃，这次锁所在的 Redis 开启了 RDB 快照，按经典的保存规则：900 秒内至少 1 \
             次修改、300 秒内至少 10 次、或 60 秒内至少 10000 次修改就保存一次快照。重启后 Redis \
             载入最近一次快照，而刚刚加上的锁不在任何快照里：上次快照之后加的锁全部丢失，\
             下一个买家随即拿到了锁，库存如实记下了超卖。快照适合变化缓慢的数据，\
             护不住只活几秒的锁。",
    },
    Scenario {
        id: "restart-aof-keeps-lock",
        tier: Tier::LuaRelease,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::LockStoreRestart, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::single(Persistence::Always),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "002 lines 767–782, Redis persistence: AOF with appendfsync always (line 773); \
                 its claims that AOF loses nothing before the last write (line 705) and that \
                 everysec loses at most a second (line 774), measured by bench/src/bin/\
                 aof-loss.rs (BENCHMARKS.md section 5)",
        en: "The same crash, with an append-only file fsynced before every reply. The restarted \
             Redis replays it: the lock is back with the same expiry (AOF stores it as an \
             absolute time, so the seconds the store was down count against the lease), and \
             the next buyer waits. 002 says AOF keeps everything up to the last write (line 705) \
             and everysec loses at most a second (line 774). Measured (BENCHMARKS.md, section \
             5): with everysec a killed process lost nothing on a quiet disk, since Redis hands \
             each write to the kernel before it answers, and that second is lost only when the \
             machine goes down. On a busy disk Redis postpones the write while the last fsync \
             runs (up to 2 s) and answers anyway: a kill lost the last few hundred ms of \
             acknowledged locks in 3 runs of 10. Only always, as here, answers after the fsync. \
             That loss is too rare to make a chapter (one must hold 95% of the time); it stays \
             a benchmark (aof-loss).",
        zh: "同样的崩溃，但开启了 AOF 且每次应答前都 fsync。重启后的 Redis 重放 AOF：\
             锁回来了，到期时刻也没变（AOF 记录的是绝对到期时间，Redis 宕机的那几秒同样算在租约里），\
             下一个买家只能等待。002 说 AOF 能保证最后一次写操作之前的数据不丢（第 705 行），\
             everysec 最多丢 1 秒（第 774 行）。实测（BENCHMARKS.md 第 5 节）：磁盘空闲时，\
             开启 everysec 的进程被 kill -9 一条也没丢，因为 Redis 应答之前已把每次写入交给内核，\
             那 1 秒只在整台机器宕机时才会丢；磁盘繁忙时，上一次 fsync 还没完成，Redis 会推迟写文件\
             （最多 2 秒）却照样应答，10 次里有 3 次丢了最后几百毫秒内已确认的加锁写入。\
             只有像本章这样用 always，才是 fsync 之后再应答。这种丢失太少见，做不成一章\
             （一章要在 95% 的运行里成立），只作为基准测试（aof-loss）。",
    },
    Scenario {
        id: "redlock-minority-down",
        tier: Tier::Redlock,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::on_nodes(FaultKind::NodeDown, 8_000, 2)),
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("orders", 100.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: REDLOCK_SOURCES,
        en: "Two of the five masters are killed as the sale starts and stay down. Three still \
             make a majority: every item is sold, once. This is what Redlock is for: no single \
             server, and no failover that can lose a lock. Note that the masters are \
             independent servers, not the masters of one Redis Cluster as 001 assumes, and the \
             lock is asked of all five at once (002 says one after another; the algorithm's own \
             page recommends multiplexing). 001 recommends Redisson's RedissonRedLock for it; \
             Redisson has deprecated it since 3.12.5, for RLock (its lock writes now wait for \
             the replicas) and RFencedLock (a fencing token).",
        zh: "五个主节点中的两个在开卖时被杀掉，之后一直没起来。剩下三个仍是多数：\
             每件商品都只卖了一次。这正是 Redlock（红锁）的用处：没有单点，也没有会丢锁的主从切换。\
             注意这些主节点是相互独立的 Redis，而不是 001 所说的同一个 Redis Cluster 里的主节点；\
             加锁请求同时发给五个节点（002 说依次申请，算法原文则建议多路复用、一起发出）。\
             001 推荐用 Redisson 的 RedissonRedLock 来实现；Redisson 从 3.12.5 起已将其废弃，\
             改为推荐 RLock（如今加锁写入会等从节点收到）和 RFencedLock（发放围栏令牌）。",
    },
    Scenario {
        id: "redlock-majority-down",
        tier: Tier::Redlock,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 1_500,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::on_nodes(FaultKind::NodeDown, 8_000, 3)),
        stock: 100,
        buyers: 20,
        via: Via::Fleet,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::eq("orders", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("sent_503", 20.0),
        ]),
        timing_sensitive: false,
        source: REDLOCK_SOURCES,
        en: "Three of the five masters are down: no buyer can win a majority. Every buyer gets a \
             503 (lock_no_quorum) once its wait deadline passes, and nothing is sold: Redlock \
             gives up availability rather than safety when most of its servers are gone.",
        zh: "五个主节点中有三个宕机，谁也凑不齐多数。每个买家等到等待期限都收到 503\
             （lock_no_quorum），一件也没卖出：多数节点不在时，Redlock 宁可停止服务，也不冒超卖的险。",
    },
    Scenario {
        id: "redlock-restart-no-fsync",
        tier: Tier::Redlock,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::Spin { sleep_ms: 50 },
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::NodeRestart, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::redlock(Some(Persistence::None)),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: REDLOCK_SOURCES,
        en: "The critique's first case. While the holder acquires, two masters are briefly down, \
             so its lock stands on exactly three. Right after, one of those three crashes and \
             restarts empty (no persistence). The two others come back empty too: three masters \
             without the lock make a new majority, and a second buyer gets the 'same' lock while \
             the first still works. One item, sold twice.",
        zh: "批评文章里的第一个反例。持锁者加锁时有两个主节点短暂宕机，锁只落在三个节点上，\
             刚好过半。紧接着，这三个里的一个崩溃并重启，数据全空（未开启持久化）；那两个节点也空着回来了。\
             三个没有这把锁的节点凑成了新的多数，第一个持锁者还在处理业务，第二个买家就拿到了“同一把”锁：\
             一件商品卖了两次。",
    },
    Scenario {
        id: "redlock-restart-fsync-always",
        tier: Tier::Redlock,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::Spin { sleep_ms: 50 },
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::NodeRestart, 0)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::redlock(Some(Persistence::Always)),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: REDLOCK_SOURCES,
        en: "The same crash, with every master fsyncing its append-only file before each reply. \
             The restarted master replays the lock: the holder keeps its three votes, and the \
             others wait. The algorithm's own answer is the same, or restarting a crashed master \
             only after a lease has passed; both cost something (an fsync per lock write, or a \
             master missing for a lease).",
        zh: "同样的崩溃，但每个主节点每次应答前都把 AOF 刷到磁盘（fsync）。重启的节点重放出这把锁：\
             持锁者仍有三票，其他人只能等待。算法原文给出的也是这个办法，或者让崩溃的节点\
             等过一个租约再重新加入；两者都有代价（每次加锁都要 fsync 一次，或一个节点缺席一个租约）。",
    },
    Scenario {
        id: "redlock-clock-jump",
        tier: Tier::Redlock,
        ttl_ms: STORE_FAULT_TTL,
        business_ms: STORE_FAULT_BUSINESS,
        wait: WaitStrategy::Spin { sleep_ms: 50 },
        wait_deadline_ms: STORE_FAULT_DEADLINE,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::on_nodes(FaultKind::ClockJump, 30_000, 3)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: REDLOCK_SOURCES,
        en: "The critique's second case. Right after the holder takes its lock, the wall clocks \
             of three masters that granted it jump 30 s forward (an NTP step, an operator). Redis \
             expires keys by the wall clock: the 20 s lock is gone on those three, which make a \
             majority for the next buyer while the first still works. 002 lists clock sync as a \
             cost; this is what it costs.",
        zh: "批评文章里的第二个反例。持锁者刚拿到锁，给它投票的三个主节点的系统时钟就向前跳了 30 秒\
             （NTP 校时或人为调整）。Redis 按系统时钟让键过期：20 秒租约的锁在这三个节点上瞬间没了，\
             它们凑成多数投给了下一个买家，而第一个持锁者还在处理业务。002 把时钟同步列为缺点，代价就是这个。",
    },
    Scenario {
        id: "redlock-freeze",
        tier: Tier::Redlock,
        ttl_ms: 300,
        business_ms: 5,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Freeze, 1_200)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: "002 lines 630–639, the GC-pause story, which it tells against Redlock; Martin \
                 Kleppmann, \"How to do distributed locking\" (2016): Redlock has no fencing \
                 token to give",
        en: "The holder's process freezes for 1.2 s after reading the stock; its 300 ms lease \
             expires on all five masters, others sell, and the holder wakes and writes its stale \
             stock value. Five servers do not help against a pause of the client. Only a fencing \
             token checked by the stock would (see fenced-freeze), and Redlock has no counter \
             that could hand one out.",
        zh: "持锁进程读完库存后整体冻结 1.2 秒；300 毫秒的租约在五个主节点上都到期了，别人接着卖，\
             它醒来后写入了陈旧的库存值（陈旧写入）。客户端自己停顿，五台服务器也救不了。\
             只有由库存校验的围栏令牌（fencing token）才能挡住（见 fenced-freeze），\
             而 Redlock 没有能发放令牌的计数器。",
    },
    Scenario {
        id: "redlock-validity-runs-out",
        tier: Tier::Redlock,
        ttl_ms: VALIDITY_LEASE_MS,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 10_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::on_nodes(FaultKind::NodeSlow, VALIDITY_SLOW_MS, 1)),
        stock: 1,
        buyers: 4,
        via: Via::Fleet,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::gt("validity_lapsed", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "001 lines 100–104 (note the time, lock the masters, the lock holds only if it \
                 took less than its expiry, else delete it everywhere; line 101 calls the \
                 expiry \"a few tens of ms\") and 002 lines 612–615 (t2 − t1 against the lease, \
                 else release on every node); the published algorithm (\"Distributed Locks \
                 with Redis\", redis.io): a per-node timeout of 5–50 ms for a 10 s lease",
        en: "One of the five masters is stopped for 80 ms (SIGSTOP, resumed by a helper \
             process) as the next buyer asks for a lock with a 50 ms lease. Every vote waits \
             for the slowest master: four grant at once, the fifth late, and by then the lease \
             is spent. A majority with no validity left is no lock: the buyer gives it back on \
             all five masters (counted as validity_lapsed in the resource store, with how many \
             still had it) and asks again; the masters answer at once now, and the item is sold \
             once, by one holder. 001 (line 101) gives the lock's expiry as \"a few tens of \
             ms\": that is the size of the per-node timeout (this fleet's is 100 ms), not of \
             the lease, which must be seconds so that the time spent asking is a small part \
             of it. This chapter gives the lock the lease 001 names, to show why.",
        zh: "下一个买家加锁时，五个主节点中的一个被停住 80 毫秒（SIGSTOP，由一个辅助进程恢复），\
             而这把锁的租约只有 50 毫秒。每一票都要等最慢的主节点：四个立刻同意，第五个迟迟才答，\
             这时租约已经耗尽。凑齐了多数却没剩下有效时间，就不算拿到锁：买家在五个主节点上\
             把它全部释放（存放库存的 Redis 里记为 validity_lapsed，并记下还有几个节点持有它），再重新申请；\
             这次主节点都立刻应答，商品只卖出一次，始终只有一个持锁者。001（第 101 行）\
             说锁的租约（文章里叫“过期时间”）“一般就几十毫秒”：那是单个节点请求超时的量级\
             （本集群为 100 毫秒），不是租约的；租约应当以秒计，加锁花掉的时间才只占其中一小部分。\
             本章故意用 001 说的租约，正是为了演示其后果。",
    },
    Scenario {
        id: "zookeeper-normal",
        tier: Tier::Zookeeper,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 20_000,
        lease: LeaseMode::Watchdog,
        fault: None,
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::zookeeper(1),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("orders", 100.0),
        ]),
        timing_sensitive: false,
        source: ZOOKEEPER_SOURCE,
        en: "The lock in ZooKeeper, as Curator takes it: each buyer creates an ephemeral \
             sequential node, the lowest holds the lock, and every other buyer watches only the \
             node just ahead of it, so a release wakes one waiter, not a herd. No lease to tune, \
             no retry loop: every item sold once, in arrival order.",
        zh: "把锁放进 ZooKeeper，做法和 Curator 一样：每个买家创建一个临时顺序节点，序号最小的持有锁，\
             其余买家只监听排在自己前面的那个节点，释放时只唤醒一个等待者，不会出现羊群效应（惊群）。\
             没有租约要调，也没有重试循环：每件商品只卖一次，先到先得。",
    },
    Scenario {
        id: "zookeeper-crash-holding",
        tier: Tier::Zookeeper,
        ttl_ms: ZOOKEEPER_SESSION_MS,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 20_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::zookeeper(1),
        expect: Expect::StallThenResume,
        timing_sensitive: false,
        source: ZOOKEEPER_SOURCE,
        en: "The holder's process dies inside the critical section. Its node is ephemeral: when \
             its session times out (4 s here), ZooKeeper deletes it and the next buyer goes on. \
             The stall is one session timeout, and nobody chose a lease for it: compare \
             setnx-crash, which never recovers.",
        zh: "持锁进程在临界区里崩溃。它的节点是临时节点：会话超时（这里是 4 秒）后 ZooKeeper 把它删掉，\
             下一个买家接着卖。停顿的时间就是一次会话超时，不需要谁去设置租约；\
             对比 setnx-crash，那里永远恢复不了。",
    },
    Scenario {
        id: "zookeeper-session-expiry",
        tier: Tier::Zookeeper,
        ttl_ms: ZOOKEEPER_SESSION_MS,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 20_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Freeze, 6_000)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::zookeeper(1),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: ZOOKEEPER_SOURCE,
        en: "The holder's whole process freezes for 6 s after reading the stock, longer than its \
             4 s session timeout. Its heartbeats stop, ZooKeeper expires the session and deletes \
             the node, the next buyer takes the lock; the frozen holder wakes and writes its \
             stale stock value. ZooKeeper is consistent, but not immune to pauses either.",
        zh: "持锁进程读完库存后整体冻结 6 秒，超过了 4 秒的会话超时。心跳停了，ZooKeeper 判定会话过期、\
             删掉节点，下一个买家拿到锁；冻结的持锁者醒来后写入了陈旧的库存值（陈旧写入）。\
             ZooKeeper 是强一致的，可客户端的停顿它同样挡不住。",
    },
    Scenario {
        id: "zookeeper-fenced",
        tier: Tier::ZookeeperFenced,
        ttl_ms: ZOOKEEPER_SESSION_MS,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 20_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::new(FaultKind::Freeze, 6_000)),
        stock: 100,
        buyers: 30,
        via: Via::Fleet,
        store: StoreSetup::zookeeper(1),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::gt("stale_writes_rejected", 0.0),
        ]),
        timing_sensitive: true,
        source: "001's ZooKeeper lock, lines 255–480, with Martin Kleppmann's fencing token \
                 (\"How to do distributed locking\", 2016, the post 001 cites on line 491): the \
                 lock node's creation zxid",
        en: "The same freeze, but the holder's token is its node's creation zxid, which only \
             grows, and the stock refuses a write with a lower token than it has seen: the stale \
             write is rejected. ZooKeeper can hand out such a token for free; Redlock cannot.",
        zh: "同样的冻结，但持锁者的令牌是它的节点创建时的 zxid，只增不减；库存只接受令牌不小于它见过的\
             最大令牌的写入：这次陈旧写入被拒绝了。ZooKeeper 天生就能发放这样的围栏令牌（fencing token），\
             Redlock 不能。",
    },
    Scenario {
        id: "zookeeper-node-down",
        tier: Tier::Zookeeper,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 20_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::on_nodes(FaultKind::ZkNodeDown, 8_000, 1)),
        stock: 100,
        buyers: 300,
        via: Via::Fleet,
        store: StoreSetup::zookeeper(3),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("orders", 100.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: ZOOKEEPER_SOURCE,
        en: "One of the three ZooKeeper servers is killed as the sale starts. Two still make a \
             quorum (if the leader died, they elect a new one in well under a second): every \
             item is sold once. A lock write is acknowledged by a quorum, so a new leader has it: \
             no lock is lost, the difference from Sentinel.",
        zh: "开卖时三台 ZooKeeper 服务器中的一台被杀掉。剩下两台仍构成多数（如果死的是 leader，\
             不到一秒就选出新的）：每件商品只卖一次。锁的写入要由多数派确认，新 leader 上一定有这把锁，\
             不会丢锁——这正是它与哨兵的区别。",
    },
    Scenario {
        id: "zookeeper-quorum-lost",
        tier: Tier::Zookeeper,
        ttl_ms: NORMAL_TTL,
        business_ms: 5,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 2_000,
        lease: LeaseMode::Watchdog,
        fault: Some(Fault::on_nodes(FaultKind::ZkNodeDown, 8_000, 2)),
        stock: 100,
        buyers: 20,
        via: Via::Fleet,
        store: StoreSetup::zookeeper(3),
        expect: Expect::Figures(&[
            Check::eq("orders", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("sent_503", 20.0),
        ]),
        timing_sensitive: false,
        source: ZOOKEEPER_SOURCE,
        en: "Two of the three servers are down: no quorum. ZooKeeper refuses rather than answer \
             wrongly, and every buyer gets a 503 (zookeeper_unavailable) at its deadline: \
             consistent rather than available (CP, in the CAP theorem's words). A lone Redis \
             that is down refuses too (redis-down); Sentinel sells on after a failover, at the \
             price of the lock the failover lost (failover-loses-lock).",
        zh: "三台服务器中两台宕机，凑不成多数。ZooKeeper 宁可拒绝也不给出错误的答案，每个买家到了\
             等待期限都收到 503（zookeeper_unavailable）：宁要一致，不要可用（按 CAP 定理的说法是 CP）。\
             单个 Redis 宕机时同样只能拒绝（见 redis-down）；哨兵在主从切换之后能接着卖，\
             代价是切换中丢掉的那把锁（见 failover-loses-lock）。",
    },
];

/// The scenario with this id.
pub fn find(id: &str) -> Option<&'static Scenario> {
    CATALOG.iter().find(|s| s.id == id)
}
