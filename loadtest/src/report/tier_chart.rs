//! A chart of one tier's run: how long the lock took to hand over (the distribution of the
//! gaps between sold sections, on Redis' clock) and how evenly the clients shared it (every
//! client's acquires, fewest first, against the mean).

use super::ratio;
use super::svg::Svg;
use crate::fairness::Fairness;
use crate::hand_off::{thousands, Bucket, HandOff};

const WIDTH: f64 = 980.0;
const HEIGHT: f64 = 440.0;
/// The plots' top and bottom edges.
const TOP: f64 = 120.0;
const BOTTOM: f64 = 330.0;
const LEFT: (f64, f64) = (60.0, 470.0);
const RIGHT: (f64, f64) = (560.0, 900.0);
/// More clients than this are drawn as this many, evenly spaced by rank.
const MOST_BARS: usize = 400;

/// The chart of `title` (the tier and its settings), `note` under it, its hand-offs (or why
/// there are none) and acquires per client.
pub fn tier_svg(
    title: &str,
    note: &str,
    hand_off: Result<&HandOff, &str>,
    fairness: &Fairness,
) -> String {
    let mut svg = Svg::new(WIDTH, HEIGHT);
    svg.text(
        20.0,
        30.0,
        "start",
        "title",
        &format!("Hand-off and fairness: {title}"),
    );
    svg.text(20.0, 52.0, "start", "note", note);
    hand_offs(&mut svg, hand_off);
    acquires(&mut svg, fairness);
    svg.finish()
}

/// Left: the share of hand-offs in each bucket of time, and the percentiles.
fn hand_offs(svg: &mut Svg, hand_off: Result<&HandOff, &str>) {
    svg.text(
        LEFT.0,
        TOP - 36.0,
        "start",
        "head",
        "Hand-off: one sale's write to the next one's read",
    );
    let h = match hand_off {
        Ok(h) => h,
        Err(why) => {
            svg.text(LEFT.0, TOP + 20.0, "start", "note", "Not measured:");
            svg.text(LEFT.0, TOP + 38.0, "start", "note", why);
            return;
        }
    };
    let Some(ms) = h.ms.filter(|_| !h.buckets.is_empty()) else {
        // Short lines: the left panel is half the chart wide.
        let lines = match h.exclusive() {
            true => vec![
                "No hand-off to measure:".to_owned(),
                match h.sections {
                    0 => "no section sold in the run.".to_owned(),
                    n => format!("{} sold section.", thousands(n)),
                },
            ],
            false => vec![
                "Sections overlapped: nothing was handed over.".to_owned(),
                format!(
                    "{} of {} sold sections began while another",
                    thousands(h.overlapping),
                    thousands(h.sections)
                ),
                format!(
                    "was inside; Redis counted {} overlapping pairs.",
                    thousands(h.overlaps.max(0) as u64)
                ),
            ],
        };
        for (i, line) in lines.iter().enumerate() {
            let class = if i == 0 { "badv" } else { "note" };
            svg.text(LEFT.0, TOP + 20.0 + 18.0 * i as f64, "start", class, line);
        }
        return;
    };
    svg.text(
        LEFT.0,
        TOP - 18.0,
        "start",
        "note",
        &format!(
            "p50 {} ms · p99 {} ms · p99.9 {} ms · max {} ms (Redis' clock)",
            ms.p50, ms.p99, ms.p99_9, ms.max
        ),
    );
    let total: u64 = h.buckets.iter().map(|b| b.count).sum();
    let most = h.buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1) as f64;
    let slot = (LEFT.1 - LEFT.0) / h.buckets.len() as f64;
    for (i, b) in h.buckets.iter().enumerate() {
        let x = LEFT.0 + slot * i as f64;
        let height = (BOTTOM - TOP) * b.count as f64 / most;
        if b.count > 0 {
            svg.rect(
                x + 2.0,
                BOTTOM - height,
                (slot - 4.0).max(1.0),
                height.max(1.0),
                "rps",
            );
            let share = 100.0 * b.count as f64 / total as f64;
            svg.text(
                x + slot / 2.0,
                BOTTOM - height - 4.0,
                "middle",
                "small",
                // A bar that holds a few hand-offs is not 0 %.
                &match share {
                    s if s < 0.1 => "<0.1".to_owned(),
                    s if s < 1.0 => format!("{s:.1}"),
                    s => format!("{s:.0}"),
                },
            );
        }
        svg.text_turned(
            x + slot / 2.0 + 3.0,
            BOTTOM + 14.0,
            -45.0,
            "small",
            &label(b),
        );
    }
    svg.line(LEFT.0, BOTTOM, LEFT.1, BOTTOM);
    svg.text(
        LEFT.0,
        BOTTOM + 70.0,
        "start",
        "note",
        &format!("% of {} (bars: under each bound)", h.scope()),
    );
}

/// A bucket's bound: "< 200 µs", "< 2 ms", "≥ 1 s".
fn label(b: &Bucket) -> String {
    let time = |us: u64| match us {
        us if us >= 1_000_000 => format!("{} s", us / 1_000_000),
        us if us >= 1_000 => format!("{} ms", us / 1_000),
        us => format!("{us} µs"),
    };
    match b.below_us {
        Some(us) => format!("< {}", time(us)),
        None => "≥ 1 s".to_owned(),
    }
}

/// Right: every client's acquires, fewest first, and the mean.
fn acquires(svg: &mut Svg, f: &Fairness) {
    svg.text(
        RIGHT.0,
        TOP - 36.0,
        "start",
        "head",
        "Acquires per client (its sales), fewest first",
    );
    svg.text(
        RIGHT.0,
        TOP - 18.0,
        "start",
        "note",
        &format!(
            "{} clients · min {} · max {} · min/max {} · Jain's index {}",
            f.clients,
            f.min,
            f.max,
            ratio(f.min_over_max),
            ratio(f.jain)
        ),
    );
    let all = f.sorted();
    if all.is_empty() || f.max == 0 {
        svg.text(RIGHT.0, TOP + 20.0, "start", "badv", "No client acquired.");
        return;
    }
    // Evenly spaced by rank, the first and the last always among them.
    let drawn: Vec<u64> = match all.len() > MOST_BARS {
        true => (0..MOST_BARS)
            .map(|i| all[i * (all.len() - 1) / (MOST_BARS - 1)])
            .collect(),
        false => all.clone(),
    };
    let slot = (RIGHT.1 - RIGHT.0) / drawn.len() as f64;
    let scale = (BOTTOM - TOP) / f.max as f64;
    for (i, &x) in drawn.iter().enumerate() {
        let height = scale * x as f64;
        let gap = if slot > 4.0 { 1.0 } else { 0.0 };
        svg.rect(
            RIGHT.0 + slot * i as f64,
            BOTTOM - height,
            (slot - gap).max(0.5),
            height,
            "acq",
        );
    }
    let mean = f.total() as f64 / f.clients as f64;
    let y = BOTTOM - scale * mean;
    svg.line_class(RIGHT.0, y, RIGHT.1, y, "mean");
    svg.text(
        RIGHT.1 + 4.0,
        y + 4.0,
        "start",
        "small",
        &format!("mean {mean:.1}"),
    );
    svg.line(RIGHT.0, BOTTOM, RIGHT.1, BOTTOM);
    svg.text(
        RIGHT.0,
        BOTTOM + 20.0,
        "start",
        "small",
        &match drawn.len() < all.len() {
            true => format!(
                "{} of {} clients drawn, evenly spaced by rank",
                drawn.len(),
                all.len()
            ),
            false => format!("{} clients, one bar each", all.len()),
        },
    );
    if !f.per_instance.is_empty() {
        let total: u64 = f.per_instance.values().sum();
        let each: Vec<String> = f
            .per_instance
            .iter()
            .map(|(id, n)| format!("{id} {:.1} %", 100.0 * *n as f64 / total.max(1) as f64))
            .collect();
        // Four instances to a line, so a large fleet stays inside the chart.
        for (i, line) in each.chunks(4).enumerate() {
            let head = if i == 0 { "Sales per instance: " } else { "" };
            svg.text(
                RIGHT.0,
                BOTTOM + 70.0 + 16.0 * i as f64,
                "start",
                "note",
                &format!("{head}{}", line.join(", ")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hand_off::Section;

    fn sections(gaps: &[i64]) -> Vec<Section> {
        let mut at = 0;
        gaps.iter()
            .map(|gap| {
                at += gap;
                let s = Section {
                    enter_us: at,
                    exit_us: at + 50,
                    instance: "app1".into(),
                    ..Section::default()
                };
                at += 50;
                s
            })
            .collect()
    }

    #[test]
    fn the_chart_shows_the_percentiles_the_buckets_and_every_client() {
        let h = HandOff::measure(sections(&[0, 150, 150, 900, 3_000]), 5, 0, None);
        let f = Fairness::of(&[1, 2, 2]);
        let svg = tier_svg("lua-release, wait pubsub", "a note", Ok(&h), &f);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("Hand-off and fairness: lua-release, wait pubsub"));
        assert!(svg.contains("p50 0.15 ms"), "{svg}");
        assert!(svg.contains("&lt; 200 µs") && svg.contains("&lt; 5 ms"));
        // Four gaps: each bar a fifth or more, printed without decimals.
        assert!(
            svg.contains(">25</text>") && svg.contains(">50</text>"),
            "{svg}"
        );
        assert!(svg.contains("3 clients · min 1 · max 2"));
        assert_eq!(svg.matches(r#"class="acq""#).count(), 3);
        assert!(svg.contains("mean 1.7"));
    }

    #[test]
    fn a_bar_of_a_few_hand_offs_among_thousands_is_not_zero_percent() {
        let mut gaps = vec![150; 2000];
        gaps.push(3_000);
        let h = HandOff::measure(sections(&gaps), 2001, 0, None);
        let svg = tier_svg("lua-release", "", Ok(&h), &Fairness::of(&[1]));
        assert!(
            svg.contains(">&lt;0.1</text>") && svg.contains(">100</text>"),
            "{svg}"
        );
    }

    #[test]
    fn overlapping_sections_get_a_sentence_not_a_distribution() {
        let h = HandOff::measure(
            vec![
                Section {
                    enter_us: 0,
                    exit_us: 100,
                    instance: "app1".into(),
                    ..Section::default()
                },
                Section {
                    enter_us: 50,
                    exit_us: 120,
                    instance: "app2".into(),
                    ..Section::default()
                },
            ],
            2,
            1,
            None,
        );
        let svg = tier_svg("none", "", Ok(&h), &Fairness::of(&[1, 1]));
        assert!(svg.contains("Sections overlapped: nothing was handed over."));
        assert!(!svg.contains("p99.9"));
        let svg = tier_svg(
            "none",
            "",
            Err("GET /state did not answer"),
            &Fairness::of(&[0]),
        );
        assert!(svg.contains("GET /state did not answer") && svg.contains("No client acquired."));
    }

    #[test]
    fn thousands_of_clients_are_drawn_as_a_few_hundred_bars() {
        let per_client: Vec<u64> = (0..5000).map(|i| i % 7).collect();
        let h = HandOff::measure(vec![], 0, 0, None);
        let svg = tier_svg("none", "", Ok(&h), &Fairness::of(&per_client));
        // Clients with 0 acquires are drawn as empty bars, but drawn.
        assert_eq!(svg.matches(r#"class="acq""#).count(), MOST_BARS);
        assert!(svg.contains("400 of 5000 clients drawn"));
    }
}
