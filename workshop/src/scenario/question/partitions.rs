//! The questions of the partition chapters: links cut, every process still running.

use super::shared::{AVAILABILITY, ONE_ITEM, OVERSOLD};
use super::{ask, Question};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "sentinel-split-brain",
        "Sentinel, 40 items, 120 buyers: the primary is cut off from the Sentinels, the \
         replica and two instances, but not from app1, for 15 s. How many items are sold \
         beyond the stock?",
        "哨兵模式，40 件商品，120 个买家：主节点与哨兵、从节点和两个实例断开 15 秒，\
         只有 app1 还连得上它。超卖会有多少？",
        &OVERSOLD,
    ),
    ask(
        "sentinel-min-replicas",
        "The same cut, with min-replicas-to-write 1: a primary that has not heard from a \
         replica for a second refuses writes. What do the buyers get?",
        "同样的网络隔离，但配置了 min-replicas-to-write 1：主节点一秒没收到从节点的确认就拒绝写入。\
         买家会得到什么？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-minority-partition",
        "Redlock: two of the five masters are cut off from everyone. What do the 20 buyers get?",
        "Redlock：五个主节点中有两个被网络隔开，谁也连不上它们。20 个买家会得到什么？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-majority-partition",
        "Redlock: three of the five masters are cut off as the first holder starts its work. \
         What do the 20 buyers get?",
        "Redlock：第一个持锁者开始处理业务时，五个主节点中有三个被网络隔开。20 个买家会得到什么？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-holder-cut-off",
        "Redlock, one item: the holder wins a majority, then its instance is cut off from all \
         five masters for 6 s; its work takes 3 s, its lease is 1 s. How often is the item sold?",
        "Redlock，一件商品：持锁者拿到多数票后，它所在的实例与五个主节点全部断开 6 秒，\
         而它要处理 3 秒业务，租约只有 1 秒。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "watchdog-holder-cut-off",
        "One Redis, the watchdog lock, one item: the holder's instance is cut off from the lock \
         store while it works; the holder is not paused. How often is the item sold?",
        "一个 Redis、带看门狗的锁、一件商品：持锁者处理业务时，它所在的实例和锁存储断开了网络；\
         持锁者并没有停顿。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "fenced-holder-cut-off",
        "The same cut, with a fencing token that the stock checks. How often is the item sold?",
        "同样的网络隔离，但有库存会校验的围栏令牌（fencing token）。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "postgres-holder-cut-off",
        "The same cut on the database's lock: the holder's instance loses PostgreSQL for 6 s \
         while it works. How often is the one item sold?",
        "同样的网络隔离，这次是数据库的锁：持锁者处理业务时，它所在的实例和 PostgreSQL 断开 6 秒。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "zookeeper-client-partitioned",
        "ZooKeeper, one item: the holder's instance is cut off for 9 s, longer than its 4 s \
         session timeout, while it works. How often is the item sold?",
        "ZooKeeper，一件商品：持锁者处理业务时，它所在的实例断开 9 秒，超过了 4 秒的会话超时。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "zookeeper-fenced-partitioned",
        "The same cut, but the stock takes only writes whose token (the node's creation zxid) \
         is at least the highest it has seen. How often is the item sold?",
        "同样的网络隔离，但库存只接受令牌（节点创建时的 zxid）不小于它见过的最大令牌的写入。\
         这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "zookeeper-server-cut-off",
        "Three ZooKeeper servers; one is cut off from the other two and from every instance. \
         What do the 300 buyers get?",
        "三台 ZooKeeper 服务器；其中一台与另外两台和所有实例断开了网络。300 个买家会得到什么？",
        &AVAILABILITY,
    ),
];
