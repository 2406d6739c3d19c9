//! The questions of the partition chapters: links cut, every process still running.

use super::shared::{
    AVAILABILITY, AVAILABILITY_PARTIAL_FIRST, ONE_ITEM, ONE_ITEM_FENCED_REFUSED_SECOND, OVERSOLD,
};
use super::{ask, Choice, Family, Question};

/// A cut that leaves a lock service without the majority (or the replica) it needs: what the
/// cut does to the buyers from then on. It reads no count of orders: a sale already under way
/// when the cut came may finish or not, and is not what the cut did.
const CUT: Family = Family {
    reads: &["sent_503", "oversold"],
    options: &[
        Choice {
            en: "Every buyer is answered (sold, or sold out), nothing oversold",
            zh: "每个买家都得到答复（买到或售罄），没有超卖",
            sources: &[
                "002:604",
                "belief: a cut is not a crash, every server still runs, so \
                        the lock keeps working — held by those who count only dead processes as \
                        failures",
            ],
            rule: "oversold == 0 and sent_503 == 0",
        },
        Choice {
            en: "Nothing oversold, but once the cut begins, some buyers are refused (503)",
            zh: "没有超卖，但从网络隔离开始，有买家被拒绝（503）",
            sources: &["002:609"],
            rule: "oversold == 0 and sent_503 > 0",
        },
        Choice {
            en: "Items are oversold: each side of the cut grants the lock",
            zh: "出现超卖：网络隔离的两边各自发放锁",
            sources: &["001:94", "002:584"],
            rule: "oversold > 0",
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "sentinel-split-brain",
        "Sentinel, 40 items, 120 buyers: the primary is cut off from the Sentinels, the \
         replica and two of the three instances, but not from app1, for 15 s. How many items \
         are sold beyond the stock?",
        "哨兵模式，40 件商品，120 个买家：主节点与哨兵、从节点以及三个实例中的两个断开 15 秒，\
         只有 app1 还连得上它。会超卖多少件？",
        &OVERSOLD,
    ),
    ask(
        "sentinel-min-replicas",
        "The same cut, with min-replicas-to-write 1 and a lag of 1 s allowed, and one replica \
         in all. What do the buyers get from the cut on?",
        "同样的网络隔离，但配置了 min-replicas-to-write 1，允许的复制延迟是 1 秒，而且只有一个从节点。\
         从网络隔离开始，买家的请求结果如何？",
        &CUT,
    ),
    ask(
        "redlock-minority-partition",
        "Redlock: two of the five masters are cut off from everyone. What do the 20 buyers get?",
        "Redlock：五个主节点中有两个被网络隔开，谁也连不上它们。这 20 个买家的请求结果如何？",
        &AVAILABILITY,
    ),
    ask(
        "redlock-majority-partition",
        "Redlock: three of the five masters are cut off from everyone for 10 s, as the first \
         holder starts its work. What do the 20 buyers get from the cut on?",
        "Redlock：第一个持锁者开始处理业务时，五个主节点中有三个被网络隔开 10 秒，谁也连不上它们。\
         从网络隔离开始，这 20 个买家的请求结果如何？",
        &CUT,
    ),
    ask(
        "redlock-holder-cut-off",
        "Redlock, one item: the holder wins a majority, then its instance is cut off from all \
         five masters for 6 s; its work takes 3 s, its lease is 1 s, and the stock is in a \
         store it still reaches. How often is the item sold?",
        "Redlock，一件商品：持锁者拿到多数票后，它所在的实例与五个主节点全部断开 6 秒；\
         它要处理 3 秒业务，租约只有 1 秒，而存放库存的地方它仍然连得上。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "watchdog-holder-cut-off",
        "One Redis, Redisson's lock() with its watchdog, one item: the holder's instance is cut \
         off from the lock store while it works, but still reaches the stock; the holder is \
         not paused. How often is the item sold?",
        "一个 Redis、带看门狗的 Redisson lock()、一件商品：持锁者处理业务时，它所在的实例和锁存储\
         断开了网络，但仍连得上库存；持锁者本身并没有停顿。这件商品会卖出几次？",
        &ONE_ITEM,
    )
    .paired("zookeeper-client-partitioned"),
    ask(
        "fenced-holder-cut-off",
        "The same cut, but every grant of the lock comes with a fencing token one higher than \
         the last, and the holder sends its token with each write to the stock. How often is \
         the item sold?",
        "同样的网络隔离，但每次发放锁都附带一个比上一次大 1 的围栏令牌，持锁者每次写库存\
         都带上自己的令牌。这件商品会卖出几次？",
        &ONE_ITEM_FENCED_REFUSED_SECOND,
    )
    .paired("fenced-freeze"),
    ask(
        "postgres-holder-cut-off",
        "The same cut on the database's lock: the holder's instance loses PostgreSQL for 6 s \
         while it works, and the stock lives in Redis, which it still reaches. How often is the \
         one item sold?",
        "同样的网络隔离，这次是数据库的锁：持锁者处理业务时，它所在的实例和 PostgreSQL 断开 6 秒，\
         而库存在 Redis 里，它仍然连得上。这件商品会卖出几次？",
        &ONE_ITEM,
    ),
    ask(
        "zookeeper-client-partitioned",
        "ZooKeeper, one item: the holder's instance is cut off from ZooKeeper for 9 s, longer \
         than its 4 s session timeout, while it works; it still reaches the stock. How often \
         is the item sold?",
        "ZooKeeper，一件商品：持锁者处理业务时，它所在的实例和 ZooKeeper 断开 9 秒，超过了 4 秒的\
         会话超时；库存它仍然连得上。这件商品会卖出几次？",
        &ONE_ITEM,
    )
    .paired("watchdog-holder-cut-off"),
    ask(
        "zookeeper-fenced-partitioned",
        "The same cut, but the holder sends a token with each write to the stock: the zxid at \
         which its lock node was created. How often is the item sold?",
        "同样的网络隔离，但持锁者每次写库存都带上一个令牌：它的锁节点创建时的 zxid。\
         这件商品会卖出几次？",
        &ONE_ITEM_FENCED_REFUSED_SECOND,
    ),
    ask(
        "zookeeper-server-cut-off",
        "Three ZooKeeper servers; one is cut off from the other two and from every instance. \
         What do the 300 buyers get?",
        "三台 ZooKeeper 服务器；其中一台与另外两台和所有实例断开了网络。这 300 个买家的请求结果如何？",
        &AVAILABILITY_PARTIAL_FIRST,
    ),
];
