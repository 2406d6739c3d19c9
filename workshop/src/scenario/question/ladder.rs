//! The questions of the ladder's chapters: one Redis, `none` … `atomic-deduct`, `redis-down`.

use super::shared::{AVAILABILITY, CRASH, LATE_WRITE, OVERSOLD, RELEASE};
use super::{ask, fig, Choice, Family, Question};

/// A sale that takes its own lock again in a nested step.
const NESTED: Family = Family {
    reads: &["oversold", "lock_timeouts"],
    options: &[
        Choice {
            en: "Every buyer is served: the lock lets its own holder in again",
            zh: "每个买家都得到服务：锁认得自己的持锁者，放它再次进入",
            holds: |f| fig(f, "oversold") == 0.0 && fig(f, "lock_timeouts") == 0.0,
        },
        Choice {
            en: "The sale waits for itself: buyers time out (503) and items stay unsold",
            zh: "销售在等它自己：买家超时（503），商品卖不出去",
            holds: |f| fig(f, "oversold") == 0.0 && fig(f, "lock_timeouts") > 0.0,
        },
        Choice {
            en: "The nested step gets in beside another buyer: items are oversold",
            zh: "嵌套的步骤和别的买家同时进入：有商品超卖",
            holds: |f| fig(f, "oversold") > 0.0,
        },
    ],
};

/// Fair against the race: how evenly the clients share the lock, over the race's share.
const FAIR: Family = Family {
    reads: &["acquires_vs_race"],
    options: &[
        Choice {
            en: "Less evenly than the race",
            zh: "比抢锁更不均匀",
            holds: |f| fig(f, "acquires_vs_race") < 0.9,
        },
        Choice {
            en: "About as evenly as the race (within 10%)",
            zh: "和抢锁差不多（相差不到 10%）",
            holds: |f| (0.9..=1.1).contains(&fig(f, "acquires_vs_race")),
        },
        Choice {
            en: "Clearly more evenly than the race (over 10% more)",
            zh: "明显比抢锁均匀（高出 10% 以上）",
            holds: |f| fig(f, "acquires_vs_race") > 1.1,
        },
    ],
};

/// The fair queue with a dead waiter in it: what the buyers behind it get.
const DEAD_WAITER: Family = Family {
    reads: &["lock_timeouts", "max_latency_ms"],
    options: &[
        Choice {
            en: "Nothing: the line moves on at once, nobody waits a second",
            zh: "没有影响：队伍立刻往前走，没有谁等上一秒",
            holds: |f| fig(f, "lock_timeouts") == 0.0 && fig(f, "max_latency_ms") <= 1_000.0,
        },
        Choice {
            en: "The line stalls over a second, then moves on; nobody times out",
            zh: "队伍停顿一秒以上，然后继续；没有人等到超时",
            holds: |f| fig(f, "lock_timeouts") == 0.0 && fig(f, "max_latency_ms") > 1_000.0,
        },
        Choice {
            en: "The line stays stuck: buyers behind it time out (503)",
            zh: "队伍一直卡住：后面的买家等到超时（503）",
            holds: |f| fig(f, "lock_timeouts") > 0.0,
        },
    ],
};

/// No lock, one script: right or not, and how fast against a lock on the same load.
const DEDUCT: Family = Family {
    reads: &["oversold", "throughput_vs_lua_release"],
    options: &[
        Choice {
            en: "It oversells: without a lock nothing stops the race",
            zh: "会超卖：没有锁，就挡不住并发",
            holds: |f| fig(f, "oversold") > 0.0,
        },
        Choice {
            en: "No oversell, but no faster than lua-release",
            zh: "不超卖，但不比 lua-release 快",
            holds: |f| fig(f, "oversold") == 0.0 && fig(f, "throughput_vs_lua_release") <= 1.0,
        },
        Choice {
            en: "No oversell, and faster, but less than twice as fast",
            zh: "不超卖，而且更快，但不到两倍",
            holds: |f| {
                let vs = fig(f, "throughput_vs_lua_release");
                fig(f, "oversold") == 0.0 && vs > 1.0 && vs < 2.0
            },
        },
        Choice {
            en: "No oversell, and at least twice as fast",
            zh: "不超卖，而且至少快一倍",
            holds: |f| fig(f, "oversold") == 0.0 && fig(f, "throughput_vs_lua_release") >= 2.0,
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "none-race",
        "No lock at all: 300 buyers at once, through three instances, for 100 items. How many \
         items are sold beyond the stock?",
        "完全不加锁：300 个买家经三个实例同时抢 100 件商品。超卖会有多少？",
        &OVERSOLD,
    ),
    ask(
        "local-one-instance",
        "A mutex inside the process, and one instance serves all 300 buyers. How many items \
         are sold beyond the stock?",
        "进程内的本地锁，只有一个实例处理全部 300 个买家。超卖会有多少？",
        &OVERSOLD,
    ),
    ask(
        "local-three-instances",
        "The same in-process mutex, but nginx spreads the 300 buyers over three instances. How \
         many items are sold beyond the stock?",
        "同样的本地锁，但 nginx 把 300 个买家分发到三个实例。超卖会有多少？",
        &OVERSOLD,
    ),
    ask(
        "setnx-crash",
        "Bronze: SETNX takes the lock, DEL frees it. The holder's process crashes inside the \
         critical section. What do the other buyers get?",
        "青铜方案：SETNX 加锁、DEL 解锁。持锁进程在临界区里崩溃。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "setnx-expire-crash-between",
        "Silver: SETNX, then EXPIRE sets a 1 s lease. The holder crashes between the two \
         commands. What do the other buyers get?",
        "白银方案：先 SETNX，再用 EXPIRE 设 1 秒的租约。持锁者在两条命令之间崩溃。\
         其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "setnx-expire-crash-after",
        "Silver again, and the holder crashes after EXPIRE: the 1 s lease is set. What do the \
         other buyers get?",
        "还是白银方案，这次持锁者在 EXPIRE 之后崩溃：1 秒的租约已经设上了。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "atomic-expiry-slow-business",
        "Gold: SET NX PX with a 60 ms lease and a fixed value, released by DEL; the work takes \
         150 ms. What does the first holder's DEL do?",
        "黄金方案：SET NX PX，租约 60 毫秒，值是固定的，用 DEL 解锁；业务耗时 150 毫秒。\
         第一个持锁者的 DEL 会怎样？",
        &RELEASE,
    ),
    ask(
        "uuid-owner-release-gap",
        "Platinum: each holder's own UUID, GET to compare, then DEL. The holder's GET sees its \
         value, then it pauses 450 ms before DEL; the lease ends in between. What happens?",
        "铂金方案：每个持锁者用自己的 UUID，先 GET 比对，再 DEL。持锁者 GET 到自己的值后停顿 \
         450 毫秒才 DEL，租约恰好在这中间到期。会发生什么？",
        &RELEASE,
    ),
    ask(
        "lua-release-slow-business",
        "Diamond: the compare and the delete in one Lua script, with a 60 ms lease and 150 ms \
         of work. What happens?",
        "钻石方案：比对和删除放在同一段 Lua 脚本里，租约 60 毫秒，业务耗时 150 毫秒。\
         会发生什么？",
        &RELEASE,
    ),
    ask(
        "lua-release-normal",
        "Diamond again, with the work (5 ms) well inside the 3 s lease. What happens?",
        "还是钻石方案，业务耗时（5 毫秒）远小于 3 秒的租约。会发生什么？",
        &RELEASE,
    ),
    ask(
        "reentrant-watchdog-slow-business",
        "Redisson's reentrant lock with its watchdog: a 200 ms lease, renewed every third of \
         it, and 500 ms of work. What happens?",
        "Redisson 的可重入锁加看门狗：租约 200 毫秒，每隔三分之一续期一次，业务耗时 500 毫秒。\
         会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "reentrant-fixed-lease-slow-business",
        "The same lock and the same 500 ms of work, with a fixed 200 ms lease, as \
         lock(leaseTime) gives. What happens?",
        "同一把锁、同样 500 毫秒的业务，租约固定为 200 毫秒，就像 lock(leaseTime) 那样。\
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
        "The same nested step under the reentrant lock, which counts its owner's holds. Fifty \
         buyers, fifty items. What happens?",
        "同样的嵌套步骤，换成记录重入次数的可重入锁。五十个买家，五十件商品。会发生什么？",
        &NESTED,
    ),
    ask(
        "reentrant-watchdog-crash-holding",
        "The reentrant lock with its watchdog and a 1 s lease; the holder's process crashes \
         inside the critical section. What do the other buyers get?",
        "带看门狗的可重入锁，租约 1 秒；持锁进程在临界区里崩溃。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "reentrant-watchdog-freeze",
        "The holder's whole process freezes for 1.2 s after reading the stock; its watchdog \
         would renew the 300 ms lease. What happens?",
        "持锁进程读完库存后整体冻结 1.2 秒；看门狗本该为 300 毫秒的租约续期。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "fair-vs-race",
        "64 clients, 20 sales each: first the race for the lock (reentrant-watchdog), then \
         fair's queue in Redis. How evenly does fair share the lock, against the race?",
        "64 个客户端，每个下 20 单：先用抢锁（reentrant-watchdog），再用 fair 在 Redis 里排队。\
         与抢锁相比，fair 把锁分得有多均匀？",
        &FAIR,
    ),
    ask(
        "fair-dead-waiter",
        "A buyer queues for the fair lock, then dies in line without a word. What do the buyers \
         behind it get?",
        "一个买家在公平锁的队伍里排上了号，随后一声不吭地死掉了。排在它后面的买家会怎样？",
        &DEAD_WAITER,
    ),
    ask(
        "fenced-freeze",
        "The same 1.2 s freeze past a 300 ms lease, but every holder gets a fencing token and \
         the stock checks it. What happens?",
        "同样冻结 1.2 秒、超过 300 毫秒的租约，但每个持锁者都拿到一个围栏令牌（fencing token），\
         库存会校验它。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "atomic-deduct",
        "No lock at all: one Lua script decrements the stock if it is positive. How does it do \
         against lua-release on the same load?",
        "完全不用锁：一段 Lua 脚本在库存大于零时扣减。和同样负载下的 lua-release 相比如何？",
        &DEDUCT,
    ),
    ask(
        "redis-down",
        "The one Redis that holds the locks dies as the sale starts and is back 8 s later; each \
         buyer waits at most 2 s. What do the buyers get?",
        "存放锁的唯一一个 Redis 在开卖时宕机，8 秒后才回来；每个买家最多等 2 秒。买家会得到什么？",
        &AVAILABILITY,
    ),
];
