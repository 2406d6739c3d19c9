//! The questions of the chapters from the field: failures users of the real libraries
//! reported.

use super::shared::{LATE_WRITE, VALIDITY};
use super::{ask, Choice, Family, Question};

/// Two buyers, two items, a release that falls while the second buyer is not yet listening.
const SUBSCRIBE: Family = Family {
    reads: &["max_latency_ms", "orders"],
    options: &[
        Choice {
            en: "Both items sold (2 of 2), the second within 1.5 s",
            zh: "两件都卖出（2 件），第二件在 1.5 秒内卖出",
            sources: &["004:358-359"],
            rule: "orders >= 2 and max_latency_ms < 1500",
        },
        Choice {
            en: "Both items sold (2 of 2), but the second buyer waits 1.5 s or more",
            zh: "两件都卖出（2 件），但第二个买家等了 1.5 秒或更久",
            sources: &[
                "belief: a missed message is made good by the next retry, after a \
                        while — held by users of pub/sub who know messages can be lost",
            ],
            rule: "orders >= 2 and max_latency_ms >= 1500",
        },
        Choice {
            en: "The second buyer gives up at its deadline (503): under 2 items sold",
            zh: "第二个买家等到期限就放弃（503）：卖出的不到 2 件",
            sources: &[
                "belief: a waiter that missed the release waits for a message that never \
                        comes — held by those who read the subscribe-then-wait loop as waiting \
                        for the message alone",
            ],
            rule: "orders < 2",
        },
    ],
};

/// An unlock that comes after the lease ended: what it deletes, and what it reports.
pub(super) const LATE_UNLOCK: Family = Family {
    reads: &["foreign_releases", "lost_releases", "overlaps"],
    options: &[
        Choice {
            en: "Nothing to see: one holder at a time, every unlock deletes its own lock",
            zh: "什么事也没有：一次只有一个持锁者，每次解锁删的都是自己的锁",
            sources: &[
                "belief: a lease longer than the usual work makes late unlocks rare \
                        enough to ignore — held by those who tune the lease to the p99",
            ],
            rule: "foreign_releases == 0 and lost_releases == 0 and overlaps == 0",
        },
        Choice {
            en: "The late unlock deletes another buyer's lock",
            zh: "迟到的解锁误删了别的买家的锁",
            sources: &["000:433", "003:57"],
            rule: "foreign_releases > 0",
        },
        Choice {
            en: "The late unlock deletes nothing, and reports its lock lost",
            zh: "迟到的解锁什么也不删，并报告锁已丢失",
            sources: &["004:526"],
            rule: "foreign_releases == 0 and lost_releases > 0",
        },
        Choice {
            en: "The late unlock deletes nothing and reports nothing: the buyer never learns",
            zh: "迟到的解锁什么也没删，也什么都不报告：买家根本不知道",
            sources: &[
                "003:61-64",
                "belief: DEL on a missing key is a harmless no-op — held \
                        by those who read its 0 reply as nothing to worry about",
            ],
            rule: "foreign_releases == 0 and lost_releases == 0 and overlaps > 0",
        },
    ],
};

/// A watchdog renewing a lock that nobody holds: how many of the items are sold.
const ORPHAN: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "All of them: the lease soon frees a lock nobody holds",
            zh: "全部卖出：没人持有的锁很快随租约到期释放",
            sources: &["001:152"],
            rule: "orders >= initial_stock",
        },
        Choice {
            en: "Some, after a stall: 2 or more, not all",
            zh: "停顿之后卖出一部分：2 件以上，但没卖完",
            sources: &[
                "belief: a stray renewal stops at its next failure, and the line moves \
                        on — held by those who expect a watchdog to notice it is orphaned",
            ],
            rule: "orders >= 2 and orders < initial_stock",
        },
        Choice {
            en: "At most 1: everybody after it waits out the deadline",
            zh: "最多卖出 1 件：之后的人全都等到期限",
            sources: &["000:155"],
            rule: "orders <= 1 and orders < initial_stock",
        },
    ],
};

/// A renewal that meets an outage of the lock store while the holder works.
const RENEWAL: Family = Family {
    reads: &["overlaps", "lost_releases"],
    options: &[
        Choice {
            en: "The holder keeps its lock: the second buyer waits its turn",
            zh: "持锁者保住了锁：第二个买家等到轮到自己",
            sources: &["001:151-152", "002:582"],
            rule: "overlaps == 0 and lost_releases == 0",
        },
        Choice {
            en: "The lock is lost, but nobody gets in before the holder's unlock",
            zh: "锁丢了，但在持锁者解锁之前没有人进来",
            sources: &[
                "belief: a lost lock is noticed by its holder before anyone else can \
                        take it — held by those who expect the client library to raise",
            ],
            rule: "overlaps == 0 and lost_releases > 0",
        },
        Choice {
            en: "The lease runs out under the holder: the second buyer works beside it",
            zh: "租约在持锁者还在处理业务时到期：第二个买家和它同时处理业务",
            sources: &["001:216-219"],
            rule: "overlaps > 0",
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "late-subscriber-stall",
        "Two buyers, two items, a lock held 300 ms. The second buyer tries once, fails, and \
         only then subscribes to release messages; the subscription takes 600 ms to start, \
         and the release comes 300 ms in. The buyer waits at most 2 s. What happens?",
        "两个买家、两件商品，锁被持有 300 毫秒。第二个买家先尝试加锁，失败后才去订阅释放消息；\
         订阅要 600 毫秒才生效，而锁在第 300 毫秒就释放了。这个买家最多等 2 秒。会发生什么？",
        &SUBSCRIBE,
    ),
    ask(
        "subscribe-first-no-stall",
        "The same two buyers and the same 600 ms to subscribe; this time the second buyer \
         subscribes before its first attempt. What happens?",
        "同样的两个买家、订阅同样要 600 毫秒生效，但第二个买家在第一次尝试加锁之前就先订阅。\
         会发生什么？",
        &SUBSCRIBE,
    ),
    ask(
        "unlock-after-expiry-plain-del",
        "Work of 150 ms under a 60 ms lease; twelve buyers, and the unlock is a plain DEL of \
         the lock's key. What does the late unlock do?",
        "业务耗时 150 毫秒，租约只有 60 毫秒；十二个买家，解锁就是直接 DEL 锁的键。\
         迟到的解锁会怎样？",
        &LATE_UNLOCK,
    ),
    ask(
        "unlock-after-expiry-refused",
        "Redisson's lock with a 200 ms lease of its own (no watchdog) and 500 ms of work; its \
         unlock is Redisson's own unlock script. What does the late unlock do?",
        "Redisson 的锁，加锁时指定 200 毫秒的租约（这样就不启动看门狗），业务耗时 500 毫秒；\
         解锁用的是 Redisson 内置的解锁脚本。迟到的解锁会怎样？",
        &LATE_UNLOCK,
    ),
    ask(
        "watchdog-starved-by-cpu",
        "The holder's instance has every worker busy with CPU-bound work for 1.2 s; its \
         watchdog is due to renew the 300 ms lease every 100 ms on the same workers. What \
         happens?",
        "持锁者所在实例的所有工作线程被计算密集型任务占满 1.2 秒；看门狗也跑在这些线程上，\
         按计划每 100 毫秒为 300 毫秒的租约续期一次。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "renewal-outlives-unlock",
        "Redisson's lock() with its watchdog (a 300 ms lease, renewed every 100 ms). One \
         buyer's lock() is interrupted while its SET is on the wire; its finally block calls \
         unlock at once, and the SET lands after that. Six buyers, six items. How many are \
         sold?",
        "带看门狗的 Redisson lock()（租约 300 毫秒，每 100 毫秒续期一次）。一个买家的 lock() \
         在 SET 已经发出、还没到达 Redis 时被中断；它的 finally 块立刻调用 unlock，之后那条 SET 才到达 Redis。\
         六个买家，六件商品。会卖出几件？",
        &ORPHAN,
    ),
    ask(
        "redlock-validity-unchecked",
        "The same slow vote (a 50 ms lease, the third vote in 80 ms after asking), but this \
         client starts its work as soon as it has three votes, and reads no clock. What \
         happens?",
        "同样慢的投票（租约 50 毫秒，开始申请 80 毫秒后才拿到第三票），但这个客户端一凑齐三票就\
         开始处理业务，不看时钟。会发生什么？",
        &VALIDITY,
    ),
    ask(
        "renewal-gives-up-after-outage",
        "A 6 s lease renewed every 2 s, 7 s of work; the lock store is down from the acquire \
         for 3.3 s and comes back with the lock still in it (its append-only file is written \
         before every reply). This watchdog schedules its next renewal only after a success. \
         What happens?",
        "租约 6 秒、每 2 秒续期一次，业务耗时 7 秒；锁存储从加锁起宕机 3.3 秒，恢复后锁还在\
         （每次应答前都写 AOF）。这个看门狗只有续期成功才安排下一次续期。会发生什么？",
        &RENEWAL,
    ),
    ask(
        "renewal-retries-after-outage",
        "The same outage under the same hold, the lock still there when the store is back, \
         with a watchdog that tries again at its next tick after a failed renewal. What \
         happens?",
        "同样的宕机、同样的持有，存储恢复后锁还在，换成续期失败后、下一个周期照常再试的看门狗。\
         会发生什么？",
        &RENEWAL,
    ),
];
