//! The articles on trial: questions that put one claim of the articles to the class as the
//! article makes it, each answered by an existing chapter's run (`chapter`), with the line of
//! the claim (`claim`) the reveal cites. Some are isomorphic pairs (`pair`): the same concept
//! on another surface, so the results can say whether the class that got one right got the
//! other.

use super::shared::{LATE_WRITE, ONE_ITEM, ONE_ITEM_MOST_FIRST, OVERSOLD, VALIDITY};
use super::{ask_as, Choice, Family, Question};

// The claims' options shown so that the option a reader of the article picks is not always
// the first: were it always A, and A mostly wrong, a class would learn the letter
// (`tests_claims.rs` bounds it). Pairs keep one order between them.

/// [`LATE_WRITE`] with the holder's lock kept through the pause last.
const LATE_WRITE_HELD_LAST: Family = Family {
    reads: LATE_WRITE.reads,
    options: &LATE_WRITE.reordered([2, 1, 0]),
};

/// [`ONE_ITEM`] with the two holders who sell once first.
const ONE_ITEM_SHARED_FIRST: Family = Family {
    reads: ONE_ITEM.reads,
    options: &ONE_ITEM.reordered([1, 0, 2]),
};

/// [`VALIDITY`] with the late majority given back first.
const VALIDITY_GIVEN_BACK_FIRST: Family = Family {
    reads: VALIDITY.reads,
    options: &VALIDITY.reordered([1, 0, 2]),
};

/// A watchdog renewing a lock that nobody holds, asked as 001 claims it: how many items sell.
const NO_DEADLOCK: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "All of them: no deadlock",
            zh: "全部卖出：不会死锁",
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
            en: "At most 1: the lock is never freed, and everybody after waits out the deadline",
            zh: "最多卖出 1 件：锁再也不释放，之后的人全都等到期限",
            sources: &["000:155"],
            rule: "orders <= 1 and orders < initial_stock",
        },
    ],
};

/// [`NO_DEADLOCK`] with the stall first.
const NO_DEADLOCK_STALL_FIRST: Family = Family {
    reads: NO_DEADLOCK.reads,
    options: &NO_DEADLOCK.reordered([1, 0, 2]),
};

/// A renewal that meets an outage of the lock store, asked as 002 claims renewal works.
const RENEWAL_CLAIM: Family = Family {
    reads: &["overlaps", "lost_releases"],
    options: &[
        Choice {
            en: "The renewal keeps the lock until the work is done",
            zh: "续期让锁一直保持到业务做完",
            sources: &["002:582", "001:151-152"],
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

/// [`RENEWAL_CLAIM`] with the lost lock that nobody takes first.
const RENEWAL_CLAIM_LOST_FIRST: Family = Family {
    reads: RENEWAL_CLAIM.reads,
    options: &RENEWAL_CLAIM.reordered([1, 0, 2]),
};

/// A single lock store down for longer than a buyer waits, asked as 002 names the danger: the
/// claim says the lock stops; the options ask how the buyers learn it, and when.
const SINGLE_POINT: Family = Family {
    reads: &["max_latency_ms", "orders", "oversold"],
    options: &[
        Choice {
            en: "They hang until the Redis returns (8 s or more), then are answered; nothing \
                 oversold",
            zh: "一直挂着，等 Redis 回来（8 秒或更久）才得到答复；没有超卖",
            sources: &[
                "belief: a Redis client reconnects and retries until the store returns, so a \
                        request sits out the outage — held by those who leave the client's \
                        retries at their defaults",
            ],
            rule: "oversold == 0 and max_latency_ms >= 8000",
        },
        Choice {
            en: "Some are sold within the 8 s and the rest refused; nothing oversold",
            zh: "8 秒之内卖出了一部分，其余被拒绝；没有超卖",
            sources: &[
                "belief: a lock client falls back on what it last knew when the store is \
                        unreachable — held by those who expect a client library to degrade \
                        gracefully",
            ],
            rule: "oversold == 0 and orders > 0 and max_latency_ms < 8000",
        },
        Choice {
            en: "Sales go on without the lock, and items are oversold",
            zh: "不用锁照样在卖，而且出现超卖",
            sources: &[
                "belief: when the lock service is unreachable the application sells \
                        without it (fail open) — held wherever a lock error is caught and \
                        logged, not returned",
            ],
            rule: "oversold > 0",
        },
        Choice {
            en: "All refused (503) before the 8 s are over: nothing is sold",
            zh: "不到 8 秒，所有买家就都被拒绝（503）：一件也没卖出",
            sources: &["002:677", "001:92"],
            rule: "oversold == 0 and orders == 0 and max_latency_ms < 8000",
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask_as(
        "claim-watchdog-gc-pause",
        "reentrant-watchdog-freeze",
        "002 (line 644) offers a renewal thread, Redisson's watchdog, as a fix for the client \
         whose stop-the-world GC pause outlives its lease. Try it: the watchdog renews a 300 ms \
         lease every 100 ms, and the holder's process pauses 1.2 s after reading the stock, \
         then writes it. What happens?",
        "002（第 644 行）针对客户端一次 stop-the-world 的 GC 停顿比租约还长的情况，\
         给出的办法是续期线程，也就是 Redisson 的看门狗。试试看：看门狗每 100 毫秒为 300 毫秒的租约续期一次，持锁进程\
         读完库存后停顿 1.2 秒，然后写库存。会发生什么？",
        &LATE_WRITE_HELD_LAST,
    )
    .claims("002:644", 2)
    .paired("claim-redlock-gc-pause"),
    ask_as(
        "claim-redlock-gc-pause",
        "redlock-freeze",
        "002 (line 600) presents Redlock as the scheme that solves the safety problem of \
         distributed locks on Redis. Five masters, a 300 ms lease; the holder's process \
         pauses 1.2 s after reading the stock, as in a GC pause, and then writes it. What \
         happens?",
        "002（第 600 行）把 Redlock 介绍为解决 Redis 分布式锁安全性问题的方案。五个主节点，\
         租约 300 毫秒；持锁进程读完库存后停顿 1.2 秒（就像一次 GC 停顿），然后写库存。\
         会发生什么？",
        &LATE_WRITE_HELD_LAST,
    )
    .claims("002:600", 2)
    .paired("claim-watchdog-gc-pause"),
    ask_as(
        "claim-zookeeper-gc-pause",
        "zookeeper-session-expiry",
        "001 (line 500) calls ZooKeeper's lock robust: strongly consistent, made for \
         coordination. The holder's process pauses 6 s after reading the stock, past its 4 s \
         session timeout, and then writes it. What happens?",
        "001（第 500 行）说 ZooKeeper 的锁很健壮：强一致，天生就是做分布式协调的。持锁进程读完库存后\
         停顿 6 秒，超过了 4 秒的会话超时，然后写库存。会发生什么？",
        &LATE_WRITE_HELD_LAST,
    )
    .claims("001:500", 2)
    .paired("claim-watchdog-gc-pause"),
    ask_as(
        "claim-ntp-keeps-redlock",
        "redlock-clock-jump",
        "002 (lines 652 and 680) answers clock drift with NTP: keeping every node's clock in \
         sync lessens what drift does to Redlock's leases. NTP steps a clock that is far off; so does an operator. \
         Redlock, one item: right after the holder takes its 20 s lock, the clocks of the three \
         masters that granted it step 30 s forward. How often is the item sold?",
        "002（第 652、680 行）用 NTP 应对时钟漂移：让所有节点的时钟保持同步，减小漂移对 Redlock 租约的影响。\
         可时钟偏差较大时，NTP 会一步把时钟调过去，运维手动改时间也是如此。Redlock，一件商品：持锁者刚拿到\
         租约 20 秒的锁，给它投票的三个主节点的时钟就向前跳了 30 秒。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .claims("002:652", 2),
    ask_as(
        "claim-rdb-keeps-lock",
        "restart-rdb-loses-recent-lock",
        "002 (line 691) says RDB saves Redis' memory to disk so that a crash or a power cut \
         does not lose the data, and adds three lines on that saving only now and then can \
         lose what changed since the last save. The lock store takes RDB snapshots by the save \
         rules Redis shipped by default up to 6.0 (after 900 s if a key changed, 300 s if 10 \
         did, 60 s if 10,000 did) and crashes right after the holder takes the lock, then \
         restarts. How often is the one item sold?",
        "002（第 691 行）说 RDB 定期把 Redis 的内存数据存到磁盘，以免异常退出或断电丢数据；三行之后\
         又补充说，定期保存可能丢掉上次保存之后的改动。存放锁的 Redis 按 Redis 6.0 及以前默认的 \
         save 规则做 RDB 快照（900 秒内有 1 个键改动、300 秒内有 10 个、60 秒内有 10000 个），\
         持锁者刚拿到锁，这个 Redis 就崩溃并重启了。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .claims("002:691", 0)
    .paired("claim-redlock-survives-restart"),
    ask_as(
        "claim-redlock-survives-restart",
        "redlock-restart-no-fsync",
        "002 (line 604) says Redlock avoids the lock lost in a failover and keeps the data \
         correct when some nodes fail. One item; the holder's lock stands on exactly three of \
         the five masters, and one of the three crashes and restarts without persistence. How \
         often is the item sold?",
        "002（第 604 行）说 Redlock 能避免主从切换丢锁，部分节点出故障时数据仍然正确。一件商品；持锁者的锁\
         刚好落在五个主节点中的三个上，其中一个崩溃后重启，它没有开启持久化。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .claims("002:604", 2)
    .paired("claim-rdb-keeps-lock"),
    ask_as(
        "claim-watchdog-no-deadlock",
        "renewal-outlives-unlock",
        "001 (line 152) says Redisson's watchdog guarantees no deadlock. One buyer's lock() is \
         interrupted while its SET is on the wire; its finally block calls unlock at once, and \
         the SET lands after that. Six buyers, six items, a 300 ms lease renewed every 100 ms. \
         How many are sold?",
        "001（第 152 行）说 Redisson 的看门狗保证不会死锁。一个买家的 lock() 在 SET 已经发出、还没到达 Redis 时被中断；\
         它的 finally 块立刻调用 unlock，之后那条 SET 才到达 Redis。六个买家，六件商品，租约 300 毫秒、\
         每 100 毫秒续期一次。会卖出几件？",
        &NO_DEADLOCK_STALL_FIRST,
    )
    .claims("001:152", 1),
    ask_as(
        "claim-lease-cures-partition",
        "watchdog-holder-cut-off",
        "002 (line 679) names the partition's danger as a lock never released, with a lease \
         as the cure. One Redis, Redisson's lock() with its watchdog, one item: the holder's \
         instance is cut off from the lock store while it works, and still reaches the stock. \
         How often is the item sold?",
        "002（第 679 行）说网络分区的危险是锁永远不释放，办法是给锁设租约。一个 Redis、带看门狗的 \
         Redisson lock()、一件商品：持锁者处理业务时，它所在的实例和锁存储断开了网络，但仍连得上\
         库存。这件商品会卖出几次？",
        &ONE_ITEM_SHARED_FIRST,
    )
    .claims("002:679", 1)
    .paired("claim-zookeeper-partition"),
    ask_as(
        "claim-zookeeper-partition",
        "zookeeper-client-partitioned",
        "001 (line 500) says ZooKeeper's lock model is robust because ZooKeeper is strongly \
         consistent. One item: the holder's instance is cut off from ZooKeeper for 9 s, past \
         its 4 s session timeout, while it works; it still reaches the stock. How often is the \
         item sold?",
        "001（第 500 行）说 ZooKeeper 强一致，所以锁模型健壮。一件商品：持锁者处理业务时，它所在的\
         实例和 ZooKeeper 断开 9 秒，超过了 4 秒的会话超时；库存它仍然连得上。这件商品会卖出几次？",
        &ONE_ITEM_SHARED_FIRST,
    )
    .claims("001:500", 1)
    .paired("claim-lease-cures-partition"),
    ask_as(
        "claim-renewal-covers-long-work",
        "renewal-gives-up-after-outage",
        "002 (line 582) says automatic renewal keeps work that outlasts the lease safe. A 6 s \
         lease renewed every 2 s, 7 s of work; the lock store is down for 3.3 s from the \
         acquire and comes back with the lock still in it. This watchdog, like the code 001 \
         prints, schedules its next renewal only after a success. What happens?",
        "002（第 582 行）说自动续期能保证业务超过租约时仍然安全。租约 6 秒、每 2 秒续期一次，业务耗时 \
         7 秒；锁存储从加锁起宕机 3.3 秒，恢复后锁还在。这个看门狗和 001 贴出的代码一样，只有续期成功\
         才安排下一次续期。会发生什么？",
        &RENEWAL_CLAIM_LOST_FIRST,
    )
    .claims("002:582", 1),
];

/// More of the articles' claims, on Sentinel, Redlock's majority and a single Redis.
pub(super) static MORE: &[Question] = &[
    ask_as(
        "claim-sentinel-loses-only-on-crash",
        "sentinel-split-brain",
        "001 (line 94) says a Sentinel setup loses a lock when the master fails and a \
         failover follows. Here no process fails: for 15 s the primary is cut off from the \
         Sentinels, the replica and two of the three instances, but not from app1. 40 items, \
         120 buyers. How many items are sold beyond the stock?",
        "001（第 94 行）说哨兵模式在主节点故障、发生主从切换时会丢锁。这里没有任何进程出故障：\
         主节点与哨兵、从节点以及三个实例中的两个断开 15 秒，只有 app1 还连得上它。40 件商品，\
         120 个买家。会超卖多少件？",
        &OVERSOLD,
    )
    .claims("001:94", 0),
    ask_as(
        "claim-majority-is-the-lock",
        "redlock-validity-unchecked",
        "002 (line 609) says a client that wins more than half of the five masters (three or \
         more) holds the Redlock. A client takes the lock as soon as it has three votes, and \
         reads no clock; the lease is 50 ms, and the third vote comes 80 ms after it started \
         asking. What happens?",
        "002（第 609 行）说客户端在五个主节点中拿到超过半数（三个或以上）就算拿到了 Redlock。一个客户端\
         一凑齐三票就开始处理业务，不看时钟；租约 50 毫秒，而第三票在它开始申请 80 毫秒后才到。\
         会发生什么？",
        &VALIDITY_GIVEN_BACK_FIRST,
    )
    .claims("002:609", 1),
    ask_as(
        "claim-single-point",
        "redis-down",
        "002 (line 677) says that when a single Redis is down, the lock cannot work and the \
         business is held up. The one Redis that holds the locks dies as the sale starts and \
         is back 8 s later; each buyer waits at most 2 s for the lock. What do the buyers get, \
         and when?",
        "002（第 677 行）说单机部署的 Redis 一旦宕机，分布式锁就无法工作，业务也被耽搁。\
         存放锁的唯一一个 Redis 在开卖时宕机，8 秒后才恢复；每个买家最多等锁 2 秒。\
         买家什么时候、得到什么结果？",
        &SINGLE_POINT,
    )
    .claims("002:677", 3),
];
