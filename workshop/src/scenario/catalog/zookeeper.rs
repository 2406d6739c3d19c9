//! ZooKeeper: the lock as an ephemeral sequential node — the normal run, a holder that
//! crashes, a session that expires, fencing by the node's creation zxid, a server down and the
//! quorum lost (refusing rather than answering wrongly).
//!
//! Sources: 001 lines 255–504 (ZooKeeper locks, Curator's `InterProcessMutex`, the comparison
//! with Redis); Martin Kleppmann's fencing token; the CAP theorem for the CP/AP words 001
//! does not use.

use oversell_api::{Fault, FaultKind, Tier};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The ZooKeeper chapters' source.
const ZOOKEEPER_SOURCE: &str = "001 lines 255–480 (ephemeral sequential nodes, the lowest \
    holds the lock, each waiter watches its predecessor, its unlock at line 394, Curator's \
    InterProcessMutex) and 481–504 (the comparison: ZooKeeper strongly consistent by design, Redis' data not; CP and AP \
    are the CAP theorem's words for it, not 001's)";

/// The ZooKeeper session timeout `oversell up` gives its instances (`ZOOKEEPER_SESSION_MS`):
/// what stands in for a lease there.
const ZOOKEEPER_SESSION_MS: u64 = 4_000;

/// What the ZooKeeper chapters run on unless they say otherwise: one server, and buyers who
/// wait up to 20 s for their turn.
const ZOOKEEPER: Scenario = Scenario {
    wait_deadline_ms: 20_000,
    store: StoreSetup::zookeeper(1),
    ..BASE
};

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "zookeeper-normal",
        tier: Tier::Zookeeper,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("orders", 100.0),
        ]),
        source: ZOOKEEPER_SOURCE,
        en: "The lock in ZooKeeper, as Curator takes it: each buyer creates an ephemeral \
             sequential node, the lowest holds the lock, and every other buyer watches only the \
             node just ahead of it, so a release wakes one waiter, not a herd. No lease to tune, \
             no retry loop: every item sold once, in arrival order. 001's hand-written version \
             (lines 374–384) slips here: a waiter whose predecessor is already gone when it \
             looks goes on without recording its own node, so its unlock cannot delete it, and \
             everyone behind it waits until its session ends; the recipe here keeps its node's \
             name from the moment it creates it. \
             It slips before that too (lines 358–365): it sorts every node under the shared \
             /locks, whatever lock it is for, so a lock's buyers queue behind the \
             nodes of other locks; here each room has a dir of its own. \
             And its unlock (line 394) tests `null != nodeId`: the ThreadLocal itself, which is \
             never null, not the node name it holds. After the slip above that name is null, \
             the delete is called without a path and throws (no catch there takes it), and the \
             `nodeId.remove()` after it never runs.",
        zh: "把锁放进 ZooKeeper，做法和 Curator 一样：每个买家创建一个临时顺序节点，序号最小的持有锁，\
             其余买家只监听排在自己前面的那个节点，释放时只唤醒一个等待者，不会出现羊群效应（惊群）。\
             没有租约要调，也没有重试循环：每件商品只卖一次，先到先得。001 手写的版本（第 374–384 行）\
             在这里有个疏漏：等待者去看时，如果前一个节点已经没了，它就直接往下走，却没有记下自己的节点，\
             解锁时删不掉它，后面的人都得等到它的会话结束；这里的实现从创建节点的那一刻起就记着它的名字。\
             在这之前它还有一处疏漏（第 358–365 行）：它把公共目录 /locks 下的所有节\
             点放在一起排序，不管属于哪把锁，于是一把锁的买家要排在别的锁的节点后面；\
             这里每个房间都有自己的目录。\
             它的解锁（第 394 行）判断的是 `null != nodeId`：这是 ThreadLocal 对象本身，永远不是 null，\
             而不是它里面存的节点名。出了上面那个疏漏之后节点名是 null，delete 拿不到路径就抛出异常\
             （那里的 catch 接不住它），后面的 `nodeId.remove()` 也就执行不到。",
        ..ZOOKEEPER
    },
    Scenario {
        id: "zookeeper-crash-holding",
        tier: Tier::Zookeeper,
        ttl_ms: ZOOKEEPER_SESSION_MS,
        fault: Some(Fault::new(FaultKind::CrashHolding, 0)),
        buyers: 30,
        expect: Expect::StallThenResume,
        source: ZOOKEEPER_SOURCE,
        en: "The holder's process dies inside the critical section. Its node is ephemeral: when \
             its session times out (4 s here), ZooKeeper deletes it and the next buyer goes on. \
             The stall is one session timeout, and nobody chose a lease for it: compare \
             setnx-crash, which never recovers. \
             001's own waiter (lines 381–382, told at line 281) takes the deletion of the node \
             ahead of it as its turn without looking again. Here that node was the holder's, \
             so it is; but a waiter ahead that dies or gives up deletes its node too, and then \
             two hold the lock at once. Curator (line 430) and this recipe list the nodes \
             again first.",
        zh: "持锁进程在临界区里崩溃。它的节点是临时节点：会话超时（这里是 4 秒）后 ZooKeeper 把它删掉，\
             下一个买家接着卖。停顿的时间就是一次会话超时，不需要谁去设置租约；\
             对比 setnx-crash，那里永远恢复不了。\
             001 手写的等待者（第 381–382 行，第 281 行也这样讲）一看到前面的节点被\
             删，就认定轮到自己了，不再核对一遍。这里被删的正是持锁者的节点，所以没错；\
             可如果前面是个等待者，它死掉或放弃时同样会删掉节点，这时就有两个人同时持锁。\
             Curator（第 430 行）和本项目的实现都会先重新列一遍节点。",
        ..ZOOKEEPER
    },
    Scenario {
        id: "zookeeper-session-expiry",
        tier: Tier::Zookeeper,
        ttl_ms: ZOOKEEPER_SESSION_MS,
        fault: Some(Fault::new(FaultKind::Freeze, 6_000)),
        buyers: 30,
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
        ..ZOOKEEPER
    },
    Scenario {
        id: "zookeeper-fenced",
        tier: Tier::ZookeeperFenced,
        ttl_ms: ZOOKEEPER_SESSION_MS,
        fault: Some(Fault::new(FaultKind::Freeze, 6_000)),
        buyers: 30,
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::gt("stale_writes_rejected", 0.0),
        ]),
        timing_sensitive: true,
        source: "001 lines 255–480, the ZooKeeper lock, with Martin Kleppmann's fencing token \
                 (\"How to do distributed locking\", 2016, the post 001 cites on line 491): the \
                 lock node's creation zxid",
        en: "The same freeze, but the holder's token is its node's creation zxid, which only \
             grows, and the stock refuses a write with a lower token than it has seen: the stale \
             write is rejected. ZooKeeper can hand out such a token for free; Redlock cannot.",
        zh: "同样的冻结，但持锁者的令牌是它的节点创建时的 zxid，只增不减；库存只接受令牌不小于它见过的\
             最大令牌的写入：这次陈旧写入被拒绝了。ZooKeeper 天生就能发放这样的围栏令牌（fencing token），\
             Redlock 不能。",
        ..ZOOKEEPER
    },
    Scenario {
        id: "zookeeper-node-down",
        tier: Tier::Zookeeper,
        fault: Some(Fault::on_nodes(FaultKind::ZkNodeDown, 8_000, 1)),
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
        ..ZOOKEEPER
    },
    Scenario {
        id: "zookeeper-quorum-lost",
        tier: Tier::Zookeeper,
        wait_deadline_ms: 2_000,
        fault: Some(Fault::on_nodes(FaultKind::ZkNodeDown, 8_000, 2)),
        buyers: 20,
        store: StoreSetup::zookeeper(3),
        expect: Expect::Figures(&[
            Check::eq("orders", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("sent_503", 20.0),
        ]),
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
        ..ZOOKEEPER
    },
];
