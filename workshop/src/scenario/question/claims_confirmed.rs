//! Claims of the articles that the runs confirm, put to the class beside those they refute:
//! a deck whose claims were all wrong would teach a class to vote against the article
//! instead of reading it. Each is stated as the article makes it, on a chapter whose figures
//! answer it, and the option that believes it (`claims(line, option)`) is where the run
//! lands. No option names the article: the class weighs the claim, not its source.

use super::field::LATE_UNLOCK;
use super::shared::{AVAILABILITY_REFUSED_FIRST, CRASH, LATE_WRITE_FENCED, ONE_ITEM};
use super::{ask_as, Family, Question};

/// [`LATE_UNLOCK`] with the refused unlock last.
const LATE_UNLOCK_REFUSED_LAST: Family = Family {
    reads: LATE_UNLOCK.reads,
    options: &LATE_UNLOCK.reordered([0, 1, 3, 2]),
};

pub(super) static QUESTIONS: &[Question] = &[
    // 002:137: a holder that dies before its finally leaves a key with no expiry for good.
    ask_as(
        "claim-crash-leaves-key",
        "setnx-crash",
        "002 (line 137) stops the service at a breakpoint inside the sale, to stand for a \
         machine that goes down: the code never reaches its finally block, the unlock never \
         runs, and a key with no expiry stays for good. Try it: SETNX takes the lock, DEL in \
         a finally block frees it, and nothing else touches the key; the holder's process \
         crashes inside the critical section, and each buyer waits at most 1.5 s. What do the \
         other buyers get?",
        "002（第 137 行）在销售代码里打断点、把服务关掉，以此模拟机器宕机：代码走不到 finally \
         块，解锁不会执行，没有过期时间的键会一直留着。试试看：SETNX 加锁，在 finally 块里用 \
         DEL 解锁，此外再没有任何命令操作这个键；持锁进程在临界区里崩溃，每个买家最多等 1.5 \
         秒。其他买家会怎样？",
        &CRASH,
    )
    .claims("002:137", 2),
    // 004:506: Redisson's unlock leaves a lock its thread does not hold and throws.
    ask_as(
        "claim-unlock-checks-owner",
        "unlock-after-expiry-refused",
        "004 (line 506) reads Redisson's unlock: its script leaves alone a lock that the \
         unlocking thread does not hold and answers nil, and unlock() then throws an \
         exception. Redisson's lock with a 200 ms lease of its own (no watchdog), 500 ms of \
         work, twelve buyers; each unlocks with that script when its work is done. What does \
         the unlock at the end of the work do?",
        "004（第 506 行）讲解 Redisson 的 unlock：锁如果不是解锁线程持有的，解锁脚本就不动它，\
         返回 nil，unlock() 随即抛出异常。Redisson 的锁，加锁时指定 200 毫秒的租约（不启动\
         看门狗），业务耗时 500 毫秒，十二个买家；每个买家做完业务就用这个脚本解锁。\
         业务做完时的解锁会怎样？",
        &LATE_UNLOCK_REFUSED_LAST,
    )
    .claims("004:506", 3),
    // 002:656: order the grants and the writes by a number, not by the clocks: a fence.
    ask_as(
        "claim-grant-order-fences",
        "fenced-freeze",
        "002 (line 656) would have a design lean less on clocks: let a distributed lock take \
         into account the order in which it was granted, as a distributed database orders its \
         writes by version numbers or logical clocks. Here every grant of the lock comes with \
         a number one higher than the last grant's, and the holder sends its number with each \
         write to the stock. The holder's process freezes for 1.2 s after reading the stock, \
         under a 300 ms lease. What happens?",
        "002（第 656 行）主张设计上少依赖时钟：分布式锁要考虑加锁的先后顺序，就像分布式数据库\
         用版本号或逻辑时钟来控制并发写入。这里每次发放锁都附带一个编号，比上一次发放的大 1，\
         持锁者每次写库存都带上自己的编号。持锁进程读完库存后冻结 1.2 秒，租约 300 毫秒。\
         会发生什么？",
        &LATE_WRITE_FENCED,
    )
    .claims("002:656", 2),
    // 002:619: Redlock keeps working with a minority of its masters down.
    ask_as(
        "claim-majority-survives-minority",
        "redlock-minority-down",
        "002 (line 619) counts fault tolerance among Redlock's strengths: with five or more \
         independent masters, when some of them fail more than half still work, and the lock \
         can still be taken. Five masters, a lock needing three; two masters are killed as the \
         sale starts. What do the 300 buyers get?",
        "002（第 619 行）把高容错列为 Redlock 的优点：部署五个以上相互独立的主节点，部分节点出\
         故障时仍有半数以上正常工作，照样能加锁。五个主节点，在三个上加锁成功才算拿到锁；开卖时\
         其中两个被杀掉。这 300 个买家的请求结果如何？",
        &AVAILABILITY_REFUSED_FIRST,
    )
    .claims("002:619", 2),
    // 002:705: AOF keeps every write before the last, which an fsync before each reply makes
    // true of a crash.
    ask_as(
        "claim-aof-keeps-last-write",
        "restart-aof-keeps-lock",
        "002 (line 705) sets AOF against RDB: with AOF, nothing written before the last write \
         is lost. The locks live in one Redis that appends every write to its append-only file \
         and fsyncs it before each reply (appendfsync always); the stock lives in another \
         Redis, which keeps running. Right after the holder takes the lock, the lock store \
         crashes and restarts. How often is the one item sold?",
        "002（第 705 行）拿 AOF 和 RDB 对比：开启 AOF，最后一次写入之前写下的数据一条也不会丢。\
         锁放在一个 Redis 里，它把每次写入追加到 AOF，并在每次应答前 fsync（appendfsync \
         always）；库存放在另一个 Redis 里，一直正常运行。持锁者刚拿到锁，存放锁的 Redis 就\
         崩溃并重启了。这件商品会卖出几次？",
        &ONE_ITEM,
    )
    .claims("002:705", 0),
];
