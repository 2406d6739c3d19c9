//! How fast the lock hands over: the time from one critical section's end to the next one's
//! start, on the resource store's clock, never the generator's.
//!
//! # Where the times come from
//!
//! Every sold section has a ledger entry, and the entry carries two times the resource store's
//! `TIME` stamped in the sale's own scripts: `enter_us` when the section read the stock
//! (`enter.lua`, right after its acquire, in the same round trip where the lock lives with the
//! stock) and `exit_us` when it wrote the sale (`commit.lua`, right before its release, which
//! rides in the same round trip). One clock stamps both, so a hand-off is
//! `next.enter_us − previous.exit_us` with no clock offset in it: the release, the wake-up of the
//! next buyer and its acquire (and, where the lock lives in a store of its own, the round trip on
//! either side that reaches it).
//!
//! The ledger (`GET /ledger`, read after the run) is used rather than the lock timeline: the
//! timeline carries the same times, but it is a stream capped near 5,000 entries (two per
//! section), so it keeps about the last 2,500 sections of a run; the ledger keeps every sale.
//! Reading the timeline while the run goes would put a large `XRANGE` on the very Redis whose
//! hand-offs are measured.
//!
//! # What counts
//!
//! Sold sections only. A section that sold nothing has no ledger entry: one that found the
//! stock gone (after the last sale: with one lock the stock only falls, so none lies between
//! two sales), one whose write a fencing check refused, one whose holder died. The newest
//! [`MAX_SECTIONS`] of the run's sales are read at most, and the report says how many.
//!
//! When sections overlap (no lock, a lock per instance, or a lock that lost its exclusion),
//! nothing is handed over and no hand-off time is given: the report says how many sections
//! began while another was inside, and the ground truth's own overlap count.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail};
use http::Method;
use oversell_api::GroundTruth;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::inside_split::InsideSplit;
pub use crate::spread::{percentile, spread, Spread};
use oversell_client::admin::AdminClient;

/// The most sold sections read from the ledger after a run: the newest ones.
pub const MAX_SECTIONS: i64 = 100_000;
/// Entries per `GET /ledger` page (the server's own limit).
const PAGE: i64 = 10_000;
/// Upper bounds of the distribution's buckets, in µs; the last bucket has none.
const BUCKETS_US: [u64; 16] = [
    10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
    500_000, 1_000_000,
];

/// One sold critical section, from its ledger entry: the store's times, and the instance's
/// when the server stamps them (`inside_split.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Section {
    pub enter_us: i64,
    pub exit_us: i64,
    #[serde(default)]
    pub read_us: Option<i64>,
    #[serde(default)]
    pub write_us: Option<i64>,
    pub instance: String,
}

/// Hand-offs of one share of the distribution: those shorter than `below_us` (and as long as
/// the bucket before's bound or longer); the last bucket has no bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub below_us: Option<u64>,
    pub count: u64,
}

/// What the ledger says of a run's hand-offs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandOff {
    /// Sold sections read (the run's newest [`MAX_SECTIONS`] at most).
    pub sections: u64,
    /// The run's sold sections in all: more than `sections` when only the newest were read.
    pub sold: u64,
    /// Sections read that began while an earlier one was still inside.
    pub overlapping: u64,
    /// Overlapping pairs the ground truth counted in the run (`GET /state`), sections that sold
    /// nothing included.
    pub overlaps: i64,
    /// Gaps measured: a section that began after every earlier one had ended.
    pub hand_offs: u64,
    /// The gaps, ms; absent when sections overlapped (nothing was handed over) or there was
    /// no gap to measure.
    pub ms: Option<Spread>,
    /// Time inside a section, from its read to its write, ms.
    pub inside_ms: Option<Spread>,
    /// The time inside, split where the store and the instance pass it to each other; absent
    /// when the ledger does not say (`inside_split.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside_split: Option<InsideSplit>,
    /// The distribution of the gaps, empty when `ms` is absent.
    pub buckets: Vec<Bucket>,
    /// A full turn of the queue: the time as many consecutive sections as the run had buyers
    /// took, from the first one's read to the read of the one after the last. A buyer of a lock
    /// that serves in order waits about one turn (everyone else goes once before it), so the
    /// turns' spread is the floor of its sale latency's: what the pace of the serial path
    /// itself varied, whoever the lock served. Absent when the buyers were not given, the
    /// sections overlapped, or fewer sections than buyers were sold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
}

/// The spread of a full turn of the queue ([`HandOff::turn`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Sections per turn: the run's buyers (connections).
    pub sections: u64,
    pub ms: Spread,
}

impl HandOff {
    /// Hand-offs of `sections` (any order): each section that began after every earlier one had
    /// ended is one gap, from the latest end before it to its start. `sold` is the run's count
    /// of sold sections, `overlaps` the ground truth's count of overlapping pairs, `buyers` the
    /// run's connections when known (for [`HandOff::turn`]).
    pub fn measure(
        mut sections: Vec<Section>,
        sold: u64,
        overlaps: i64,
        buyers: Option<usize>,
    ) -> HandOff {
        sections.sort_by_key(|s| (s.enter_us, s.exit_us));
        let mut gaps = Vec::with_capacity(sections.len());
        let mut inside = Vec::with_capacity(sections.len());
        let mut overlapping = 0;
        let mut latest_exit: Option<i64> = None;
        for s in &sections {
            inside.push((s.exit_us - s.enter_us).max(0) as u64);
            match latest_exit {
                // Equal times are a hand-off of 0 µs: the next read rode behind the write.
                Some(exit) if s.enter_us < exit => overlapping += 1,
                Some(exit) => gaps.push((s.enter_us - exit) as u64),
                None => {}
            }
            latest_exit = Some(latest_exit.map_or(s.exit_us, |e| e.max(s.exit_us)));
        }
        let exclusive = overlapping == 0 && overlaps <= 0;
        let turn = buyers
            .filter(|&n| exclusive && n > 0 && sections.len() > n)
            .and_then(|n| {
                let mut turns: Vec<u64> = sections
                    .windows(n + 1)
                    .map(|w| (w[n].enter_us - w[0].enter_us).max(0) as u64)
                    .collect();
                turns.sort_unstable();
                Some(Turn {
                    sections: n as u64,
                    ms: spread(&turns)?,
                })
            });
        gaps.sort_unstable();
        inside.sort_unstable();
        let inside_split = InsideSplit::measure(
            sections
                .iter()
                .map(|s| (s.enter_us, s.read_us, s.write_us, s.exit_us)),
        );
        HandOff {
            sections: sections.len() as u64,
            sold: sold.max(sections.len() as u64),
            overlapping,
            overlaps,
            hand_offs: gaps.len() as u64,
            ms: exclusive.then(|| spread(&gaps)).flatten(),
            inside_ms: spread(&inside),
            inside_split,
            buckets: match exclusive && !gaps.is_empty() {
                true => buckets(&gaps),
                false => Vec::new(),
            },
            turn,
        }
    }

    /// Whether the lock handed over at all (no two sections overlapped).
    pub fn exclusive(&self) -> bool {
        self.overlapping == 0 && self.overlaps <= 0
    }

    /// One line saying what was measured, e.g. "14,999 hand-offs between 15,000 sold sections".
    pub fn scope(&self) -> String {
        if self.sections == 0 {
            return "no hand-off: no section sold in the run".to_owned();
        }
        let read = match self.sold > self.sections {
            true => format!(
                "the newest {} of {} sold sections",
                thousands(self.sections),
                thousands(self.sold)
            ),
            false => format!("{} sold sections", thousands(self.sections)),
        };
        match self.exclusive() {
            true => format!(
                "{} hand-off{} between {read}",
                thousands(self.hand_offs),
                if self.hand_offs == 1 { "" } else { "s" }
            ),
            false => format!(
                "no hand-off: {} of {read} began while another was inside, and Redis counted {} overlapping pairs",
                thousands(self.overlapping),
                thousands(self.overlaps.max(0) as u64)
            ),
        }
    }
}

fn buckets(sorted_us: &[u64]) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = BUCKETS_US
        .iter()
        .map(|&b| Bucket {
            below_us: Some(b),
            count: 0,
        })
        .chain([Bucket {
            below_us: None,
            count: 0,
        }])
        .collect();
    for &us in sorted_us {
        let i = BUCKETS_US.partition_point(|&b| b <= us);
        out[i].count += 1;
    }
    // Trailing empty buckets say nothing.
    while out.len() > 1 && out.last().is_some_and(|b| b.count == 0) {
        out.pop();
    }
    out
}

/// Where a run started in the room's ground truth: its ledger's length and overlap count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    pub orders: i64,
    pub overlaps: i64,
}

impl Mark {
    pub fn of(truth: &GroundTruth) -> Mark {
        Mark {
            orders: truth.orders,
            overlaps: truth.overlaps,
        }
    }
}

/// What the ledger says of the sales between `before` and `after`: their hand-offs, and the
/// sales of each instance.
pub async fn from_ledger(
    admin: &AdminClient,
    before: Mark,
    after: &GroundTruth,
    buyers: Option<usize>,
) -> anyhow::Result<(HandOff, BTreeMap<String, u64>)> {
    if after.orders < before.orders {
        bail!(
            "the room was reset during the run: its ledger no longer holds the run's sales \
             ({} orders before, {} after)",
            before.orders,
            after.orders
        );
    }
    let from = before.orders.max(after.orders - MAX_SECTIONS);
    let sections = read(admin, from, after.orders).await?;
    let mut per_instance: BTreeMap<String, u64> = BTreeMap::new();
    for s in &sections {
        *per_instance.entry(s.instance.clone()).or_default() += 1;
    }
    let sold = (after.orders - before.orders) as u64;
    let overlaps = after.overlaps - before.overlaps;
    Ok((
        HandOff::measure(sections, sold, overlaps, buyers),
        per_instance,
    ))
}

/// The ledger's entries `from..to`, as sections.
async fn read(admin: &AdminClient, from: i64, to: i64) -> anyhow::Result<Vec<Section>> {
    let mut sections = Vec::with_capacity((to - from).max(0) as usize);
    let mut offset = from;
    while offset < to {
        let limit = PAGE.min(to - offset);
        let page = admin
            .request(
                Method::GET,
                &format!("/ledger?offset={offset}&limit={limit}"),
                None,
            )
            .await?;
        let orders = page
            .get("orders")
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("GET /ledger answered without its orders"))?;
        if orders.is_empty() {
            break;
        }
        for order in orders {
            sections.push(section(order)?);
        }
        offset += orders.len() as i64;
    }
    Ok(sections)
}

fn section(order: &Value) -> anyhow::Result<Section> {
    serde_json::from_value(order.clone()).map_err(|e| {
        anyhow!("a ledger entry without the store's times ({e}): is the server older than loadtest? {order}")
    })
}

/// `12345` as `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(enter_us: i64, exit_us: i64) -> Section {
        Section {
            enter_us,
            exit_us,
            instance: "app1".into(),
            ..Section::default()
        }
    }

    #[test]
    fn a_turn_is_as_many_sections_in_a_row_as_buyers_from_read_to_read() {
        // Reads every 100 µs, one late by 300 µs: turns of two sections span 200 µs, or 500
        // across the late one.
        let reads = [0, 100, 200, 600, 700, 800];
        let sections: Vec<Section> = reads.iter().rev().map(|&r| s(r, r + 50)).collect();
        let h = HandOff::measure(sections.clone(), 6, 0, Some(2));
        let turn = h.turn.unwrap();
        assert_eq!(turn.sections, 2);
        // Windows 0..200, 100..600, 200..700, 600..800.
        assert_eq!((turn.ms.p50, turn.ms.max), (0.2, 0.5));
        // Not without buyers, with no more sections than buyers, or when sections overlapped.
        assert!(HandOff::measure(sections.clone(), 6, 0, None)
            .turn
            .is_none());
        assert!(HandOff::measure(sections.clone(), 6, 0, Some(6))
            .turn
            .is_none());
        assert!(HandOff::measure(sections, 6, 1, Some(2)).turn.is_none());
    }

    #[test]
    fn a_hand_off_is_the_next_enter_minus_the_previous_exit_in_any_order() {
        // Out of order as the ledger may hold them (it is in the order of the writes).
        let h = HandOff::measure(vec![s(250, 300), s(100, 200), s(200, 240)], 3, 0, None);
        assert_eq!((h.sections, h.hand_offs, h.overlapping), (3, 2, 0));
        // Gaps 0 µs (the next read rode behind the write) and 10 µs.
        assert_eq!(h.ms.unwrap().max, 0.01);
        assert_eq!(h.ms.unwrap().p50, 0.0);
        assert_eq!(h.inside_ms.unwrap().max, 0.1);
        assert_eq!(
            h.buckets,
            [
                Bucket {
                    below_us: Some(10),
                    count: 1
                },
                Bucket {
                    below_us: Some(20),
                    count: 1
                }
            ]
        );
        assert!(h.exclusive());
        assert_eq!(h.scope(), "2 hand-offs between 3 sold sections");
    }

    #[test]
    fn overlapping_sections_hand_nothing_over_and_say_so() {
        // As `none` does: the second begins inside the first, the third inside the first too
        // (after the second ended), the fourth after both.
        let sections = vec![s(0, 100), s(10, 20), s(50, 60), s(150, 160)];
        let h = HandOff::measure(sections, 4, 3, None);
        assert_eq!((h.overlapping, h.hand_offs), (2, 1));
        assert_eq!(h.ms, None, "no number when sections overlap");
        assert!(h.buckets.is_empty());
        assert!(!h.exclusive());
        assert_eq!(
            h.scope(),
            "no hand-off: 2 of 4 sold sections began while another was inside, and Redis counted 3 overlapping pairs"
        );
        // The gap after the overlap is measured from the latest exit (100), not the last one.
        let nested = HandOff::measure(vec![s(0, 100), s(10, 20), s(130, 140)], 3, 0, None);
        assert_eq!(nested.hand_offs, 1);
        assert_eq!(nested.ms, None);
    }

    #[test]
    fn an_overlap_the_ledger_cannot_see_still_withholds_the_figure() {
        // Sold sections one after the other, but the ground truth counted an overlap with a
        // section that sold nothing (a stale write refused).
        let h = HandOff::measure(vec![s(0, 10), s(20, 30)], 2, 1, None);
        assert_eq!((h.overlapping, h.hand_offs, h.ms), (0, 1, None));
    }

    #[test]
    fn a_capped_read_says_how_much_of_the_run_it_covers() {
        let h = HandOff::measure(vec![s(0, 10), s(20, 30)], 250_000, 0, None);
        assert_eq!(
            h.scope(),
            "1 hand-off between the newest 2 of 250,000 sold sections"
        );
        let empty = HandOff::measure(vec![], 0, 0, None);
        assert_eq!(
            (empty.ms, empty.inside_ms, empty.hand_offs),
            (None, None, 0)
        );
    }

    #[test]
    fn gaps_fall_in_the_bucket_below_their_bound() {
        let b = buckets(&[0, 9, 10, 999, 1_000, 2_000_000]);
        let count = |below: Option<u64>| b.iter().find(|x| x.below_us == below).unwrap().count;
        assert_eq!(count(Some(10)), 2);
        assert_eq!(count(Some(20)), 1);
        assert_eq!(count(Some(1_000)), 1);
        assert_eq!(count(Some(2_000)), 1);
        assert_eq!(count(None), 1);
        assert_eq!(b.iter().map(|x| x.count).sum::<u64>(), 6);
        assert_eq!(buckets(&[5]).len(), 1, "trailing empty buckets are cut");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn a_ledger_entry_gives_its_section_and_one_without_times_is_named() {
        let entry = serde_json::json!({"order_id":"o","buyer":"b","qty":1,"instance":"app2",
            "tier":"lua-release","fence":null,"depth":1,"enter_us":1700000000000100i64,
            "exit_us":1700000000000180i64});
        assert_eq!(section(&entry).unwrap(), {
            let mut x = s(1700000000000100, 1700000000000180);
            x.instance = "app2".into();
            x
        });
        let err = section(&serde_json::json!({"instance":"app1"})).unwrap_err();
        assert!(err.to_string().contains("enter_us"), "{err}");
    }
}
