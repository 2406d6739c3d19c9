//! Beyond one Redis: what replication, persistence and several masters buy and cost — a
//! Sentinel failover that loses the lock and `WAIT` for the replicas, the same for one shard of
//! a Redis Cluster, restarts without and with
//! RDB/AOF persistence, then Redlock's five masters: a minority or majority down, a restart
//! without fsync, a clock jump, a frozen holder and a validity that runs out.
//!
//! Sources: 001 and 002 (Sentinel, persistence, Redlock), the algorithm as published on
//! redis.io, Redisson's deprecation of `RedissonRedLock`, and the Kleppmann / antirez debate.

use oversell_api::{Fault, FaultKind, Persistence, Tier, WaitStrategy};

use super::BASE;
use crate::scenario::{Check, Expect, Scenario, StoreSetup};

/// The failure chapters: a lease long enough to outlive the store's failure, and work long
/// enough that a second holder gets in while the first still works (a failover takes ~2 s);
/// one item for a few buyers, so a second holder shows as the item sold twice; an outcome
/// that depends on timing.
const STORE_FAULT: Scenario = Scenario {
    ttl_ms: 20_000,
    business_ms: 9_000,
    wait_deadline_ms: 15_000,
    stock: 1,
    buyers: 4,
    timing_sensitive: true,
    ..BASE
};

/// `redlock-validity-runs-out`: a lease of "a few tens of ms" (001's figure for it), and one
/// master stopped longer than that but shorter than the per-node timeout (100 ms), so its
/// vote comes late rather than never; even if it times out, the wait was longer than the
/// lease, so the majority comes in with no validity either way.
const VALIDITY_LEASE_MS: u64 = 50;
const VALIDITY_SLOW_MS: u64 = 80;

/// The Redlock chapters' sources: the articles, the published algorithm, and its critique.
const REDLOCK_SOURCES: &str = "001 lines 96–106 and 002 lines 586–628 (Redlock: 5 masters, a \
    majority, acquire time subtracted from the lease, release on every node); 001 lines 239–250 \
    recommend Redisson's RedissonRedLock, which Redisson deprecated in 3.12.5 for RLock (its lock \
    writes now wait for the replicas) and RFencedLock; the algorithm as published by Redis' \
    author (\"Distributed Locks with Redis\", redis.io); the critique, Martin Kleppmann, \
    \"How to do distributed locking\" (2016), and the reply, \"Is Redlock safe?\" (2016)";

pub(super) static SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "failover-loses-lock",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::Failover, 0)),
        store: StoreSetup::sentinel(0),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        source: "001 line 94, 002 lines 602–604 and 678, 003 line 67: a master/replica failover \
                 loses a lock (asynchronous replication); Redis' own Sentinel and replication \
                 documentation",
        en: "The holder's lock is written on the primary, which dies before its replica got it \
             (replication is asynchronous). Sentinel promotes the replica: no lock there, so any \
             buyer who reaches the new primary while the first still works takes the 'same' \
             lock: two holders, one item sold twice. The first holder learns it only when its \
             release finds the lock gone. A watchdog would not help: it would renew a lock that \
             no longer exists.",
        zh: "持锁者的锁写在主节点上，主节点在从节点收到这把锁之前就宕机了（主从复制是异步的）。\
             哨兵把从节点提升为新主节点，新主节点上没有这把锁。第一个持锁者还在处理业务时，\
             谁先连上新主节点，谁就能拿到“同一把”锁：两个持锁者，一件商品卖了两次。第一个持锁者\
             直到释放时发现锁已不在，才知道自己早已失去了它。看门狗也无能为力：\
             它续期的是一把已不存在的锁。",
        ..STORE_FAULT
    },
    Scenario {
        id: "failover-sync-replicas",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::Failover, 0)),
        store: StoreSetup::sentinel(1),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        source: "The loss it narrows is the articles' (001 line 94, 002 line 678, 003 line 67); \
                 the remedy is not in them: Redisson's RLock waits for the replicas after each \
                 lock write (checkLockSyncedSlaves, on by default since RedissonRedLock was \
                 deprecated in 3.12.5); Redis' WAIT documentation, which warns that even WAIT \
                 does not make a failover lossless",
        en: "The same failover, but every lock write waits (WAIT 1) until the replica has it, \
             or the acquire fails. The lock is on the replica before the holder goes on, so the \
             promoted replica still holds it: one holder, no oversell. The price: a round trip \
             more per acquire, and 503s whenever no replica keeps up. It narrows the window, \
             it does not close it: Redis can still lose an acknowledged write in some failovers.",
        zh: "同样的主从切换，但每次加锁写入后都等待（WAIT 1）从节点收到，否则加锁失败。\
             持锁者继续处理业务之前，锁已经在从节点上了，被提升的从节点仍然持有它：\
             只有一个持锁者，没有超卖。代价是每次加锁多一次往返，而且从节点跟不上时买家会收到 503。\
             它缩小了窗口，但没有消除它：某些主从切换中 Redis 仍可能丢失已确认的写入。",
        ..STORE_FAULT
    },
    Scenario {
        id: "cluster-failover-loses-lock",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::Failover, 0)),
        store: StoreSetup::cluster(0),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        source: "001 lines 86–90 (Redis deployed single, behind Sentinel, or as a Cluster) and \
                 133–139 (Redisson on six cluster nodes); 003 line 67 (in a cluster a lock the \
                 master took before its replica got it is lost when the replica takes over); \
                 Redis' cluster specification (asynchronous replication, replica promotion)",
        en: "A Redis Cluster of three masters, each with a replica: the room's lock lives on the \
             master owning its key's hash slot, and nowhere else. That master dies before its \
             replica got the lock; after the cluster's node timeout the replica promotes itself \
             for those slots, with no lock, and the next buyer takes the 'same' lock while the \
             first still works: two holders, one item sold twice. The other two masters' rooms \
             never noticed. A cluster spreads locks over shards; each shard fails over exactly \
             as Sentinel's primary does. (001 line 98 sets Redlock's five masters in a Redis \
             Cluster: Redlock needs independent masters — in a cluster a key lives on one \
             master only, so five of them cannot vote on one lock.)",
        zh: "Redis Cluster 有三个主节点，各带一个从节点：房间的锁只存在于负责该键哈希槽的那个主节点上。\
             这个主节点在从节点收到锁之前宕机；超过集群的节点超时后，从节点把这些槽接管过来，\
             上面没有这把锁，下一个买家在第一个持锁者还在处理业务时拿到了“同一把”锁：\
             两个持锁者，一件商品卖了两次。另外两个主节点上的房间毫无察觉。集群把锁分散到各个分片，\
             而每个分片的主从切换和哨兵模式下一模一样。（001 第 98 行把红锁（Redlock）的五个主节点放在一个 \
             Redis Cluster 里：Redlock 需要相互独立的主节点——在集群里一个键只落在一个主节点上，\
             五个主节点无法为同一把锁投票。）",
        ..STORE_FAULT
    },
    Scenario {
        id: "cluster-failover-sync-replicas",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::Failover, 0)),
        store: StoreSetup::cluster(1),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        source: "The loss it narrows is 003 line 67's (a master that dies before its replica \
                 has the lock; the deployment, 001 lines 86–90); the remedy is not in the \
                 articles: Redisson's RLock waits for the replicas after each lock write on a \
                 cluster too (checkLockSyncedSlaves); Redis' WAIT documentation",
        en: "The same shard failover, but every lock write waits (WAIT 1, sent to the master \
             owning the lock's slot) until that master's replica has it. The promoted replica \
             still holds the lock: one holder, no oversell. As with Sentinel it narrows the \
             window, it does not close it.",
        zh: "同样的分片主从切换，但每次加锁写入后都等待（WAIT 1，发往负责锁所在槽的主节点）\
             该主节点的从节点收到。被提升的从节点仍持有这把锁：只有一个持锁者，没有超卖。\
             和哨兵模式一样，它缩小了窗口，但没有消除它。",
        ..STORE_FAULT
    },
    Scenario {
        id: "restart-loses-lock",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::LockStoreRestart, 0)),
        store: StoreSetup::single(Persistence::None),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        source: "002 lines 688–716 list Redis' persistence (RDB, AOF); this chapter runs with \
                 none, the restart-without-fsync case of the Redlock debate (Martin Kleppmann, \
                 \"How to do distributed locking\", 2016); RDB and AOF are the next two",
        en: "The lock store's Redis dies right after the holder took the lock, and comes back \
             empty (no persistence). The lock is gone while its holder still works: the next \
             buyer takes it. The stock, in another Redis, shows the oversell.",
        zh: "持锁者刚拿到锁，存放锁的 Redis 就崩溃了，重启后数据全空（未开启持久化）。\
             持锁者还在处理业务，锁却已不在，下一个买家随即拿到了锁。\
             库存放在另一个 Redis 里，如实记下了超卖。",
        ..STORE_FAULT
    },
    Scenario {
        id: "restart-rdb-loses-recent-lock",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::LockStoreRestart, 0)),
        store: StoreSetup::single(Persistence::Rdb),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("oversold", 0.0)]),
        source: "002 lines 724–738, RDB persistence and its save rules (save 900 1, save 300 10, \
                 save 60 10000)",
        en: "The same crash, with RDB snapshots by the save rules Redis shipped by default up to
             6.0: a snapshot after \
             900 s with one change, 300 s with 10, or 60 s with 10,000. The restarted Redis \
             loads the last snapshot, and a lock taken a moment ago is in none: RDB loses every \
             lock taken since the last snapshot, so the next buyer takes it and the stock shows \
             the oversell. Snapshots protect data that changes slowly, not a lock that lives \
             for seconds.",
        zh: "同样的崩溃，这次锁所在的 Redis 开启了 RDB 快照，按 Redis 6.0 及以前默认的保存规则：900 秒内至少 1 \
             次修改、300 秒内至少 10 次、或 60 秒内至少 10000 次修改就保存一次快照。重启后 Redis \
             载入最近一次快照，而刚刚加上的锁不在任何快照里：上次快照之后加的锁全部丢失，\
             下一个买家随即拿到了锁，库存如实记下了超卖。快照适合变化缓慢的数据，\
             护不住只活几秒的锁。",
        ..STORE_FAULT
    },
    Scenario {
        id: "restart-aof-keeps-lock",
        tier: Tier::LuaRelease,
        fault: Some(Fault::new(FaultKind::LockStoreRestart, 0)),
        store: StoreSetup::single(Persistence::Always),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        source: "002 lines 767–782, Redis persistence: AOF with appendfsync always (line 773); \
                 its claims that AOF loses nothing before the last write (line 705) and that \
                 everysec loses at most a second (line 774), measured by bench/src/bin/\
                 aof-loss.rs (BENCHMARKS.md section 5)",
        en: "The same crash, with an append-only file fsynced before every reply. The restarted \
             Redis replays it: the lock is back with the same expiry (AOF stores it as an \
             absolute time, so the seconds the store was down count against the lease), and \
             the next buyer waits. 002 says AOF keeps everything up to the last write (line 705) \
             and everysec loses at most a second (line 774). Measured (BENCHMARKS.md, section \
             5): with everysec a killed process lost nothing on a quiet disk, since Redis hands \
             each write to the kernel before it answers, and that second is lost only when the \
             machine goes down. On a busy disk Redis postpones the write while the last fsync \
             runs (up to 2 s) and answers anyway: a kill lost the last few hundred ms of \
             acknowledged locks in 3 runs of 10. Only always, as here, answers after the fsync. \
             That loss is too rare to make a chapter (one must hold 95% of the time); it stays \
             a benchmark (aof-loss).",
        zh: "同样的崩溃，但开启了 AOF 且每次应答前都 fsync。重启后的 Redis 重放 AOF：\
             锁回来了，到期时刻也没变（AOF 记录的是绝对到期时间，Redis 宕机的那几秒同样算在租约里），\
             下一个买家只能等待。002 说 AOF 能保证最后一次写操作之前的数据不丢（第 705 行），\
             everysec 最多丢 1 秒（第 774 行）。实测（BENCHMARKS.md 第 5 节）：磁盘空闲时，\
             开启 everysec 的进程被 kill -9 一条也没丢，因为 Redis 应答之前已把每次写入交给内核，\
             那 1 秒只在整台机器宕机时才会丢；磁盘繁忙时，上一次 fsync 还没完成，Redis 会推迟写文件\
             （最多 2 秒）却照样应答，10 次里有 3 次丢了最后几百毫秒内已确认的加锁写入。\
             只有像本章这样用 always，才是 fsync 之后再应答。这种丢失太少见，撑不起一章\
             （每一章的结论要在 95% 的运行里成立），所以只放在基准测试里（aof-loss）。",
        ..STORE_FAULT
    },
    Scenario {
        id: "redlock-minority-down",
        tier: Tier::Redlock,
        fault: Some(Fault::on_nodes(FaultKind::NodeDown, 8_000, 2)),
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::eq("oversold", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("lost_updates", 0.0),
            Check::eq("orders", 100.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: REDLOCK_SOURCES,
        en: "Two of the five masters are killed as the sale starts and stay down. Three still \
             make a majority: every item is sold, once. This is what Redlock is for: no single \
             server, and no failover that can lose a lock. Note that the masters are \
             independent servers, not the masters of one Redis Cluster as 001 assumes, and the \
             lock is asked of all five at once (002 says one after another; the algorithm's own \
             page recommends multiplexing). 001 recommends Redisson's RedissonRedLock for it; \
             Redisson has deprecated it since 3.12.5, for RLock (its lock writes now wait for \
             the replicas) and RFencedLock (a fencing token). 001's own example of it (lines \
             244–247) takes its three locks through one Redisson client, as three fair locks: \
             three keys of one Redis deployment, not the independent masters the algorithm's \
             safety rests on.",
        zh: "五个主节点中的两个在开卖时被杀掉，之后一直没起来。剩下三个仍是多数：\
             每件商品都只卖了一次。这正是 Redlock 的用处：没有单点，也没有会丢锁的主从切换。\
             注意这些主节点是相互独立的 Redis，而不是 001 所说的同一个 Redis Cluster 里的主节点；\
             加锁请求同时发给五个节点（002 说依次申请，算法原文则建议多路复用、一起发出）。\
             001 推荐用 Redisson 的 RedissonRedLock 来实现；Redisson 从 3.12.5 起已将其废弃，\
             改为推荐 RLock（如今加锁写入会等从节点收到）和 RFencedLock（发放围栏令牌）。\
             001 自己的示例（第 244–247 行）通过同一个 Redisson 客户端取了三把公平锁来组成 Redlock：\
             那是同一套 Redis 里的三个键，而不是算法的安全性所依赖的相互独立的主节点。",
        ..BASE
    },
    Scenario {
        id: "redlock-majority-down",
        tier: Tier::Redlock,
        wait_deadline_ms: 1_500,
        fault: Some(Fault::on_nodes(FaultKind::NodeDown, 8_000, 3)),
        buyers: 20,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::eq("orders", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("sent_503", 20.0),
        ]),
        source: REDLOCK_SOURCES,
        en: "Three of the five masters are down: no buyer can win a majority. Every buyer gets a \
             503 (lock_no_quorum) once its wait deadline passes, and nothing is sold: Redlock \
             gives up availability rather than safety when most of its servers are gone.",
        zh: "五个主节点中有三个宕机，谁也凑不齐多数。每个买家等到等待期限都收到 503\
             （lock_no_quorum），一件也没卖出：多数节点不在时，Redlock 宁可停止服务，也不冒超卖的险。",
        ..BASE
    },
    Scenario {
        id: "redlock-restart-no-fsync",
        tier: Tier::Redlock,
        wait: WaitStrategy::Spin { sleep_ms: 50 },
        fault: Some(Fault::new(FaultKind::NodeRestart, 0)),
        store: StoreSetup::redlock(Some(Persistence::None)),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        source: REDLOCK_SOURCES,
        en: "The critique's first case. While the holder acquires, two masters are briefly down, \
             so its lock stands on exactly three. Right after, one of those three crashes and \
             restarts empty (no persistence). The two others come back empty too: three masters \
             without the lock make a new majority, and a second buyer gets the 'same' lock while \
             the first still works. One item, sold twice. \
             002 (lines 604, 620) says Redlock avoids the lock a failover loses and keeps the \
             data correct: a master restarted without its data loses the lock just as a \
             promoted replica did.",
        zh: "批评文章里的第一个反例。持锁者加锁时有两个主节点短暂宕机，锁只落在三个节点上，\
             刚好过半。紧接着，这三个里的一个崩溃并重启，数据全空（未开启持久化）；那两个节点也空着回来了。\
             三个没有这把锁的节点凑成了新的多数，第一个持锁者还在处理业务，第二个买家就拿到了“同一把”锁：\
             一件商品卖了两次。\
             002（第 604、620 行）说 Redlock 避开了主从切换丢锁的问题、能保证数据正确：\
             可一个不带数据重启的主节点，和被提升的从节点一样会把锁丢掉。",
        ..STORE_FAULT
    },
    Scenario {
        id: "redlock-restart-fsync-always",
        tier: Tier::Redlock,
        wait: WaitStrategy::Spin { sleep_ms: 50 },
        fault: Some(Fault::new(FaultKind::NodeRestart, 0)),
        store: StoreSetup::redlock(Some(Persistence::Always)),
        expect: Expect::Figures(&[
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        source: REDLOCK_SOURCES,
        en: "The same crash, with every master fsyncing its append-only file before each reply. \
             The restarted master replays the lock: the holder keeps its three votes, and the \
             others wait. The algorithm's own answer is the same, or restarting a crashed master \
             only after a lease has passed; both cost something (an fsync per lock write, or a \
             master missing for a lease).",
        zh: "同样的崩溃，但每个主节点每次应答前都把 AOF 刷到磁盘（fsync）。重启的节点重放出这把锁：\
             持锁者仍有三票，其他人只能等待。算法原文给出的也是这个办法，或者让崩溃的节点\
             等过一个租约再重新加入；两者都有代价（每次加锁都要 fsync 一次，或一个节点缺席一个租约）。",
        ..STORE_FAULT
    },
    Scenario {
        id: "redlock-clock-jump",
        tier: Tier::Redlock,
        wait: WaitStrategy::Spin { sleep_ms: 50 },
        fault: Some(Fault::on_nodes(FaultKind::ClockJump, 30_000, 3)),
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::gt("overlaps", 0.0),
            Check::gt("oversold", 0.0),
            Check::gt("lost_releases", 0.0),
        ]),
        source: "Martin Kleppmann, \"How to do distributed locking\" (2016): a clock that \
                 jumps; 002 lines 593, 627, 652 and 680 frame the risk as clocks out of sync and \
                 answer it with NTP; with the Redlock sources: 001 lines 96–106, 002 lines \
                 586–628, redis.io's \"Distributed Locks with Redis\"",
        en: "The critique's second case. Right after the holder takes its lock, the wall clocks \
             of three masters that granted it jump 30 s forward (an NTP step, an operator). Redis \
             expires keys by the wall clock: the 20 s lock is gone on those three, which make a \
             majority for the next buyer while the first still works. 002 frames the clock risk \
             as synchronisation (lines 593, 627, 680) and answers it with NTP (652): but this is \
             a jump, not a drift, and it breaks the lock however well the clocks were in sync — \
             a clock that NTP steps instead of slewing is one way to get it.",
        zh: "批评文章里的第二个反例。持锁者刚拿到锁，给它投票的三个主节点的系统时钟就向前跳了 30 秒\
             （NTP 校时或人为调整）。Redis 按系统时钟让键过期：20 秒租约的锁在这三个节点上瞬间没了，\
             它们凑成多数投给了下一个买家，而第一个持锁者还在处理业务。002 把时钟风险说成“时钟不同步”\
             （第 593、627、680 行），并用 NTP 同步来应对（第 652 行）；可这里是时钟跳变，不是漂移：\
             时钟同步得再好，一跳照样让锁失效——NTP 直接拨动（而不是逐渐校准）时钟，正是跳变的来源之一。",
        ..STORE_FAULT
    },
    Scenario {
        id: "redlock-freeze",
        tier: Tier::Redlock,
        ttl_ms: 300,
        wait: WaitStrategy::Spin { sleep_ms: 10 },
        fault: Some(Fault::new(FaultKind::Freeze, 1_200)),
        buyers: 30,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[Check::gt("overlaps", 0.0), Check::gt("lost_updates", 0.0)]),
        timing_sensitive: true,
        source: "002 lines 630–639, the GC-pause story, which it tells against Redlock; Martin \
                 Kleppmann, \"How to do distributed locking\" (2016): Redlock has no fencing \
                 token to give",
        en: "The holder's process freezes for 1.2 s after reading the stock; its 300 ms lease \
             expires on all five masters, others sell, and the holder wakes and writes its stale \
             stock value. Five servers do not help against a pause of the client. Only a fencing \
             token checked by the stock would (see fenced-freeze), and Redlock has no counter \
             that could hand one out.",
        zh: "持锁进程读完库存后整体冻结 1.2 秒；300 毫秒的租约在五个主节点上都到期了，别人接着卖，\
             它醒来后写入了陈旧的库存值（陈旧写入）。客户端自己停顿，五台服务器也救不了。\
             只有由库存校验的围栏令牌（fencing token）才能挡住（见 fenced-freeze），\
             而 Redlock 没有能发放令牌的计数器。",
        ..BASE
    },
    Scenario {
        id: "redlock-validity-runs-out",
        tier: Tier::Redlock,
        ttl_ms: VALIDITY_LEASE_MS,
        fault: Some(Fault::on_nodes(FaultKind::NodeSlow, VALIDITY_SLOW_MS, 1)),
        stock: 1,
        buyers: 4,
        store: StoreSetup::redlock(None),
        expect: Expect::Figures(&[
            Check::gt("validity_lapsed", 0.0),
            Check::eq("overlaps", 0.0),
            Check::eq("oversold", 0.0),
            Check::eq("orders", 1.0),
            Check::eq("store_faults", 1.0),
        ]),
        timing_sensitive: true,
        source: "001 lines 100–104 (note the time, lock the masters, the lock holds only if it \
                 took less than its expiry, else delete it everywhere; line 101 calls the \
                 expiry \"a few tens of ms\") and 002 lines 612–615 (t2 − t1 against the lease, \
                 else release on every node); the published algorithm (\"Distributed Locks \
                 with Redis\", redis.io): a per-node timeout of 5–50 ms for a 10 s lease",
        en: "One of the five masters is stopped for 80 ms (SIGSTOP, resumed by a helper \
             process) as the next buyer asks for a lock with a 50 ms lease. Every vote waits \
             for the slowest master: four grant at once, the fifth late, and by then the lease \
             is spent. A majority with no validity left is no lock: the buyer gives it back on \
             all five masters (counted as validity_lapsed in the resource store, with how many \
             still had it) and asks again; the masters answer at once now, and the item is sold \
             once, by one holder. 001 (line 101) gives the lock's expiry as \"a few tens of \
             ms\": that is the size of the per-node timeout (this fleet's is 100 ms), not of \
             the lease, which must be seconds so that the time spent asking is a small part \
             of it. This chapter gives the lock the lease 001 names, to show why.",
        zh: "下一个买家加锁时，五个主节点中的一个被暂停 80 毫秒（SIGSTOP，由一个辅助进程恢复），\
             而这把锁的租约只有 50 毫秒。每一票都要等最慢的主节点：四个立刻同意，第五个迟迟才答，\
             这时租约已经耗尽。凑齐了多数却没剩下有效时间，就不算拿到锁：买家在五个主节点上\
             把它全部释放（存放库存的 Redis 里记为 validity_lapsed，并记下还有几个节点持有它），再重新申请；\
             这次主节点都立刻应答，商品只卖出一次，始终只有一个持锁者。001（第 101 行）\
             说锁的租约（文章里叫“过期时间”）“一般就几十毫秒”：那是单个节点请求超时的量级\
             （这套部署里是 100 毫秒），不是租约的；租约应当以秒计，加锁花掉的时间才只占其中一小部分。\
             本章故意用 001 说的租约，正是为了演示其后果。",
        ..BASE
    },
];
