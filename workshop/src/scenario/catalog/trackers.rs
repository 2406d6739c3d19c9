//! From the trackers, continued: more failures that users of the lock libraries reported
//! in their issue trackers, each reproduced on the default fleet, three instances on one Redis,
//! but the lagging replica's, on a Sentinel lock store, and Curator's, on one ZooKeeper
//! server, and judged from the resource store like every other chapter. [`field`](super::field)
//! holds the first ones; these are kept apart because they share one lesson of their own:
//! what a lock's own safeguards (a watchdog's renewals, a retried acquire, a fencing token,
//! an extend, an owner token, a wait for the replicas) do when the holder or the store is not
//! what the library thinks (dead, stuck, holding twice, writing where no token goes,
//! extending a lock it lost, sharing its token with the tasks of its thread, renewing in the
//! wrong unit, behind a lagging replica, on a session it gave up, with a release lost on the
//! way).
//!
//! Sources: the issues each chapter names (Redisson, RedLock.net, ShedLock, redlock-rb,
//! redis-semaphore, aredis, redis-py, Foundatio.Redis, Apache Curator), read in their own threads;
//! each chapter names the lines where an article's code or word meets its failure.

use oversell_api::{Fault, FaultKind, Tier, Via, WaitStrategy};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The watchdog chapters: a 300 ms lease renewed every 100 ms, and a deadline of five
/// leases, so a buyer who waits it out waited for a lock that only renewals kept. Four
/// buyers fired at once for four items: the first to take the lock is the one the chapter
/// is about, and the three others all wait behind it.
const RENEWED_LEASE_MS: u64 = 300;
const RENEWED_DEADLINE_MS: u64 = 1_500;
const RENEWED_BUYERS: usize = 4;

/// The stuck holder: work of 4 s, well past the others' 1.5 s deadline (2.5 s of margin on a
/// loaded machine), and short enough that the chapter ends by itself.
const STUCK_WORK_MS: u64 = 4_000;

/// The retried acquire: a 1.5 s lease the release sets again on the hold it leaves, and
/// buyers who wait 0.8 s, so the hold left behind outlasts every waiter by 0.7 s at least
/// (they all start within milliseconds of the first buyer, whose sale takes milliseconds).
const RETRY_LEASE_MS: u64 = 1_500;
const RETRY_DEADLINE_MS: u64 = 800;

/// The unchecked write: the timings of `fenced-freeze` (a 300 ms lease, 1.2 s of pause after
/// the read, thirty spinning buyers), so the two read side by side; here the holder alone
/// pauses, and its renewals with it, as `holder-pause` does.
const UNCHECKED_LEASE_MS: u64 = 300;
const UNCHECKED_PAUSE_MS: u64 = 1_200;

/// The extend after a lapse: a 300 ms lease that nothing renews, the first holder paused
/// 1.2 s after its read, then extending before its write. The four other buyers, trying every
/// 10 ms, take the lock one after another once the lease ran out (at 300 ms) and are all done
/// in well under the 900 ms left, so the extend finds the key holding nothing, not another's.
const EXTEND_LEASE_MS: u64 = 300;
const EXTEND_PAUSE_MS: u64 = 1_200;
const EXTEND_BUYERS: usize = 5;

/// The token of the wrong scope: the timings of `lua-release-slow-business` (work of 150 ms
/// past a 60 ms lease nothing renews, twelve buyers trying every 5 ms), every buyer on one
/// instance, so that whoever releases, the lock was taken again meanwhile by a sale of the
/// same process, whose token is the one a token kept per process holds.
const SCOPE_LEASE_MS: u64 = 60;
const SCOPE_WORK_MS: u64 = 150;
const SCOPE_BUYERS: usize = 12;

/// The lagging replica: replicas stopped 3 s (under the 5 s at which their helpers resume
/// them whatever happens), each lock write waiting 1 s (the default `sync_timeout_ms`) for
/// a replica, and buyers who wait 6 s, past the lag and one more write's wait with 2 s of
/// margin: nothing is sold until the lag ends (a gap of 2 s is checked, a second under it;
/// the question's options part at the same 2 s), everything after.
/// The run ends once the replicas are back, so a chapter run after it on the same fleet
/// never meets the lag's tail (a lag that outlived the run would resume replicas the next
/// chapter's own fault holds off).
const LAG_MS: u64 = 3_000;
const LAG_STALL_MS: f64 = 2_000.0;
const LAG_DEADLINE_MS: u64 = 6_000;
const LAG_BUYERS: usize = 5;

/// The renewal in the wrong unit: a 3 s lease the first holder renews as its 200 ms of work
/// starts, five buyers trying every 10 ms. Renewed as 3 ms, the lease is gone long before the
/// work is done, and the next buyer's try (within 10 ms) finds the key free; renewed as
/// 3,000 ms, every sale is done well under its lease.
const UNIT_LEASE_MS: u64 = 3_000;
const UNIT_WORK_MS: u64 = 200;
const UNIT_BUYERS: usize = 5;

/// Curator's chapters run on one ZooKeeper server, with the session timeout `oversell up`
/// gives (4 s), and buyers who wait up to 20 s, as the ZooKeeper chapters do.
const CURATOR: Scenario = Scenario {
    tier: Tier::Zookeeper,
    wait_deadline_ms: 20_000,
    store: StoreSetup::zookeeper(1),
    ..BASE
};

/// The session given up as the first buyer queues: the servers keep the old one 1 s more, and
/// each sale works 2 s, so the old node goes (and the next buyer with it takes the lock) a
/// second before the first buyer's work is done, whatever the load (a second of margin each
/// way). Three buyers, three items: 6 s in all when they go one at a time.
const RECONNECT_LINGER_MS: u64 = 1_000;
const RECONNECT_WORK_MS: u64 = 2_000;
const RECONNECT_BUYERS: usize = 3;

/// The lost delete: buyers who wait 1.5 s each behind a node nobody deletes, so the chapter
/// ends in seconds; the guaranteed delete lands in milliseconds, well within that wait.
const LOST_DELETE_DEADLINE_MS: u64 = 1_500;
const LOST_DELETE_BUYERS: usize = 3;

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "watchdog-renews-dead-worker",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: RENEWED_LEASE_MS,
        business_ms: 20,
        wait_deadline_ms: RENEWED_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::WorkerDies, 0)),
        stock: RENEWED_BUYERS as i64,
        buyers: RENEWED_BUYERS,
        expect: Expect::Figures(&[
            Check::eq("orders", 0.0),
            // Every buyer after the dead one waited its whole deadline, five leases.
            Check::eq("lock_timeouts", (RENEWED_BUYERS - 1) as f64),
            Check::gt("max_latency_ms", (RENEWED_DEADLINE_MS - 100) as f64),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #3521 (a thread took the lock, threw a RuntimeException and \
                 died without unlocking, and the renewal task went on; the reporter asked \
                 that a renewal check its thread is alive) and #5115 (the watchdog runs on \
                 threads of its own: the worker can die while it renews), and #1626 (a \
                 watchdog never cancelled renews until the instance restarts, every other \
                 thread deadlocked); against 001 lines 151–152, which say the watchdog \
                 guarantees no deadlock because it dies with the machine",
        en: "Redisson's lock() with its watchdog, a 300 ms lease renewed every 100 ms. The \
             first holder's worker dies right after reading the stock: an exception nobody \
             catches ends the task before its finally can unlock. The process lives on, and \
             so does the watchdog, a timer of the process, not of the worker: every 100 ms it \
             pushes the lease back up for a holder that no longer exists. The three buyers \
             behind it wait their whole 1.5 s deadline, five leases, and get a 503; nothing is \
             sold, and nothing would be until a reset deletes the lock. Compare \
             reentrant-watchdog-crash-holding: there the whole process dies, the watchdog with \
             it, and the lease frees the lock. 001 (lines 151–152) promises no deadlock on that \
             ground, and it holds only when the machine dies; when only the worker does, the \
             watchdog is what keeps the lock. Renewals that ask whether their holder is alive \
             (a worker's heartbeat, not the process's), or an unlock in a finally that always \
             runs, are what the reporters asked for.",
        zh: "带看门狗的 Redisson lock()，租约 300 毫秒，每 100 毫秒续期一次。第一个持锁者的工作线程\
             刚读完库存就死了：一个没人捕获的异常让任务在 finally 解锁之前就结束了。进程还活着，\
             看门狗也还活着，它是进程的定时器，不属于那个工作线程：它每 100 毫秒把租约续回去，\
             续的却是一个已经不存在的持锁者。排在后面的三个买家都等满 1.5 秒的等待期限（五个租约），\
             收到 503；一件也没卖出，不重置删掉这把锁，就永远卖不出去。对比 \
             reentrant-watchdog-crash-holding：那里整个进程崩溃，看门狗随之消失，租约到期后锁自动释放。\
             001（第 151–152 行）正是据此保证不会死锁，可这只在整台机器宕机时成立；\
             只死了工作线程时，把锁一直留住的恰恰是看门狗。报告者要的是会确认持锁者还活着的续期\
             （看工作线程的心跳，而不是进程的），或者一定会执行的 finally 解锁。",
        ..BASE
    },
    Scenario {
        id: "watchdog-keeps-stuck-holder",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: RENEWED_LEASE_MS,
        business_ms: STUCK_WORK_MS,
        wait_deadline_ms: RENEWED_DEADLINE_MS,
        stock: RENEWED_BUYERS as i64,
        buyers: RENEWED_BUYERS,
        expect: Expect::Figures(&[
            // The stuck holder's own sale, at the end of its 4 s.
            Check::eq("orders", 1.0),
            Check::eq("lock_timeouts", (RENEWED_BUYERS - 1) as f64),
            Check::eq("overlaps", 0.0),
            Check::gt("max_latency_ms", (STUCK_WORK_MS - 100) as f64),
        ]),
        timing_sensitive: false,
        source: "RedLock.net issue #68 (the lock is auto-extended without limit, so a client \
                 stuck in a loop, neither crashed nor unresponsive, keeps it for ever; the \
                 reporter points at an ExtendCount the library counts and never uses, and at \
                 redis.io's Redlock page, which asks that lock extensions be limited or a \
                 liveness property is lost); 001 line 151 (the watchdog renews the key every \
                 10 s, so a lock held however long never expires)",
        en: "The same watchdog and the same 300 ms lease, with a holder that does not die but \
             gets stuck: its work, meant to take milliseconds, hangs for 4 s, as a client in a \
             loop that will not end. Its process is healthy, so its watchdog renews the lease \
             every 100 ms, ten times a second, for work that has stopped moving. The three buyers behind it \
             wait their 1.5 s deadline and get a 503; the holder sells its one item when it \
             finally comes back, and nobody shared the lock with it. That is the watchdog \
             doing what 001 (line 151) says it does, a lock never expiring while it is held; \
             it cannot tell a long task from a stuck one. Here the task ends at 4 s; a loop \
             that never ends keeps the lock for ever. A bound on the renewals (a most-held \
             time, or a number of extensions, as redis.io's Redlock page asks) turns a stuck \
             holder back into an expired one; it then needs the fencing token of fenced-freeze \
             for when it comes back.",
        zh: "同样的看门狗、同样 300 毫秒的租约，但持锁者没有死，而是卡住了：本该几毫秒的业务卡了 \
             4 秒，就像陷在一个出不来的循环里的客户端。它的进程好好的，看门狗就每 100 毫秒续期一次，\
             每秒十次，续的却是一件已经不动了的业务。排在后面的三个买家等满 1.5 秒的等待期限，收到 503；\
             持锁者终于回过神来，卖出了它那一件，没有人和它同时持有锁。看门狗做的正是 001（第 151 行）\
             说的事：只要一直持有锁，键就不会过期；它分不清耗时长的任务和卡死的任务。\
             这里的业务 4 秒就结束了；一个永远不结束的循环会让锁永远被占着。给续期设个上限\
             （最长持有时间，或者最多续期几次，redis.io 上的 Redlock 页面就这样要求），\
             卡住的持锁者就重新变成租约到期的持锁者；它回来的时候，还需要 fenced-freeze 里的围栏令牌。",
        ..BASE
    },
    Scenario {
        id: "acquire-retry-takes-it-twice",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: RETRY_LEASE_MS,
        wait_deadline_ms: RETRY_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::AcquireReplyLost, 0)),
        stock: 3,
        buyers: 3,
        expect: Expect::Figures(&[
            // The one order was written under three holds, where every sale of this tier
            // writes two (its nested step, `reentrant-nested`): the retry re-entered.
            Check::eq("min_depth", 3.0),
            Check::eq("orders", 1.0),
            Check::eq("lock_timeouts", 2.0),
            Check::eq("overlaps", 0.0),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #7367 and pull request #7368 (a timed-out RLock acquire was \
                 sent again in replicated mode: the second EVALSHA took the reentrant path and \
                 left getHoldCount() at 2 after one tryLock(); the fix keeps such a command \
                 from being resent, and its RedissonLockReplicatedTimeoutTest saw the hold \
                 count at 2 before it); MIT 6.5840's key/value lab, whose client returns ErrMaybe \
                 for a retried Put whose first attempt may have run; the re-entry branch that \
                 takes the retry, 001 lines 191–195 and 004 lines 456–461, and the owner it \
                 matches, UUID:threadId, 002 line 392",
        en: "Redisson's reentrant lock, a 1.5 s lease. The first buyer's lock command runs in \
             Redis and takes the lock, but the reply is lost on the way back; the client, timed \
             out, cannot tell a lock it did not get from one it got, and sends the same command \
             again at once, under the same owner. To the lock that is the owner asking again: \
             the re-entry branch counts a second hold. The buyer sells (its order is written \
             at hold count 3, where every sale of this tier writes 2, its nested step being \
             the second) and gives back what it knows it took: one hold fewer, one left, and a \
             lock with a hold left keeps its lease and publishes nothing. Nobody holds it, \
             nothing renews it, and it stands for its 1.5 s; the two buyers behind wait their \
             0.8 s and get a 503. A lock whose acquire is not idempotent makes every retry a \
             question: did the first one land? A timed-out acquire must either be sent once \
             (Redisson's fix) or be answered by asking the lock whose it is before trying \
             again, as MIT 6.5840's ErrMaybe teaches a key/value client.",
        zh: "Redisson 的可重入锁，租约 1.5 秒。第一个买家的加锁命令在 Redis 里执行了，锁拿到了，\
             应答却在回来的路上丢了；客户端超时，分不清是没拿到锁还是拿到了，于是马上用同一个持锁者\
             标识把同一条命令再发一次。在锁看来，这是持锁者又来要一次：重入分支把重入次数加到 2。\
             买家卖出商品（订单是在重入次数 3 下写入的，这个方案的每笔销售本来都是 2，第二次是它的嵌套步骤），\
             然后只还回它知道自己拿过的那几次：重入次数还剩一次；\
             还有重入次数的锁会保留租约，也不发布释放消息。没有人持有它，也没有人为它续期，\
             它就这样留满 1.5 秒；排在后面的两个买家等满 0.8 秒，收到 503。加锁不是幂等的，\
             每一次重试都成了一个问题：上一次到底成没成？超时的加锁要么只发一次（Redisson 的修复），\
             要么在重试之前先问清这把锁是谁的，就像 MIT 6.5840 的 ErrMaybe 教键值客户端的那样。",
        ..BASE
    },
    Scenario {
        id: "fence-unchecked-by-resource",
        tier: Tier::Fenced,
        ttl_ms: UNCHECKED_LEASE_MS,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::UncheckedWrite, UNCHECKED_PAUSE_MS)),
        buyers: 30,
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("lost_updates", 0.0),
            // The token was there, and nothing refused the write: it went where none is read.
            Check::eq("stale_writes_rejected", 0.0),
        ]),
        timing_sensitive: true,
        source: "ShedLock issue #2201 (fencing tokens for its JDBC provider; the maintainer's \
                 answer: it may not be possible, as the service behind the lock has to check \
                 the token, which a generic library cannot do); Redisson issue #5044 (its \
                 RFencedLock's documented sample says to check token >= old token in the \
                 caller's code, and the maintainer: token validity tracking is on the \
                 developer side); Martin Kleppmann, \"How to do distributed locking\" (2016), \
                 the post 001 line 491 cites by name: the storage server rejects the write \
                 with the older token",
        en: "The fenced lock of fenced-freeze and its timings: a 300 ms lease, a token one \
             higher with every grant, and the holder paused 1.2 s after its read, its renewals \
             with it. Its read went to the stock with its token, as every read does. Its write, \
             though, goes where no token can go, as a job under ShedLock writes to whatever \
             its task touches, a payment API or a mailbox, none of which has a field for a \
             number from the lock. The lease runs out, the next holders take the lock with \
             higher tokens and sell, and the paused holder's write lands over theirs: lost \
             updates, and not one write refused. The token was handed out, carried, and never \
             compared. A fence is only where the resource checks it, in the same step as the \
             write: fenced-freeze refuses this write because the stock's own script compares \
             the token; a check in the caller (Redisson's sample, token >= old token) is \
             check-then-act again, and the pause can fall right after it. Where the resource \
             cannot check, as ShedLock's maintainer answered, no library can do it for it: \
             make the write itself conditional (a version the resource compares), or keep the \
             lease longer than any pause can be, knowing that is a bet.",
        zh: "还是 fenced-freeze 里的围栏令牌锁和它的时间设置：租约 300 毫秒，每发放一次锁令牌加 1，\
             持锁者读完库存后暂停 1.2 秒，续期也跟着停了。它的读和每次读一样，带着令牌去了库存；\
             它的写却去了一个放不进令牌的地方，就像 ShedLock 下的定时任务去写它要动的任何东西：\
             支付接口、邮箱，哪一个都没有地方放锁给的那个编号。租约到期，后面的持锁者拿着更大的令牌\
             拿到锁、卖出商品，暂停的持锁者的写入落在他们的结果之上：丢失更新，而且没有一次写入被拒绝。\
             令牌发了，也带了，却从来没有人拿它比较过。围栏只在资源自己校验令牌的地方才有，\
             而且要和写入在同一步里完成：fenced-freeze 能拒绝这次写入，是因为库存自己的脚本在比较令牌；\
             在调用方检查（Redisson 示例里让调用方自己比较新旧令牌）又是“先检查、后执行”，\
             停顿完全可以发生在检查之后。资源自己不能校验时，正如 ShedLock 的维护者所说，\
             哪个库也替它做不了：要么让写入本身带条件（由资源比较的版本号），\
             要么让租约比任何停顿都长，并且清楚这只是在赌。",
        ..BASE
    },
    Scenario {
        id: "extend-revives-lapsed-lock",
        tier: Tier::LuaRelease,
        ttl_ms: EXTEND_LEASE_MS,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::ExtendRetakes, EXTEND_PAUSE_MS)),
        stock: EXTEND_BUYERS as i64,
        buyers: EXTEND_BUYERS,
        expect: Expect::Figures(&[
            // The extend said yes, so the paused holder wrote: every item sold, and its write
            // went over the four made meanwhile.
            Check::eq("orders", EXTEND_BUYERS as f64),
            Check::gt("lost_updates", 0.0),
            Check::gt("overlaps", 0.0),
            // And nobody was told: the lock it released was the one its extend took again.
            Check::eq("lost_releases", 0.0),
            Check::eq("sent_503", 0.0),
        ]),
        timing_sensitive: true,
        source: "redlock-rb issue #36 (\"Lock extension via lock method allows extending \
                 expired locks\": the reporter's script deletes the key under a holder, lets \
                 another thread lock and unlock, and the extend then works as if the lock had \
                 always been held): its extend is its lock script sent with the old value, which \
                 sets the key when it is missing or holds that value; pull request #37 added an \
                 extend that fails on a lock not held, as an option (extend_only_if_locked \
                 today), and the default still takes a free key, as the README warns; \
                 redis-semaphore issue #175 (\"Mutex silently reacquires lock when expired \
                 between refreshes\": a delayed refresh finds the key gone, sets it again, and \
                 hides that mutual exclusion was not held; pull request #177 drops the re-set, \
                 and the lock is reported lost); against 002 lines 514–523, whose renewal \
                 extends only a lock that still has the holder's field",
        en: "The diamond rung, SET NX PX with a unique value and a compare-and-delete release, \
             as redlock-rb and redis-semaphore lock on one Redis, with a 300 ms lease nothing \
             renews. The first holder reads the stock and is paused for 1.2 s. Its lease runs \
             out at 300 ms; the four buyers behind it take the lock one after another and sell, \
             and the last one releases it long before the pause ends. Back, the holder does \
             what a careful client does before it goes on: it extends its lease, and writes \
             only if the extend succeeds. The extend is redlock-rb's by default and \
             redis-semaphore's refresh before its fix: it sets the key to the holder's value with a fresh lease if the key holds \
             that value or nothing at all. The key holds nothing, so it succeeds: the holder \
             has its lock again, as if it had never lost it, and writes the stock it read 1.2 s \
             ago over the four sales made since. Every item is sold and the stock says four \
             are left: lost updates. Then it releases its own lock, as the key says, and no \
             release is reported lost: the lapse is hidden from the one client that could have \
             learnt of it. An extend that revives a lock is an acquire that does not say so; \
             the next chapter sends the extend that checks.",
        zh: "钻石方案：SET NX PX 配唯一值，释放时用 Lua 脚本先比对再删除，redlock-rb 和 \
             redis-semaphore 在单个 Redis 上就是这样加锁的；租约 300 毫秒，没有人续期。\
             第一个持锁者读完库存后暂停 1.2 秒。它的租约在 300 毫秒时到期；排在后面的四个买家\
             依次拿到锁、卖出商品，最后一个在暂停结束之前很久就释放了锁。持锁者回来后，\
             做了谨慎的客户端在继续之前会做的事：先延长租约，延长成功才写入。\
             这里的延长是 redlock-rb 默认的写法，也是 redis-semaphore 修复之前的续期：\
             键里是自己的值，或者键已经不存在，\
             都把键设成自己的值并给一个新的租约。键已经不存在，于是延长成功：持锁者又有了锁，\
             就像从来没丢过一样，把 1.2 秒前读到的库存写了回去，压在这期间卖出的四笔之上。\
             商品全部卖出，库存却显示还剩四件：丢失更新。随后它释放的是自己那把锁，\
             键里确实是它的值，所以没有一次释放被记为“锁已丢失”：唯一可能发现租约到期的客户端，\
             恰恰被瞒住了。会把锁重新拿回来的延长，其实是一次不声不响的加锁；\
             下一章换上先比对持锁者的延长。",
        ..BASE
    },
    Scenario {
        id: "extend-checked-gives-up",
        tier: Tier::LuaRelease,
        ttl_ms: EXTEND_LEASE_MS,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::ExtendChecked, EXTEND_PAUSE_MS)),
        stock: EXTEND_BUYERS as i64,
        buyers: EXTEND_BUYERS,
        expect: Expect::Figures(&[
            // The extend said no, so the paused holder gave up its sale: the four others'
            // sales stand, and nothing was written over them.
            Check::eq("orders", (EXTEND_BUYERS - 1) as f64),
            Check::eq("lost_updates", 0.0),
            Check::eq("sent_503", 1.0),
            // The lapse happened all the same, and this time the holder's release says so.
            Check::gt("overlaps", 0.0),
            Check::eq("lost_releases", 1.0),
        ]),
        timing_sensitive: true,
        source: "redis-semaphore pull request #177 (a refresh that finds the key gone no \
                 longer sets it, and the lock is reported lost, after issue #175) and redlock-rb \
                 pull request #37 (an extend that fails on a lock not held, after issue #36; the \
                 option extend_only_if_locked today); the extend is Redlock's extension on one \
                 master, the renewal 002 lines 514–523 write for their reentrant lock: a new \
                 lease only while the lock is still the holder's",
        en: "The same rung, lease, pause and buyers, with the extend redis-semaphore sends \
             since its fix and redlock-rb sends when asked (extend_only_if_locked): a fresh lease only if the key still holds \
             the holder's value. The lease ran out during the pause and the four others sold \
             meanwhile, so the key holds nothing, and the extend fails. The holder was told \
             its lock is gone before it wrote, and gives up its sale (a 503): four items sold, \
             the stock right, no update lost, and its release counted as lost, as it should \
             be. The lapse itself is not undone: a second holder worked beside the paused \
             one, and the overlap is counted. What the checked extend buys is knowing, at the \
             one moment the holder asks. It is still check-then-act: a pause that falls right \
             after a successful extend lets the same write land, and only a fencing token the \
             stock checks (fenced-freeze) refuses it then.",
        zh: "同样的方案、租约、暂停和买家，延长换成 redis-semaphore 修复之后的写法，\
             也就是 redlock-rb 在调用方要求时（extend_only_if_locked）的写法：\
             只有键里还是自己的值，才给一个新的租约。租约在暂停期间到期，其他四个买家已经卖出，\
             键已经不存在，于是延长失败。持锁者在写入之前就得知锁已经没了，放弃了这笔销售\
             （返回 503）：卖出四件，库存正确，没有丢失更新，它的释放被记为“锁已丢失”，这才是实情。\
             租约到期这件事本身并没有被挽回：暂停期间另一个持锁者已经和它同时处理业务，\
             临界区重叠照样被记了下来。先比对持锁者的延长换来的，是持锁者在询问的那一刻知道真相。\
             它仍然是“先检查、后执行”：如果停顿恰好发生在一次成功的延长之后，同样的写入照样落地，\
             那时只有由库存校验的围栏令牌（fenced-freeze）才能拒绝它。",
        ..BASE
    },
    Scenario {
        id: "token-per-thread-releases-anothers",
        tier: Tier::LuaRelease,
        ttl_ms: SCOPE_LEASE_MS,
        business_ms: SCOPE_WORK_MS,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        fault: Some(Fault::new(FaultKind::TokenPerInstance, 0)),
        buyers: SCOPE_BUYERS,
        via: Via::Instance,
        expect: Expect::Figures(&[
            // The compare-and-delete compared the token it was sent, the latest acquirer's.
            Check::gt("foreign_releases", 0.0),
            Check::gt("overlaps", 0.0),
        ]),
        timing_sensitive: true,
        source: "aredis issue #119 (\"Use of threading.local in lock.py can cause token \
                 leakage\": the lock keeps its token in a threading.local() ported from \
                 redis-py, tasks of one event loop share the thread, and a task whose lock \
                 timed out releases with the token of the task that took it next, successfully \
                 where it should get a LockError; the maintainer confirmed it, and pull request \
                 #120 keeps the token in a contextvars.ContextVar, one per task); redis-py issue \
                 #656 (a lock acquired in one thread cannot be released in another: the token \
                 is in thread-local storage by design, the maintainer answered, pointing at the \
                 comments on it); the owner as the articles scope it, the thread's UUID:ThreadID, \
                 002 lines 356 and 386",
        en: "The diamond rung of lua-release-slow-business: a unique token per acquire, a \
             release that deletes the key only if it holds the token it is sent, a 60 ms lease \
             for 150 ms of work. But the token is kept where redis-py's lock keeps it, in a \
             thread-local, and this instance serves its twelve buyers as an event loop serves \
             tasks, all on one thread: one slot for them all. Each acquire writes its token \
             there; each release sends the one it finds, the latest acquirer's. The first \
             holder's lease runs out while it works, a second sale takes the lock and writes \
             its token into the slot, and when the first one releases, its compare-and-delete \
             compares the second's token with the second's lock and deletes it: a foreign \
             release, which the diamond rung never makes, and a third buyer in beside the \
             second. Nobody is told: the compare succeeded. A token protects a holder only if \
             it is that holder's own: scoped to a thread, it is shared by everything that runs \
             on the thread, which under asyncio is every task of the loop (under tokio, \
             whichever tasks the worker thread happens to run). The next chapter keeps \
             the token per sale, as aredis's fix does with a context variable per task.",
        zh: "还是 lua-release-slow-business 里的钻石方案：每次加锁一个唯一的令牌，释放时只有键里是\
             它收到的那个令牌才删除，租约 60 毫秒，业务耗时 150 毫秒。但令牌放在 redis-py 的锁放它\
             的地方：线程局部变量里；而这个实例服务它的十二个买家，就像事件循环服务它的协程任务一样，\
             都在同一个线程上：大家共用一个位置。每次加锁都把自己的令牌写进去；每次释放都发送\
             它在那里找到的令牌，也就是最近一次加锁者的。第一个持锁者还在处理业务时租约到期，\
             第二笔销售拿到锁，把自己的令牌写进那个位置；第一个持锁者释放时，它的“先比对再删除”\
             拿第二个人的令牌去比对第二个人的锁，于是把它删了：误删他人锁，钻石方案本来从不会这样，\
             第三个买家随即和第二个同时进来。没有人得到通知：比对成功了。令牌只有真正属于持锁者\
             自己时才能保护它：按线程划分的令牌，被这个线程上运行的一切共用：在 asyncio 下，\
             那就是事件循环里的所有任务（在 tokio 下，是工作线程碰巧运行的那些任务）。下一章按每笔销售保存令牌，就像 aredis 的修复用每个任务一个的\
             上下文变量那样。",
        ..BASE
    },
    Scenario {
        id: "token-per-task-releases-its-own",
        tier: Tier::LuaRelease,
        ttl_ms: SCOPE_LEASE_MS,
        business_ms: SCOPE_WORK_MS,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        buyers: SCOPE_BUYERS,
        via: Via::Instance,
        expect: Expect::Figures(&[
            Check::eq("foreign_releases", 0.0),
            // The lease is still too short for the work: overlaps, and holders told so.
            Check::gt("overlaps", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: "aredis pull request #120 (the token in a contextvars.ContextVar, one per task, \
                 after issue #119), which is what every sale here has: an owner of its own; the \
                 ladder's lua-release-slow-business on one instance, and 000 lines 366–410, the \
                 diamond tier's compare-and-delete",
        en: "The same instance, buyers, lease and work, and the same compare-and-delete, with \
             the token kept per sale, as aredis keeps it since its fix (a context variable, \
             one per task): each release sends its own. The lease is still shorter than the \
             work, so holders still overlap, as on lua-release-slow-business; but a holder \
             whose lease ran out now finds its own token gone from the key and deletes \
             nothing: no foreign release, and its release is counted as lost, which is the \
             library's LockError telling it so. The scope of a token is part of the lock: per \
             acquire, carried by whatever acquired, never by the thread it ran on.",
        zh: "同样的实例、买家、租约和业务耗时，同样的“先比对再删除”，但令牌按每笔销售保存，\
             就像 aredis 修复之后那样（上下文变量，每个任务一个）：每次释放都发送自己的令牌。\
             租约仍然短于业务耗时，所以持锁者仍然会重叠，和 lua-release-slow-business 一样；\
             但租约到期的持锁者这回发现键里已经不是自己的令牌，什么也不删：没有误删他人锁，\
             它的释放被记为“锁已丢失”，也就是库抛出 LockError 告诉它的那件事。令牌的作用范围\
             是锁的一部分：每次加锁一个，由加锁的那一方带着，而不是由它碰巧运行的线程带着。",
        ..BASE
    },
    Scenario {
        id: "renewal-in-seconds-read-as-ms",
        tier: Tier::LuaRelease,
        ttl_ms: UNIT_LEASE_MS,
        business_ms: UNIT_WORK_MS,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::RenewInSeconds, 0)),
        stock: UNIT_BUYERS as i64,
        buyers: UNIT_BUYERS,
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("lost_updates", 0.0),
            // The renewed holder's release found the next holder's value in the key.
            Check::eq("lost_releases", 1.0),
        ]),
        timing_sensitive: true,
        source: "Foundatio.Redis issue #73 (\"ReplaceIfEqualAsync sets a wrong expiration \
                 value causing RenewAsync to release locks\": its CacheLockProvider's renewal \
                 passed the expiry as TotalSeconds to a script that sets it with SET … PX, in \
                 milliseconds, and renewed locks were released unexpectedly; labelled a bug, \
                 fixed by pull requests #74 and #75, \"Change script timeouts to be in \
                 milliseconds\"); 002 lines 514–523, the renewal that sets a holder's lease \
                 again",
        en: "The diamond rung, SET NX PX with a unique value and a compare-and-delete release, \
             a 3 s lease, 200 ms of work per sale, five buyers trying every 10 ms. As its work \
             starts, the first holder renews its lock to its 3 s lease, with a renewal that \
             checks the key still holds its value and sets the lease in milliseconds (PEXPIRE), \
             as Foundatio's lock renews through SET … PX. The client, though, passes the lease \
             in seconds: 3. The key now lives 3 ms; the next buyer's try finds it free and \
             takes the lock while the first holder works: an overlap, both read the same \
             stock, and one sale is written over. The first holder's release then finds the \
             second's value in the key and deletes nothing: its release is counted as lost. \
             Nothing failed: the renewal succeeded, and said so. A lease is a number and a \
             unit; a unit that lives only in a variable's name is a unit nobody checks. The \
             next chapter passes milliseconds, as Foundatio's fix does.",
        zh: "钻石方案：SET NX PX 配唯一值，释放时先比对再删除；租约 3 秒，每笔销售的业务耗时 \
             200 毫秒，五个买家每 10 毫秒尝试一次。第一个持锁者开始处理业务时，把锁续期到它的 \
             3 秒租约：续期先确认键里还是自己的值，再以毫秒为单位设置租约（PEXPIRE），就像 \
             Foundatio 的锁通过 SET … PX 续期那样。可客户端传进去的租约是以秒为单位的：3。\
             于是键只剩 3 毫秒；下一个买家一试就发现锁空着，在第一个持锁者还在处理业务时拿到了锁：\
             临界区重叠，两人读到同样的库存，其中一笔销售被覆盖，出现丢失更新。第一个持锁者释放时，\
             键里已经是第二个人的值，它什么也没删，这次释放被记为“锁已丢失”。没有任何一步报错：\
             续期成功了，也是这么回答的。租约是一个数加一个单位；只写在变量名里的单位，没有人会去核对。\
             下一章按毫秒传，就像 Foundatio 的修复那样。",
        ..BASE
    },
    Scenario {
        id: "renewal-in-milliseconds-holds",
        tier: Tier::LuaRelease,
        ttl_ms: UNIT_LEASE_MS,
        business_ms: UNIT_WORK_MS,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::RenewInMilliseconds, 0)),
        stock: UNIT_BUYERS as i64,
        buyers: UNIT_BUYERS,
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("lost_releases", 0.0),
            Check::eq("orders", UNIT_BUYERS as f64),
        ]),
        timing_sensitive: false,
        source: "Foundatio.Redis pull request #75 (\"Change script timeouts to be in \
                 milliseconds\", after issue #73, with a test that renews a lock and checks it \
                 does not expire early) and #74; 002 lines 514–523",
        en: "The same rung, lease, work, buyers and renewal as the first holder's work starts, \
             with the lease passed in milliseconds, 3000, as the script reads it and as \
             Foundatio passes it since its fix. The renewal gives the key its 3 s again, the \
             work takes 200 ms, and the five sell one at a time: no overlap, no update lost, \
             every release finds its own value. The renewal was never the fault; the number \
             was, and only a test that watches a renewed lock's lease (as the fix added) \
             catches a unit off by a thousand.",
        zh: "同样的方案、租约、业务耗时和买家，第一个持锁者开始处理业务时同样续期，但租约按毫秒传：\
             3000，正是脚本读取的单位，也是 Foundatio 修复之后的传法。续期让键重新有了 3 秒，\
             业务只要 200 毫秒，五个买家依次卖出：没有临界区重叠，没有丢失更新，每次释放都找到了\
             自己的值。错的从来不是续期，而是那个数；只有盯着续期之后租约还剩多少的测试\
             （修复里加的就是这样一个测试），才抓得住差了一千倍的单位。",
        ..BASE
    },
    Scenario {
        id: "replica-lag-blocks-synced-lock",
        tier: Tier::LuaRelease,
        wait_deadline_ms: LAG_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::ReplicaLag, LAG_MS)),
        stock: LAG_BUYERS as i64,
        buyers: LAG_BUYERS,
        store: StoreSetup::sentinel(1),
        expect: Expect::Figures(&[
            // Nothing sold while the replica lagged, everything once it was back.
            Check::gt("stall_ms", LAG_STALL_MS),
            Check::eq("orders", LAG_BUYERS as f64),
            Check::eq("sent_503", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "Redisson issues #4706 (after a failover, RLock could not be taken, \"None of \
                 slaves were synced\": the WAIT behind each lock write answered 0 while the \
                 replica caught up) and #4822 (the same, reproduced nine times in ten), with \
                 #4222 and #4646 (\"Only 0 of 1 slaves were synced\", the maintainer's advice \
                 to raise slavesSyncTimeout or set checkLockSyncedSlaves = false); the \
                 replication the articles leave asynchronous, 001 line 94 and 003 line 67",
        en: "The lock store of failover-sync-replicas: Sentinel, one replica, and every lock \
             write waiting (WAIT 1, at most 1 s) until the replica has it, or the acquire gives \
             the lock back and tries again. As the first buyer asks, the replica stops answering \
             for 3 s, a replica that lags behind; the primary is fine and nothing fails over. \
             Every lock write meanwhile lands on the primary, waits its second for a replica \
             that does not answer, and is given back: for 3 s nobody holds the lock and \
             nobody sells, though the lock store that holds the locks never went down. Once the \
             replica answers, the next write's WAIT comes back and the five items sell in \
             milliseconds. The remedy of failover-sync-replicas made the lock as available as \
             the slowest replica it waits for; a lag longer than the buyers' patience is a \
             503 for each of them. That is Redisson's \"None of slaves were synced\" (#4706, \
             #4822), and the maintainer's advice, to wait longer or not at all, is the trade \
             said plainly: WAIT buys a lock a failover keeps at the price of a lock a lag \
             blocks.",
        zh: "锁存储和 failover-sync-replicas 一样：哨兵、一个从节点，每次加锁写入后都等待（WAIT 1，\
             最多 1 秒）从节点收到，否则这次加锁就把锁还回去再试。第一个买家申请锁时，从节点 3 秒\
             不应答，就像一个落后的从节点；主节点好好的，也没有发生主从切换。这期间每次加锁都写到了\
             主节点上，然后等上一秒，等一个不应答的从节点，再把锁还回去：3 秒里没有人持有锁，\
             也没有人卖出，可存放锁的 Redis 从来没有宕机。从节点一恢复应答，下一次写入的 WAIT \
             就返回了，五件商品几毫秒内卖完。failover-sync-replicas 的对策让锁的可用性取决于它要等的\
             那个最慢的从节点；从节点落后的时间一旦超过买家愿意等的时间，每个买家都会收到 503。\
             这就是 Redisson 的“None of slaves were synced”（#4706、#4822），维护者的建议\
             （等得更久，或者干脆不等）把其中的取舍说得很清楚：WAIT 换来一把主从切换丢不掉的锁，\
             代价是一把从节点一落后就拿不到的锁。",
        ..BASE
    },
    Scenario {
        id: "zookeeper-reconnect-keeps-old-node",
        business_ms: RECONNECT_WORK_MS,
        fault: Some(Fault::new(FaultKind::ReconnectKeepsNode, RECONNECT_LINGER_MS)),
        stock: RECONNECT_BUYERS as i64,
        buyers: RECONNECT_BUYERS,
        expect: Expect::Figures(&[
            // Two held the lock at once: the first on a node its new session does not own.
            Check::gt("overlaps", 0.0),
            // Its release found that node gone with the old session.
            Check::eq("lost_releases", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "Apache Curator CURATOR-604 (\"Double locking issue while using \
                 InterProcessMutex lock code\", apache/curator issue #1121: after a session \
                 expired and the client reconnected with a new session, two clients held the \
                 lock, one of them on a node of the previous session that the servers had not \
                 yet deleted; still open on the tracker) and CURATOR-498 (apache/curator \
                 issue #1018: the protected-mode create, too, could take a closing session's \
                 node for its own, read from a follower before the session's end reached it); the recipe as 001 lines 255–480 tell it, a \
                 buyer holding the lock when its node is the lowest",
        en: "ZooKeeper's lock as Curator's InterProcessMutex takes it, one server, a 4 s \
             session timeout, 2 s of work per sale. The first buyer creates its node; right \
             then its instance gives its session up for a new one, as Curator does when it \
             declares a session lost after a long disconnect, while the server still holds \
             the old session, and its node, for one more second. The buyer goes on in line \
             under the new session and looks for its node by name, as InterProcessMutex \
             does: there it is, the lowest, so it holds the lock, on a node its session does \
             not own. A second later the server ends the old session and deletes the node; \
             for the buyer behind, that is the holder's release, and it takes the lock while \
             the first still works: an overlap, and its sale written over. The first holder's \
             release then finds nothing to delete: its lock was lost before it knew. A node is \
             the holder's only while its session is the holder's; the next chapter checks \
             whose it is.",
        zh: "ZooKeeper 锁，做法和 Curator 的 InterProcessMutex 一样：一台服务器，会话超时 4 秒，\
             每笔销售的业务耗时 2 秒。第一个买家刚创建好自己的节点，它所在的实例就放弃了这个会话，\
             换了一个新会话，就像 Curator 在长时间断连之后认定会话已丢失时所做的那样；可服务器\
             还把旧会话连同它的节点多保留了一秒。买家换上新会话继续排队，像 InterProcessMutex \
             那样按名字找自己的节点：节点还在，序号最小，于是它认为自己持有了锁，而这个节点\
             并不属于它现在的会话。一秒后服务器结束旧会话、删掉节点；在排在后面的买家看来，\
             这就是持锁者释放了锁，于是它拿到锁，而第一个持锁者还在处理业务：临界区重叠，\
             它的那笔销售被覆盖。第一个持锁者随后释放时，已经没有节点可删：锁在它知道之前\
             就丢了，这次释放被记为“锁已丢失”。节点只有在它的会话还是持锁者的会话时才属于持锁者；\
             下一章先核对节点属于哪个会话。",
        ..CURATOR
    },
    Scenario {
        id: "zookeeper-reconnect-checks-owner",
        business_ms: RECONNECT_WORK_MS,
        fault: Some(Fault::new(FaultKind::ReconnectChecksOwner, RECONNECT_LINGER_MS)),
        stock: RECONNECT_BUYERS as i64,
        buyers: RECONNECT_BUYERS,
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("lost_releases", 0.0),
            Check::eq("orders", RECONNECT_BUYERS as f64),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "Apache Curator CURATOR-696 (apache/curator pull request #500, \"Fix double \
                 leader for LeaderLatch\": before it takes the lead, the latch compares its \
                 node's ephemeral owner with its session now, and starts again when they \
                 differ; named on the tracker as the fix of CURATOR-620, the double leader \
                 reported beside CURATOR-604), which is the check this chapter's recipe makes \
                 for the lock; 001 lines 255–480",
        en: "The same server, work, buyers and session given up as the first buyer queues, \
             with the check Curator's LeaderLatch makes since CURATOR-696: before it counts \
             its node as its own, the buyer asks whose session owns it. The old one does, so \
             the node is not the buyer's: it deletes it and queues again under its new \
             session. Nobody waits for the old session to end, no node of it is left to be \
             mistaken for a holder, and the three sell one after another: no overlap, every \
             release finds its node. CURATOR-604 is still open on Curator's tracker; the \
             recipe here makes for the lock the check LeaderLatch makes.",
        zh: "同样的服务器、业务耗时和买家，第一个买家排队时同样换了会话，但这次加上 Curator 的 \
             LeaderLatch 自 CURATOR-696 起做的那个核对：在把节点当成自己的之前，买家先问清它属于\
             哪个会话。它属于旧会话，所以不是这个买家的：买家把它删掉，用新会话重新排队。\
             没有人要等旧会话结束，也没有旧会话的节点留下来被误认成持锁者，三个买家依次卖出：\
             没有临界区重叠，每次释放都找到了自己的节点。\
             CURATOR-604 在 Curator 的问题跟踪里仍未关闭；这里的实现为锁做了 LeaderLatch 做的那个核对。",
        ..CURATOR
    },
    Scenario {
        id: "zookeeper-release-lost-locks-out",
        wait_deadline_ms: LOST_DELETE_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::ReleaseDeleteLost, 0)),
        stock: LOST_DELETE_BUYERS as i64,
        buyers: LOST_DELETE_BUYERS,
        expect: Expect::Figures(&[
            // The first holder's sale, then nobody's.
            Check::eq("orders", 1.0),
            Check::eq("lock_timeouts", (LOST_DELETE_BUYERS - 1) as f64),
            Check::eq("overlaps", 0.0),
        ]),
        timing_sensitive: false,
        source: "Apache Curator CURATOR-678 (apache/curator issue #1193, \
                 \"InterProcessMutex#release caused inconsistency between zk node and local \
                 cache if encountering zk connection lost\": the delete of the lock node \
                 failed with the connection, the release dropped its record of the hold all \
                 the same, and every later acquire failed while the old node stayed; the \
                 reporter asks that the record go only once the delete succeeded) and \
                 CURATOR-486 (issue #1006: a release retried after such a failure finds no \
                 record to release); 001 line 394, the unlock that deletes the node",
        en: "ZooKeeper's lock, one server, a 4 s session timeout; three buyers for three \
             items, each waiting at most 1.5 s. The first holder sells and releases, but the \
             delete of its node is lost on a connection loss. Its release gives up on it and \
             forgets the hold, as InterProcessMutex#release did in CURATOR-678. The \
             connection comes back, and the session with it, alive: the server keeps the node, \
             since only a delete or the end of its session removes it. The two buyers behind \
             wait in line behind a node nobody holds and nobody will delete, and each gets a \
             503 at its deadline; so would every buyer after, until the instance restarts or a \
             reset deletes it. No lease frees a ZooKeeper lock: the node stands for as long as \
             its session lives, and a session that lives is the point. The next chapter's \
             release sends its delete again until it lands.",
        zh: "ZooKeeper 锁，一台服务器，会话超时 4 秒；三个买家抢三件商品，每人最多等 1.5 秒。\
             第一个持锁者卖出后释放锁，可删除节点的请求因为连接断开而丢失了。它的释放就此放弃，\
             把这次持有忘掉，就像 CURATOR-678 里 InterProcessMutex#release 的做法。连接恢复了，\
             会话也还活着：服务器保留这个节点，因为只有删除请求或者会话结束才能让它消失。\
             后面的两个买家排在一个没人持有、也没人会去删的节点后面，各自等到期限，收到 503；\
             之后的每个买家都一样，直到实例重启，或者重置把它删掉。ZooKeeper 的锁没有租约来\
             释放它：会话活多久，节点就留多久，而会话一直活着正是它要的。下一章的释放会把删除\
             请求一直重发，直到成功。",
        ..CURATOR
    },
    Scenario {
        id: "zookeeper-release-guaranteed",
        wait_deadline_ms: LOST_DELETE_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::ReleaseDeleteRetried, 0)),
        stock: LOST_DELETE_BUYERS as i64,
        buyers: LOST_DELETE_BUYERS,
        expect: Expect::Figures(&[
            Check::eq("orders", LOST_DELETE_BUYERS as f64),
            Check::eq("lock_timeouts", 0.0),
            Check::eq("overlaps", 0.0),
        ]),
        timing_sensitive: false,
        source: "Curator's guaranteed delete (CuratorFramework's delete().guaranteed(): a \
                 delete that fails with the connection is kept and sent again in the \
                 background until it succeeds, for as long as the client lives), which its \
                 lock recipe sends for its release; CURATOR-42 (apache/curator pull request \
                 #24: such a delete is retried only after a recoverable error, not after \
                 NoNode); 001 line 394",
        en: "The same server, buyers and 1.5 s wait, and the same delete lost on a connection \
             loss as the first holder releases. This time the delete is guaranteed, as \
             Curator's delete().guaranteed() is: a delete that failed with the connection is \
             sent again until it succeeds or the session ends (which deletes the node \
             anyway). The second try lands within milliseconds, the next buyer's watch fires, \
             and the three sell one after another. A release is a write like any other: one \
             that can be lost must be retried until it is known to have landed, and one sent \
             twice must not mind finding its work already done.",
        zh: "同样的服务器、买家和 1.5 秒的等待，第一个持锁者释放时，删除请求同样因为连接断开而丢失。\
             这一次删除是有保证的，就像 Curator 的 delete().guaranteed()：因为连接断开而失败的删除\
             会一直重发，直到成功或者会话结束（会话结束时节点反正也会被删掉）。第二次几毫秒内\
             就成功了，下一个买家的监听被触发，三个买家依次卖出。释放和别的写入一样：可能丢失的，\
             就要一直重试到确知它已经生效；重发了两次的，也要能接受发现事情已经办完。",
        ..CURATOR
    },
];
