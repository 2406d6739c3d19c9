//! The questions of the database chapters: PostgreSQL's advisory locks.

use super::shared::{CRASH, LATE_WRITE, LATE_WRITE_FENCED_REFUSED_LAST, QUEUE};
use super::{ask, Choice, Family, Question};

/// A lock with no lease and a holder that freezes: safe, and what it costs the line.
const FROZEN_HOLDER: Family = Family {
    reads: &["sent_503", "overlaps", "lost_updates"],
    options: &[
        Choice {
            en: "Nobody else gets in, and every buyer is answered in time",
            zh: "没有别人能进来，每个买家也都及时得到答复",
            sources: &[
                "belief: a frozen client is noticed and its lock handed on — held by \
                        those who expect a lock service to watch its holders",
            ],
            rule: "overlaps == 0 and lost_updates == 0 and sent_503 == 0",
        },
        Choice {
            en: "Safe, but the buyers behind it give up waiting (503)",
            zh: "不会出错，但排在后面的买家等到放弃（503）",
            sources: &["000:155"],
            rule: "overlaps == 0 and lost_updates == 0 and sent_503 > 0",
        },
        Choice {
            en:
                "Others get in, and the frozen holder's late write overwrites theirs (lost updates)",
            zh: "别人进来了，冻结的持锁者迟到的写入覆盖了他们的结果（丢失更新）",
            sources: &["002:636-640"],
            rule: "lost_updates > 0",
        },
        Choice {
            en: "Others get in, yet no update is lost",
            zh: "别人进来了，但没有丢失更新",
            sources: &[
                "belief: the database serializes the writes anyway, so a second holder \
                        does no harm — held by those who trust transactions to stand in for \
                        the lock",
            ],
            rule: "overlaps > 0 and lost_updates == 0",
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "postgres-normal",
        "The lock in PostgreSQL: each buyer's transaction asks for an advisory lock, and the \
         server queues the waiters; the lock has no lease, and nobody retries. 300 buyers at \
         once for 100 items, each waiting at most 30 s. What do the buyers get?",
        "把锁放进 PostgreSQL：每个买家的事务申请一把咨询锁，等待者由服务器排队；锁没有租约，\
         也没有人重试。300 个买家同时抢 100 件商品，每人最多等 30 秒。结果会怎样？",
        &QUEUE,
    ),
    ask(
        "postgres-crash-holding",
        "The lock in PostgreSQL, and the holder's process crashes inside the critical section; \
         the lock belongs to its database session. What do the other buyers get?",
        "锁放在 PostgreSQL 里，持锁进程在临界区里崩溃；这把锁属于它的数据库会话。其他买家会怎样？",
        &CRASH,
    ),
    ask(
        "postgres-freeze",
        "The holder's process freezes for 5 s after reading the stock; its connection stays \
         open, and the lock has no lease. Each buyer waits at most 2 s. What happens?",
        "持锁进程读完库存后冻结 5 秒；它的连接没断，锁也没有租约。每个买家最多等 2 秒。\
         会发生什么？",
        &FROZEN_HOLDER,
    ),
    ask(
        "postgres-session-timeout",
        "The same 5 s freeze, but the server ends a session that sits idle inside its \
         transaction for 1.5 s. The stock lives in Redis, not in PostgreSQL, and the frozen \
         holder writes it when it wakes. What happens?",
        "同样冻结 5 秒，但服务器会结束在事务里空闲超过 1.5 秒的会话。库存放在 Redis 里，\
         不在 PostgreSQL 里，冻结的持锁者醒来后照样写库存。会发生什么？",
        &LATE_WRITE,
    ),
    ask(
        "postgres-fenced",
        "The same timeout and freeze, but each holder, once it has the lock, takes a \
         sequence's next value as its token and sends it with each write to the stock. What \
         happens?",
        "同样的超时和冻结，但每个持锁者拿到锁后从序列里取下一个值作为令牌，\
         每次写库存都带上它。会发生什么？",
        &LATE_WRITE_FENCED_REFUSED_LAST,
    ),
];
