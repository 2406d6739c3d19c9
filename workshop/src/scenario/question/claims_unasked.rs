//! Errors of the articles the deck had not put to the class, each on a chapter's run that
//! answers it: 002's opening promise for `SET … NX` with a Lua release, 002's comment that
//! calls a `SETNX` then an `EXPIRE` one atomic line (with the correction the article itself
//! makes a few lines on), and 004's reading of Redisson's wait as renewing the lease.
//!
//! Two errors the articles make are not here, because no chapter's run answers them: 002's
//! first `sale()` (lines 64–69) retries by calling itself and drops what the call returns, a
//! fault of the answer a buyer is sent, which no figure of a run counts (the service's retry is
//! a loop, and every sale's answer reaches its buyer); and 002's table (line 706) calling RDB
//! faster for reads and writes than AOF, which no chapter measures (the write rates are
//! BENCHMARKS.md section 5's, a benchmark, not a run the class votes on).

use super::shared::{CRASH_STALL_FIRST, LATE_WRITE_LOST_FIRST, RELEASE_OVERLAP_LAST};
use super::{ask_as, Question};

pub(super) static QUESTIONS: &[Question] = &[
    // 002:16 promises exclusion from SET EX NX and a Lua release; the lease it sets is what
    // the diamond rung's slow work outlives. The class that believes it picks "nothing goes
    // wrong" (B).
    ask_as(
        "claim-set-nx-lua-excludes",
        "lua-release-slow-business",
        "002 (line 16) opens with the usual recipe: SET with EX and NX to take the lock, a Lua \
         script to release it. It says this keeps two clients from holding the same lock at \
         the same time, lets a lock be released without harm, and frees it by itself when \
         something goes wrong. Try it: SET NX with a 60 ms lease (PX counts in milliseconds \
         what EX counts in seconds), a release that deletes the key only if it still holds the \
         holder's own value, 150 ms of work, twelve buyers retrying every 5 ms. What happens?",
        "002（第 16 行）开篇给出常见做法：用带 EX 和 NX 的 SET 加锁，用 Lua 脚本释放锁。\
         文中说，这样多个客户端就不会同时持有同一把锁，解锁不会出错，出了意外锁也会自动释放。\
         试试看：SET NX 加锁，租约 60 毫秒（PX 以毫秒计，EX 以秒计）；释放时，键里仍是持锁者\
         自己的值才删除；业务耗时 150 毫秒，十二个买家每 5 毫秒重试一次。会发生什么？",
        &RELEASE_OVERLAP_LAST,
    )
    .claims("002:16", 1),
    // 002:150's comment says the lock and its expiry go on one line, to be atomic, above a
    // SETNX and a separate EXPIRE; 002:182 corrects it: not one line, so the expiry may never
    // be set. Asked with the correction, the class that believes the article picks the
    // deadlock (B), and the run confirms it.
    ask_as(
        "claim-same-line-atomic",
        "setnx-expire-crash-between",
        "002 (lines 150 and 182) heads a step of its code with a comment: taking the lock and \
         setting its expiry belong on one line, so that the two are atomic. Under the comment, SETNX takes the lock and a separate EXPIRE then sets its lease; a few lines \
         on, the article notes that the two are not on one line after all, so the expiry may \
         never be set. Here: SETNX, then EXPIRE with a 1 s lease; the holder crashes after the \
         SETNX and before the EXPIRE; each buyer waits at most 1.5 s. What do the other \
         buyers get?",
        "002（第 150、182 行）在一段代码上方加了一行注释：加锁和设过期时间要写在一行里，\
         两者才是原子的。注释下面，先用 SETNX 加锁，再用一条单独的 EXPIRE 设租约；几行之后，\
         文章自己指出这两步其实不在一行，不是原子的，过期时间可能根本没设上。这里：先 SETNX，\
         再 EXPIRE 设 1 秒的租约；持锁者执行完 SETNX、还没执行 EXPIRE 就崩溃了；每个买家最多等 \
         1.5 秒。其他买家会怎样？",
        &CRASH_STALL_FIRST,
    )
    .claims("002:150", 1),
    // 004:389 reads the waiting loop it prints (lines 358-376) as the acquire refreshing the
    // expiry; a waiter's retry sets nothing on the holder's lock. The chapter's fixed lease has
    // no watchdog, so nothing renews it. The class that believes it picks "nobody else gets
    // in" (B).
    ask_as(
        "claim-waiter-renews-lease",
        "reentrant-fixed-lease-slow-business",
        "004 (line 389) walks through Redisson's lock(): a buyer that finds the lock taken \
         subscribes to its release messages, waits at most the lock's remaining time to live, \
         then tries again; and the article says that the acquire, too, keeps refreshing the \
         lock's expiry. Redisson's lock with a fixed 600 ms lease, as lock(leaseTime) gives, \
         so no watchdog; the holder's work takes 1.2 s, and four more buyers wait for the lock \
         this way. What happens?",
        "004（第 389 行）讲解 Redisson 的 lock()：买家发现锁已被占用，就订阅这把锁的释放消息，\
         最多等锁剩余的存活时间（TTL），然后再试；文中还说，加锁这一步同样在不断刷新锁的\
         过期时间。Redisson 的锁，租约固定为 600 毫秒，就像 lock(leaseTime) 那样，所以没有\
         看门狗；持锁者的业务耗时 1.2 秒，另外四个买家都这样等锁。会发生什么？",
        &LATE_WRITE_LOST_FIRST,
    )
    .claims("004:389", 1),
];
