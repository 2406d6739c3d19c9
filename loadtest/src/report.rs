//! Printers: the `run` summary (text or JSON) and the matrix (aligned table, JSON, CSV, SVG).
//! They only format; every figure was computed before.

use std::fmt::Write as _;

use oversell_api::Settings;
use serde_json::json;

use crate::matrix::{MatrixReport, MatrixRow};
use crate::stats::RunStats;
use crate::target::Targets;
use crate::worker::{Load, Model, Stop};

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
pub fn run_text(targets: &Targets, load: &Load, stats: &RunStats) -> String {
    let s = stats.summary();
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    let mut out = String::new();
    let _ = writeln!(out, "Target      {}", urls.join(", "));
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
    out
}

/// The `run` summary as JSON.
pub fn run_json(targets: &Targets, load: &Load, stats: &RunStats) -> String {
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    let value = json!({
        "targets": urls,
        "load": describe(load),
        "connections": load.workers(),
        "stats": stats.summary(),
    });
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
        match row.wait {
            Some(wait) => format!("{} {wait}", row.tier),
            None => row.tier.to_string(),
        },
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
    let rows: Vec<[String; 17]> = report.rows.iter().map(cells).collect();
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([COLUMNS[c].len()])
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
    let mut out = format!(
        "stock {} per tier, {} buyers released at once, against {}\n\n",
        report.stock,
        report.buyers,
        report.targets.join(", ")
    );
    out.push_str(&line(&COLUMNS));
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(&rule.iter().map(String::as_str).collect::<Vec<_>>()));
    for row in &rows {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out.push_str(
        "\nsent..err, req/s, p50, p99: what the buyers saw. ledger..lock t/o: ground truth from Redis (GET /state).\n",
    );
    out.push_str(&store_counts_table(report));
    for why in &report.skipped {
        out.push_str(&format!("skipped {why}\n"));
    }
    out
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
    let name = |r: &MatrixRow| match r.wait {
        Some(wait) => format!("{} {wait}", r.tier),
        None => r.tier.to_string(),
    };
    let width = counted
        .iter()
        .map(|r| name(r).len())
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
            name(r),
            r.p99_ms
        );
    }
    out.push_str(
        "SET NX PX tries: each acquire attempt of the tiers that take the lock so (failed = tries - 1); \
         the tries of buyers who then found the stock gone count too.\n",
    );
    out
}

/// The matrix as CSV, one header line then one line per tier.
pub fn matrix_csv(report: &MatrixReport) -> String {
    let mut out = String::from(
        "tier,sent,ok,sold_out,unavailable,errors,ledger_orders,final_stock,oversold,lost_updates,overlaps,foreign_releases,stale_writes_rejected,lock_timeouts,throughput_rps,p50_ms,p99_ms\n",
    );
    for r in &report.rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
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
            r.p99_ms
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
