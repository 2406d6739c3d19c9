//! The questions of the ladder's chapters: one Redis, `none` … `atomic-deduct`, `redis-down`.

use super::shared::{
    AVAILABILITY, CRASH, CRASH_WORST_FIRST, LATE_WRITE, LATE_WRITE_FENCED_REFUSED_LAST,
    LATE_WRITE_LOST_FIRST, OVERSOLD, RELEASE_WORST_FIRST,
};
use super::{ask, Choice, Family, Question};

/// A sale that takes its own lock again in a nested step.
const NESTED: Family = Family {
    reads: &["lock_timeouts", "oversold"],
    options: &[
        Choice {
            en: "Every buyer is served: the lock lets its own holder in again",
            zh: "每个买家都买到了：锁认得自己的持锁者，放它再次进入",
            sources: &[
                "belief: a lock is held by a thread, and a thread may enter twice — \
                        held by Java developers used to synchronized and ReentrantLock",
            ],
            rule: "oversold == 0 and lock_timeouts == 0",
        },
        Choice {
            en: "The sale waits for itself: buyers time out (503) and items stay unsold",
            zh: "销售被自己挡住：买家等到超时（503），商品卖不出去",
            sources: &["002:346-350"],
            rule: "oversold == 0 and lock_timeouts > 0",
        },
        Choice {
            en: "The nested step gets in beside another buyer: items are oversold",
            zh: "嵌套的那一步和别的买家同时进入：出现超卖",
            sources: &[
                "belief: a nested acquire that fails is skipped and the step runs \
                        unlocked — held where tryLock's result goes unchecked",
            ],
            rule: "oversold > 0",
        },
    ],
};

/// Fair against the race: how evenly the clients share the lock, over the race's share.
const FAIR: Family = Family {
    reads: &["acquires_vs_race"],
    options: &[
        Choice {
            en: "Less evenly than the race (under 0.9× its share)",
            zh: "比抢锁更不均匀（不到抢锁的 0.9 倍）",
            sources: &[
                "belief: a queue in Redis costs round trips, and the slow get fewer \
                        turns — held by those who measured fair locks as slow",
            ],
            rule: "acquires_vs_race < 0.9",
        },
        Choice {
            en: "About as evenly as the race (0.9× to 1.1×)",
            zh: "和抢锁差不多（是抢锁的 0.9 倍到 1.1 倍）",
            sources: &[
                "001:105",
                "belief: contention evens itself out over many sales — held \
                        by those who see no need for a fair lock",
            ],
            rule: "acquires_vs_race >= 0.9 and acquires_vs_race <= 1.1",
        },
        Choice {
            en: "Clearly more evenly than the race (over 1.1×)",
            zh: "明显比抢锁均匀（是抢锁的 1.1 倍以上）",
            sources: &["001:244-246"],
            rule: "acquires_vs_race > 1.1",
        },
    ],
};

/// The fair queue with a dead waiter in it: what the buyers behind it get. The stall is timed
/// itself (`stall_ms`, the widest gap between two sales in a row): 300 buyers in one line take
/// about a second on their own, and the slowest buyer's wait cannot tell a stall from a long
/// line.
const DEAD_WAITER: Family = Family {
    reads: &["lock_timeouts", "stall_ms"],
    options: &[
        Choice {
            en: "Nothing: the line moves on at once; no gap between two sales reaches \
                 0.3 s",
            zh: "没有影响：队伍马上往前走；相邻两笔成交之间的空档都不到 0.3 秒",
            sources: &[
                "belief: a queue skips a client that does not answer — held by those \
                        who picture a lock queue as a server's accept queue",
            ],
            rule: "lock_timeouts == 0 and stall_ms < 300",
        },
        Choice {
            en: "The line stalls: no sale for 0.3 s or more, then it moves on; nobody times \
                 out",
            zh: "队伍停滞：0.3 秒或更久没有成交，然后继续往前走；没有人等到超时",
            sources: &["001:244-246"],
            rule: "lock_timeouts == 0 and stall_ms >= 300",
        },
        Choice {
            en: "The line stays stuck: buyers behind it time out (503)",
            zh: "队伍一直卡住：后面的买家都等到超时（503）",
            sources: &["000:155"],
            rule: "lock_timeouts > 0",
        },
    ],
};

/// No lock, one script: right or not, and how fast against a lock on the same load.
const DEDUCT: Family = Family {
    reads: &["throughput_vs_lua_release", "oversold"],
    options: &[
        Choice {
            en: "It oversells: without a lock nothing stops the race",
            zh: "会超卖：没有锁，就挡不住并发",
            sources: &["001:23", "000:55"],
            rule: "oversold > 0",
        },
        Choice {
            en: "No oversell, but no faster than lua-release (1× its throughput or less)",
            zh: "不超卖，但并不更快：吞吐量最多是 lua-release 的 1 倍",
            sources: &[
                "belief: a script blocks Redis while it runs, so it costs what a lock \
                        costs — held by those warned off long Lua scripts",
            ],
            rule: "oversold == 0 and throughput_vs_lua_release <= 1",
        },
        Choice {
            en: "No oversell, and faster (over 1× lua-release), but under 2×",
            zh: "不超卖，也更快：吞吐量是 lua-release 的 1 倍以上、2 倍以下",
            sources: &[
                "belief: one script saves the lock's round trips, but Redis runs one script \
                        at a time, so the gain stays modest — held by those who see Redis as \
                        the bottleneck",
            ],
            rule:
                "oversold == 0 and throughput_vs_lua_release > 1 and throughput_vs_lua_release < 2",
        },
        Choice {
            en: "No oversell, and 2× lua-release's throughput or more",
            zh: "不超卖，而且吞吐量是 lua-release 的 2 倍或更多",
            sources: &[
                "belief: a lock costs three round trips a sale and a script one, so \
                        about 3× — held by those who count round trips only",
            ],
            rule: "oversold == 0 and throughput_vs_lua_release >= 2",
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "none-race",
        "No lock at all: the stock is a counter in Redis; each sale reads it, and if it is \
         above zero writes it back one less. 300 buyers at once, through three instances, for \
         100 items. How many items are sold beyond the stock?",
        "完全不加锁：库存是 Redis 里的一个计数器，每次销售先读它，大于零就写回减一后的值。\
         300 个买家经三个实例同时抢 100 件商品。会超卖多少件？",
        &OVERSOLD,
    ),
    ask(
        "local-one-instance",
        "A mutex inside the process, and one instance serves all 300 buyers. How many items \
         are sold beyond the stock?",
        "进程内的本地锁，只有一个实例处理全部 300 个买家。会超卖多少件？",
        &OVERSOLD,
    ),
    ask(
        "local-three-instances",
        "The same in-process mutex, but nginx spreads the 300 buyers over three instances. How \
         many items are sold beyond the stock?",
        "同样的本地锁，但 nginx 把 300 个买家分发到三个实例。会超卖多少件？",
        &OVERSOLD,
    ),
    ask(
        "setnx-crash",
        "Bronze: SETNX takes the lock, DEL frees it, and nothing else touches the key. The \
         holder's process crashes inside the critical section; each buyer waits at most 1.5 s. \
         What do the other buyers get?",
        "青铜方案：SETNX 加锁、DEL 解锁，此外再没有任何命令操作这个键。持锁进程在临界区里崩溃；\
         每个买家最多等 1.5 秒。其他买家会怎样？",
        &CRASH_WORST_FIRST,
    ),
    ask(
        "setnx-expire-crash-between",
        "Silver: SETNX, then EXPIRE sets a 1 s lease. The holder crashes after SETNX and \
         before EXPIRE. What do the other buyers get?",
        "白银方案：先 SETNX，再用 EXPIRE 设 1 秒的租约。持锁者执行完 SETNX、还没执行 EXPIRE \
         就崩溃了。其他买家会怎样？",
        &CRASH_WORST_FIRST,
    ),
    ask(
        "setnx-expire-crash-after",
        "Silver again, and the holder crashes after EXPIRE: the 1 s lease is set. What do the \
         other buyers get?",
        "还是白银方案，这次持锁者在 EXPIRE 之后崩溃：1 秒的租约已经设上了。其他买家会怎样？",
        &CRASH_WORST_FIRST,
    ),
    ask(
        "atomic-expiry-slow-business",
        "Gold: one command, SET NX PX, takes the lock with a 60 ms lease; every buyer writes \
         the same value, and DEL frees the lock after the work. The work takes 150 ms. What \
         happens?",
        "黄金方案：一条 SET NX PX 命令加锁，租约 60 毫秒；所有买家写入的值都一样，业务做完用 DEL \
         解锁。业务耗时 150 毫秒。会发生什么？",
        &RELEASE_WORST_FIRST,
    ),
    ask(
        "uuid-owner-release-gap",
        "Platinum: each holder writes its own UUID; its release is a GET that compares the \
         value, then a DEL. The lease is 600 ms. A holder works 400 ms, then makes its GET, \
         and pauses 450 ms between its GET and its DEL. What happens?",
        "铂金方案：每个持锁者写入自己的 UUID；释放锁时先 GET 比对值，再 DEL。租约 600 毫秒。\
         持锁者先处理 400 毫秒业务，再执行 GET，然后在 GET 和 DEL 之间停顿 450 毫秒。会发生什么？",
        &RELEASE_WORST_FIRST,
    ),
    ask(
        "lua-release-slow-business",
        "Diamond: the compare and the delete in one Lua script, with a 60 ms lease and 150 ms \
         of work. What happens?",
        "钻石方案：比对和删除放在同一段 Lua 脚本里，租约 60 毫秒，业务耗时 150 毫秒。\
         会发生什么？",
        &RELEASE_WORST_FIRST,
    ),
    ask(
        "lua-release-normal",
        "Diamond again: 300 buyers for 100 items through three instances, a 3 s lease, and \
         5 ms of work; each holder then releases with the compare-and-delete script. What \
         happens?",
        "还是钻石方案：300 个买家经三个实例抢 100 件商品，租约 3 秒，业务耗时 5 毫秒；\
         每个持锁者做完后用先比对再删除的脚本释放锁。会发生什么？",
        &RELEASE_WORST_FIRST,
    ),
    ask(
        "reentrant-watchdog-slow-business",
        "Redisson's lock() with its watchdog: a 600 ms lease, which the watchdog renews every \
         200 ms (a third of the lease) while the holder runs; the work takes 1.2 s. What \
         happens?",
        "Redisson 的 lock() 加看门狗：租约 600 毫秒，持锁者运行期间看门狗每 200 毫秒（租约的三分之一）\
         续期一次；业务耗时 1.2 秒。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "reentrant-fixed-lease-slow-business",
        "The same lock and the same 1.2 s of work, with a fixed 600 ms lease, as \
         lock(leaseTime) gives. What happens?",
        "同一把锁、同样 1.2 秒的业务，租约固定为 600 毫秒，就像 lock(leaseTime) 那样。\
         会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "lua-release-nested",
        "Each sale calls a helper that takes the same lock again (lua-release: SET NX). Ten \
         buyers, ten items. What happens?",
        "每次销售都调用一个辅助方法，它又去获取同一把锁（lua-release：SET NX）。\
         十个买家，十件商品。会发生什么？",
        &NESTED,
    ),
    ask(
        "reentrant-nested",
        "The same sale and the same helper, now with Redisson's lock() in place of SET NX. \
         Fifty buyers, fifty items. What happens?",
        "同样的销售、同样的辅助方法，这次用 Redisson 的 lock() 代替 SET NX。五十个买家，\
         五十件商品。会发生什么？",
        &NESTED,
    ),
    ask(
        "reentrant-watchdog-crash-holding",
        "Redisson's lock() with its watchdog and a 1 s lease; the holder's process crashes \
         inside the critical section. What do the other buyers get?",
        "带看门狗的 Redisson lock()，租约 1 秒；持锁进程在临界区里崩溃。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "reentrant-watchdog-freeze",
        "Redisson's lock() with its watchdog renewing a 300 ms lease every 100 ms. The \
         holder's whole process, watchdog thread included, freezes for 1.2 s after reading the \
         stock, as a stop-the-world GC pause does. What happens?",
        "带看门狗的 Redisson lock()，看门狗每 100 毫秒为 300 毫秒的租约续期一次。持锁进程读完库存后\
         整体冻结 1.2 秒（包括看门狗线程），就像一次 stop-the-world 的 GC 停顿。会发生什么？",
        &LATE_WRITE_LOST_FIRST,
    )
    .paired("redlock-freeze"),
    ask(
        "fair-vs-race",
        "64 clients, 20 sales each: first they race for the lock (reentrant-watchdog), then \
         they take fair's queue in Redis. How evenly does fair share the lock, against the \
         race?",
        "64 个客户端，每个下 20 单：先抢锁（reentrant-watchdog），再改用 fair 在 Redis 里排队。\
         与抢锁相比，fair 把锁分得有多均匀？",
        &FAIR,
    ),
    ask(
        "fair-dead-waiter",
        "A buyer queues for the fair lock, then dies in line: it neither takes its turn nor \
         leaves the queue. What do the buyers behind it get?",
        "一个买家在公平锁的队伍里排上了号，随后进程死掉：既没来取锁，也没有退出队伍。\
         排在它后面的买家会怎样？",
        &DEAD_WAITER,
    ),
    ask(
        "fenced-freeze",
        "The same 1.2 s freeze under a 300 ms lease, but every grant of the lock comes with a \
         fencing token, a number one higher than the last grant's, and the holder sends its \
         token with each write to the stock. What happens?",
        "同样冻结 1.2 秒，租约 300 毫秒，但每次发放锁都附带一个围栏令牌（fencing token）：\
         比上一次发放的编号大 1，持锁者每次写库存都带上自己的令牌。会发生什么？",
        &LATE_WRITE_FENCED_REFUSED_LAST,
    )
    .paired("fenced-holder-cut-off"),
    ask(
        "atomic-deduct",
        "The stock is a counter in Redis. No lock at all: each sale is one Lua script that \
         decrements the counter if it is above zero and records the order. How does it do \
         against lua-release on the same load?",
        "库存是 Redis 里的一个计数器。完全不用锁：每次销售执行一段 Lua 脚本，库存大于零就扣减并\
         记录订单。和同样负载下的 lua-release 相比如何？",
        &DEDUCT,
    ),
    ask(
        "redis-down",
        "The one Redis that holds the locks dies as the sale starts and is back 8 s later; each \
         buyer waits at most 2 s. What do the buyers get?",
        "存放锁的唯一一个 Redis 在开卖时宕机，8 秒后才恢复；每个买家最多等 2 秒。这段时间里，\
         买家的请求结果如何？",
        &AVAILABILITY,
    ),
];
