//! The matrix as charts: one SVG of every tier's oversold items and throughput, and a chart
//! per row of its hand-offs and acquires per client.

use oversell_api::Settings;

use super::svg::Svg;
use super::{row_name, tier_svg};
use crate::matrix::MatrixReport;

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
