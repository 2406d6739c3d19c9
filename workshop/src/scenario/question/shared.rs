//! The option sets several chapters share, each with the figures its rules read. A chapter
//! that asks what its neighbours ask gets the same options, so the class can set the answers
//! side by side: the three crash chapters of the ladder, ZooKeeper's and PostgreSQL's crash
//! all ask "what do the other buyers get?" and land in different options.
//!
//! Every set cuts the figures into options that do not overlap: each rule is a conjunction of
//! comparisons that the others contradict (the tests check it on a grid of figures).

use super::{fig, Choice, Family, Figures};

/// How much was sold beyond the stock, relative to the stock.
pub(super) const OVERSOLD: Family = Family {
    reads: &["oversold", "initial_stock"],
    options: &[
        Choice {
            en: "None: exactly the stock is sold",
            zh: "一件也没有：卖出的正好是库存",
            holds: |f| fig(f, "oversold") == 0.0,
        },
        Choice {
            en: "A few: at most a tenth of the stock",
            zh: "少量：不超过库存的十分之一",
            holds: |f| {
                let oversold = fig(f, "oversold");
                oversold > 0.0 && oversold <= fig(f, "initial_stock") / 10.0
            },
        },
        Choice {
            en: "Many: more than a tenth of the stock, up to the whole stock again",
            zh: "大量：超过库存的十分之一，最多再卖出一整份库存",
            holds: |f| {
                let oversold = fig(f, "oversold");
                let stock = fig(f, "initial_stock");
                oversold > stock / 10.0 && oversold <= stock
            },
        },
        Choice {
            en: "More than the whole stock again",
            zh: "比整份库存还多",
            holds: |f| fig(f, "oversold") > fig(f, "initial_stock"),
        },
    ],
};

/// Whether the sale stays up, and whether it stays right.
pub(super) const AVAILABILITY: Family = Family {
    reads: &["oversold", "orders", "sent_503"],
    options: &[
        Choice {
            en: "Every buyer is answered (sold, or sold out), nothing oversold",
            zh: "每个买家都得到答复（买到或已售罄），没有超卖",
            holds: |f| {
                fig(f, "oversold") == 0.0 && fig(f, "orders") > 0.0 && fig(f, "sent_503") == 0.0
            },
        },
        Choice {
            en: "Some are sold, some buyers are refused (503), nothing oversold",
            zh: "卖出了一部分，也有买家被拒绝（503），没有超卖",
            holds: |f| {
                fig(f, "oversold") == 0.0 && fig(f, "orders") > 0.0 && fig(f, "sent_503") > 0.0
            },
        },
        Choice {
            en: "Nothing is sold: the buyers are refused",
            zh: "一件也卖不出去：买家都被拒绝",
            holds: |f| fig(f, "oversold") == 0.0 && fig(f, "orders") == 0.0,
        },
        Choice {
            en: "Sales go on, and items are oversold",
            zh: "照样在卖，而且有超卖",
            holds: |f| fig(f, "oversold") > 0.0,
        },
    ],
};

/// How long the others wait after a holder crashed with the lock: where a stall of about a
/// lease (`StallThenResume` counts 0.8 of it) begins.
const STALL_MS: f64 = 800.0;

/// Whether nothing more was sold once the holder crashed: nothing at all, or nothing to the
/// buyers a deadlock's run sends after twice the lease (`sold_after_stall`; a sale or two may
/// go through before the crash strikes).
fn stuck(f: &Figures) -> bool {
    fig(f, "orders") == 0.0 || fig(f, "sold_after_stall") == 0.0
}

/// What the other buyers get when the holder crashes with the lock held.
pub(super) const CRASH: Family = Family {
    reads: &["orders", "max_latency_ms"],
    options: &[
        Choice {
            en: "They barely notice: sales go on, nobody waits near a second",
            zh: "几乎没影响：照常在卖，没有谁等得接近一秒",
            holds: |f| !stuck(f) && fig(f, "orders") > 0.0 && fig(f, "max_latency_ms") < STALL_MS,
        },
        Choice {
            en: "Sales stall for a second or more, then resume by themselves",
            zh: "销售停顿一秒或更久，然后自行恢复",
            holds: |f| !stuck(f) && fig(f, "orders") > 0.0 && fig(f, "max_latency_ms") >= STALL_MS,
        },
        Choice {
            en: "Nothing more is sold: every buyer waits until it gives up",
            zh: "再也卖不出去：每个买家都一直等到放弃",
            holds: stuck,
        },
    ],
};

/// What happens when a holder's lock can end before its write: slow work, a frozen or busy
/// holder, a session that times out.
pub(super) const LATE_WRITE: Family = Family {
    reads: &["overlaps", "lost_updates", "stale_writes_rejected"],
    options: &[
        Choice {
            en: "Nobody else gets in before the holder is done",
            zh: "持锁者完成之前，没有别人能进来",
            holds: |f| {
                fig(f, "overlaps") == 0.0
                    && fig(f, "lost_updates") == 0.0
                    && fig(f, "stale_writes_rejected") == 0.0
            },
        },
        Choice {
            en: "Others get in, and the first holder's late write overwrites theirs (lost updates)",
            zh: "别人进来了，第一个持锁者迟到的写入覆盖了他们的（丢失更新）",
            holds: |f| fig(f, "lost_updates") > 0.0,
        },
        Choice {
            en: "Others get in, but the first holder's late write is refused",
            zh: "别人进来了，但第一个持锁者迟到的写入被拒绝",
            holds: |f| fig(f, "lost_updates") == 0.0 && fig(f, "stale_writes_rejected") > 0.0,
        },
        Choice {
            en: "Others get in, yet no update is lost and no write refused",
            zh: "别人进来了，却没有丢失更新，也没有写入被拒",
            holds: |f| {
                fig(f, "overlaps") > 0.0
                    && fig(f, "lost_updates") == 0.0
                    && fig(f, "stale_writes_rejected") == 0.0
            },
        },
    ],
};

/// One item, a few buyers, and a failure while the first holds the lock: how often is it sold?
pub(super) const ONE_ITEM: Family = Family {
    reads: &["oversold", "orders", "stale_writes_rejected"],
    options: &[
        Choice {
            en: "Not at all: every buyer is refused",
            zh: "一次也没卖出：买家都被拒绝",
            holds: |f| {
                fig(f, "oversold") == 0.0
                    && fig(f, "orders") == 0.0
                    && fig(f, "stale_writes_rejected") == 0.0
            },
        },
        Choice {
            en: "Once, to one holder; the others wait or are refused",
            zh: "只卖出一次，只有一个持锁者；其他人等待或被拒绝",
            holds: |f| {
                fig(f, "oversold") == 0.0
                    && fig(f, "orders") > 0.0
                    && fig(f, "stale_writes_rejected") == 0.0
            },
        },
        Choice {
            en: "Once: a second holder gets in, but the first one's late write is refused",
            zh: "只卖出一次：第二个持锁者进来了，但第一个迟到的写入被拒绝",
            holds: |f| fig(f, "oversold") == 0.0 && fig(f, "stale_writes_rejected") > 0.0,
        },
        Choice {
            en: "Twice: two holders at once",
            zh: "卖了两次：同时有两个持锁者",
            holds: |f| fig(f, "oversold") > 0.0,
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
            holds: |f| fig(f, "foreign_releases") == 0.0 && fig(f, "overlaps") == 0.0,
        },
        Choice {
            en: "Two holders work at once, but no release deletes another's lock",
            zh: "两个持锁者同时处理业务，但没有哪次释放误删他人锁",
            holds: |f| fig(f, "foreign_releases") == 0.0 && fig(f, "overlaps") > 0.0,
        },
        Choice {
            en: "A late release deletes the next holder's lock",
            zh: "迟到的释放误删了下一个持锁者的锁",
            holds: |f| fig(f, "foreign_releases") > 0.0,
        },
    ],
};

/// A Redlock majority that came in after the lease was spent.
pub(super) const VALIDITY: Family = Family {
    reads: &["overlaps", "validity_lapsed"],
    options: &[
        Choice {
            en: "Nothing goes wrong, and the client never has to give a lock back",
            zh: "一切正常，客户端从来不用交还锁",
            holds: |f| fig(f, "overlaps") == 0.0 && fig(f, "validity_lapsed") == 0.0,
        },
        Choice {
            en: "The client gives the late majority back and asks again: one holder at a time",
            zh: "客户端交还迟到的多数票，重新申请：始终只有一个持锁者",
            holds: |f| fig(f, "overlaps") == 0.0 && fig(f, "validity_lapsed") > 0.0,
        },
        Choice {
            en: "The client works under the late lock, and a second holder gets in beside it",
            zh: "客户端在迟到的锁下处理业务，第二个持锁者和它同时进入",
            holds: |f| fig(f, "overlaps") > 0.0,
        },
    ],
};
