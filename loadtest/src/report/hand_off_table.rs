//! The matrix's sections beyond the main table: how fast each tier handed the lock over and
//! how evenly the clients shared it, and the lock store's own counts per sale.

use std::fmt::Write as _;

use super::{align, ratio, row_name};
use crate::fairness::Fairness;
use crate::hand_off::{thousands, HandOff, Spread};
use crate::matrix::{MatrixReport, MatrixRow};

const HAND_OFF_COLUMNS: [&str; 15] = [
    "tier",
    "hand-offs",
    "p50 ms",
    "p99 ms",
    "p99.9 ms",
    "max ms",
    "sale p50",
    "sale p99",
    "sale p99.9",
    "clients",
    "min",
    "max",
    "min/max",
    "Jain",
    "per instance %",
];

/// How fast each tier handed the lock over, and how evenly the clients shared it.
pub(super) fn hand_off_table(report: &MatrixReport) -> String {
    let measured: Vec<&MatrixRow> = report
        .rows
        .iter()
        .filter(|r| r.hand_off.is_some() || r.fairness.is_some())
        .collect();
    if measured.is_empty() {
        return String::new();
    }
    let ms = |h: Option<&HandOff>, pick: fn(&Spread) -> f64| {
        h.and_then(|h| h.ms.as_ref())
            .map_or("-".to_owned(), |s| format!("{:.3}", pick(s)))
    };
    let rows: Vec<Vec<String>> = measured
        .iter()
        .map(|r| {
            let h = r.hand_off.as_ref();
            let f = r.fairness.as_ref();
            let count = |pick: fn(&Fairness) -> String| f.map_or("-".to_owned(), pick);
            vec![
                row_name(r),
                match h {
                    Some(h) if h.exclusive() => thousands(h.hand_offs),
                    Some(_) => "overlap".to_owned(),
                    None => "-".to_owned(),
                },
                ms(h, |s| s.p50),
                ms(h, |s| s.p99),
                ms(h, |s| s.p99_9),
                ms(h, |s| s.max),
                format!("{:.1}", r.p50_ms),
                format!("{:.1}", r.p99_ms),
                format!("{:.1}", r.p99_9_ms),
                count(|f| f.clients.to_string()),
                count(|f| f.min.to_string()),
                count(|f| f.max.to_string()),
                count(|f| ratio(f.min_over_max)),
                count(|f| ratio(f.jain)),
                count(shares),
            ]
        })
        .collect();
    let mut out = String::from(
        "\nhand-off and fairness: the hand-off is Redis' clock from one sold section's write to the next one's read \
         (GET /ledger); sale: the latency the buyers saw; acquires per client (200s per connection): min, max, Jain's index\n",
    );
    out.push_str(&align(&HAND_OFF_COLUMNS, &rows));
    let overlapping: Vec<String> = measured
        .iter()
        .filter_map(|r| {
            let h = r.hand_off.as_ref()?;
            (!h.exclusive()).then(|| format!("{}: {}", row_name(r), h.scope()))
        })
        .collect();
    if !overlapping.is_empty() {
        out.push_str("overlap: sections ran at the same time, so no lock handed anything over:\n");
        for line in overlapping {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// Sales per instance as shares, "34/33/33", in the instances' order.
fn shares(f: &Fairness) -> String {
    let total: u64 = f.per_instance.values().sum();
    if total == 0 {
        return "-".to_owned();
    }
    f.per_instance
        .values()
        .map(|n| format!("{:.0}", 100.0 * *n as f64 / total as f64))
        .collect::<Vec<_>>()
        .join("/")
}

/// The lock store's own counts per sale, when the matrix read them (`--store-counts`).
pub(super) fn store_counts_table(report: &MatrixReport) -> String {
    let counted: Vec<&MatrixRow> = report
        .rows
        .iter()
        .filter(|r| r.lock_requests_per_sale.is_some())
        .collect();
    if counted.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nthe lock store's own counts, per sale (INFO commandstats; ZooKeeper: mntr packets):\n",
    );
    let width = counted
        .iter()
        .map(|r| row_name(r).len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "{:<width$}  {:>17}  {:>16}  {:>8}",
        "tier", "SET NX PX tries", "store requests", "p99 ms"
    );
    for r in counted {
        let tries = r
            .acquire_tries_per_sale
            .map_or("-".to_owned(), |t| format!("{t:.1}"));
        let requests = r.lock_requests_per_sale.unwrap_or(0.0);
        let _ = writeln!(
            out,
            "{:<width$}  {tries:>17}  {requests:>16.1}  {:>8.1}",
            row_name(r),
            r.p99_ms
        );
    }
    out.push_str(
        "SET NX PX tries: each acquire attempt of the tiers that take the lock so (failed = tries - 1); \
         the tries of buyers who then found the stock gone count too.\n",
    );
    out
}
