//! The option sets several chapters share, each with the figures its rules read. A chapter
//! that asks what its neighbours ask gets the same options, so the class can set the answers
//! side by side: the three crash chapters of the ladder, ZooKeeper's and PostgreSQL's crash
//! all ask "what do the other buyers get?" and land in different options. A set keeps only
//! options its chapters can land in; a chapter whose run can land elsewhere has its own set.
//!
//! A set may be shown in more than one order (`…_reordered` below, [`Family::reordered`]):
//! the chapters that land in the same belief would otherwise always find it under the same
//! letter, and a class learns the letter. Neighbours that are compared side by side keep one
//! order between them.
//!
//! Every set cuts the figures into options that do not overlap: each rule is a conjunction of
//! comparisons that the others contradict (the tests check it on a grid of figures).

use super::{Choice, Family};

/// How much was sold beyond the stock, relative to the stock.
pub(super) const OVERSOLD: Family = Family {
    reads: &["oversold", "initial_stock"],
    options: &[
        Choice {
            en: "None: exactly the stock is sold",
            zh: "一件也不超卖：卖出的正好是库存数",
            sources: &[
                "001:27-29",
                "belief: a race needs unlucky timing, rare with a few hundred buyers — held by \
                 whoever tested the sale with a few clicks",
            ],
            rule: "oversold == 0",
        },
        Choice {
            en: "A few: at most a tenth of the stock",
            zh: "少量：不超过库存的十分之一",
            sources: &[
                "belief: the window between reading and writing the stock is a few \
                        microseconds, so only a handful slip through — held on Q&A sites \
                        answering 'is my check-then-set safe enough'",
            ],
            rule: "oversold > 0 and oversold <= initial_stock / 10",
        },
        Choice {
            en: "Many: more than a tenth of the stock, up to the whole stock again",
            zh: "大量：超过库存的十分之一，但不超过整份库存",
            sources: &["001:17-21", "000:49"],
            rule: "oversold > initial_stock / 10 and oversold <= initial_stock",
        },
        Choice {
            en: "More than the whole stock again",
            zh: "超卖的数量比整份库存还多",
            sources: &[
                "belief: every buyer who reads the stock before anyone writes buys, \
                        so up to one sale per buyer — held by those who picture the race as \
                        all reads first, then all writes",
            ],
            rule: "oversold > initial_stock",
        },
    ],
};

/// Whether the sale stays up, and whether it stays right, when part of the lock service is
/// lost.
pub(super) const AVAILABILITY: Family = Family {
    reads: &["sent_503", "oversold", "orders"],
    options: &[
        Choice {
            en: "Every buyer is answered (sold, or sold out), nothing oversold",
            zh: "每个买家都得到答复（买到或售罄），没有超卖",
            sources: &["002:604", "002:619"],
            rule: "oversold == 0 and orders > 0 and sent_503 == 0",
        },
        Choice {
            en: "Some are sold, some buyers are refused (503), nothing oversold",
            zh: "卖出了一部分，也有买家被拒绝（503），没有超卖",
            sources: &[
                "belief: a lock service that lost part of itself serves the buyers it \
                        still reaches and turns the rest away — held by operators of \
                        replicated stores",
            ],
            rule: "oversold == 0 and orders > 0 and sent_503 > 0",
        },
        Choice {
            en: "Nothing is sold: the buyers are refused",
            zh: "一件也卖不出去：买家全被拒绝",
            sources: &["001:92", "002:677"],
            rule: "oversold == 0 and orders == 0",
        },
        Choice {
            en: "Sales go on, and items are oversold",
            zh: "照样在卖，而且出现超卖",
            sources: &[
                "belief: when the lock service is unreachable the application sells \
                        without it (fail open) — held wherever a lock error is caught and \
                        logged, not returned",
            ],
            rule: "oversold > 0",
        },
    ],
};

/// What the other buyers get when the holder crashes with the lock held. A stall is 0.8 s or
/// more: `StallThenResume` counts 0.8 of a lease, and the crash chapters' leases are 1 s or
/// more. A deadlock's run
/// measures `sold_after_stall` (what its probe sold after twice the lease): a sale or two may
/// go through before the crash strikes, and nothing after it.
pub(super) const CRASH: Family = Family {
    reads: &["max_latency_ms", "orders", "sold_after_stall"],
    options: &[
        Choice {
            en: "They barely notice: sales go on, nobody waits 0.8 s",
            zh: "几乎没影响：照常在卖，没有谁等满 0.8 秒",
            sources: &[
                "belief: a crashed process drops its connection and the store frees \
                        what it held — held by those who know database locks, which do",
            ],
            rule: "orders > 0 and sold_after_stall != 0 and max_latency_ms < 800",
        },
        Choice {
            en: "Sales stall for 0.8 s or more, then resume by themselves",
            zh: "销售停顿 0.8 秒或更久，然后自行恢复",
            sources: &["000:157-159", "001:152"],
            rule: "orders > 0 and sold_after_stall != 0 and max_latency_ms >= 800",
        },
        Choice {
            en: "Nothing more is sold: every buyer waits until it gives up",
            zh: "再也卖不出去：每个买家都一直等到放弃",
            sources: &["000:155", "000:206-208"],
            rule: "orders == 0 or sold_after_stall == 0",
        },
    ],
};

/// What happens when a holder's lock can end before its write: slow work, a frozen or busy
/// holder, a session that times out. The chapters without a token never refuse a write; the
/// fenced ones ask [`LATE_WRITE_FENCED`].
pub(super) const LATE_WRITE: Family = Family {
    reads: &["lost_updates", "overlaps"],
    options: &[
        Choice {
            en: "Nobody else gets in before the holder is done",
            zh: "持锁者做完之前，没有别人能进来",
            sources: &["002:644", "001:151-152", "002:582"],
            rule: "overlaps == 0 and lost_updates == 0",
        },
        Choice {
            en: "Others get in, and the first holder's late write overwrites theirs (lost updates)",
            zh: "别人进来了，第一个持锁者迟到的写入覆盖了他们的结果（丢失更新）",
            sources: &["002:636-640"],
            rule: "lost_updates > 0",
        },
        Choice {
            en: "Others get in, yet no update is lost",
            zh: "别人进来了，但没有丢失更新",
            sources: &[
                "belief: two holders at once is harmless when each write is one Redis \
                        command — held by those who trust single commands to be atomic",
            ],
            rule: "overlaps > 0 and lost_updates == 0",
        },
    ],
};

/// The same late write, with a fencing token the stock checks.
pub(super) const LATE_WRITE_FENCED: Family = Family {
    reads: &["stale_writes_rejected", "lost_updates", "overlaps"],
    options: &[
        Choice {
            en: "Nobody else gets in before the holder is done",
            zh: "持锁者做完之前，没有别人能进来",
            sources: &["002:644", "001:151-152"],
            rule: "overlaps == 0 and lost_updates == 0 and stale_writes_rejected == 0",
        },
        Choice {
            en: "Others get in, and the first holder's late write overwrites theirs (lost updates)",
            zh: "别人进来了，第一个持锁者迟到的写入覆盖了他们的结果（丢失更新）",
            sources: &[
                "002:636-640",
                "belief: a token only helps if the lock service checks \
                        it — held by readers who take the token for part of the lock",
            ],
            rule: "lost_updates > 0",
        },
        Choice {
            en: "Others get in, but the first holder's late write is refused",
            zh: "别人进来了，但第一个持锁者迟到的写入被拒绝",
            sources: &["001:491"],
            rule: "lost_updates == 0 and stale_writes_rejected > 0",
        },
        Choice {
            en: "Others get in, yet no update is lost and no write refused",
            zh: "别人进来了，却没有丢失更新，也没有写入被拒",
            sources: &[
                "belief: two holders at once is harmless when each write is one Redis \
                        command — held by those who trust single commands to be atomic",
            ],
            rule: "overlaps > 0 and lost_updates == 0 and stale_writes_rejected == 0",
        },
    ],
};

/// One item, a few buyers, and a failure while the first holds the lock: how often is it
/// sold? No token here: the fenced chapters ask [`ONE_ITEM_FENCED`]. Every option is an
/// outcome these chapters can land in: the lock held through the failure, a second holder
/// who finds the item gone, or a second sale. None is "not at all": the first holder always
/// sells, so that option would be a free point.
pub(super) const ONE_ITEM: Family = Family {
    reads: &["oversold", "overlaps"],
    options: &[
        Choice {
            en: "At most once, and one holder at a time; the others wait or are refused",
            zh: "最多卖出一次，始终只有一个持锁者；其他人等待或被拒绝",
            sources: &["002:604", "002:620"],
            rule: "oversold == 0 and overlaps == 0",
        },
        Choice {
            en: "Two hold the lock at once, yet the item is sold once: the second finds it gone",
            zh: "同时有两个持锁者，但商品只卖出一次：第二个发现它已经卖掉了",
            sources: &[
                "belief: the sale's own stock check stops a second holder, so a lost lock \
                        costs nothing when the first has written — held by those who trust \
                        `if stock > 0` to stand in for the lock",
            ],
            rule: "oversold == 0 and overlaps > 0",
        },
        Choice {
            en: "Twice: two holders at once",
            zh: "卖了两次：同时有两个持锁者",
            sources: &["001:94", "002:678"],
            rule: "oversold > 0",
        },
    ],
};

/// One item and a holder cut off or frozen, with a fencing token the stock checks.
pub(super) const ONE_ITEM_FENCED: Family = Family {
    reads: &["stale_writes_rejected", "oversold", "orders"],
    options: &[
        Choice {
            en: "Not at all: every buyer is refused",
            zh: "一次也没卖出：买家全被拒绝",
            sources: &[
                "belief: after a failure the lock service refuses everyone until an \
                        operator steps in — held by those used to fail-stop databases",
            ],
            rule: "oversold == 0 and orders == 0 and stale_writes_rejected == 0",
        },
        Choice {
            en: "Once, to one holder; the others wait or are refused",
            zh: "只卖出一次，只有一个持锁者；其他人等待或被拒绝",
            sources: &["002:644"],
            rule: "oversold == 0 and orders > 0 and stale_writes_rejected == 0",
        },
        Choice {
            en: "Once: a second holder gets in, but the first one's late write is refused",
            zh: "只卖出一次：第二个持锁者进来了，但第一个迟到的写入被拒绝",
            sources: &["001:491"],
            rule: "oversold == 0 and stale_writes_rejected > 0",
        },
        Choice {
            en: "Twice: two holders at once",
            zh: "卖了两次：同时有两个持锁者",
            sources: &[
                "belief: a token only helps if the lock service checks it — held by \
                        readers who take the token for part of the lock",
            ],
            rule: "oversold > 0",
        },
    ],
};

/// Whose lock a release deletes when the work outlasts the lease, or does not.
pub(super) const RELEASE: Family = Family {
    reads: &["foreign_releases", "overlaps"],
    options: &[
        Choice {
            en: "Nothing goes wrong: one holder at a time, each deletes its own lock",
            zh: "一切正常：一次只有一个持锁者，各自删掉自己的锁",
            sources: &["000:366-369", "000:438-439"],
            rule: "foreign_releases == 0 and overlaps == 0",
        },
        Choice {
            en: "Two holders work at once, but no release deletes another's lock",
            zh: "两个持锁者同时处理业务，但没有哪次释放误删别人的锁",
            sources: &["002:580"],
            rule: "foreign_releases == 0 and overlaps > 0",
        },
        Choice {
            en: "A late release deletes the next holder's lock",
            zh: "迟到的释放误删了下一个持锁者的锁",
            sources: &["000:433", "003:48-57"],
            rule: "foreign_releases > 0",
        },
    ],
};

/// A Redlock majority that came in after the lease was spent.
pub(super) const VALIDITY: Family = Family {
    reads: &["overlaps", "validity_lapsed"],
    options: &[
        Choice {
            en: "Nothing goes wrong, and the client never has to give a lock back",
            zh: "一切正常，客户端从来不用放弃已经拿到的锁",
            sources: &[
                "belief: a majority of votes is the lock, however late it came — held \
                        by readers of quorum systems, where a majority decides",
            ],
            rule: "overlaps == 0 and validity_lapsed == 0",
        },
        Choice {
            en: "The client gives the late majority back and asks again: one holder at a time",
            zh: "客户端放弃这次来得太晚的多数票，重新申请：始终只有一个持锁者",
            sources: &["002:614", "001:103-104"],
            rule: "overlaps == 0 and validity_lapsed > 0",
        },
        Choice {
            en: "The client works under the late lock, and a second holder gets in beside it",
            zh: "客户端拿着租约已到期的锁处理业务，第二个持锁者也同时进来了",
            sources: &[
                "belief: once a majority said yes the lock is held — held by clients \
                        that count the votes and skip the clock",
            ],
            rule: "overlaps > 0",
        },
    ],
};

/// A lock whose waiters queue in the lock service, with no lease and no retry loop: what a
/// crowd of buyers gets from it.
pub(super) const QUEUE: Family = Family {
    reads: &["sent_503", "orders", "oversold", "initial_stock"],
    options: &[
        Choice {
            en: "Every item sold once, and every buyer answered in turn: nobody gives up",
            zh: "每件商品只卖一次，每个买家按顺序得到答复：没有人等到放弃",
            sources: &["001:500-501"],
            rule: "oversold == 0 and orders >= initial_stock and sent_503 == 0",
        },
        Choice {
            en: "Every item sold once, but buyers give up in the long line (503)",
            zh: "每件商品只卖一次，但有买家在长队里等到放弃（503）",
            sources: &[
                "001:503",
                "belief: a release wakes every waiter at once and the herd \
                        swamps the lock service — held by those who met the herd effect with \
                        naive watches",
            ],
            rule: "oversold == 0 and orders >= initial_stock and sent_503 > 0",
        },
        Choice {
            en: "Items stay unsold: with no lease, the line stalls",
            zh: "有商品卖不出去：锁没有租约，队伍会卡住",
            sources: &["000:157-159", "002:39"],
            rule: "oversold == 0 and orders < initial_stock",
        },
        Choice {
            en: "Items are oversold",
            zh: "出现超卖",
            sources: &[
                "belief: a lock outside Redis cannot guard a stock kept elsewhere — \
                        held by those who think the lock and the data must live together",
            ],
            rule: "oversold > 0",
        },
    ],
};

/// [`CRASH`] from the worst outcome to the mildest, as the ladder's three crash chapters ask
/// it.
pub(super) const CRASH_WORST_FIRST: Family = Family {
    reads: CRASH.reads,
    options: &CRASH.reordered([2, 1, 0]),
};

/// [`LATE_WRITE`] with the lost updates first, as the three frozen holders (a watchdog,
/// Redlock, ZooKeeper) ask it.
pub(super) const LATE_WRITE_LOST_FIRST: Family = Family {
    reads: LATE_WRITE.reads,
    options: &LATE_WRITE.reordered([1, 0, 2]),
};

/// [`LATE_WRITE_FENCED`] with the refused write last, as the three fenced freezes ask it.
pub(super) const LATE_WRITE_FENCED_REFUSED_LAST: Family = Family {
    reads: LATE_WRITE_FENCED.reads,
    options: &LATE_WRITE_FENCED.reordered([0, 1, 3, 2]),
};

/// [`ONE_ITEM`] from the most sales to none, as the chapters beyond one Redis ask it.
pub(super) const ONE_ITEM_MOST_FIRST: Family = Family {
    reads: ONE_ITEM.reads,
    options: &ONE_ITEM.reordered([2, 1, 0]),
};

/// [`ONE_ITEM_FENCED`] with the refused late write second, as the fenced cuts ask it.
pub(super) const ONE_ITEM_FENCED_REFUSED_SECOND: Family = Family {
    reads: ONE_ITEM_FENCED.reads,
    options: &ONE_ITEM_FENCED.reordered([0, 2, 1, 3]),
};

/// [`AVAILABILITY`] with the partial service first, as ZooKeeper's lost server asks it.
pub(super) const AVAILABILITY_PARTIAL_FIRST: Family = Family {
    reads: AVAILABILITY.reads,
    options: &AVAILABILITY.reordered([1, 0, 2, 3]),
};

/// [`RELEASE`] from the worst outcome to the mildest, as the ladder's release chapters ask
/// it.
pub(super) const RELEASE_WORST_FIRST: Family = Family {
    reads: RELEASE.reads,
    options: &RELEASE.reordered([2, 1, 0]),
};

/// [`CRASH`] with the stall first and the deadlock second, as a claim on a crash asks it
/// beside the ladder's own crash chapters (which ask [`CRASH_WORST_FIRST`]).
pub(super) const CRASH_STALL_FIRST: Family = Family {
    reads: CRASH.reads,
    options: &CRASH.reordered([1, 2, 0]),
};

/// [`RELEASE`] with the foreign release first and the overlap last, as a claim on the
/// diamond rung asks it beside the rung's own question.
pub(super) const RELEASE_OVERLAP_LAST: Family = Family {
    reads: RELEASE.reads,
    options: &RELEASE.reordered([2, 0, 1]),
};

/// [`AVAILABILITY`] from nothing sold to oversold, as a claim on Redlock's lost minority
/// asks it beside the chapter's own question.
pub(super) const AVAILABILITY_REFUSED_FIRST: Family = Family {
    reads: AVAILABILITY.reads,
    options: &AVAILABILITY.reordered([2, 1, 0, 3]),
};
