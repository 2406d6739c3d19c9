//! The questions of the chapters beyond one Redis: Sentinel and Cluster failovers, restarts
//! and persistence, Redlock.

use super::shared::{AVAILABILITY, LATE_WRITE, ONE_ITEM, VALIDITY};
use super::{ask, Question};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "failover-loses-lock",
        "One item, four buyers, the lock behind Sentinel. The primary dies right after the \
         holder's lock is written, before its replica got it; Sentinel promotes the replica. \
         How often is the item sold?",
        "一件商品、四个买家，锁存储由哨兵管理。持锁者的锁刚写到主节点，从节点还没收到，\
         主节点就宕机了；哨兵把从节点提升为新主节点。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "failover-sync-replicas",
        "The same failover, but every lock write waits (WAIT 1) until the replica has it. How \
         often is the item sold?",
        "同样的主从切换，但每次加锁写入都等待（WAIT 1）从节点收到。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "cluster-failover-loses-lock",
        "A Redis Cluster: three masters, each with a replica. The master that owns the lock's \
         slot dies before its replica got the lock, and the replica takes over. How often is \
         the one item sold?",
        "Redis Cluster：三个主节点，各带一个从节点。负责锁所在槽的主节点在从节点收到锁之前宕机，\
         从节点接管。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "cluster-failover-sync-replicas",
        "The same shard failover, but every lock write waits (WAIT 1) for that master's \
         replica. How often is the item sold?",
        "同样的分片主从切换，但每次加锁写入都等待（WAIT 1）该主节点的从节点收到。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "restart-loses-lock",
        "The lock store's Redis, without persistence, crashes right after the holder took the \
         lock and restarts. How often is the one item sold?",
        "锁所在的 Redis 没有开启持久化，持锁者刚拿到锁它就崩溃并重启。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "restart-rdb-loses-recent-lock",
        "The same crash, with RDB snapshots by the classic save rules (900 s / 300 s / 60 s). \
         How often is the item sold?",
        "同样的崩溃，开启了 RDB 快照，按经典的保存规则（900 秒 / 300 秒 / 60 秒）。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "restart-aof-keeps-lock",
        "The same crash, with an append-only file fsynced before every reply (appendfsync \
         always). How often is the item sold?",
        "同样的崩溃，开启了 AOF，每次应答前都 fsync（appendfsync always）。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "redlock-minority-down",
        "Redlock on five independent masters; two of them are killed as the sale starts. What \
         do the 300 buyers get?",
        "Redlock 用五个相互独立的主节点；开卖时其中两个被杀掉。300 个买家会得到什么？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-majority-down",
        "Redlock again, and three of the five masters are killed. What do the 20 buyers get?",
        "还是 Redlock，这次五个主节点中有三个被杀掉。20 个买家会得到什么？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-restart-no-fsync",
        "Redlock, one item: the holder's lock stands on exactly three masters, and one of them \
         crashes and restarts empty (no persistence). How often is the item sold?",
        "Redlock，一件商品：持锁者的锁刚好落在三个主节点上，其中一个崩溃后空着重启（没有持久化）。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "redlock-restart-fsync-always",
        "The same crash, with every master fsyncing its append-only file before each reply. \
         How often is the item sold?",
        "同样的崩溃，但每个主节点每次应答前都把 AOF 刷到磁盘（fsync）。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "redlock-clock-jump",
        "Redlock, one item: right after the holder takes its 20 s lock, the clocks of three \
         masters that granted it jump 30 s forward. How often is the item sold?",
        "Redlock，一件商品：持锁者刚拿到 20 秒租约的锁，给它投票的三个主节点的时钟就向前跳了 30 秒。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "redlock-freeze",
        "Redlock on five masters; the holder's process freezes for 1.2 s after reading the \
         stock, past its 300 ms lease. What happens?",
        "Redlock 用五个主节点；持锁进程读完库存后冻结 1.2 秒，超过了 300 毫秒的租约。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "redlock-validity-runs-out",
        "Redlock with a 50 ms lease; one master is stopped for 80 ms as a buyer asks, so the \
         majority comes in after the lease is spent. What happens?",
        "Redlock，租约 50 毫秒；买家申请时一个主节点被停住 80 毫秒，凑齐多数时租约已经耗尽。\
         会发生什么？",
        &VALIDITY,
    ),
];
