//! The questions of the ZooKeeper chapters.

use super::shared::{
    AVAILABILITY, AVAILABILITY_PARTIAL_FIRST, CRASH, LATE_WRITE_FENCED_REFUSED_LAST,
    LATE_WRITE_LOST_FIRST, QUEUE,
};
use super::{ask, Question};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "zookeeper-normal",
        "The lock in ZooKeeper, as Curator takes it: each buyer creates an ephemeral \
         sequential node and waits for the node just ahead of its own to go; the lock has no \
         lease, and nobody retries. 300 buyers at once for 100 items, each waiting at most \
         20 s. What do the buyers get?",
        "把锁放进 ZooKeeper，做法和 Curator 一样：每个买家创建一个临时顺序节点，等排在自己前面的\
         那个节点消失；锁没有租约，也没有人重试。300 个买家同时抢 100 件商品，每人最多等 20 秒。\
         结果会怎样？",
        &QUEUE,
    ),
    ask(
        "zookeeper-crash-holding",
        "The lock in ZooKeeper, with a session timeout of 4 s; the holder's process crashes \
         inside the critical section. What do the other buyers get?",
        "锁放在 ZooKeeper 里，会话超时设为 4 秒；持锁进程在临界区里崩溃。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "zookeeper-session-expiry",
        "The holder's process freezes for 6 s after reading the stock, past its 4 s session \
         timeout, and writes the stock when it wakes. What happens?",
        "持锁进程读完库存后冻结 6 秒，超过了 4 秒的会话超时，醒来后照样写库存。会发生什么？",
        &LATE_WRITE_LOST_FIRST,
    )
    .paired("reentrant-watchdog-freeze"),
    ask(
        "zookeeper-fenced",
        "The same 6 s freeze, but the holder sends a token with each write to the stock: the \
         zxid at which its lock node was created, which is higher for every node created \
         later. What happens?",
        "同样冻结 6 秒，但持锁者每次写库存都带上一个令牌：它的锁节点创建时的 zxid，\
         越晚创建的节点 zxid 越大。会发生什么？",
        &LATE_WRITE_FENCED_REFUSED_LAST,
    ),
    ask(
        "zookeeper-node-down",
        "Three ZooKeeper servers; one is killed as the sale starts. What do the 300 buyers get?",
        "三台 ZooKeeper 服务器；开卖时其中一台被杀掉。这 300 个买家的请求结果如何？",
        &AVAILABILITY_PARTIAL_FIRST,
    ),
    ask(
        "zookeeper-quorum-lost",
        "Three ZooKeeper servers; two are killed as the sale starts. What do the 20 buyers get?",
        "三台 ZooKeeper 服务器；开卖时其中两台被杀掉。这 20 个买家的请求结果如何？",
        &AVAILABILITY,
    ),
];
