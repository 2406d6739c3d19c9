//! Printers: the `run` summary (text or JSON) and the matrix (aligned table, JSON, CSV, SVG),
//! and a chart per tier of its hand-offs and acquires per client (`tier_chart`). They only
//! format; every figure was computed before.

mod tier_chart;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use oversell_api::Settings;
use serde_json::json;

use crate::fairness::Fairness;
use crate::hand_off::{thousands, HandOff, Spread};
use crate::matrix::{MatrixReport, MatrixRow};
use crate::stats::RunStats;
use crate::target::Targets;
use crate::worker::{Load, Model, Stop};

pub use tier_chart::tier_svg;

/// What a sale run adds to its summary: the settings it ran with and what the ground truth
/// says of its hand-offs, beside the acquires each client got.
#[derive(Debug, Clone)]
pub struct SaleRun {
    /// As `GET /state` reported them before the run; `None` when it could not be read.
    pub settings: Option<Settings>,
    /// From the ledger, or why not.
    pub hand_off: Result<HandOff, String>,
    pub fairness: Fairness,
}

impl SaleRun {
    /// "lua-release, wait pubsub, business 0 ms, lease 3000 ms", when the settings were read.
    pub fn describe(&self) -> Option<String> {
        self.settings.as_ref().map(|s| {
            format!(
                "{}, wait {}, business {} ms, lease {} ms",
                s.tier, s.wait, s.business_ms, s.ttl_ms
            )
        })
    }

    /// The chart's file name: the tier and its way of waiting (`lua-release-pubsub.svg`).
    pub fn chart_name(&self) -> String {
        match &self.settings {
            Some(s) => format!("{}-{}.svg", s.tier, s.wait.to_string().replace(':', "-")),
            None => "run.svg".to_owned(),
        }
    }

    /// A chart of this run's hand-offs and acquires per client.
    pub fn svg(&self, targets: &Targets) -> String {
        let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
        tier_svg(
            &self.describe().unwrap_or_else(|| "a sale run".to_owned()),
            &format!("Measured by loadtest run against {}", urls.join(", ")),
            self.hand_off.as_ref().map_err(String::as_str),
            &self.fairness,
        )
    }
}

/// A sentence describing the load, e.g. "closed loop, 50 connections, 10000 requests".
pub fn describe(load: &Load) -> String {
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let stop = |stop: Stop| match stop {
        Stop::Requests(n) => count(n, "request", "requests"),
        Stop::After(d) => format!("for {d:?}"),
    };
    let what = format!("{} {}", load.request.method, load.request.path);
    let connections = count(load.workers() as u64, "connection", "connections");
    match load.model {
        Model::Burst { buyers } => format!(
            "{what}: burst of {} released at once over {connections}",
            count(buyers, "buyer", "buyers")
        ),
        Model::Closed { stop: s } => format!("{what}: closed loop, {connections}, {}", stop(s)),
        Model::Open { rate, stop: s } => format!(
            "{what}: open loop at {rate} requests/s, at most {connections}, {} (latency from when each request was due)",
            stop(s)
        ),
    }
}

/// The `run` summary as text.
pub fn run_text(
    targets: &Targets,
    load: &Load,
    stats: &RunStats,
    sale: Option<&SaleRun>,
) -> String {
    let s = stats.summary();
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    let mut out = String::new();
    let _ = writeln!(out, "Target      {}", urls.join(", "));
    if let Some(tier) = sale.and_then(SaleRun::describe) {
        let _ = writeln!(out, "Tier        {tier}");
    }
    let _ = writeln!(out, "Load        {}", describe(load));
    let _ = writeln!(
        out,
        "Elapsed     {:.3} s, {} sent, {:.1} answers/s",
        s.elapsed_s, s.sent, s.throughput_rps
    );
    let statuses: Vec<String> = s
        .statuses
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let _ = writeln!(
        out,
        "Answers     {}",
        match statuses.is_empty() {
            true => "none".to_owned(),
            false => statuses.join("   "),
        }
    );
    let _ = writeln!(
        out,
        "Failures    connection errors: {}   timeouts: {}{}",
        s.conn_errors,
        s.timeouts,
        s.first_error
            .as_ref()
            .map(|e| format!("   (first: {e})"))
            .unwrap_or_default()
    );
    let l = &s.latency_ms;
    let _ = writeln!(
        out,
        "Latency ms  p50 {}   p90 {}   p99 {}   p99.9 {}   max {}",
        l.p50, l.p90, l.p99, l.p99_9, l.max
    );
    if let Some(sale) = sale {
        out.push_str(&sale_text(sale));
    }
    out
}

/// The hand-off and fairness lines of a sale run.
fn sale_text(sale: &SaleRun) -> String {
    let mut out = hand_off_text(&sale.hand_off);
    let f = &sale.fairness;
    let _ = writeln!(
        out,
        "Acquires    per client ({} clients): min {}   max {}   min/max {}   Jain's index {}",
        f.clients,
        f.min,
        f.max,
        ratio(f.min_over_max),
        ratio(f.jain)
    );
    out.push_str(&instances_text(&f.per_instance));
    out
}

/// The hand-off lines: its percentiles and the time inside a section, or why there are none.
fn hand_off_text(hand_off: &Result<HandOff, String>) -> String {
    let spread = |s: &Spread| {
        format!(
            "p50 {}   p99 {}   p99.9 {}   max {}",
            s.p50, s.p99, s.p99_9, s.max
        )
    };
    let mut out = String::new();
    let h = match hand_off {
        Ok(h) => h,
        Err(why) => {
            let _ = writeln!(out, "Hand-off    not measured: {why}");
            return out;
        }
    };
    let _ = match &h.ms {
        Some(ms) => writeln!(
            out,
            "Hand-off ms {}   ({}; Redis' clock, from the ledger)",
            spread(ms),
            h.scope()
        ),
        None => writeln!(out, "Hand-off    {}", h.scope()),
    };
    if let Some(inside) = &h.inside_ms {
        let _ = writeln!(
            out,
            "Inside ms   {}   (a sold section, from its read to its write)",
            spread(inside)
        );
    }
    out
}

fn instances_text(per_instance: &BTreeMap<String, u64>) -> String {
    if per_instance.is_empty() {
        return String::new();
    }
    let each: Vec<String> = per_instance
        .iter()
        .map(|(id, n)| format!("{id} {}", thousands(*n)))
        .collect();
    format!("Instances   sales: {}\n", each.join("   "))
}

/// `loadtest hand-off`: what the room's ledger says as it stands, as text or JSON.
pub fn ledger_report(
    targets: &Targets,
    settings: &Settings,
    hand_off: &HandOff,
    per_instance: &BTreeMap<String, u64>,
    as_json: bool,
) -> String {
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    if as_json {
        let value = json!({
            "targets": urls,
            "settings": settings,
            "hand_off": hand_off,
            "per_instance": per_instance,
        });
        return format!("{value:#}\n");
    }
    let mut out = format!("Target      {}\n", urls.join(", "));
    let _ = writeln!(
        out,
        "Tier        {}, wait {}, business {} ms, lease {} ms",
        settings.tier, settings.wait, settings.business_ms, settings.ttl_ms
    );
    let _ = writeln!(out, "Ledger      every sale since the room's last reset");
    out.push_str(&hand_off_text(&Ok(hand_off.clone())));
    out.push_str(&instances_text(per_instance));
    out
}

fn ratio(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| format!("{x:.3}"))
}

/// The `run` summary as JSON.
pub fn run_json(
    targets: &Targets,
    load: &Load,
    stats: &RunStats,
    sale: Option<&SaleRun>,
) -> String {
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    let mut value = json!({
        "targets": urls,
        "load": describe(load),
        "connections": load.workers(),
        "stats": stats.summary(),
    });
    if let Some(sale) = sale {
        value["settings"] = json!(sale.settings);
        match &sale.hand_off {
            Ok(h) => value["hand_off"] = json!(h),
            Err(why) => {
                value["hand_off"] = serde_json::Value::Null;
                value["hand_off_unmeasured"] = json!(why);
            }
        }
        value["fairness"] = json!(sale.fairness);
    }
    format!("{value:#}\n")
}

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

/// Rows under a header and a rule: the first column left-aligned, the others right-aligned.
fn align(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (c, cell) in cells.iter().enumerate() {
            let w = widths[c];
            let _ = match c {
                0 => write!(out, "{cell:<w$}"),
                _ => write!(out, "  {cell:>w$}"),
            };
        }
        out.push('\n');
        out
    };
    let mut out = line(header);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(&rule.iter().map(String::as_str).collect::<Vec<_>>()));
    for row in rows {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

/// A row's name: the tier, and its way of waiting when the matrix ran several.
fn row_name(row: &MatrixRow) -> String {
    match row.wait {
        Some(wait) => format!("{} {wait}", row.tier),
        None => row.tier.to_string(),
    }
}

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
fn hand_off_table(report: &MatrixReport) -> String {
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
fn store_counts_table(report: &MatrixReport) -> String {
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

fn csv_field(s: &str) -> String {
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

/// The matrix as an SVG chart: per tier, items oversold (left) and requests per second (right).
pub fn matrix_svg(report: &MatrixReport) -> String {
    const WIDTH: f64 = 980.0;
    const TOP: f64 = 96.0;
    const ROW: f64 = 30.0;
    const LABEL_X: f64 = 170.0;
    const LEFT: (f64, f64) = (180.0, 560.0);
    const RIGHT: (f64, f64) = (610.0, 900.0);
    let rows = &report.rows;
    let height = TOP + ROW * rows.len() as f64 + 60.0;
    let max_oversold = rows.iter().map(|r| r.oversold).max().unwrap_or(0).max(1) as f64;
    let max_rps = rows
        .iter()
        .map(|r| r.throughput_rps)
        .fold(0.0, f64::max)
        .max(1.0);

    let mut svg = Svg::new(WIDTH, height);
    svg.text(
        20.0,
        30.0,
        "start",
        "title",
        &format!(
            "What each lock tier really did: {} items in stock, {} buyers at once",
            report.stock, report.buyers
        ),
    );
    svg.text(
        20.0,
        52.0,
        "start",
        "note",
        "Oversold = items sold beyond the stock, counted in Redis. Green 0 = the tier kept its promise.",
    );
    svg.text(
        LEFT.0,
        TOP - 14.0,
        "start",
        "head",
        "Items oversold (lower is better)",
    );
    svg.text(
        RIGHT.0,
        TOP - 14.0,
        "start",
        "head",
        "Throughput, requests/s (higher is faster)",
    );
    for (i, row) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let mid = y + ROW / 2.0 + 4.0;
        if i % 2 == 0 {
            svg.rect(10.0, y, WIDTH - 20.0, ROW, "band");
        }
        svg.text(LABEL_X, mid, "end", "tier", row.tier.id());
        if row.oversold > 0 {
            let w = (LEFT.1 - LEFT.0) * row.oversold as f64 / max_oversold;
            svg.rect(LEFT.0, y + 6.0, w.max(2.0), ROW - 12.0, "bad");
            svg.text(
                LEFT.0 + w + 6.0,
                mid,
                "start",
                "badv",
                &row.oversold.to_string(),
            );
        } else {
            svg.text(LEFT.0 + 4.0, mid, "start", "good", "0 ✓");
        }
        let w = (RIGHT.1 - RIGHT.0) * row.throughput_rps / max_rps;
        svg.rect(RIGHT.0, y + 6.0, w.max(2.0), ROW - 12.0, "rps");
        svg.text(
            RIGHT.0 + w + 6.0,
            mid,
            "start",
            "value",
            &format!("{:.0}", row.throughput_rps),
        );
    }
    let bottom = TOP + ROW * rows.len() as f64;
    svg.line(LEFT.0, TOP, LEFT.0, bottom);
    svg.line(RIGHT.0, TOP, RIGHT.0, bottom);
    svg.text(
        20.0,
        bottom + 30.0,
        "start",
        "note",
        &format!(
            "{}Measured by loadtest against {}",
            settings_note(&report.settings),
            report.targets.join(", ")
        ),
    );
    svg.finish()
}

/// One chart per row of the matrix, its hand-offs and acquires per client, with the file name
/// each is written under: the tier, and its way of waiting when the matrix ran several
/// (`lua-release.svg`, `lua-release-spin-20.svg`).
pub fn matrix_charts(report: &MatrixReport) -> Vec<(String, String)> {
    report
        .rows
        .iter()
        .filter_map(|row| {
            let fairness = row.fairness.as_ref()?;
            let name = match row.wait {
                Some(wait) => format!("{}-{}", row.tier, wait.to_string().replace(':', "-")),
                None => row.tier.to_string(),
            };
            let title = match (row.wait, &report.settings) {
                (None, Some(s)) => format!("{}, wait {}", row.tier, s.wait),
                _ => row_name(row),
            };
            let note = format!(
                "{}{} buyers over {} clients, stock {}. Measured by loadtest matrix against {}",
                report.settings.as_ref().map_or(String::new(), |s| format!(
                    "Business step {} ms, lease {} ms. ",
                    s.business_ms, s.ttl_ms
                )),
                report.buyers,
                fairness.clients,
                report.stock,
                report.targets.join(", ")
            );
            let hand_off = row
                .hand_off
                .as_ref()
                .ok_or("not read (a report from before hand-offs were measured)");
            Some((
                format!("{name}.svg"),
                tier_svg(&title, &note, hand_off, fairness),
            ))
        })
        .collect()
}

/// "Business step 5 ms, lease 3000 ms, wait pubsub. " from the settings the server reported.
fn settings_note(settings: &Option<Settings>) -> String {
    settings.as_ref().map_or(String::new(), |s| {
        format!(
            "Business step {} ms, lease {} ms, wait {}. ",
            s.business_ms, s.ttl_ms, s.wait
        )
    })
}

/// A minimal SVG writer: every text goes through `escape`.
struct Svg {
    out: String,
}

impl Svg {
    fn new(width: f64, height: f64) -> Svg {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#
        );
        out.push_str(concat!(
            "<style>",
            ".title{font-size:18px;font-weight:bold;fill:#222}",
            ".head{font-size:14px;font-weight:bold;fill:#333}",
            ".note{font-size:12px;fill:#555}",
            ".tier{font-size:13px;font-family:monospace;fill:#222}",
            ".value{font-size:12px;fill:#333}",
            ".badv{font-size:12px;font-weight:bold;fill:#c62828}",
            ".good{font-size:13px;font-weight:bold;fill:#2e7d32}",
            ".bad{fill:#e53935}.rps{fill:#1e88e5}.band{fill:#f4f4f4}",
            ".small{font-size:10px;fill:#555}.acq{fill:#43a047}",
            ".mean{stroke:#e53935;stroke-dasharray:4 3}",
            "</style>"
        ));
        let _ = write!(
            out,
            r#"<rect width="{width}" height="{height}" fill="white"/>"#
        );
        Svg { out }
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, class: &str) {
        let _ = write!(
            self.out,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" class="{class}"/>"#
        );
    }

    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64) {
        let _ = write!(
            self.out,
            r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#999"/>"##
        );
    }

    fn text(&mut self, x: f64, y: f64, anchor: &str, class: &str, text: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" class="{class}">{}</text>"#,
            escape(text)
        );
    }

    /// Text turned about its anchor point (e.g. -45 for axis labels that would not fit).
    fn text_turned(&mut self, x: f64, y: f64, degrees: f64, class: &str, text: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="end" transform="rotate({degrees} {x:.1} {y:.1})" class="{class}">{}</text>"#,
            escape(text)
        );
    }

    /// A line drawn in a class of its own (dashed, coloured).
    fn line_class(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, class: &str) {
        let _ = write!(
            self.out,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" class="{class}"/>"#
        );
    }

    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversell_api::{LeaseMode, Tier, WaitStrategy};

    fn row(tier: &str, oversold: i64, rps: f64) -> MatrixRow {
        MatrixRow {
            tier: tier.parse().unwrap(),
            sent: 1000,
            ok: 100 + oversold as u64,
            sold_out: 900 - oversold as u64,
            unavailable: 0,
            errors: 0,
            ledger_orders: 100 + oversold,
            final_stock: 0,
            oversold,
            lost_updates: oversold,
            overlaps: 0,
            foreign_releases: 0,
            stale_writes_rejected: 0,
            lock_timeouts: 0,
            throughput_rps: rps,
            p50_ms: 1.25,
            p99_ms: 12.5,
            p99_9_ms: 20.0,
            hand_off: None,
            fairness: None,
            wait: None,
            acquire_tries_per_sale: None,
            lock_requests_per_sale: None,
        }
    }

    fn report() -> MatrixReport {
        MatrixReport {
            targets: vec!["http://127.0.0.1:8080".into()],
            room: None,
            stock: 100,
            buyers: 1000,
            settings: Some(Settings {
                tier: Tier::ReentrantWatchdog,
                ttl_ms: 3000,
                business_ms: 5,
                wait: WaitStrategy::PubSub,
                wait_deadline_ms: 10_000,
                sync_replicas: 0,
                sync_timeout_ms: 1000,
                lease: LeaseMode::Watchdog,
            }),
            skipped: vec![],
            rows: vec![
                row("none", 250, 5000.0),
                row("reentrant-watchdog", 0, 800.0),
            ],
        }
    }

    /// The report with what the ledger said: `none` overlapped, `reentrant-watchdog` handed
    /// over 199 times, every 100 µs but once 2 ms, over three instances.
    fn measured() -> MatrixReport {
        use crate::hand_off::Section;
        let at = |i: i64, enter: i64, exit: i64| Section {
            enter_us: enter,
            exit_us: exit,
            instance: format!("app{}", i % 3 + 1),
        };
        let mut r = report();
        let overlapping = (0..100).map(|i| at(i, i * 10, i * 10 + 50)).collect();
        r.rows[0].hand_off = Some(HandOff::measure(overlapping, 100, 4_000));
        r.rows[0].fairness = Some(Fairness::of(&[5, 0, 3]));
        let mut t = 0;
        let serial = (0..200)
            .map(|i| {
                t += if i == 100 { 2_000 } else { 100 };
                let s = at(i, t, t + 40);
                t += 40;
                s
            })
            .collect::<Vec<_>>();
        let per_instance = [("app1", 34), ("app2", 33), ("app3", 33)]
            .map(|(id, n)| (id.to_owned(), n))
            .into();
        r.rows[1].hand_off = Some(HandOff::measure(serial, 200, 0));
        r.rows[1].fairness = Some(Fairness::of(&[2, 1, 1, 2]).with_instances(per_instance));
        r
    }

    #[test]
    fn the_hand_off_table_gives_figures_where_the_lock_handed_over_and_says_why_not_elsewhere() {
        let table = matrix_table(&measured());
        let part = &table[table.find("hand-off and fairness").unwrap()..];
        let line = |start: &str| part.lines().find(|l| l.starts_with(start)).unwrap();
        let header = line("tier");
        let locked = line("reentrant-watchdog");
        assert_eq!(header.len(), locked.len(), "{part}");
        // 198 gaps of 100 µs and one of 2 ms: p99 is still 0.1, p99.9 and max the 2 ms.
        for (column, value) in [
            ("hand-offs", "199"),
            ("p50 ms", "0.100"),
            ("p99 ms", "0.100"),
            ("p99.9 ms", "2.000"),
            ("Jain", "0.900"),
            ("per instance %", "34/33/33"),
        ] {
            let end = header.find(column).unwrap() + column.len();
            assert_eq!(&locked[end - value.len()..end], value, "{column}: {part}");
        }
        let none = line("none ");
        assert!(
            none.contains("overlap") && !none.contains("0.100"),
            "{none}"
        );
        assert!(
            part.contains(
                "  none: no hand-off: 99 of 100 sold sections began while another was inside"
            ),
            "{part}"
        );
    }

    #[test]
    fn the_csv_leaves_a_hand_off_it_could_not_measure_empty() {
        let csv = matrix_csv(&measured());
        let lines: Vec<&str> = csv.lines().collect();
        let header: Vec<&str> = lines[0].split(',').collect();
        let field = |line: usize, name: &str| {
            let i = header.iter().position(|h| *h == name).unwrap();
            lines[line].split(',').nth(i).unwrap().to_owned()
        };
        assert_eq!(field(1, "hand_off_p99_9_ms"), "");
        assert_eq!(field(1, "overlapping_sections"), "99");
        assert_eq!(field(2, "hand_offs"), "199");
        assert_eq!(field(2, "hand_off_p99_9_ms"), "2");
        assert_eq!(field(2, "jain"), "0.9");
        assert_eq!(field(2, "p99_9_ms"), "20");
        assert!(lines.iter().all(|l| l.split(',').count() == header.len()));
    }

    #[test]
    fn a_sale_run_prints_its_hand_offs_and_acquires_or_why_not() {
        let targets = Targets::parse(&["http://127.0.0.1:8080"], None).unwrap();
        let load = Load {
            model: Model::Closed {
                stop: Stop::Requests(6),
            },
            connections: 4,
            request: crate::worker::RequestSpec::sale(1),
            timeout: std::time::Duration::from_secs(1),
        };
        let m = measured();
        let sale = SaleRun {
            settings: report().settings,
            hand_off: Ok(m.rows[1].hand_off.clone().unwrap()),
            fairness: m.rows[1].fairness.clone().unwrap(),
        };
        let text = run_text(&targets, &load, &RunStats::default(), Some(&sale));
        assert!(
            text.contains(
                "Tier        reentrant-watchdog, wait pubsub, business 5 ms, lease 3000 ms"
            ),
            "{text}"
        );
        assert!(
            text.contains("Hand-off ms p50 0.1   p99 0.1   p99.9 2   max 2   (199 hand-offs between 200 sold sections"),
            "{text}"
        );
        assert!(
            text.contains("min 1   max 2   min/max 0.500   Jain's index 0.900"),
            "{text}"
        );
        assert!(
            text.contains("Instances   sales: app1 34   app2 33   app3 33"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&run_json(
            &targets,
            &load,
            &RunStats::default(),
            Some(&sale),
        ))
        .unwrap();
        assert_eq!(json["hand_off"]["ms"]["p99.9"], 2.0);
        assert_eq!(json["fairness"]["jain"], 0.9);
        assert_eq!(json["settings"]["tier"], "reentrant-watchdog");
        let unmeasured = SaleRun {
            settings: None,
            hand_off: Err("GET /state before the run: connection refused".into()),
            fairness: Fairness::of(&[0, 0]),
        };
        let text = run_text(&targets, &load, &RunStats::default(), Some(&unmeasured));
        assert!(
            text.contains("Hand-off    not measured: GET /state before the run"),
            "{text}"
        );
        assert!(!text.contains("Tier "), "{text}");
        let json: serde_json::Value = serde_json::from_str(&run_json(
            &targets,
            &load,
            &RunStats::default(),
            Some(&unmeasured),
        ))
        .unwrap();
        assert!(json["hand_off"].is_null());
        assert!(json["hand_off_unmeasured"]
            .as_str()
            .unwrap()
            .contains("connection refused"));
        // A run that is not a sale says nothing of either.
        let plain = run_text(&targets, &load, &RunStats::default(), None);
        assert!(!plain.contains("Hand-off") && !plain.contains("Acquires"));
    }

    #[test]
    fn the_ledger_alone_gives_the_hand_offs_and_the_instances() {
        let targets = Targets::parse(&["http://127.0.0.1:8080"], None).unwrap();
        let m = measured();
        let row = &m.rows[1];
        let (h, f) = (
            row.hand_off.as_ref().unwrap(),
            row.fairness.as_ref().unwrap(),
        );
        let settings = report().settings.unwrap();
        let text = ledger_report(&targets, &settings, h, &f.per_instance, false);
        assert!(
            text.contains("every sale since the room's last reset"),
            "{text}"
        );
        assert!(
            text.contains("Hand-off ms p50 0.1   p99 0.1   p99.9 2"),
            "{text}"
        );
        assert!(text.contains("Instances   sales: app1 34"), "{text}");
        assert!(!text.contains("Acquires"), "no clients are known: {text}");
        let json: serde_json::Value = serde_json::from_str(&ledger_report(
            &targets,
            &settings,
            h,
            &f.per_instance,
            true,
        ))
        .unwrap();
        assert_eq!(json["hand_off"]["hand_offs"], 199);
        assert_eq!(json["per_instance"]["app2"], 33);
    }

    #[test]
    fn one_chart_per_row_named_after_its_tier_and_wait() {
        let mut m = measured();
        m.rows[1].wait = Some("spin:20".parse().unwrap());
        let charts = matrix_charts(&m);
        let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["none.svg", "reentrant-watchdog-spin-20.svg"]);
        assert!(charts[0]
            .1
            .contains("Hand-off and fairness: none, wait pubsub"));
        assert!(charts[1]
            .1
            .contains("Hand-off and fairness: reentrant-watchdog spin:20"));
        assert!(charts[1]
            .1
            .contains("Business step 5 ms, lease 3000 ms. 1000 buyers over 4 clients"));
    }

    #[test]
    fn the_table_aligns_every_column() {
        let table = matrix_table(&report());
        let lines: Vec<&str> = table.lines().filter(|l| l.contains("  ")).collect();
        let header = lines.iter().find(|l| l.starts_with("tier")).unwrap();
        let none = lines.iter().find(|l| l.starts_with("none")).unwrap();
        let long = lines.iter().find(|l| l.starts_with("reentrant")).unwrap();
        assert_eq!(header.len(), none.len());
        assert_eq!(header.len(), long.len());
        // Right-aligned: the oversold figure ends where its header ends.
        let end = header.find("oversold").unwrap() + "oversold".len();
        assert_eq!(&none[end - 3..end], "250");
        assert!(table.contains("ground truth"));
    }

    #[test]
    fn the_store_counts_show_per_way_of_waiting_only_when_read() {
        assert!(!matrix_table(&report()).contains("SET NX PX tries"));
        let mut counted = report();
        for (r, wait) in counted.rows.iter_mut().zip(["spin:20", "pubsub"]) {
            r.wait = Some(wait.parse().unwrap());
            r.lock_requests_per_sale = Some(11.6);
        }
        counted.rows[0].acquire_tries_per_sale = Some(25.3);
        let table = matrix_table(&counted);
        let line = |start: &str| table.lines().rfind(|l| l.starts_with(start)).unwrap();
        assert!(line("none spin:20").contains("25.3"), "{table}");
        assert!(line("reentrant-watchdog pubsub").contains(" - "), "{table}");
    }

    #[test]
    fn csv_has_a_header_and_one_line_per_tier() {
        let csv = matrix_csv(&report());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let columns = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == columns));
        assert!(lines[1].starts_with("none,1000,350,650,0,0,350,0,250,"));
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }

    #[test]
    fn json_round_trips_the_rows() {
        let parsed: MatrixReport = serde_json::from_str(&matrix_json(&report())).unwrap();
        assert_eq!(parsed.rows, report().rows);
    }

    #[test]
    fn the_chart_names_every_tier_and_marks_the_safe_ones() {
        let svg = matrix_svg(&report());
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(">none</text>") && svg.contains(">reentrant-watchdog</text>"));
        assert!(svg.contains(">250</text>") && svg.contains("0 ✓"));
        assert!(svg.contains(">5000</text>"));
        assert!(svg.contains("Business step 5 ms, lease 3000 ms, wait pubsub."));
        assert_eq!(escape("<a&\"b\">"), "&lt;a&amp;&quot;b&quot;&gt;");
    }
}
