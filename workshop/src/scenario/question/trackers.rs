//! The questions of the chapters from the trackers: a watchdog that renews for a holder that
//! died or got stuck, an acquire sent twice, a token no resource checks, an extend after the
//! lease ran out, a renewal in the wrong unit, a lock that waits for a lagging replica, a ZooKeeper node kept across a new
//! session, and a ZooKeeper release whose delete was lost.

use super::shared::LATE_WRITE_FENCED;
use super::{ask, Choice, Family, Question};

/// A holder whose worker died with its process alive, under a watchdog: how many are sold.
const DEAD_WORKER: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "None: all three buyers behind it wait out their 1.5 s deadline",
            zh: "一件也没卖出：后面三个买家都等满 1.5 秒的等待期限",
            sources: &[
                "belief: a renewal task belongs to the process, not to the thread that \
                        locked — held by those who have read Redisson's scheduler",
            ],
            rule: "orders == 0 and orders < initial_stock",
        },
        Choice {
            en: "All of them: a lease after the death, the lock is free again",
            zh: "全部卖出：持锁者死后过一个租约，锁就又空出来了",
            sources: &["001:152"],
            rule: "orders >= initial_stock",
        },
        Choice {
            en: "1 or more, not all: the first waiters give up, the later ones get in",
            zh: "卖出 1 件以上，但没卖完：先等的人放弃了，后来的人进去了",
            sources: &[
                "belief: a renewal notices its holder is gone after a few rounds and \
                        stops — held by those who expect a watchdog to watch its owner",
            ],
            rule: "orders >= 1 and orders < initial_stock",
        },
    ],
};

/// A holder stuck in its work under a watchdog: how many are sold.
const STUCK: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "All 4: the 300 ms lease frees a lock whose work goes on too long",
            zh: "4 件全部卖出：业务拖得太久，300 毫秒的租约到期就把锁放出来了",
            sources: &[
                "belief: a lease bounds how long any holder keeps a lock — held by \
                        those who set the lease to the longest work they expect",
            ],
            rule: "orders >= initial_stock",
        },
        Choice {
            en: "At most 1, the stuck holder's own: the others wait out their 1.5 s deadline",
            zh: "最多卖出 1 件，就是卡住的持锁者自己那件：其他人都等满 1.5 秒的等待期限",
            sources: &["001:151"],
            rule: "orders <= 1 and orders < initial_stock",
        },
        Choice {
            en: "2 or 3: the watchdog gives up after a few renewals and lets some in",
            zh: "卖出 2 到 3 件：看门狗续期几次就放手，放进来几个人",
            sources: &[
                "belief: auto-extension stops after a bounded number of renewals — \
                        held by users of libraries that cap them (pottery's num_extensions)",
            ],
            rule: "orders >= 2 and orders < initial_stock",
        },
    ],
};

/// An acquire sent again after its reply was lost: how many are sold.
const RETRIED: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "None: the first buyer waits for a lock it does not know it holds, and so \
                 do the others",
            zh: "一件也没卖出：第一个买家在等一把它不知道自己已经拿到的锁，其他人也在等",
            sources: &[
                "belief: a repeated lock command finds the key taken and waits — \
                        held by those who think of every lock as SET NX",
            ],
            rule: "orders == 0 and orders < initial_stock",
        },
        Choice {
            en: "All 3, one after another: asking again under the same owner is harmless",
            zh: "3 件依次全部卖出：用同一个持锁者标识再要一次锁，没什么害处",
            sources: &[
                "belief: a lock command is as safe to send again as a GET — held by \
                        those who leave the client's retries on for every command",
            ],
            rule: "orders >= initial_stock",
        },
        Choice {
            en: "1 or 2: the first buyer sells, and at least one buyer behind it waits out \
                 its 0.8 s deadline",
            zh: "卖出 1 到 2 件：第一个买家卖出了，它后面至少有一个买家等满 0.8 秒的等待期限",
            sources: &["001:191-195", "004:456-461"],
            rule: "orders >= 1 and orders < initial_stock",
        },
    ],
};

/// A holder paused past its lease that extends before it writes: what the stock shows. The
/// two extend chapters ask it side by side, in one order.
const EXTENDED: Family = Family {
    reads: &["orders", "initial_stock", "lost_updates"],
    options: &[
        Choice {
            en: "Fewer than 5 sold: the holder's extend fails, and it gives up its sale",
            zh: "卖出不到 5 件：持锁者延长租约失败，放弃了这笔销售",
            sources: &[
                "002:514-523",
                "belief: extending a lock whose lease ran out fails — held by the reporter \
                        of redlock-rb #36, who expected it as node-redlock and RedLock.net do",
            ],
            rule: "orders < initial_stock",
        },
        Choice {
            en: "All 5 sold, but the stock shows fewer sold than the orders: updates lost",
            zh: "5 件全部卖出，但库存显示卖出的比订单少：丢失更新",
            sources: &[
                "belief: a key that holds nothing is free to set again, so an extend may \
                        take it back — held by whoever wrote `exists == 0 or get == mine` \
                        (redlock-rb's lock script, redis-semaphore's refresh before #177)",
            ],
            rule: "orders >= initial_stock and lost_updates > 0",
        },
        Choice {
            en: "All 5 sold, and the stock agrees: the others waited for the holder",
            zh: "5 件全部卖出，库存也对得上：其他人一直在等这个持锁者",
            sources: &[
                "belief: a lock is held from its acquire to its release, whatever the lease \
                        — held by those who treat the lease as a crash guard only",
            ],
            rule: "orders >= initial_stock and lost_updates == 0",
        },
    ],
};

/// A compare-and-delete lock whose work outlasts its lease, its token kept per thread or per
/// sale: what the releases do. The two chapters ask it side by side, in one order.
const SCOPED: Family = Family {
    reads: &["foreign_releases", "overlaps"],
    options: &[
        Choice {
            en: "At least one release deletes a lock that another buyer holds",
            zh: "至少有一次释放删掉了另一个买家持有的锁",
            sources: &[
                "002:356",
                "belief: a token in a thread-local is shared by every task the thread runs \
                        — held by the reporter of aredis #119",
            ],
            rule: "foreign_releases > 0",
        },
        Choice {
            en: "No release deletes another's lock, and no two sales ever work at once",
            zh: "没有一次释放删掉别人的锁，也从来没有两笔销售同时处理业务",
            sources: &[
                "belief: a unique token and a compare-and-delete release make a lock safe \
                        whatever the work — held by those who stop at 000's diamond tier",
            ],
            rule: "foreign_releases == 0 and overlaps == 0",
        },
        Choice {
            en: "No release deletes another's lock, but sales do work at once",
            zh: "没有一次释放删掉别人的锁，但确实有销售同时处理业务",
            sources: &["000:366-410"],
            rule: "foreign_releases == 0 and overlaps > 0",
        },
    ],
};

/// Lock writes that wait for a replica that lags: when, and whether, the items sell.
const LAGGING: Family = Family {
    reads: &["orders", "initial_stock", "stall_ms"],
    options: &[
        Choice {
            en: "All 5 sold, and no gap between sales reaches 2 s: the lock lives on the \
                 primary, and it is up",
            zh: "5 件全部卖出，相邻两笔成交之间的空档都不到 2 秒：锁就在主节点上，而主节点一直在",
            sources: &["001:94"],
            rule: "orders >= initial_stock and stall_ms < 2000",
        },
        Choice {
            en: "All 5 sold, but nothing for 2 s or more first",
            zh: "5 件全部卖出，但在这之前有 2 秒或更久一件也没卖出",
            sources: &[
                "belief: a lock that waits for its replicas is only as available as \
                        they are — held by the Redisson users who met \"None of slaves were \
                        synced\" (#4706)",
            ],
            rule: "orders >= initial_stock and stall_ms >= 2000",
        },
        Choice {
            en: "Under 5: the lock stays unobtainable after the replica is back, and some \
                 buyers give up at their 6 s deadline",
            zh: "卖出不到 5 件：从节点恢复之后锁还是拿不到，有的买家等到 6 秒的等待期限就放弃了",
            sources: &[
                "belief: once the sync check has failed, the lock cannot be had again \
                        — held by the reporter of Redisson #4706, whose lock() then hung",
            ],
            rule: "orders < initial_stock",
        },
    ],
};

/// A renewal whose lease is given in seconds or in milliseconds to a script that reads
/// milliseconds: whether two work at once, and whether a sale is lost. The two chapters ask it
/// side by side, in one order.
const RENEWED_UNIT: Family = Family {
    reads: &["overlaps", "lost_updates"],
    options: &[
        Choice {
            en: "One at a time, yet a sale is written over",
            zh: "同一时刻只有一个人，可还是有一笔销售被覆盖了",
            sources: &[
                "belief: a renewal that succeeds leaves the lock as safe as before, whatever \
                        went wrong elsewhere — held by those who trust a reply of 1",
            ],
            rule: "overlaps == 0 and lost_updates > 0",
        },
        Choice {
            en: "One at a time, all 5 sold and the stock right",
            zh: "同一时刻只有一个人，5 件全部卖出，库存正确",
            sources: &["002:514-523"],
            rule: "overlaps == 0 and lost_updates == 0",
        },
        Choice {
            en: "Two buyers work at once, and a sale is written over",
            zh: "有两个买家同时处理业务，有一笔销售被覆盖了",
            sources: &[
                "belief: a lease's number means nothing without its unit — held by the \
                        reporter of Foundatio.Redis #73",
            ],
            rule: "overlaps > 0 and lost_updates > 0",
        },
        Choice {
            en: "Two buyers work at once, yet the stock comes out right",
            zh: "有两个买家同时处理业务，可库存结果是对的",
            sources: &[
                "belief: a compare-and-delete release repairs what an overlap did — held \
                        by those who take the release for the lock's whole safety",
            ],
            rule: "overlaps > 0 and lost_updates == 0",
        },
    ],
};

/// A ZooKeeper buyer that went on in line under a new session while the old one, and its
/// node, lived on: whether two work at once, and whether a release finds its node. The two
/// chapters ask it side by side, in one order.
const RECONNECTED: Family = Family {
    reads: &["overlaps", "lost_releases"],
    options: &[
        Choice {
            en: "Two buyers work at once, and the first buyer's release finds no node to \
                 delete",
            zh: "有两个买家同时处理业务，第一个买家释放时已经没有节点可删",
            sources: &[
                "belief: a node found by its name is one's own whatever session created it \
                        — held by InterProcessMutex's acquire, as the reporter of \
                        CURATOR-604 found",
            ],
            rule: "overlaps > 0 and lost_releases > 0",
        },
        Choice {
            en: "Two buyers work at once, and yet every release finds its own node",
            zh: "有两个买家同时处理业务，可每次释放都找到了自己的节点",
            sources: &[
                "belief: a new session inherits what the old one owned — held by those \
                        who take a reconnect for the same session",
            ],
            rule: "overlaps > 0 and lost_releases == 0",
        },
        Choice {
            en: "One at a time, but the first buyer's release finds no node to delete",
            zh: "同一时刻只有一个人，但第一个买家释放时已经没有节点可删",
            sources: &[
                "belief: ZooKeeper tells a client its node is gone before anyone else \
                        can take the lock — held by those who take the servers' \
                        consistency for the client's",
            ],
            rule: "overlaps == 0 and lost_releases > 0",
        },
        Choice {
            en: "One at a time, every item sold, and every release finds its own node",
            zh: "同一时刻只有一个人，商品全部卖出，每次释放都找到了自己的节点",
            sources: &["001:255-480"],
            rule: "overlaps == 0 and lost_releases == 0",
        },
    ],
};

/// A ZooKeeper release whose delete was lost on a connection loss: how many are sold.
const LOST_DELETE: Family = Family {
    reads: &["orders", "initial_stock"],
    options: &[
        Choice {
            en: "All 3, one after another",
            zh: "3 件全部卖出，一个接一个",
            sources: &["001:394"],
            rule: "orders >= initial_stock",
        },
        Choice {
            en: "Only 1, the first buyer's: the two others wait out their 1.5 s",
            zh: "只卖出 1 件，就是第一个买家那件：另外两个都等满 1.5 秒",
            sources: &[
                "belief: an ephemeral node goes when its client stops using it — held by \
                        those who read ephemeral as short-lived, not as tied to a session",
            ],
            rule: "orders == 1 and orders < initial_stock",
        },
        Choice {
            en: "Neither all nor only 1: the lost delete costs the next buyer its turn, or \
                 fails the first sale",
            zh: "既不是全部卖出，也不是只卖出 1 件：丢失的删除要么占掉下一个买家的机会，\
                 要么让第一笔销售失败",
            sources: &[
                "belief: a release that fails undoes its sale, or costs exactly one \
                        turn — held by those who think of a release as part of the sale's \
                        transaction",
            ],
            rule: "orders != 1 and orders < initial_stock",
        },
    ],
};

pub(super) static QUESTIONS: &[Question] = &[
    ask(
        "watchdog-renews-dead-worker",
        "Redisson's lock() with its watchdog: a 300 ms lease, renewed every 100 ms by a timer \
         of the process. The first holder's worker thread dies of an uncaught exception right \
         after reading the stock, before its finally; the process stays up. Four buyers, four \
         items, each waits at most 1.5 s. How many are sold?",
        "带看门狗的 Redisson lock()：租约 300 毫秒，由进程里的定时器每 100 毫秒续期一次。\
         第一个持锁者的工作线程刚读完库存，就因为一个没人捕获的异常死了，没走到 finally；\
         进程还在运行。四个买家、四件商品，每个买家最多等 1.5 秒。会卖出几件？",
        &DEAD_WORKER,
    ),
    ask(
        "watchdog-keeps-stuck-holder",
        "The same lock() and watchdog (a 300 ms lease, renewed every 100 ms). The first \
         holder's work, usually a few milliseconds, hangs for 4 s this time; its process is \
         healthy throughout. Four buyers, four items, each waits at most 1.5 s. How many are \
         sold?",
        "同样的 lock() 和看门狗（租约 300 毫秒，每 100 毫秒续期一次）。第一个持锁者的业务平时\
         只要几毫秒，这次卡了 4 秒；它的进程一直正常。四个买家、四件商品，每个买家最多等 1.5 秒。\
         会卖出几件？",
        &STUCK,
    ),
    ask(
        "acquire-retry-takes-it-twice",
        "Redisson's reentrant lock, a 1.5 s lease. The first buyer's lock command runs in Redis \
         and takes the lock, but the reply never arrives; the client times out and sends the \
         same command again at once, with the same UUID:threadId. It then sells and unlocks \
         as many times as it knows it locked. Three buyers, three items, each waits at most 0.8 s. How many are sold?",
        "Redisson 的可重入锁，租约 1.5 秒。第一个买家的加锁命令在 Redis 里执行了，拿到了锁，\
         应答却一直没回来；客户端超时后马上用同一个 UUID:threadId 把同一条命令再发一次，\
         然后卖出商品，自己知道加过几次锁，就解锁几次。三个买家、三件商品，每个买家最多等 0.8 秒。会卖出几件？",
        &RETRIED,
    ),
    ask(
        "fence-unchecked-by-resource",
        "A fenced lock: every grant comes with a fencing token one higher than the last. The \
         holder pauses 1.2 s after its read under a 300 ms lease, its renewals with it. Its \
         read of the stock carries its token; its write goes through a path that has no place \
         for one, as a payment API or a mailbox has none. Thirty buyers. What happens?",
        "围栏令牌锁：每次发放锁都附带一个围栏令牌，比上一次的大 1。持锁者读完库存后暂停 1.2 秒，\
         租约 300 毫秒，续期也跟着停了。它读库存时带着令牌；它的写入却走一条放不进令牌的路，\
         就像支付接口或邮箱都没有地方放它。三十个买家。会发生什么？",
        &LATE_WRITE_FENCED,
    ),
    ask(
        "extend-revives-lapsed-lock",
        "SET NX PX with a unique value on one Redis, a 300 ms lease that nothing renews, a \
         release that deletes the key only if it holds the holder's value. The first holder \
         reads the stock, then is paused for 1.2 s. Back, it extends its lease, and writes only \
         if the extend succeeds; the extend sets the key to the holder's value with a new \
         300 ms lease if the key holds that value or holds nothing. The four other buyers try \
         every 10 ms. Five buyers, five items. What does the stock show?",
        "单个 Redis 上用 SET NX PX 加锁，值唯一，租约 300 毫秒，没有人续期；释放时只有键里是\
         自己的值才删除。第一个持锁者读完库存后暂停 1.2 秒。回来后它先延长租约，延长成功才写入；\
         这次延长的做法是：键里是自己的值，或者键里什么也没有，就把键设成自己的值，\
         并给一个新的 300 毫秒租约。其他四个买家每 10 毫秒尝试一次。五个买家、五件商品。\
         库存最后会显示什么？",
        &EXTENDED,
    ),
    ask(
        "extend-checked-gives-up",
        "The same lock, lease and 1.2 s pause, and the same four buyers trying every 10 ms. \
         This time the extend gives a new 300 ms lease only if the key still holds the \
         holder's value; the holder writes only if the extend succeeds. Five buyers, five \
         items. What does the stock show?",
        "同样的锁、同样的租约和 1.2 秒的暂停，同样是四个每 10 毫秒尝试一次的买家。\
         这一次，只有键里还是持锁者自己的值，延长才给一个新的 300 毫秒租约；\
         延长成功，持锁者才写入。五个买家、五件商品。库存最后会显示什么？",
        &EXTENDED,
    ),
    ask(
        "token-per-thread-releases-anothers",
        "One instance serves twelve buyers the way an event loop serves tasks, all on one \
         thread. SET NX PX with a unique token per acquire, a 60 ms lease that nothing renews, \
         150 ms of work per sale, buyers trying every 5 ms; the release deletes the key only if \
         it holds the token the release sends. The lock keeps its token in a thread-local, as \
         redis-py's does: each acquire writes its token there, each release sends the one it \
         finds there. What do the releases do?",
        "一个实例服务十二个买家，就像事件循环服务协程任务一样，都在同一个线程上。SET NX PX 加锁，\
         每次加锁一个唯一的令牌，租约 60 毫秒，没有人续期，每笔销售的业务耗时 150 毫秒，\
         买家每 5 毫秒尝试一次；释放时只有键里是这次释放发送的令牌才删除。锁把令牌放在线程局部\
         变量里，和 redis-py 一样：每次加锁把自己的令牌写进去，每次释放发送它在那里找到的令牌。\
         这些释放会做什么？",
        &SCOPED,
    ),
    ask(
        "token-per-task-releases-its-own",
        "The same instance and twelve buyers, the same 60 ms lease, 150 ms of work and \
         release that deletes the key only if it holds the token it is sent. This time each \
         sale keeps its own token (a context variable, one per task), and its release sends \
         that one. What do the releases do?",
        "同样的实例和十二个买家，同样是 60 毫秒的租约、150 毫秒的业务耗时，释放时同样只有键里是\
         收到的那个令牌才删除。这一次，每笔销售保存自己的令牌（上下文变量，每个任务一个），\
         释放时发送的就是它。这些释放会做什么？",
        &SCOPED,
    ),
    ask(
        "renewal-in-seconds-read-as-ms",
        "SET NX PX with a unique value on one Redis, a 3 s lease, a release that deletes the \
         key only if it holds the holder's value; 200 ms of work per sale, five buyers for \
         five items trying every 10 ms. As its work starts, the first holder renews its lock \
         to 3 s with a script that sets the key's lease in milliseconds (PEXPIRE); the client \
         passes the lease as a number of seconds, 3. What happens?",
        "单个 Redis 上用 SET NX PX 配唯一值加锁，租约 3 秒，释放时只有键里还是持锁者的值才删除；\
         每笔销售的业务耗时 200 毫秒，五个买家抢五件商品，每 10 毫秒尝试一次。第一个持锁者开始\
         处理业务时，用一个以毫秒为单位设置键的租约的脚本（PEXPIRE）把锁续期到 3 秒；客户端传进去\
         的租约是以秒为单位的数：3。会发生什么？",
        &RENEWED_UNIT,
    ),
    ask(
        "renewal-in-milliseconds-holds",
        "The same lock, lease, work and buyers, and the same renewal as the first holder's \
         work starts; this time the client passes the lease in milliseconds, 3000, as the \
         script reads it. What happens?",
        "同样的锁、租约、业务耗时和买家，第一个持锁者开始处理业务时同样续期；这一次客户端按毫秒\
         传租约：3000，正是脚本读取的单位。会发生什么？",
        &RENEWED_UNIT,
    ),
    ask(
        "replica-lag-blocks-synced-lock",
        "Sentinel, one replica, and every lock write waits (WAIT 1, at most 1 s) for the \
         replica to have it; if it does not, the acquire gives the lock back and tries again. \
         As the first buyer asks, the replica stops answering for 3 s; the primary is fine \
         and nothing fails over. Five buyers, five items, each waits at most 6 s. What \
         happens?",
        "哨兵、一个从节点，每次加锁写入后都等待（WAIT 1，最多 1 秒）从节点收到；收不到，\
         这次加锁就把锁还回去再试。第一个买家申请锁时，从节点 3 秒不应答；主节点好好的，\
         也没有发生主从切换。五个买家、五件商品，每个买家最多等 6 秒。会发生什么？",
        &LAGGING,
    ),
    ask(
        "zookeeper-reconnect-keeps-old-node",
        "ZooKeeper's lock as Curator's InterProcessMutex takes it: one server, a 4 s session \
         timeout, three buyers for three items, 2 s of work each. Right after the first buyer \
         creates its node, its instance opens a new session and gives the old one up; the \
         server keeps the old session, and its nodes, 1 s more. The buyer goes on in line \
         under the new session and looks for its node by name. What happens?",
        "ZooKeeper 锁，做法和 Curator 的 InterProcessMutex 一样：一台服务器，会话超时 4 秒，\
         三个买家抢三件商品，每笔业务耗时 2 秒。第一个买家刚创建好节点，它所在的实例就开了一个\
         新会话、放弃了旧会话；服务器把旧会话连同它的节点再保留 1 秒。买家用新会话继续排队，\
         按名字找自己的节点。会发生什么？",
        &RECONNECTED,
    ),
    ask(
        "zookeeper-reconnect-checks-owner",
        "The same server, buyers and work, and the same new session as the first buyer \
         queues, the old one kept 1 s more. This time, before it counts a node as its own, \
         the buyer asks which session owns it; a node of the old session it deletes, and it \
         queues again under the new one. What happens?",
        "同样的服务器、买家和业务耗时，第一个买家排队时同样换了新会话，旧会话同样再保留 1 秒。\
         这一次，买家在把一个节点当成自己的之前，先问清它属于哪个会话；属于旧会话的节点，\
         它就删掉，再用新会话重新排队。会发生什么？",
        &RECONNECTED,
    ),
    ask(
        "zookeeper-release-lost-locks-out",
        "ZooKeeper's lock, one server, a 4 s session timeout; three buyers for three items, \
         each waiting at most 1.5 s. The first buyer sells, but as it releases, the delete of \
         its node is lost on a connection loss; the release gives up on it and forgets the \
         node. The connection comes back within the session timeout. How many are sold?",
        "ZooKeeper 锁，一台服务器，会话超时 4 秒；三个买家抢三件商品，每人最多等 1.5 秒。\
         第一个买家卖出了，可释放时删除节点的请求因为连接断开而丢失；这次释放就此放弃，\
         忘掉了这个节点。连接在会话超时之内恢复了。会卖出几件？",
        &LOST_DELETE,
    ),
    ask(
        "zookeeper-release-guaranteed",
        "The same server, buyers and 1.5 s wait, and the same delete lost on a connection \
         loss as the first buyer releases. This time a delete that failed with the connection \
         is sent again until it succeeds or the session ends. How many are sold?",
        "同样的服务器、买家和 1.5 秒的等待，第一个买家释放时，删除请求同样因为连接断开而丢失。\
         这一次，因为连接断开而失败的删除会一直重发，直到成功或者会话结束。会卖出几件？",
        &LOST_DELETE,
    ),
];
