//! The questions of the chapters beyond one Redis: Sentinel and Cluster failovers, restarts
//! and persistence, Redlock.

use super::shared::{AVAILABILITY, LATE_WRITE_LOST_FIRST, ONE_ITEM_MOST_FIRST, VALIDITY};
use super::{ask, Question};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "failover-loses-lock",
        "One item, four buyers, the lock store behind Sentinel: a primary and one replica, \
         replicated asynchronously. The primary dies right after it acknowledged the holder's \
         lock, and Sentinel promotes the replica. How often is the item sold?",
        "一件商品、四个买家，锁存储由哨兵管理：一个主节点、一个从节点，异步复制。主节点刚向持锁者\
         确认加锁成功就宕机了，哨兵把从节点提升为新主节点。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .paired("cluster-failover-loses-lock"),
    ask(
        "failover-sync-replicas",
        "The same failover, but every lock write waits (WAIT 1) until the replica has it. How \
         often is the item sold?",
        "同样的主从切换，但每次加锁写入都等待（WAIT 1）从节点收到。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    ),
    ask(
        "cluster-failover-loses-lock",
        "A Redis Cluster: three masters, each with a replica, replicated asynchronously. The \
         master that owns the lock's slot dies right after it acknowledged the holder's lock, \
         and its replica takes over. How often is the one item sold?",
        "Redis Cluster：三个主节点，各带一个从节点，异步复制。负责锁所在槽的主节点刚向持锁者确认\
         加锁成功就宕机，由它的从节点接管。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .paired("failover-loses-lock"),
    ask(
        "cluster-failover-sync-replicas",
        "The same shard failover, but every lock write waits (WAIT 1) for that master's \
         replica. How often is the item sold?",
        "同样的分片主从切换，但每次加锁写入都等待（WAIT 1）该主节点的从节点收到。\
         这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    ),
    ask(
        "restart-loses-lock",
        "The locks live in one Redis without persistence; the stock lives in another Redis, \
         which keeps running. Right after the holder takes the lock, the lock store crashes \
         and restarts. How often is the one item sold?",
        "锁放在一个没有开启持久化的 Redis 里；库存放在另一个 Redis 里，一直正常运行。持锁者刚拿到锁，\
         存放锁的那个 Redis 就崩溃并重启了。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .paired("redlock-restart-no-fsync"),
    ask(
        "restart-rdb-loses-recent-lock",
        "The same crash of the lock store, with RDB snapshots by the save rules Redis shipped by default up to 6.0 \
         (900 s / 300 s / 60 s). How often is the item sold?",
        "存放锁的 Redis 同样崩溃重启，这次开启了 RDB 快照，按 Redis 6.0 及以前默认的 save 规则\
         （900 秒 / 300 秒 / 60 秒）。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    ),
    ask(
        "restart-aof-keeps-lock",
        "The same crash of the lock store, with an append-only file fsynced before every reply \
         (appendfsync always). How often is the item sold?",
        "存放锁的 Redis 同样崩溃重启，这次开启了 AOF，每次应答前都 fsync（appendfsync always）。\
         这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    ),
    ask(
        "redlock-minority-down",
        "Redlock on five independent masters, a lock needing three; two masters are killed as \
         the sale starts. What do the 300 buyers get?",
        "红锁（Redlock）部署在五个相互独立的主节点上，在其中三个上加锁成功才算拿到锁；开卖时其中两个被杀掉。\
         这 300 个买家的请求结果如何？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-majority-down",
        "Redlock again, and three of the five masters are killed. What do the 20 buyers get?",
        "还是 Redlock，这次五个主节点中有三个被杀掉。这 20 个买家的请求结果如何？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-restart-no-fsync",
        "Redlock, one item: the holder's lock stands on exactly three masters. One of those \
         three crashes and restarts; it has no persistence. How often is the item sold?",
        "Redlock，一件商品：持锁者的锁刚好落在三个主节点上。这三个中有一个崩溃后重启，\
         它没有开启持久化。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    )
    .paired("restart-loses-lock"),
    ask(
        "redlock-restart-fsync-always",
        "The same crash, with every master fsyncing its append-only file before each reply. \
         How often is the item sold?",
        "同样的崩溃，但每个主节点每次应答前都把 AOF 刷到磁盘（fsync）。这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    ),
    ask(
        "redlock-clock-jump",
        "Redlock, one item: right after the holder takes its 20 s lock, the clocks of the three \
         masters that granted it jump 30 s forward. How often is the item sold?",
        "Redlock，一件商品：持锁者刚拿到租约 20 秒的锁，给它投票的三个主节点的时钟就向前跳了 30 秒。\
         这件商品会卖出几次？",
        &ONE_ITEM_MOST_FIRST,
    ),
    ask(
        "redlock-freeze",
        "Redlock on five masters; the holder's process freezes for 1.2 s after reading the \
         stock, past its 300 ms lease, and writes the stock when it wakes. What happens?",
        "Redlock 部署在五个主节点上；持锁进程读完库存后冻结 1.2 秒，超过了 300 毫秒的租约，\
         醒来后照样写库存。会发生什么？",
        &LATE_WRITE_LOST_FIRST,
    )
    .paired("zookeeper-session-expiry"),
    ask(
        "redlock-validity-runs-out",
        "Redlock with a 50 ms lease; one master is stopped for 80 ms as a buyer asks, so the \
         buyer's third vote arrives 80 ms after it started asking. What happens?",
        "Redlock，租约 50 毫秒；买家申请时一个主节点被暂停 80 毫秒，所以这个买家拿到第三票时，\
         距它开始申请已经过了 80 毫秒。会发生什么？",
        &VALIDITY,
    ),
];
