//! The questions of the database chapters: PostgreSQL's advisory locks.

use super::shared::{AVAILABILITY, CRASH, LATE_WRITE};
use super::{ask, Question};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "postgres-normal",
        "The lock in PostgreSQL: each buyer's transaction asks for an advisory lock, and the \
         server queues the waiters. 300 buyers, 100 items. What do the buyers get?",
        "把锁放进 PostgreSQL：每个买家的事务申请一把咨询锁，等待者由服务器排队。\
         300 个买家，100 件商品。买家会得到什么？",
        &AVAILABILITY,
    ),
    ask(
        "postgres-crash-holding",
        "The holder's process crashes inside the critical section; the lock belongs to its \
         database session. What do the other buyers get?",
        "持锁进程在临界区里崩溃；这把锁属于它的数据库会话。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "postgres-freeze",
        "The holder's process freezes for 5 s after reading the stock; its connection stays \
         open, and the lock has no lease. What happens?",
        "持锁进程读完库存后冻结 5 秒；它的连接没断，锁也没有租约。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "postgres-session-timeout",
        "The same 5 s freeze, but the server ends a session idle in its transaction for 1.5 s. \
         What happens?",
        "同样冻结 5 秒，但服务器会结束在事务里空闲 1.5 秒的会话。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "postgres-fenced",
        "The same timeout and freeze, but each holder takes a sequence's next value as its \
         token, and the stock checks it. What happens?",
        "同样的超时和冻结，但每个持锁者从序列里取下一个值作为令牌，库存会校验它。会发生什么？",
        &LATE_WRITE,
    ),
];
