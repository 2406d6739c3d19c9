//! Partitions: the failures that are not crashes. Every process keeps running; packets between
//! two sides of the fleet's network are dropped, both ways, by `nft` rules in their network
//! namespaces (`oversell up --network netns`, which needs root), as Jepsen cuts real nodes.
//! The resource store is never cut off, so the ground truth sees both sides.
//!
//! Sources. The articles name the partition twice and teach neither lesson here: 002 line 584
//! gives "the network partition in a cluster" as the reason for Redlock, and 002 line 679 sees
//! in it a liveness risk only — a client cut off from Redis never releases a lock that has no
//! expiry, which the lease prevents. What a partition does to safety comes from elsewhere:
//! the cut-off holder that works on after its lease and the fencing token that stops its
//! write, from Martin Kleppmann's "How to do distributed locking" (2016); the primary that
//! keeps taking writes while cut off (split brain) and `min-replicas-to-write`, from Redis'
//! Sentinel and replication documentation and Jepsen's partition tests.

use std::borrow::Cow;

use oversell_api::{Fault, Tier};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The Sentinel chapters' cut: the primary and `app1` on one side; the replica, the three
/// Sentinels and the two other instances on the other.
const PRIMARY_AND_APP1: &[Cow<'static, str>] =
    &[Cow::Borrowed("lock-primary"), Cow::Borrowed("app1")];
/// Two of the five Redlock masters, then three: the last ones (the instances hear release
/// messages from the first master, so waiters keep being woken rather than polling).
const TWO_MASTERS: &[Cow<'static, str>] = &[Cow::Borrowed("redlock4"), Cow::Borrowed("redlock5")];
const THREE_MASTERS: &[Cow<'static, str>] = &[
    Cow::Borrowed("redlock3"),
    Cow::Borrowed("redlock4"),
    Cow::Borrowed("redlock5"),
];
/// The instance of the holder the fault strikes.
const HOLDER: &[Cow<'static, str>] = &[Cow::Borrowed("holder")];
/// One ZooKeeper server of three.
const ONE_ZOOKEEPER: &[Cow<'static, str>] = &[Cow::Borrowed("zk3")];

/// The cut-off holder chapters: a lease the watchdog renews every third of it, work three
/// leases long, and a cut longer than the work (stated in each chapter); one item for three
/// buyers, so a second holder shows as the item sold twice.
const CUT_OFF: Scenario = Scenario {
    ttl_ms: 1_000,
    business_ms: 3_000,
    wait_deadline_ms: 20_000,
    stock: 1,
    buyers: 3,
    timing_sensitive: true,
    ..BASE
};

/// The Sentinel chapters: a lease the watchdog keeps alive on whichever primary its holder
/// reaches, short work so each side sells many times, and a cut (`SPLIT_MS`) long enough for
/// Sentinel to promote the replica (a primary silent for 1 s is down; the promotion follows
/// within a second or two) and for both sides to sell for seconds after.
const SPLIT: Scenario = Scenario {
    ttl_ms: 2_000,
    business_ms: 150,
    wait_deadline_ms: 25_000,
    stock: 40,
    buyers: 120,
    store: StoreSetup::sentinel(0).partitioned(),
    timing_sensitive: true,
    ..BASE
};
/// How long the Sentinel chapters' cut lasts (why: see [`SPLIT`]).
const SPLIT_MS: u64 = 15_000;

/// The cut-off ZooKeeper client chapters: the ZooKeeper session timeout of `oversell up`'s
/// instances, and the holder's work: longer, so the session expires under a holder that is
/// still working; a cut longer than the work (stated in each chapter), and one item for three
/// buyers.
const SESSION_CUT_OFF: Scenario = Scenario {
    ttl_ms: 4_000,
    business_ms: 6_000,
    wait_deadline_ms: 25_000,
    stock: 1,
    buyers: 3,
    store: StoreSetup::zookeeper(1).partitioned(),
    timing_sensitive: true,
    ..BASE
};

const SENTINEL_SOURCE: &str = "Redis' Sentinel documentation (a primary cut off keeps \
    accepting writes until it is demoted: split brain) and replication documentation \
    (min-replicas-to-write, min-replicas-max-lag); Jepsen's partition tests. Not in the \
    articles: 002 lines 584 and 679 name the partition, as Redlock's reason and as a lock never \
    released for want of an expiry";

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "sentinel-split-brain",
        tier: Tier::ReentrantWatchdog,
        fault: Some(Fault::partition(PRIMARY_AND_APP1, SPLIT_MS)),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        source: SENTINEL_SOURCE,
        en: "As a holder starts its work (the lock taken, the stock read), the primary is cut off from the Sentinels, the \
             replica and two of the three instances, but not from app1. The Sentinels no longer \
             see it and promote the replica. Now there are two primaries: app1 keeps taking the \
             lock on the old one, the others take it on the new one, each side in turn, and \
             their critical sections overlap: two holders at once, lost updates, oversell. Every \
             process is healthy; only packets were lost. When the cut heals, Sentinel demotes the \
             old primary and its lock writes vanish, but the sales made meanwhile stay.",
        zh: "一个持锁者读完库存、刚开始处理业务，主节点就被网络隔开：哨兵、从节点和三个实例中的两个都连不上它，只有 app1 \
             还能连上。哨兵看不到主节点，于是把从节点提升为新主节点。此时有了两个主节点：app1 继续在旧主节点\
             上加锁，其他实例在新主节点上加锁，两边各自轮流持锁，临界区却彼此重叠：同时有两个持锁者，出现丢失更新和\
             超卖。所有进程都好好的，丢的只是网络包。这就是脑裂。网络恢复后，哨兵把旧主节点降为从节点，\
             它上面写过的锁随之消失，可这期间卖出的订单都留下了。",
        ..SPLIT
    },
    Scenario {
        id: "sentinel-min-replicas",
        tier: Tier::ReentrantWatchdog,
        wait_deadline_ms: 6_000,
        fault: Some(Fault::partition(PRIMARY_AND_APP1, SPLIT_MS)),
        store: StoreSetup::sentinel(0).partitioned().min_replicas(1),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::gt("sent_503", 0.0),
        ]),
        source: SENTINEL_SOURCE,
        en: "The same cut, with min-replicas-to-write 1 (and min-replicas-max-lag 1 s) on the \
             lock store: a primary that has not heard from a replica for a second refuses \
             writes (NOREPLICAS). The old primary stops granting the lock about a second into \
             the cut, so there is never a second lock service: nothing overlaps, nothing is \
             oversold. With one replica the price is the whole store: the promoted replica has \
             no replica of its own while the cut lasts, so it refuses too, and every buyer gets \
             a 503 until the heal. Two replicas would keep the majority side writable. Redis \
             trades availability for safety here, as Redlock and ZooKeeper do.",
        zh: "同样的网络隔离，但锁存储配置了 min-replicas-to-write 1（min-replicas-max-lag 1 秒）：\
             主节点一秒没有收到从节点的确认，就拒绝写入（NOREPLICAS）。隔离开始约一秒后，旧主节点就不再\
             发放锁，所以始终不会出现第二个持锁者：临界区没有重叠，也没有超卖。只有一个从节点时，代价是整个\
             锁存储都停了：被提升的新主节点在隔离期间自己也没有从节点，同样拒绝写入，所有买家都收到 503，直到网络\
             恢复。有两个从节点，多数一侧就还能写入。Redis 在这里用可用性换来了安全，Redlock 和 ZooKeeper \
             也是这样取舍的。",
        ..SPLIT
    },
    Scenario {
        id: "redlock-minority-partition",
        tier: Tier::Redlock,
        fault: Some(Fault::partition(TWO_MASTERS, 10_000)),
        buyers: 20,
        store: StoreSetup::redlock(None).partitioned(),
        expect: Expect::Figures(&[
            Check::eq("orders", 20.0),
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
        ]),
        source: "002 line 584 (the network partition in a cluster as Redlock's reason) and \
                 lines 586–628 (the algorithm: a majority of independent masters); the \
                 algorithm as Redis' author published it",
        en: "As the first holder starts its work, two of the five masters are cut off from everyone. \
             Their votes never come (each waits out the per-node timeout), but three masters \
             are still a majority: every buyer gets the lock, nothing overlaps, nothing is \
             oversold. This is what Redlock is for.",
        zh: "第一个持锁者开始处理业务时，五个主节点中有两个被网络隔开，谁也连不上它们。它们的票永远等不到（每次都要\
             等到单节点超时），但剩下的三个仍是多数：每个买家都拿到了锁，临界区没有重叠，也没有超卖。\
             Redlock 正是为此而设计的。",
        ..BASE
    },
    Scenario {
        id: "redlock-majority-partition",
        tier: Tier::Redlock,
        wait_deadline_ms: 1_500,
        fault: Some(Fault::partition(THREE_MASTERS, 10_000)),
        buyers: 20,
        store: StoreSetup::redlock(None).partitioned(),
        expect: Expect::Figures(&[
            Check::eq("orders", 1.0),
            Check::eq("oversold", 0.0),
            Check::eq("sent_503", 19.0),
        ]),
        source: "002 lines 586–628 (Redlock: the lock only with a majority of the masters); the \
                 algorithm as Redis' author published it",
        en: "As the first holder starts its work, three of the five masters are cut off: no buyer can \
             win a majority any more. The first buyer's sale completes; every other buyer gets a \
             503 (lock_no_quorum) at its wait deadline. A partition that leaves no majority \
             stops Redlock rather than letting two holders in.",
        zh: "第一个持锁者开始处理业务时，五个主节点中有三个被网络隔开，再也没有买家凑得齐多数。第一个买家的订单完成了，\
             其余买家都在等待期限到时收到 503（lock_no_quorum）。网络分区后凑不齐多数时，Redlock 宁可停止\
             服务，也不让两个持锁者同时进入。",
        ..BASE
    },
    Scenario {
        id: "redlock-holder-cut-off",
        tier: Tier::Redlock,
        fault: Some(Fault::partition(HOLDER, 6_000)),
        store: StoreSetup::redlock(None).partitioned(),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        source: "002 lines 586–628 (Redlock); the algorithm as Redis' author published it, \
                 with its extension; the cut-off holder is Martin Kleppmann's, \"How to do \
                 distributed locking\" (2016), on delayed and lost messages (002 line 679 \
                 sees in a partition only a lock that is never released, which a lease \
                 prevents)",
        en: "The holder wins a majority of the five masters and, as it starts its work, its \
             instance is cut off from all of them. Its extensions (every third of the lease) \
             never arrive; the lease runs out on every master while it works, a second buyer \
             wins a majority, and the first one's write goes through the resource store anyway: \
             two holders, the one item sold twice. Five independent masters do not help a \
             holder that cannot reach any of them, and Redlock gives it no token a resource \
             could check. 002 (line 679) sees in a partition only a lock never released, which \
             a lease prevents; the danger here is the lease running out under a holder that \
             works on.",
        zh: "持锁者在五个主节点中拿到多数票，刚开始处理业务，它所在的实例就与所有主节点断开了网络。\
             它的续期（每隔租约的三分之一一次）一次也到不了；租约在所有主节点上都到期了，它还在处理业务，\
             第二个买家拿到了多数票，而第一个持锁者的写入照样写进了库存：两个持锁者，唯一的一件商品卖了\
             两次。五个相互独立的主节点帮不了一个谁也连不上的持锁者，而 Redlock 也不发放资源可以检查的\
             令牌。002（第 679 行）只把网络分区看成锁释放不掉的问题，租约就能防住；这里的危险恰恰是\
             租约到期了，持锁者却还在处理业务。",
        ..CUT_OFF
    },
    Scenario {
        id: "watchdog-holder-cut-off",
        tier: Tier::ReentrantWatchdog,
        fault: Some(Fault::partition(HOLDER, 6_000)),
        store: StoreSetup::single_any().partitioned(),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        source: "Martin Kleppmann, \"How to do distributed locking\" (2016): a lease \
                 protects nothing once its holder can no longer reach the lock service. 002 \
                 line 679 says the opposite of this chapter's danger: there a client cut off \
                 from Redis leaves a lock with no expiry behind for ever (a deadlock), which \
                 the lease prevents; it does not say the holder works on past its lease",
        en: "As the holder starts its work, its instance is cut off from the lock store. \
             The holder is not paused: it works on, and its watchdog keeps sending renewals, \
             which are dropped on the way. The lease runs out, the next buyer takes the lock, \
             and the cut-off holder, which never heard a thing, writes its stale stock: the one \
             item is sold twice. The watchdog keeps a lock alive only while it can reach it. \
             002 (line 679) says the lease is the cure for a cut-off client (its lock would \
             otherwise never be released); here the lease is what lets the second holder in.",
        zh: "持锁者刚开始处理业务，它所在的实例就和锁存储断开了网络。持锁者没有停顿，照样处理业务，看门狗也照样\
             续期，可续期请求在途中就被丢弃了。租约到期，下一个买家拿到锁；被隔开的持锁者毫不知情，\
             写入了陈旧的库存值：唯一的一件商品卖了两次。看门狗只能在连得上锁存储时让锁续命。\
             002（第 679 行）说租约能治断网的客户端（否则它的锁永远释放不掉）；在这里，\
             正是租约到期放进了第二个持锁者。",
        ..CUT_OFF
    },
    Scenario {
        id: "fenced-holder-cut-off",
        tier: Tier::Fenced,
        fault: Some(Fault::partition(HOLDER, 6_000)),
        store: StoreSetup::single_any().partitioned(),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::gt("stale_writes_rejected", 0.0),
        ]),
        source: "Martin Kleppmann, \"How to do distributed locking\" (2016): the fencing token; \
                 Redisson's RFencedLock; not in the articles (002 lines 630–648 tell the pause \
                 and stop short of a token)",
        en: "The same cut, with a fencing token: the next holder's token is higher, and the \
             stock refuses the cut-off holder's write when it finally comes. A partition cannot \
             be prevented; its stale write can, by the resource itself.",
        zh: "同样的网络隔离，但有围栏令牌：下一个持锁者的令牌更大，被隔开的持锁者最后写入时，库存拒绝了它。\
             网络分区无法避免，它带来的陈旧写入却可以由资源自己挡住。",
        ..CUT_OFF
    },
    Scenario {
        id: "postgres-holder-cut-off",
        tier: Tier::Postgres,
        fault: Some(Fault::partition(HOLDER, 6_000)),
        store: StoreSetup::postgres().partitioned(),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("orders", 1.0),
        ]),
        source: "001 line 45 (the lock can live in a database); PostgreSQL's advisory locks, \
                 which last as long as the session that took them; compare Martin Kleppmann, \
                 \"How to do distributed locking\" (2016), on leases and cut-off holders",
        en: "The same cut as watchdog-holder-cut-off, on the database's lock: as the holder \
             starts its 3 s of work, its instance is cut off from PostgreSQL for 6 s. The server \
             hears nothing from the session, and a session lock has no lease to run out: it \
             waits, and so does everyone else. The holder finishes and writes, its commit gets \
             through once the cut heals, and only then is the next buyer let in: the one item \
             is sold once. Where Redis' watchdog lost the lock, the session keeps it — by \
             making everybody wait for a client that might never come back.",
        zh: "和 watchdog-holder-cut-off 一样的网络隔离，这次用的是数据库的锁：持锁者刚开始 3 秒的业务处理，\
             它所在的实例就和 PostgreSQL 断开了 6 秒。服务器听不到这个会话的任何动静，而会话锁没有会到期的租约：\
             它就等着，其他人也都跟着等。持锁者处理完业务、写入库存，隔离恢复后它的提交才送达，\
             下一个买家这时才能进来：唯一的一件商品只卖了一次。Redis 的看门狗在这里丢了锁，会话锁却保住了——\
             代价是所有人都在等一个可能再也回不来的客户端。",
        ..CUT_OFF
    },
    Scenario {
        id: "zookeeper-client-partitioned",
        tier: Tier::Zookeeper,
        fault: Some(Fault::partition(HOLDER, 9_000)),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        source: "001 lines 255–480 (the ZooKeeper lock: an ephemeral node lives as long as its \
                 session); Martin Kleppmann, \"How to do distributed locking\" (2016): a client \
                 cut off from the lock service keeps working on a lock it has lost",
        en: "As the holder starts its work, its instance is cut off from ZooKeeper, and \
             stays cut off longer than the 4 s session timeout while the holder works (6 s). \
             Its heartbeats never arrive: ZooKeeper expires the session, deletes the node, and \
             the next buyer takes the lock. The holder was never paused and never told; it \
             finishes and writes: the one item is sold twice.",
        zh: "持锁者刚开始处理业务，它所在的实例就和 ZooKeeper 断开了 9 秒，超过 4 秒的会话超时；\
             而持锁者要处理 6 秒业务。心跳发不出去：ZooKeeper 判定会话过期、删掉节点，下一个买家拿到锁。\
             持锁者既没有停顿，也没有收到任何通知；它处理完业务就写入：唯一的一件商品卖了两次。",
        ..SESSION_CUT_OFF
    },
    Scenario {
        id: "zookeeper-fenced-partitioned",
        tier: Tier::ZookeeperFenced,
        fault: Some(Fault::partition(HOLDER, 9_000)),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::gt("stale_writes_rejected", 0.0),
        ]),
        source: "001 lines 255–480 (the ZooKeeper lock), with Martin Kleppmann's fencing token \
                 (\"How to do distributed locking\", 2016, which 001 cites on line 491): the lock \
                 node's creation zxid",
        en: "The same cut, but the stock takes only writes whose token (the lock node's creation \
             zxid) is at least the highest it has seen. The next holder's token is higher; when \
             the cut-off holder finally writes, its write is refused. The partition still costs \
             the lock; the token keeps it from costing the stock.",
        zh: "同样的网络隔离，但库存只接受令牌（锁节点创建时的 zxid）不小于它见过的最大令牌的写入。下一个\
             持锁者的令牌更大；被隔开的持锁者最后写入时，它的写入被拒绝。网络分区照样让它丢了锁，\
             但有围栏令牌把关，库存不会因此出错。",
        ..SESSION_CUT_OFF
    },
    Scenario {
        id: "zookeeper-server-cut-off",
        tier: Tier::Zookeeper,
        wait_deadline_ms: 20_000,
        fault: Some(Fault::partition(ONE_ZOOKEEPER, 10_000)),
        store: StoreSetup::zookeeper(3).partitioned(),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("orders", 100.0),
        ]),
        timing_sensitive: true,
        source: "001 lines 481–504 (ZooKeeper consistent by design: a write is a quorum's); \
                 ZooKeeper's own documentation on quorums and sessions",
        en: "As the first holder starts its work, one of the three ZooKeeper servers is cut off \
             from the other two and from every instance. Alone it is no quorum: it stops serving \
             rather than answer on its own, and the clients it served move their sessions to \
             the two others (if it led, they elect a new leader). A lock node is written by a \
             quorum, so the majority side has every one: every item is sold once. Unlike a \
             cut-off Sentinel primary, a cut-off ZooKeeper server keeps nothing from the rest.",
        zh: "第一个持锁者开始处理业务时，三台 ZooKeeper 服务器中的一台与另外两台和所有实例断开了网络。\
             它自己构不成多数：宁可停止服务，也不独自应答；原先连着它的客户端把会话转到另外两台上（如果它是 \
             leader，另外两台会选出新的）。锁节点由多数派写入，多数一侧保有全部锁节点：每件商品只卖一次。\
             被隔开的哨兵主节点会独自发放锁，被隔开的 ZooKeeper 服务器不会。",
        ..BASE
    },
];
