//! The matrix as an aligned table (with its hand-off and store-count sections), CSV and JSON.

use std::fmt::Write as _;

use super::hand_off_table::{hand_off_table, store_counts_table};
use super::{align, row_name};
use crate::hand_off::Spread;
use crate::matrix::{MatrixReport, MatrixRow};

const COLUMNS: [&str; 17] = [
    "tier",
    "sent",
    "200",
    "409",
    "503",
    "err",
    "ledger",
    "stock",
    "oversold",
    "lost upd",
    "overlaps",
    "foreign rel",
    "stale rej",
    "lock t/o",
    "req/s",
    "p50 ms",
    "p99 ms",
];

fn cells(row: &MatrixRow) -> [String; 17] {
    [
        row_name(row),
        row.sent.to_string(),
        row.ok.to_string(),
        row.sold_out.to_string(),
        row.unavailable.to_string(),
        row.errors.to_string(),
        row.ledger_orders.to_string(),
        row.final_stock.to_string(),
        row.oversold.to_string(),
        row.lost_updates.to_string(),
        row.overlaps.to_string(),
        row.foreign_releases.to_string(),
        row.stale_writes_rejected.to_string(),
        row.lock_timeouts.to_string(),
        format!("{:.0}", row.throughput_rps),
        format!("{:.1}", row.p50_ms),
        format!("{:.1}", row.p99_ms),
    ]
}

/// The matrix as an aligned table: the tier left-aligned, numbers right-aligned.
pub fn matrix_table(report: &MatrixReport) -> String {
    let rows: Vec<Vec<String>> = report.rows.iter().map(|r| cells(r).to_vec()).collect();
    let mut out = format!(
        "stock {} per tier, {} buyers released at once, against {}\n\n",
        report.stock,
        report.buyers,
        report.targets.join(", ")
    );
    out.push_str(&align(&COLUMNS, &rows));
    out.push_str(
        "\nsent..err, req/s, p50, p99: what the buyers saw. ledger..lock t/o: ground truth from Redis (GET /state).\n",
    );
    out.push_str(&hand_off_table(report));
    out.push_str(&store_counts_table(report));
    for why in &report.skipped {
        out.push_str(&format!("skipped {why}\n"));
    }
    out
}

/// The matrix as CSV, one header line then one line per tier. A figure not measured (a
/// hand-off where sections overlapped) is an empty field.
pub fn matrix_csv(report: &MatrixReport) -> String {
    let mut out = String::from(
        "tier,sent,ok,sold_out,unavailable,errors,ledger_orders,final_stock,oversold,lost_updates,overlaps,foreign_releases,stale_writes_rejected,lock_timeouts,throughput_rps,p50_ms,p99_ms,\
         p99_9_ms,hand_offs,overlapping_sections,hand_off_p50_ms,hand_off_p99_ms,hand_off_p99_9_ms,hand_off_max_ms,\
         clients,acquires_min,acquires_max,acquires_min_over_max,jain,wait\n",
    );
    let opt = |x: Option<String>| x.unwrap_or_default();
    for r in &report.rows {
        let h = r.hand_off.as_ref();
        let spread = h.and_then(|h| h.ms);
        let ms = |pick: fn(&Spread) -> f64| opt(spread.as_ref().map(|s| pick(s).to_string()));
        let f = r.fairness.as_ref();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(r.tier.id()),
            r.sent,
            r.ok,
            r.sold_out,
            r.unavailable,
            r.errors,
            r.ledger_orders,
            r.final_stock,
            r.oversold,
            r.lost_updates,
            r.overlaps,
            r.foreign_releases,
            r.stale_writes_rejected,
            r.lock_timeouts,
            r.throughput_rps,
            r.p50_ms,
            r.p99_ms,
            r.p99_9_ms,
            opt(h.filter(|h| h.exclusive()).map(|h| h.hand_offs.to_string())),
            opt(h.map(|h| h.overlapping.to_string())),
            ms(|s| s.p50),
            ms(|s| s.p99),
            ms(|s| s.p99_9),
            ms(|s| s.max),
            opt(f.map(|f| f.clients.to_string())),
            opt(f.map(|f| f.min.to_string())),
            opt(f.map(|f| f.max.to_string())),
            opt(f.and_then(|f| f.min_over_max).map(|x| x.to_string())),
            opt(f.and_then(|f| f.jain).map(|x| x.to_string())),
            opt(r.wait.map(|w| csv_field(&w.to_string()))),
        );
    }
    out
}

pub(super) fn csv_field(s: &str) -> String {
    match s.contains([',', '"', '\n']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_owned(),
    }
}

pub fn matrix_json(report: &MatrixReport) -> String {
    let mut out = serde_json::to_string_pretty(report).expect("a report serializes");
    out.push('\n');
    out
}
