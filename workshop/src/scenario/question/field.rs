//! The questions of the chapters from the field: failures users of the real libraries
//! reported.

use super::shared::{LATE_WRITE, VALIDITY};
use super::{ask, fig, Choice, Family, Question};

/// Two buyers, two items, a release that falls while the second buyer is not yet listening.
const SUBSCRIBE: Family = Family {
    reads: &["orders", "max_latency_ms"],
    options: &[
        Choice {
            en: "Both items sold, the second within 1.5 s",
            zh: "两件都卖出，第二件在 1.5 秒内",
            holds: |f| fig(f, "orders") >= 2.0 && fig(f, "max_latency_ms") < 1_500.0,
        },
        Choice {
            en: "Both items sold, but the second buyer waits 1.5 s or more",
            zh: "两件都卖出，但第二个买家等了 1.5 秒或更久",
            holds: |f| fig(f, "orders") >= 2.0 && fig(f, "max_latency_ms") >= 1_500.0,
        },
        Choice {
            en: "The second buyer gives up at its deadline (503): an item stays unsold",
            zh: "第二个买家等到期限就放弃（503）：有一件没卖出",
            holds: |f| fig(f, "orders") < 2.0,
        },
    ],
};

/// An unlock that comes after the lease ended: what it deletes, and what it reports.
const LATE_UNLOCK: Family = Family {
    reads: &["foreign_releases", "lost_releases"],
    options: &[
        Choice {
            en: "Nothing to see: every unlock deletes its own lock",
            zh: "什么事也没有：每次解锁删的都是自己的锁",
            holds: |f| fig(f, "foreign_releases") == 0.0 && fig(f, "lost_releases") == 0.0,
        },
        Choice {
            en: "The late unlock deletes another buyer's lock",
            zh: "迟到的解锁误删了别的买家的锁",
            holds: |f| fig(f, "foreign_releases") > 0.0,
        },
        Choice {
            en: "The late unlock deletes nothing, and reports its lock lost",
            zh: "迟到的解锁什么也不删，并报告锁已丢失",
            holds: |f| fig(f, "foreign_releases") == 0.0 && fig(f, "lost_releases") > 0.0,
        },
    ],
};

/// A watchdog renewing a lock that nobody holds: how many of the items are sold.
const ORPHAN: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "All of them: the lease soon frees the lock nobody holds",
            zh: "全部卖出：没人持有的锁很快随租约到期释放",
            holds: |f| fig(f, "orders") >= fig(f, "initial_stock"),
        },
        Choice {
            en: "Some, after a stall: two or more, not all",
            zh: "停顿之后卖出一部分：两件以上，但没卖完",
            holds: |f| fig(f, "orders") >= 2.0 && fig(f, "orders") < fig(f, "initial_stock"),
        },
        Choice {
            en: "At most one: everybody after it waits out the deadline",
            zh: "最多一件：之后的人全都等到期限",
            holds: |f| fig(f, "orders") < 2.0 && fig(f, "orders") < fig(f, "initial_stock"),
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
            holds: |f| fig(f, "overlaps") == 0.0 && fig(f, "lost_releases") == 0.0,
        },
        Choice {
            en: "The lock is lost, but nobody gets in before the holder's unlock",
            zh: "锁丢了，但在持锁者解锁之前没有人进来",
            holds: |f| fig(f, "overlaps") == 0.0 && fig(f, "lost_releases") > 0.0,
        },
        Choice {
            en: "The lease runs out under the holder: the second buyer works beside it",
            zh: "租约在持锁者手里到期：第二个买家和它同时处理业务",
            holds: |f| fig(f, "overlaps") > 0.0,
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "late-subscriber-stall",
        "Two buyers, two items, a lock held 300 ms. The second buyer fails its attempt and \
         only then subscribes to release messages, which takes 600 ms; the release falls in \
         that gap. It waits at most 2 s. What happens?",
        "两个买家、两件商品，锁被持有 300 毫秒。第二个买家加锁失败之后才去订阅释放消息，\
         订阅要 600 毫秒才生效，释放恰好落在这段空档里。它最多等 2 秒。会发生什么？",
        &SUBSCRIBE,
    ),
    ask(
        "subscribe-first-no-stall",
        "The same two buyers and the same 600 ms gap, but the waiter was listening before its \
         first attempt. What happens?",
        "同样的两个买家、同样 600 毫秒的空档，但等待者在第一次尝试之前就已经在听了。会发生什么？",
        &SUBSCRIBE,
    ),
    ask(
        "unlock-after-expiry-plain-del",
        "Work of 150 ms under a 60 ms lease, and the unlock is a plain DEL. What does the late \
         unlock do?",
        "业务耗时 150 毫秒，租约只有 60 毫秒，解锁直接 DEL。迟到的解锁会怎样？",
        &LATE_UNLOCK,
    ),
    ask(
        "unlock-after-expiry-refused",
        "Redisson's lock with a 200 ms lease of its own (no watchdog) and 500 ms of work; its \
         unlock script compares the owner. What does the late unlock do?",
        "Redisson 的锁自带 200 毫秒的租约（不启动看门狗），业务耗时 500 毫秒；\
         它的解锁脚本会比对持锁者。迟到的解锁会怎样？",
        &LATE_UNLOCK,
    ),
    ask(
        "watchdog-starved-by-cpu",
        "The holder's instance has every worker busy with CPU-bound work for 1.2 s; its \
         watchdog should renew the 300 ms lease every 100 ms. What happens?",
        "持锁者所在实例的所有工作线程被计算密集型任务占满 1.2 秒；看门狗本该每 100 毫秒\
         为 300 毫秒的租约续期一次。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "renewal-outlives-unlock",
        "One buyer's unlock runs before its own acquire lands, and the watchdog that acquire \
         started is never stopped. Six buyers, six items. How many are sold?",
        "一个买家的解锁跑到了它自己的加锁前面，那次加锁启动的看门狗再也没人让它停下。\
         六个买家，六件商品。会卖出几件？",
        &ORPHAN,
    ),
    ask(
        "redlock-validity-unchecked",
        "The same slow vote as redlock-validity-runs-out, but this client never checks the \
         validity left when the majority comes in. What happens?",
        "和 redlock-validity-runs-out 一样的慢投票，但这个客户端凑齐多数时从不检查还剩多少有效时间。\
         会发生什么？",
        &VALIDITY,
    ),
    ask(
        "renewal-gives-up-after-outage",
        "A 6 s lease renewed every 2 s, 7 s of work; the lock store is down 3.3 s from the \
         acquire. This watchdog schedules its next renewal only after a success. What happens?",
        "租约 6 秒、每 2 秒续期一次，业务耗时 7 秒；锁存储从加锁起宕机 3.3 秒。\
         这个看门狗只有续期成功才安排下一次。会发生什么？",
        &RENEWAL,
    ),
    ask(
        "renewal-retries-after-outage",
        "The same outage under the same hold, with a watchdog that tries again at the next \
         tick after a failed renewal. What happens?",
        "同样的宕机、同样的持有，换成续期失败后下一轮接着再试的看门狗。会发生什么？",
        &RENEWAL,
    ),
];
