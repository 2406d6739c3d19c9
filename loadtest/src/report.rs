//! Printers: the `run` summary (text or JSON, `run`) and the matrix (aligned table, JSON, CSV:
//! `matrix_table`, with the hand-off and fairness sections in `hand_off_table`; SVG:
//! `matrix_chart`), and a chart per tier of its hand-offs and acquires per client
//! (`tier_chart`), all drawn with the small writer in `svg`. They only format; every figure
//! was computed before.

mod hand_off_table;
mod matrix_chart;
mod matrix_table;
mod run;
mod svg;
mod tier_chart;

use std::fmt::Write as _;

use crate::matrix::MatrixRow;

pub use matrix_chart::{matrix_charts, matrix_svg};
pub use matrix_table::{matrix_csv, matrix_json, matrix_table};
pub use run::{describe, ledger_report, run_json, run_text, SaleRun};
pub use tier_chart::tier_svg;

fn ratio(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| format!("{x:.3}"))
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

#[cfg(test)]
mod tests {
    use super::matrix_table::csv_field;
    use super::svg::escape;
    use super::*;
    use crate::fairness::Fairness;
    use crate::hand_off::HandOff;
    use crate::matrix::MatrixReport;
    use crate::stats::RunStats;
    use crate::worker::{Load, Model, Stop};
    use oversell_api::Settings;
    use oversell_api::{LeaseMode, Tier, WaitStrategy};
    use oversell_client::target::Targets;

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
            read_us: Some(enter + 10),
            write_us: Some(enter + 12),
            instance: format!("app{}", i % 3 + 1),
        };
        let mut r = report();
        let overlapping = (0..100).map(|i| at(i, i * 10, i * 10 + 50)).collect();
        r.rows[0].hand_off = Some(HandOff::measure(overlapping, 100, 4_000, None));
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
        r.rows[1].hand_off = Some(HandOff::measure(serial, 200, 0, None));
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
        assert!(
            text.contains("of which  store → instance p50 0.01 p99 0.01 · instance p50 0.002 p99 0.002 · instance → store p50 0.028 p99 0.028"),
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
        assert_eq!(json["hand_off"]["inside_split"]["sections"], 200);
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
