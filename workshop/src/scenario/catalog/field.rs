//! From the field: failures that users of the real lock libraries reported in their issue
//! trackers, each reproduced on the fleet with the tier that behaves as the library does and
//! the fault that opens the window they hit, then judged from the resource store like every
//! other chapter.
//!
//! Sources: the issues and pull requests each chapter names (Redisson, redsync,
//! node-redlock), read in their own threads; none of the five articles tells these stories,
//! but each chapter names the lines where an article's code or word meets its failure.
//! The chapters on the default fleet come first, then the Redlock one (five masters), then
//! the two that need a lock store of their own, so a course runs them on three fleets.

use oversell_api::{Fault, FaultKind, LeaseMode, Persistence, Tier, WaitStrategy};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The late subscriber's chapters: two buyers, one holds the lock for `SUBSCRIBE_WORK_MS`
/// while the other fails its attempt and takes `SUBSCRIBE_GAP_MS` to subscribe, so the
/// release always falls inside the gap (the second buyer's failed attempt comes after the
/// first one's acquire, at most the work before its release). The deadline is under the
/// watchdog's 3 s lease, so a waiter that hears nothing sleeps to its deadline rather than to
/// the lease it saw, and gives up there: a 503 the resource store counts.
const SUBSCRIBE_WORK_MS: u64 = 300;
const SUBSCRIBE_GAP_MS: u64 = 600;
const SUBSCRIBE_DEADLINE_MS: u64 = 2_000;

/// The unlock-after-expiry chapters: work well past a lease that nothing renews, as the
/// ladder's slow-business chapters do, so every holder's release comes after its lease ended.
const EXPIRED_LEASE_MS: u64 = 200;
const EXPIRED_WORK_MS: u64 = 500;

/// The unchecked Redlock: the timings of `redlock-validity-runs-out` (a 50 ms lease, one
/// master stopped 80 ms), so the two read side by side, and work (100 ms) long enough that the
/// second holder, who gets in once the late majority is in, works while the first still does.
const UNCHECKED_LEASE_MS: u64 = 50;
const UNCHECKED_SLOW_MS: u64 = 80;
const UNCHECKED_WORK_MS: u64 = 100;

/// The starved watchdog: the timings of `reentrant-watchdog-freeze` (a 300 ms lease renewed
/// every 100 ms, a stall of 1.2 s after the read), so the pause and the busy CPU compare.
const STARVED_LEASE_MS: u64 = 300;
const STARVED_MS: u64 = 1_200;

/// The orphaned renewal: a 300 ms lease renewed every 100 ms, short work, and a deadline of
/// five leases, so a buyer who waits it out waited for a lock that only a watchdog kept. Six
/// buyers on two connections: the fault strikes one of the first two (the unlock it runs
/// first puts it a round trip behind, so among buyers fired at once it is often the last to
/// lock, with nobody left to stall), and the four sent after they are answered all come
/// after the orphan.
const ORPHAN_LEASE_MS: u64 = 300;
const ORPHAN_DEADLINE_MS: u64 = 1_500;

/// The renewal that meets an outage: a 6 s lease renewed every 2 s, work of 7 s (past the
/// first lease: only renewals keep it), and the lock store down for 3.3 s from the acquire.
/// The renewal at 2 s asks the pool for a connection to a dead store and is told no after the
/// pool's 1 s wait, at 3 s, while the store is still down (a store back within that wait
/// could hand it a connection another caller opened, and the renewal would not fail); the
/// one at 4 s finds it back, 2 s before the lease ends. The store writes its append-only file
/// before every reply, so the lock itself survives the restart: what is lost or kept is the
/// renewal alone. Two buyers: the second is the one who gets in, or does not.
const OUTAGE_LEASE_MS: u64 = 6_000;
const OUTAGE_WORK_MS: u64 = 7_000;
const OUTAGE_DOWN_MS: u64 = 3_300;
/// The second buyer's deadline: past the holder's 7 s of work even if it missed the release
/// message (the restart cut every subscription to the store) and waits out a whole lease first.
const OUTAGE_DEADLINE_MS: u64 = 15_000;

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "late-subscriber-stall",
        tier: Tier::ReentrantWatchdog,
        business_ms: SUBSCRIBE_WORK_MS,
        wait_deadline_ms: SUBSCRIBE_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::LateSubscriber, SUBSCRIBE_GAP_MS)),
        stock: 2,
        buyers: 2,
        expect: Expect::Figures(&[
            Check::eq("lock_timeouts", 1.0),
            Check::eq("orders", 1.0),
            Check::eq("sent_503", 1.0),
            Check::gt("max_latency_ms", (SUBSCRIBE_DEADLINE_MS - 100) as f64),
        ]),
        // The second buyer must find the lock busy: it has the first one's 300 ms of work.
        timing_sensitive: true,
        source: "Redisson issues #1763, #4744, #4982, #5070 and #5761: a waiter that missed \
                 the release message waited out its timeout though the lock was free (in #4982 \
                 the other request had locked and released within milliseconds, and this one \
                 still failed after 3 s; #5761, locks that miss unlock messages, was confirmed \
                 and fixed); #3018, the maintainer's answer to the race: Redisson subscribes, \
                 then tries once more, then waits, the order 004 lines 353–376 print (the \
                 failed attempt, the subscription at line 359, the attempt again at line 365, \
                 then a wait of at most the lease left): this waiter skips the attempt again",
        en: "Two buyers, two items, a lock held for 300 ms. The second buyer's attempt fails; \
             only then does it ask to hear release messages, and the subscription takes 600 ms \
             to come through. The holder releases and publishes inside that gap: the message \
             finds nobody listening. Subscribed at last, the buyer waits for a release without \
             looking at the lock again, and none will come: the lock stands free while it \
             sleeps to its 2 s deadline and gives up with a 503. One item stays unsold though \
             nobody held the lock for 1.7 s. Users of Redisson reported exactly this: a thread \
             that lost the lock to a holder who finished within milliseconds still timed out \
             seconds later. The remedy is the order of the steps, as the next chapter shows.",
        zh: "两个买家、两件商品，锁被持有 300 毫秒。第二个买家加锁失败之后才去订阅释放消息，\
             订阅要 600 毫秒才生效。持锁者恰好在这段空档里释放锁、发布了消息：消息发出去了，却没有人收到。\
             它订阅成功后只等释放消息，不再去看一眼锁，可消息不会再来了：锁一直空着，\
             它却睡到 2 秒的等待期限，最后返回 503。锁空了 1.7 秒，还是有一件商品没卖出去。\
             Redisson 的用户报告的正是这种情况：持锁者几毫秒就处理完业务并释放了锁，\
             等锁的线程却在几秒后超时失败。解决办法在于步骤的先后顺序，见下一章。",
        ..BASE
    },
    Scenario {
        id: "subscribe-first-no-stall",
        tier: Tier::ReentrantWatchdog,
        business_ms: SUBSCRIBE_WORK_MS,
        wait_deadline_ms: SUBSCRIBE_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::SubscribeGap, SUBSCRIBE_GAP_MS)),
        stock: 2,
        buyers: 2,
        expect: Expect::Figures(&[
            Check::eq("lock_timeouts", 0.0),
            Check::eq("orders", 2.0),
            Check::eq("oversold", 0.0),
            // The gap was paid (the fault struck), and the wait ended well before the deadline.
            Check::gt("max_latency_ms", SUBSCRIBE_GAP_MS as f64),
            Check::lt("max_latency_ms", (SUBSCRIBE_DEADLINE_MS - 500) as f64),
        ]),
        timing_sensitive: true,
        source: "Redisson issues #1763 and #3018: RedissonLock subscribes and then tries again \
                 before it waits, as 004 lines 359–376 print it; this fleet's waiters go one step \
                 further and stand in line for release messages before their first attempt",
        en: "The same two buyers and the same 600 ms gap after the failed attempt, but this \
             fleet's waiter was listening before it tried: it joins its instance's line for \
             release messages first, then attempts. The release published during the gap is \
             kept for it, and it takes the lock as soon as the gap ends: both items sold, no \
             timeout, the wait well under the deadline. Redisson closes the same window another \
             way, by trying once more after the subscription is confirmed; either order works, \
             only subscribe-after-fail-then-wait loses the message.",
        zh: "同样的两个买家，加锁失败后同样有 600 毫秒的空档，但本项目的等待者在尝试之前就已经在等释放消息了：\
             它先在本实例的队伍里登记，然后才去加锁。空档里发布的释放消息给它留着，\
             空档一结束它就拿到了锁：两件商品都卖出，没有超时，等待时间远低于期限。Redisson \
             用另一种办法关上同一个窗口：确认订阅之后再试一次加锁。两种顺序都可以，\
             只有“失败后才订阅、订阅后只等消息”会把消息弄丢。",
        ..BASE
    },
    Scenario {
        id: "unlock-after-expiry-plain-del",
        tier: Tier::AtomicExpiry,
        ttl_ms: 60,
        business_ms: 150,
        wait: WaitStrategy::Spin { sleep_ms: 5 },
        buyers: 12,
        expect: Expect::Figures(&[
            Check::gt("foreign_releases", 0.0),
            Check::gt("overlaps", 0.0),
            // Nobody was told: a DEL always succeeds.
            Check::eq("lost_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: "redsync pull request #143 and issue #107 (an unlock after the lock expired \
                 answers with an error, first a misleading \"lock already taken\", then its own \
                 ErrLockAlreadyExpired); Redisson issues #2269 and #4869 (unlock() throws \
                 IllegalMonitorStateException once the lease has run out): what a plain DEL \
                 would do in their place, the DEL of 000's gold tier (lines 210–295) and of \
                 003 lines 33–38",
        en: "The unlock both libraries refuse, done anyway: work (150 ms) outlasts the lease \
             (60 ms), the next buyer takes the lock, and the first one's plain DEL removes it, \
             letting a third in beside the second. The first holder hears nothing: a DEL \
             succeeds whoever's lock it deletes, so not one release is reported lost while \
             others' locks are deleted. That silence is what redsync and Redisson trade for an \
             error: their unlock compares the owner first, as the next chapter shows.",
        zh: "两个库都拒绝的解锁，这里照样执行：业务耗时 150 毫秒，租约只有 60 毫秒，下一个买家拿到锁，\
             第一个持锁者直接 DEL，把别人的锁删掉了，第三个买家趁机和第二个同时进来。\
             第一个持锁者什么也不知道：DEL 不管删的是谁的锁都会成功，所以别人的锁被删了，\
             却没有一次释放被报告为“锁已丢失”。redsync 和 Redisson 宁可报错，也不这样悄无声息：\
             它们解锁前先比对持锁者，见下一章。",
        ..BASE
    },
    Scenario {
        id: "unlock-after-expiry-refused",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: EXPIRED_LEASE_MS,
        business_ms: EXPIRED_WORK_MS,
        lease: LeaseMode::Fixed,
        buyers: 12,
        expect: Expect::Figures(&[
            Check::gt("lost_releases", 0.0),
            Check::eq("foreign_releases", 0.0),
            // The error comes only at the unlock, after the harm: a second holder got in.
            Check::gt("overlaps", 0.0),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #2269 (lock(15, SECONDS), then unlock() in finally throws \
                 IllegalMonitorStateException, \"attempt to unlock lock, not locked by current \
                 thread\"; a commenter reproduced it with a tiny lockWatchdogTimeout) and #4869; \
                 redsync pull request #143 (the same unlock returns ErrLockAlreadyExpired); the \
                 unlock 004 lines 505–513 print turns the script's nil into that exception, and \
                 002 lines 503–505 throw their own when the lock is gone",
        en: "Redisson's lock with a lease of its own, as in the report: lock(leaseTime) starts \
             no watchdog, the 500 ms of work outlasts the 200 ms lease, and the unlock in \
             finally finds the hash gone or someone else's. Its script compares the owner, so \
             it deletes nothing that is not its own: no foreign release, every late unlock \
             counted as lost, which is where Redisson throws IllegalMonitorStateException and \
             redsync returns ErrLockAlreadyExpired. The error is honest, but it comes after the \
             fact: a second holder had already worked beside the first. A longer lease, or no \
             lease at all (the watchdog), is the answer the maintainers gave.",
        zh: "Redisson 的锁在加锁时指定了租约，和报告里一样：lock(leaseTime) 不启动看门狗，500 毫秒的业务\
             超过了 200 毫秒的租约，finally 里的 unlock 发现哈希已经没了，或者已经是别人的。\
             它的脚本会比对持锁者，所以不会删掉不属于自己的锁：没有误删，每次迟到的解锁都记为“锁已丢失”，\
             Redisson 正是在这里抛出 IllegalMonitorStateException，redsync 则返回 \
             ErrLockAlreadyExpired。这个报错是诚实的，却来得太晚：第二个持锁者早已和第一个同时处理业务。\
             维护者给出的答案是加长租约，或者干脆不设租约、交给看门狗续期。",
        ..BASE
    },
    Scenario {
        id: "watchdog-starved-by-cpu",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: STARVED_LEASE_MS,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::CpuStarve, STARVED_MS)),
        buyers: 30,
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("lost_updates", 0.0),
            // The holder's unlock found its lock gone: Redisson's exception in #2665.
            Check::gt("lost_releases", 0.0),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #2665 (IllegalMonitorStateException at unlock, well inside the \
                 30 s watchdog timeout, on a server whose CPU had been at 100% for minutes; the \
                 maintainer's answer: the watchdog's thread was not scheduled, so the lease \
                 ran out); the renewal as a timer task every third of the lease, 001 lines \
                 205–231 and 002 lines 537–544, offered against pauses by 002 line 644",
        en: "The holder reads the stock, and then its instance's CPU is taken: every worker \
             of its async runtime spins on CPU-bound work for 1.2 s. The process is alive and \
             busy, not paused, but the watchdog's next renewal is a task like any other and \
             waits for a worker that never comes free. The 300 ms lease runs out, buyers on the \
             other instances take the lock and sell, and when the CPU comes back the holder \
             writes its stale stock over theirs; its unlock then finds the lock gone, counted \
             as a lost release, where Redisson throws IllegalMonitorStateException. A \
             watchdog only renews if it gets to run: a busy machine stalls it as surely as a \
             pause does, and only a fencing token the stock checks refuses the late write.",
        zh: "持锁者读完库存后，它所在实例的 CPU 被占满：异步运行时的每个工作线程都在做 1.2 秒的\
             计算密集型任务。进程没有停，一直在忙，可看门狗的下一次续期也只是一个普通任务，\
             要等工作线程空出来，而工作线程一直不空。300 毫秒的租约到期，其他实例上的买家拿到锁\
             接着卖；CPU 回来后，持锁者用旧的库存值覆盖了别人的写入（陈旧写入）。它解锁时发现锁已经\
             没了，记为“锁已丢失”，Redisson 在这里抛出 IllegalMonitorStateException。看门狗只有\
             被调度到才能续期：机器忙不过来和进程停顿一样会让它停下，只有由库存校验的围栏令牌才能\
             挡住迟到的写入。",
        ..BASE
    },
    Scenario {
        id: "renewal-outlives-unlock",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: ORPHAN_LEASE_MS,
        business_ms: 20,
        wait_deadline_ms: ORPHAN_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::RenewalOutlivesRelease, 0)),
        stock: 6,
        buyers: 6,
        connections: Some(2),
        expect: Expect::Figures(&[
            // The early unlock found nothing to release.
            Check::eq("lost_releases", 1.0),
            // At least the four sent later waited five leases for a lock nobody held.
            Check::gt("lock_timeouts", 3.0),
            Check::lt("orders", 2.0),
            Check::gt("max_latency_ms", (ORPHAN_DEADLINE_MS - 100) as f64),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #7272 (after an interrupted lockInterruptibly(), the unlock's \
                 cancel of the renewal can run before the acquire schedules it; the key then \
                 stays in Redis, its TTL pushed back up to the watchdog timeout again and again, \
                 with no holder) and pull request #7277, which proposes to register the renewal \
                 before the SET and cancel it before the unlock; 004 lines 495–518 print the \
                 unlock that cancels the renewal only once its reply is in; 001 line 152 (the \
                 watchdog said to guarantee no deadlock) and 002 lines 451–457 (a tryLock() \
                 that keeps a lock it reports not taken)",
        en: "One buyer's unlock overtakes its own acquire, as the finally block of a lock call \
             interrupted while its SET was on the wire: the unlock runs first and finds \
             nothing (counted as a lost release), then the SET lands and takes the lock. The \
             buyer has left believing it holds nothing, but its acquire started a watchdog, and \
             nothing stops it: every 100 ms it pushes the 300 ms lease back up, for nobody. \
             Every buyer after it waits its whole 1.5 s deadline, five leases, and gets a 503 \
             (six buyers on two connections: at most one sells, before the orphan is taken); \
             the lease that was meant to free a lock whose holder is gone never runs out. Only \
             a reset, which deletes the lock, ends it (the renewal then finds nothing and \
             stops). The fix proposed upstream ties the renewal to the hold: start it before the lock is \
             taken and cancel it before the unlock is sent, as this fleet drops it with the hold. \
             001 (line 152) says the watchdog guarantees no deadlock: here the watchdog is the \
             deadlock. 002's tryLock() (lines 451–457) makes the same orphan another way: it \
             takes the lock, starts the renewal and returns false, so a caller that unlocks \
             only on true leaves a lock renewed for ever.",
        zh: "一个买家的解锁跑到了它自己的加锁前面，就像加锁调用在 SET 已经发出、还没到达 Redis 时被中断，\
             finally 里的解锁先执行了：解锁什么也没找到（记为“锁已丢失”），随后 SET 才到达，\
             拿到了锁。买家已经离开，以为自己什么也没持有，可它的加锁启动了看门狗，没有人让它停下：\
             它每 100 毫秒把 300 毫秒的租约续回去，续的却是一把没有持锁者的锁。之后的每个买家都等满 1.5 秒的\
             等待期限（五个租约），收到 503（六个买家用两个连接，最多只有一个能在孤儿锁出现之前卖出）；租约本该让失去持锁者的锁自动释放，现在却永远不会到期。\
             只有重置删掉这把锁才能结束（续期随后找不到锁，自己停下）。上游提出的修复把续期和\
             持有绑在一起：在加锁之前登记续期，在发出解锁之前取消，本项目则让续期随持有一起结束。\
             001（第 152 行）说看门狗保证不会死锁：在这里，死锁恰恰是看门狗造成的。\
             002 的 tryLock()（第 451–457 行）换一条路造出同样的孤儿锁：\
             它拿到锁、启动续期，却返回 false，只在返回 true 时才解锁的调用者就留下一把永\
             远有人续期的锁。",
        ..BASE
    },
    Scenario {
        id: "redlock-validity-unchecked",
        tier: Tier::Redlock,
        ttl_ms: UNCHECKED_LEASE_MS,
        business_ms: UNCHECKED_WORK_MS,
        fault: Some(Fault::on_nodes(
            FaultKind::ValidityUnchecked,
            UNCHECKED_SLOW_MS,
            1,
        )),
        stock: 1,
        buyers: 4,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("lost_releases", 0.0),
            // Nothing given back: the check that would have refused the lock never ran.
            Check::eq("validity_lapsed", 0.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "node-redlock issue #296 (after retries, acquire() handed back a lock whose \
                 expiration was already in the past, and only using()'s first extension \
                 noticed, throwing \"Cannot extend an already-expired lock\"), issue #299 (the \
                 expiry counted from the start of the whole acquire, across its retries) and \
                 pull request #369 (check the validity at acquire, as the published algorithm \
                 asks, and fail); Redlock as redis.io publishes it, step 3; the check this \
                 client skips is 001 lines 100–104 and 002 lines 612–615 (t2 − t1 against the \
                 lease)",
        en: "The same slow vote as redlock-validity-runs-out: one master of five stopped for \
             80 ms while the next buyer asks for a 50 ms lock. Four masters grant at once, the \
             fifth late, and by then the lease has run out on the four. That chapter's client \
             gives the majority back; this one does not check, as a node-redlock user who \
             takes what acquire() returns without looking at its expiration, which in #296 was \
             already in the past. It works under a lock that no longer exists: the next buyer \
             wins the four expired masters, and two holders work at once. The first learns \
             nothing until its release finds too few masters holding its value (a lost \
             release), after the harm. The check costs one subtraction; node-redlock's #369 \
             proposes to make acquire() fail instead of handing such a lock over.",
        zh: "和 redlock-validity-runs-out 一样的慢投票：下一个买家申请租约 50 毫秒的锁时，\
             五个主节点中的一个被暂停 80 毫秒。四个主节点立刻同意，第五个迟迟才答，这时租约在那四个\
             节点上已经到期。那一章的客户端放弃了这个多数；这一章的客户端不检查，就像 \
             node-redlock 的用户直接用 acquire() 返回的锁而不看它的到期时间，在 #296 里这个时间\
             早已过去。它在一把已经不存在的锁下处理业务：下一个买家在那四个已到期的主节点上拿到多数，\
             两个持锁者同时处理业务。第一个持锁者直到释放时才发现持有它的值的主节点不够多\
             （锁已丢失），可损害已经造成了。这个检查只是一次减法；node-redlock 的 #369 \
             提议让 acquire() 直接失败，而不是交出这样一把锁。",
        ..BASE
    },
    Scenario {
        id: "renewal-gives-up-after-outage",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: OUTAGE_LEASE_MS,
        business_ms: OUTAGE_WORK_MS,
        wait_deadline_ms: OUTAGE_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::RenewalGivesUp, OUTAGE_DOWN_MS)),
        stock: 2,
        buyers: 2,
        store: StoreSetup::single(Persistence::Always),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            // The holder's unlock found the lock gone, or someone else's.
            Check::gt("lost_releases", 0.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #775 (a lock held indefinitely under the watchdog vanished after \
                 a master/slave failover: the renewal that timed out during the failover was \
                 logged, \"Can't update lock ... expiration\", and never scheduled again); the \
                 same stop after a connection error in #2515 and #3194; the code 001 lines \
                 200–236 print stops the same way (lines 216–219), against line 151's word that \
                 a held lock never expires; 002 lines 537–544 renew only after a success too",
        en: "The lock store's Redis dies right after the holder took the lock and is back 3.3 s \
             later, with the lock: its append-only file is written before every reply. The \
             watchdog's renewal due at 2 s meets the dead store and fails, and this watchdog, \
             as Redisson's did in the report, only schedules the next renewal after a success: \
             it stops. Nothing renews the lease again. The holder works on for 7 s, its 6 s \
             lease runs out, the waiting buyer takes the lock and works beside it, and the \
             holder's unlock finds the lock gone. The store was back with over 2 s of lease left; \
             the lock was lost to the renewal that did not come back. \
             The Redisson code 001 prints does just this (lines 216–219): a failed renewal \
             logs \"Can't update lock … expiration\" and returns without scheduling another, \
             so 001's word (line 151) that a held lock's key never expires is true only while \
             every renewal succeeds. 002's own renewal (lines 537–544) stops the same way: it \
             schedules the next one only after a success.",
        zh: "持锁者刚拿到锁，锁存储的 Redis 就崩溃了，3.3 秒后带着这把锁回来：它在每次应答之前都先写\
             追加日志（AOF）。看门狗在 2 秒时的续期碰上了宕机的存储，失败了；而这个看门狗和报告里的 \
             Redisson 一样，只有续期成功才安排下一次：它就此停下，再也没有人续期。持锁者还要处理 7 秒\
             业务，6 秒的租约到期，等待的买家拿到锁，和它同时处理业务；持锁者解锁时发现锁已经没了。\
             存储回来时租约还剩两秒多，锁丢就丢在续期停下之后再也没有恢复。\
             001 贴出的 Redisson 代码正是这样（第 216–219 行）：\
             续期失败只记一行“Can't update lock … expiration”的日志就\
             返回，不再安排下一次；所以 001（第 151 行）说的“一直持有锁，键就不会过期”，\
             只在每次续期都成功时才成立。002 自己写的续期（第 537–544 行）\
             也一样：只有续期成功才安排下一次。",
        ..BASE
    },
    Scenario {
        id: "renewal-retries-after-outage",
        tier: Tier::ReentrantWatchdog,
        ttl_ms: OUTAGE_LEASE_MS,
        business_ms: OUTAGE_WORK_MS,
        wait_deadline_ms: OUTAGE_DEADLINE_MS,
        fault: Some(Fault::new(FaultKind::RenewalOutage, OUTAGE_DOWN_MS)),
        stock: 2,
        buyers: 2,
        store: StoreSetup::single(Persistence::Always),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("lost_releases", 0.0),
            Check::eq("orders", 2.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "Redisson issue #775 and its fix (a failed renewal is scheduled again), against \
                 the renewal 001 lines 216–219 print; this fleet's watchdog tries again at the \
                 next tick",
        en: "The same outage under the same hold, with this fleet's watchdog: the renewal at \
             2 s fails, the one at 4 s finds the store back and the lock in it, and the lease \
             is pushed on as before. The holder finishes its 7 s of work under its lock, the \
             second buyer takes it after the release, and nobody's unlock finds it lost. A \
             watchdog must treat a failed renewal as a reason to try again while the lease \
             lasts, and stop only when the lock is no longer its holder's.",
        zh: "同样的宕机、同样的持有，换成本项目的看门狗：2 秒时的续期失败，4 秒时的续期发现存储回来了、\
             锁也还在，租约照常续上。持锁者在自己的锁下处理完 7 秒业务，第二个买家在它释放之后才拿到锁，\
             没有人解锁时发现锁已丢失。续期失败了，只要租约还没到期就该再试；\
             只有锁已不再属于持锁者时，看门狗才该停下。",
        ..BASE
    },
];
