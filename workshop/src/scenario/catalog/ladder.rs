//! The ladder: one Redis, climbed rung by rung — no lock, a lock per process, then `SETNX`,
//! its expiry, the owner's UUID, the Lua compare-and-delete, Redisson's reentrant lock and its
//! watchdog, the fencing token and the atomic deduct — ending with `redis-down`, where the one
//! Redis itself is the defect.
//!
//! Sources: the articles 000–004 (each scenario names its lines), Redisson's `RedissonLock`
//! for the reentrant chapters, and Martin Kleppmann's fencing tokens for `fenced-freeze`.

use oversell_api::{Fault, FaultKind, LeaseMode, Tier, Via, WaitStrategy};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The watchdog chapters: work well past the lease (twice it), and a renewal every 200 ms that
/// may come 400 ms late before the lease ends. A 200 ms lease renewed every 67 ms let a
/// renewal starved by a release build beside the fleet come too late (CI's cohort run, the
/// course's `--repeat 20` beside a flat-out bench): the watchdog's point needs a margin a
/// loaded laptop keeps. Five buyers keep the run about 6 s.
const SLOW_WORK_LEASE_MS: u64 = 600;
const SLOW_WORK_MS: u64 = 1_200;
const SLOW_WORK_BUYERS: usize = 5;

/// `redis-down`: how long the lock store stays down, and the buyers' wait deadline, well
/// inside it, so every buyer is told while the store is still gone.
const REDIS_DOWN_MS: u64 = 8_000;
const REDIS_DOWN_DEADLINE: u64 = 2_000;

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "none-race",
        tier: Tier::None,
        wait_deadline_ms: 5_000,
        expect: Expect::Figures(&[Check::gt("oversold", 0.0), Check::gt("lost_updates", 0.0)]),
        source: "001 lines 16–24, the stock-of-1 race (two requests read 1, both sell); 004 lines \
                 60–112, a thousand threads on one counter; the read-check-write is 002's sale() \
                 on its key inventory001, lines 55–94",
        en: "No lock: buyers read the same stock, all sell, all write n-1. More orders than \
             stock, and the counter loses updates.",
        zh: "不加锁：多个买家读到同一个库存值，都卖出、都写回 n-1。订单数超过库存（超卖），\
             后写的库存又覆盖了先写的（丢失更新）。",
        ..BASE
    },
    Scenario {
        id: "local-one-instance",
        tier: Tier::Local,
        via: Via::Instance,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("overlaps", 0.0),
        ]),
        source: "001 lines 26–30, the local lock (synchronized / ReentrantLock) on one server; \
                 004 line 114 says the same of one JVM",
        en: "An in-process mutex is enough while one process serves every buyer.",
        zh: "只有一个进程处理全部请求时，进程内的本地锁就够了，不会超卖。",
        ..BASE
    },
    Scenario {
        id: "local-three-instances",
        tier: Tier::Local,
        expect: Expect::Figures(&[Check::gt("oversold", 0.0), Check::gt("overlaps", 0.0)]),
        source: "001 lines 32–40, a second server: each JVM's lock binds only its own threads; \
                 000 lines 43–52 tell the same with a cache",
        en: "Each instance has its own mutex: with nginx spreading buyers over the instances, \
             buyers on different instances sell at once.",
        zh: "每个实例各有一把本地锁；nginx 把买家分发到多个实例后，\
             不同实例上的买家同时进入临界区，照样超卖。",
        ..BASE
    },
    Scenario {
        id: "setnx-crash",
        tier: Tier::Setnx,
        wait: WaitStrategy::Spin { sleep_ms: 20 },
        wait_deadline_ms: 1_500,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        buyers: 30,
        expect: Expect::StallUntilReset,
        source: "000 lines 107–159, bronze tier (SETNX + DEL; the retry by recursion, lines \
                 126–145); the 20 ms retry is 002's sale() loop, lines 96–112 (000 line 137 and \
                 004 line 176 sleep 100 ms); the unlock outside a finally block, 000 lines \
                 126–141, 188–199 and 319–342, and 004 lines 302–305",
        en: "The holder dies inside the critical section. SETNX set no lease, so nobody ever \
             deletes the lock: every later buyer waits out its deadline. Only a reset ends it. \
             The retry here is a loop, as 002 ends up writing it. 000 retries by calling itself \
             and sleeps 'so the stack does not overflow': the sleep only slows the recursion \
             down, every retry still adds a frame, and a lock that is never freed overflows the \
             stack all the same. A loop keeps one frame however long it waits. \
             A slip of 000's own (lines 83–88, 102): it calls `SET key value NX` the SETNX \
             command. SETNX is a command of its own that takes a key and a value and nothing \
             else; NX is an option of SET, and only SET can take PX beside it in the same \
             command, the confusion behind 003's `setnx … nx px` (line 41). \
             The same stall needs no crash at all. 000's code (lines 126–141, 188–199, 319–342) \
             and 004's Redisson example (lines 302–305) unlock after the work, not in a finally \
             block: work that throws skips the unlock while the process lives on. With SETNX's \
             lock, which has no lease, that is this deadlock; with a lease, a stall until it \
             ends; under Redisson's watchdog, a lock renewed for as long as the client runs.",
        zh: "青铜方案：持锁的实例在临界区里崩溃。SETNX 没有设置租约，这把锁再也没人删，\
             之后的买家全部等到超时（死锁），只能手动重置。这里的重试是一个循环，\
             也就是 002 最后改成的 while 写法。000 用递归重试，说先睡一会儿是为了不让栈溢出：\
             其实睡眠只是让递归慢下来，每次重试仍然多压一层栈，锁永远不释放时照样会栈溢出。\
             循环则不管等多久都只占一层栈。\
             000 自己在这里也有个疏漏（第 83–88、102 行）：它把 `SET key value NX` 叫\
             作 SETNX 命令。SETNX 是一条独立的命令，只接受键和值；NX 是 SET 的选\
             项，也只有 SET 能在同一条命令里再带上 PX——003 第 41 行的 `setnx … nx px` 就\
             出自同一种混淆。\
             同样的停顿其实连崩溃都不需要。000（第 126–141、188–199、319–342 行）和 \
             004（第 302–305 行）的示例代码都把解锁写在业务之后，而不是 finally 里：业务一抛异常，\
             解锁就被跳过，进程却还活着。SETNX 的锁没有租约，这就是本章的死锁；有租约时，\
             销售停到租约到期；换成 Redisson 的看门狗，只要客户端还在运行，这把锁就一直被续期。",
        ..BASE
    },
    Scenario {
        id: "setnx-expire-crash-between",
        tier: Tier::SetnxExpire,
        ttl_ms: 1_000,
        wait: WaitStrategy::Spin { sleep_ms: 20 },
        wait_deadline_ms: 1_500,
        fault: Some(Fault::new(FaultKind::CrashBeforeExpire, 0)),
        buyers: 30,
        expect: Expect::StallUntilReset,
        source: "000 lines 161–209, silver tier (SETNX, then EXPIRE); 002 lines 139–157 and 003 \
                 lines 20–29 take the same step; 004 lines 35–59 and 132–134 offer SETEX as the \
                 atomic way to set a value and its expiry",
        en: "The holder dies after SETNX and before EXPIRE: the lease was never set. Same \
             deadlock as SETNX alone, though the code 'has' a lease. 004 presents SETEX as the \
             atomic fix and a key to locking. It is atomic, but it is no lock: it has no NX, so \
             it overwrites a lock someone holds and every caller 'gets' it. The atomic pair is \
             SET key value NX PX, the next step.",
        zh: "白银方案：持锁的实例在 SETNX 之后、EXPIRE 之前崩溃，租约（文章里叫“过期时间”）根本没设上。\
             代码里看似“有”租约，结果和青铜方案一样死锁。004 把 SETEX 当作原子的解决办法，\
             说它是实现分布式锁的关键。SETEX 确实是原子的，却根本不是锁：它没有 NX，\
             会直接覆盖别人持有的锁，谁调用谁都“拿到”锁。真正原子的组合是 \
             SET key value NX PX，也就是下一级方案。",
        ..BASE
    },
    Scenario {
        id: "setnx-expire-crash-after",
        tier: Tier::SetnxExpire,
        ttl_ms: 1_000,
        wait: WaitStrategy::Spin { sleep_ms: 20 },
        wait_deadline_ms: 8_000,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        buyers: 30,
        expect: Expect::StallThenResume,
        source: "000 lines 161–209, silver tier: what the EXPIRE does buy; 003 line 21 says the \
                 same",
        en: "The holder dies after EXPIRE: sales stall until the lease runs out, then resume on \
             their own. \
             003's version of this step (line 24) writes `expire lock 3000`: EXPIRE counts \
             seconds, so its lease is 50 minutes, a stall nobody waits out; its next step's \
             `px 3000` is 3 s.",
        zh: "白银方案：持锁的实例在 EXPIRE 之后崩溃。销售一直停到租约到期，之后无需干预就恢复了。\
             003 这一步（第 24 行）写的是 `expire lock 3000`：\
             EXPIRE 以秒计，这个租约长达 50 分钟，销售要停将近一个小时；它下一步的 `px 3000` 才\
             是 3 秒。",
        ..BASE
    },
    Scenario {
        id: "atomic-expiry-slow-business",
        tier: Tier::AtomicExpiry,
        ttl_ms: 60,
        business_ms: 150,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        buyers: 12,
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
        ..BASE
    },
    Scenario {
        id: "uuid-owner-release-gap",
        tier: Tier::UuidOwner,
        ttl_ms: 600,
        business_ms: 400,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        fault: Some(Fault::new(FaultKind::ReleaseGap, 450)),
        buyers: 4,
        expect: Expect::Figures(&[Check::gt("foreign_releases", 0.0)]),
        timing_sensitive: true,
        source: "000 lines 296–365, platinum tier (UUID value, GET-compare-DEL); the pause \
                 between GET and DEL is 003's blocked client, lines 48–59",
        en: "The first holder's GET sees its own value at 400 ms, then pauses 450 ms before DEL. \
             The lease ends at 600 ms, the next buyer takes the lock, and the late DEL deletes it. \
             Two slips of the articles' own on the way: 002's version of this release (line 265) \
             calls equalsIgnoreCase on what GET returned, so once the lease has ended GET gives \
             null and the release throws a NullPointerException instead of noticing the loss; \
             and 003's pseudo-code (line 41) takes the lock with `setnx lock random_value nx px \
             3000`, which Redis refuses: SETNX takes a key and a value, NX and PX are SET's.",
        zh: "铂金方案：第一个持锁者在 400 毫秒时 GET 到自己的值，随后停顿 450 毫秒才执行 DEL。\
             租约在 600 毫秒到期，下一个买家拿到锁，迟到的 DEL 删掉的是别人的锁。文章自己在这里有两处疏漏：\
             002 的这段释放代码（第 265 行）直接对 GET 的结果调用 equalsIgnoreCase，租约一到期 GET 返回 null，\
             释放就抛出 NullPointerException，而不是发现锁已经丢了；003 的伪代码（第 41 行）用 \
             `setnx lock random_value nx px 3000` 加锁，Redis 会拒绝这条命令：SETNX 只接受键和值，\
             NX 和 PX 是 SET 的选项。",
        ..BASE
    },
    Scenario {
        id: "lua-release-slow-business",
        tier: Tier::LuaRelease,
        ttl_ms: 60,
        business_ms: 150,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        buyers: 12,
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::eq("foreign_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: "000 lines 366–410, diamond tier (Lua compare-and-delete); the lock as 001 lines \
                 58–80 show it, and the lease problem as 001 lines 123–127 state it for PX \
                 30000; 004's Jedis lock, lines 136–142, is this \
                 tier with PX 3; its clock called costly (line 148) and cached in a static field \
                 (lines 188–221)",
        en: "The Lua release never deletes another's lock, but a fixed lease shorter than the \
             work still lets a second holder in while the first is working. 004's example sets PX \
             3: a 3 ms lease, far too short for real work. It has a slip of its own too (line \
             143): one Jedis connection in a static field, shared by every thread though Jedis \
             is not thread-safe, and closed in lock()'s finally, before the unlock that needs it. \
             And for its wait deadline 004 calls System.currentTimeMillis() costly (line 148) \
             and proposes (lines 188–221) to read the time from a static field that a thread \
             refreshes every 5 ms. Reading the clock costs far less than the Redis round trip \
             every try already makes, let alone the 100 ms sleep between tries; the cache is \
             worse than the call. Its field is not volatile, so the Java memory model does not \
             promise that other threads ever see it change (a waiter may never reach its \
             deadline); it lags by up to 5 ms anyway; and a time elapsed is System.nanoTime()'s \
             to measure, which a step of the wall clock cannot move.",
        zh: "钻石方案：用 Lua 脚本释放锁，不会误删别人的锁，但固定租约短于业务耗时，\
             第一个持锁者还在处理时第二个已经进来了。004 的示例写的是 PX 3，租约只有 3 毫秒，\
             对真实业务远远不够。这个示例自己也有疏漏（第 143 行）：一个 Jedis 连接放在静态字段里，\
             所有线程共用，而 Jedis 不是线程安全的；它还在 lock() 的 finally 里被关掉，\
             后面解锁时却还要用它。\
             为了判断等待期限，004 还嫌 System.currentTimeMillis() 开销大（第 148 行），\
             提议改为读一个静态字段，由一个线程每 5 毫秒刷新一次（第 188–221 行）。\
             读一次时钟比每次重试本来就要做的 Redis 往返便宜得多，更不用说两次重试之间还要睡 \
             100 毫秒；这个缓存反而比直接调用更糟。字段不是 volatile，按 Java 内存模型，\
             别的线程不一定能看到它的更新（等待者可能永远等不到期限）；它本身也会落后最多 \
             5 毫秒；而计算经过的时间本该用 System.nanoTime()，系统时钟被拨动也不受影响。",
        ..BASE
    },
    Scenario {
        id: "lua-release-normal",
        tier: Tier::LuaRelease,
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("foreign_releases", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
        ]),
        timing_sensitive: true,
        source: "000 lines 366–410, diamond tier; the same compare-and-delete script is in 001 \
                 lines 70–74, 002 lines 291–345, 003 lines 59–66 and 004's Jedis unlock",
        en: "With the work well inside the lease, the Lua-released lock is correct.",
        zh: "钻石方案：业务耗时远小于租约时，用 Lua 解锁的锁是正确的。",
        ..BASE
    },
    Scenario {
        id: "reentrant-watchdog-slow-business",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: SLOW_WORK_LEASE_MS,
        business_ms: SLOW_WORK_MS,
        buyers: SLOW_WORK_BUYERS,
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
        ]),
        timing_sensitive: true,
        source: "001 lines 140–230 and 002 lines 514–575, Redisson's watchdog: a 30 s lease \
                 renewed every 10 s (TTL/3)",
        en: "Slow work again (1.2 s against a 600 ms lease), but the watchdog renews the lease \
             every TTL/3 while the holder runs (Redisson: 30 s, renewed every 10 s): no second \
             holder gets in.",
        zh: "同样是慢业务（1.2 秒的业务、600 毫秒的租约），但持锁期间看门狗每隔 TTL/3 \
             续期一次（Redisson 默认租约 30 秒、每 10 秒续期），别人进不来。",
        ..BASE
    },
    Scenario {
        id: "reentrant-fixed-lease-slow-business",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: SLOW_WORK_LEASE_MS,
        business_ms: SLOW_WORK_MS,
        lease: LeaseMode::Fixed,
        buyers: SLOW_WORK_BUYERS,
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: "001 lines 158–161 and 004 lines 393–400 print Redisson's tryAcquireAsync: with \
                 leaseTime != -1 it locks for that lease and schedules no renewal, which is what \
                 lock(leaseTime) and tryLock(waitTime, leaseTime) do",
        en: "The same lock and the same slow work, with a fixed lease, as Redisson's \
             lock(leaseTime) or tryLock(waitTime, leaseTime) gives: the leaseTime != -1 branch \
             that 001 and 004 both print returns before the watchdog is started. No renewal, \
             the 600 ms lease ends during the 1.2 s of work, and a second holder gets in. The \
             watchdog, not the hash, is what kept the slow work exclusive.",
        zh: "同一把锁、同样的慢业务，但租约固定，就像 Redisson 的 lock(leaseTime) 或 \
             tryLock(waitTime, leaseTime)：001 和 004 都贴出了 leaseTime != -1 这个分支，\
             它在启动看门狗之前就返回了。没有续期，600 毫秒的租约在 1.2 秒的业务中途到期，\
             第二个持锁者进来了。让慢业务保持互斥的是看门狗，而不是哈希结构。",
        ..BASE
    },
    Scenario {
        id: "lua-release-nested",
        tier: Tier::LuaRelease,
        ttl_ms: 5_000,
        wait_deadline_ms: 1_500,
        fault: Some(Fault::new(FaultKind::NestedLock, 0)),
        stock: 10,
        buyers: 10,
        expect: Expect::Figures(&[
            Check::gt("lock_timeouts", 0.0),
            Check::lt("orders", 10.0),
            Check::eq("oversold", 0.0),
        ]),
        source: "002 line 51 (SETNX falls short: think of re-entry) and line 344 (a lock is \
                 expected to be reentrant, as ReentrantLock and synchronized are); 004 line 271 \
                 (the lock so far cannot be entered again by its own thread)",
        en: "The first holder's sale calls a helper that takes the same lock again, as code \
             that locks inside a locked method does. lua-release's SET NX does not know its \
             owner: the key is there, so the helper waits — for its own caller. It waits until \
             its 1.5 s deadline (the lease, 5 s, would last longer) and the sale gives up with \
             a 503, writing nothing; every buyer queued behind it waited the same 1.5 s, and \
             most of them time out too. A lock that is not reentrant deadlocks on itself; the \
             next chapter's reentrant lock counts its owner's holds instead.",
        zh: "第一个持锁者的销售调用了一个辅助方法，它又去获取同一把锁，就像在加了锁的方法里再加锁的代码那样。\
             lua-release 的 SET NX 不认得持锁者：键已经在了，于是辅助方法开始等待——等的正是调用它的自己。\
             它一直等到 1.5 秒的等待期限（5 秒的租约比这还长），销售放弃，返回 503，什么也没写；排在它后面的\
             买家也都白等了同样的 1.5 秒，大多数同样超时。不可重入的锁会被自己锁死；下一章的可重入锁则为\
             持锁者记下重入次数。",
        ..BASE
    },
    Scenario {
        id: "reentrant-nested",
        tier: Tier::ReentrantWatchdog,
        stock: 50,
        buyers: 50,
        expect: Expect::Figures(&[
            Check::eq("min_depth", 2.0),
            Check::eq("lock_timeouts", 0.0),
            Check::eq("orders", 50.0),
        ]),
        source: "002 lines 346–513, the reentrant lock on a Redis hash (HINCRBY); 004 lines \
                 430–560 walk Redisson's",
        en: "Each sale takes the lock again in a nested step (hold count 2, recorded in the \
             ledger) and does not deadlock on itself. \
             The articles slip three times here. 002's hand-made lock (lines 438–442) \
             fixes its owner id when the lock object is built, so threads that share one \
             object all 're-enter' one another's lock; here the owner is each buyer. It also \
             starts another renewal timer on every acquire, re-entry included (lines 482, \
             569), and its unlock cancels none of them. And 004 (lines 472–474) has Redisson's \
             unlock publish first and delete below 0: the script it prints decrements, deletes \
             at 0, and publishes only once the lock is gone.",
        zh: "每次销售都在嵌套的步骤里再次获取同一把锁（重入次数为 2，记在订单流水里），\
             不会被自己持有的锁挡住。\
             文章在这里有三处疏漏。002 手写的锁（第 438–442 行）在构造锁对象时就定下了持\
             锁者标识，多个线程共用一个锁对象时，谁都能“重入”别人的锁；这里每个买家各有自己的持锁者标识。\
             它每次加锁（包括重入）都另起一个续期定时器（第 482、569 行），解锁时一个也不取消。\
             004（第 472–474 行）说 Redisson 解锁先发布消息、计数小于 0 才删\
             除：它贴出的脚本是先减一，减到 0 就删除，锁没了才发布消息。",
        ..BASE
    },
    Scenario {
        id: "reentrant-watchdog-crash-holding",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: 1_000,
        wait_deadline_ms: 8_000,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        buyers: 30,
        expect: Expect::StallThenResume,
        // The stall (about a lease) and the refusals (before the store is back) are timed:
        // measured in the hold-rate run.
        timing_sensitive: true,
        source: "001 lines 151–152: Redisson's watchdog guarantees no deadlock, because a machine \
                 that dies takes its watchdog with it and the key expires after the 30 s lease \
                 (true of a holder that dies; renewal-outlives-unlock shows a watchdog that \
                 outlives its hold)",
        en: "The holder dies inside the critical section, and its watchdog dies with it: nobody \
             renews the lease, and the lock frees itself when the lease (1 s here) runs out. \
             Sales stall for one lease, then resume without a reset. That is how a watchdog \
             avoids deadlock: it does not renew forever, it stops when its holder stops. \
             Compare setnx-crash, which never recovers.",
        zh: "持锁进程在临界区里崩溃，看门狗也随它一起消失：再没有人续期，租约（这里是 1 秒）\
             到期后锁自动释放。销售停顿一个租约，之后无需重置就恢复了。看门狗就是这样避免死锁的：\
             它不会无限续期，持锁者停了，它也就停了。对比 setnx-crash，那里永远恢复不了。",
        ..BASE
    },
    Scenario {
        id: "reentrant-watchdog-freeze",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: 300,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::Freeze, 1_200)),
        buyers: 30,
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
        ..BASE
    },
    Scenario {
        id: "fair-vs-race",
        tier: Tier::Fair,
        business_ms: 0,
        stock: 640,
        buyers: 1_280,
        connections: Some(64),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::gt("acquires_min_over_max", 0.66),
            // Against the race on the same load, measured first for a check that names it.
            Check::gt("acquires_vs_race", 1.1),
        ]),
        // Who wins each race is timing itself: measured in the hold-rate run.
        timing_sensitive: true,
        source: "004 lines 353–380 (Redisson's wait: subscribe to the release, try again, the \
                 first to try wins) for the race; 001 lines 244–246 (getFairLock, Redisson's \
                 fair lock, which 001 builds its Redlock of) for the queue",
        en: "The same 64 buyers, 20 sales each, for 640 items, first under reentrant-watchdog, \
             then under fair. Under the watchdog lock every release starts a race in Redis: \
             each instance wakes the buyer it has had waiting longest, they all try at once, \
             and the first attempt to land wins. Each instance serves its own line in order, \
             but across the fleet nothing does: a buyer can lose race after race, and the \
             client that got the fewest sales got clearly fewer than the luckiest. Under fair \
             the buyers queue in Redis itself, the release calls the first one in line by \
             name, and newcomers go to the end: every client gets about the same share, more \
             evenly than under the race on the same load, which the run measures first. \
             004 (lines 126, 263) says its lock makes the threads run 'in order': a lock gives \
             exclusion, one holder at a time, not order; under the race no order holds, and \
             only a queue like fair's gives one.",
        zh: "同样的 64 个买家，每个下 20 单，抢 640 件商品：先用 reentrant-watchdog，再用 fair。\
             看门狗锁每次释放都在 Redis 里引发一场抢夺：每个实例唤醒自己等得最久的那个买家，\
             它们同时去抢，谁的请求先到谁赢。每个实例内部按顺序排队，可所有实例合在一起就没有顺序了：\
             一个买家可能一输再输，卖得最少的客户端明显少于最幸运的那个。\
             fair 让买家直接在 Redis 里排队，释放时按名字叫队首的买家，新来的排到队尾：\
             每个客户端分到的份额差不多，比同样负载下的抢锁更均匀（本次运行先测了抢锁）。\
             004（第 126、263 行）说加了锁线程就会“按顺序”执行：锁只保证互斥、\
             一次一个持锁者，并不保证顺序；抢锁时就没有任何顺序，只有 fair 这样的队列才有。",
        ..BASE
    },
    Scenario {
        id: "fair-dead-waiter",
        tier: Tier::Fair,
        ttl_ms: 3_000,
        fault: Some(Fault::new(FaultKind::WaiterDies, 0)),
        // A line every buyer of which sells, short enough to be served within one lease on a
        // busy machine: the dead waiter's turn comes before its place lapses, and buyers
        // stand behind it to stall. With more buyers than items, the stall could fall after
        // the last sale, or the place lapse before its turn, and no sale would show it.
        stock: 40,
        buyers: 41,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("orders", 40.0),
            Check::eq("sent_503", 1.0),
            Check::eq("lock_timeouts", 0.0),
            // The stall itself, the widest gap between two sales: a long line's slowest
            // buyer waits long too, without any stall.
            Check::gt("stall_ms", 1_000.0),
        ]),
        // How long the line stalls depends on when the dead waiter's turn comes.
        timing_sensitive: true,
        source: "001 lines 244–246 (getFairLock); the stall is Redisson's own cost of its fair \
                 lock, which none of the articles mentions: a dead waiter holds the queue until \
                 its wait timeout, threadWaitTime. Redisson's documentation gives it as 5 s, \
                 which RedissonFairLock's constructor defaulted to in its 2019 source (5000 ms); \
                 its source since 2020 defaults to 60000 * 5 ms, five minutes (issue #3004 calls \
                 that the default), replaced by the wait time when tryLock is given one",
        en: "A buyer that finds the lock taken queues, then dies in line without a word (its \
             process gone). The release calls it by name; nobody answers; the lock stays free \
             and every buyer behind it waits, because the lock is owed to the dead one. What \
             fair does about it: a place lapses when its owner stops coming back for it, one \
             lease (3 s here) after its last visit or at its own wait deadline if sooner, and \
             every acquire and release first clears lapsed places from the front. The line \
             stalls about one lease, then moves on by itself: every item sold, nobody behind \
             it timed out, nothing oversold. Redisson's fair lock waits for a dead waiter too, \
             its threadWaitTime: 5 s in its documentation, but five minutes in its constructor \
             since 2020 unless tryLock is given a wait time, long enough to stall a line of \
             lock() callers for minutes per dead waiter.",
        zh: "一个买家发现锁被占，排上了队，随后进程死掉，既没来取锁，也没退出队列。释放时按名字叫它，\
             没人应答；锁空着，后面的买家全都在等，因为锁是留给这个死掉的等待者的。fair 的对策：\
             排队的号要靠排队的人回来续，人不再回来，号就作废——在它最后一次回来之后一个租约\
             （这里是 3 秒），如果它自己的等待期限更早，就在期限到时作废；每次加锁和释放都先把队首\
             作废的号清掉。队伍停顿大约一个租约，然后自己继续：货全部卖出，后面没有人等到超时，\
             也没有超卖。Redisson 的公平锁同样要等死掉的等待者，等的是 threadWaitTime：\
             文档里写的是 5 秒，可 2020 年以来它的构造函数默认是 5 分钟（除非 tryLock 给了等待时间），\
             足以让一队调用 lock() 的线程每遇到一个死掉的等待者就停上几分钟。",
        ..BASE
    },
    Scenario {
        id: "fenced-freeze",
        tier: Tier::Fenced,
        ttl_ms: 300,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::Freeze, 1_200)),
        buyers: 30,
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
        ..BASE
    },
    Scenario {
        id: "atomic-deduct",
        tier: Tier::AtomicDeduct,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::gt("throughput_vs_lua_release", 1.0),
        ]),
        source: "004 lines 60–112 (a thousand threads on one counter) pose it; the answer, a Lua \
                 check-and-decrement (the common DECR pattern), is in none of the articles",
        en: "No lock at all: one Lua script decrements if positive and records the order. Never \
             oversells, and sells faster than any lock (compared with lua-release on the same \
             load). \
             002's table (lines 281–282) says a command that fails inside MULTI/EXEC does not \
             roll the transaction back 'by default': Redis never rolls one back. And it offers \
             MULTI for updating stock and orders together, but queued commands cannot read the \
             stock before deciding to sell: that takes WATCH, or a script like this one.",
        zh: "完全不用锁：一段 Lua 脚本在库存大于零时扣减库存并记录订单。不会超卖，\
             而且比任何一种锁都快（与同样负载下的 lua-release 对比）。\
             002 的表格（第 281–282 行）说 MULTI/EXEC 中某条命令失败时“默认”不\
             回滚整个事务：Redis 的事务根本不会回滚。它还推荐用 MULTI 同时更新库存和订单，\
             可排进队列的命令没法先读库存再决定卖不卖：那要靠 WATCH，或者像这里一样用一段脚本。",
        ..BASE
    },
    Scenario {
        id: "redis-down",
        tier: Tier::LuaRelease,
        wait_deadline_ms: REDIS_DOWN_DEADLINE,
        fault: Some(Fault::new(FaultKind::LockStoreDown, REDIS_DOWN_MS)),
        buyers: 20,
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
             随宕机的主节点一起丢掉的那把锁。",
        ..BASE
    },
];
