//! The questions against the catalog and against figures: every chapter asked, the rules
//! deciding the option the figures say, options that never overlap on a grid of figures, and
//! a run that shows what its chapter expects always landing somewhere.

use std::collections::BTreeSet;

use super::{deck, question, Figures, Question};
use crate::scenario::{Check, Expect, Op, Scenario, CATALOG};

/// Every figure a run can carry: the ground truth's counters (`StateView::truth`), the load's
/// own, and those the runner adds for the checks that need them (see `runner.rs`).
const KNOWN_FIGURES: &[&str] = &[
    "stock",
    "initial_stock",
    "orders",
    "items_sold",
    "oversold",
    "lost_updates",
    "overlaps",
    "foreign_releases",
    "lost_releases",
    "store_faults",
    "validity_lapsed",
    "stale_writes_rejected",
    "lock_timeouts",
    "sent_ok",
    "sent_sold_out",
    "sent_503",
    "sent_other",
    "throughput_rps",
    "max_latency_ms",
    "sale_p99_ms",
    "acquires_min_over_max",
    "race_sale_p99_ms",
    "race_acquires_min_over_max",
    "acquires_vs_race",
    "throughput_vs_lua_release",
    "min_depth",
    "sold_after_stall",
    "stall_ms",
];

fn figures(pairs: &[(&str, f64)]) -> Figures {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// Every question of the deck with the chapter whose run answers it.
fn answered() -> impl Iterator<Item = (&'static Question, &'static Scenario)> {
    deck().map(|q| {
        let scenario = CATALOG
            .iter()
            .find(|s| s.id == q.chapter)
            .unwrap_or_else(|| panic!("{} is answered by {}, no chapter", q.id, q.chapter));
        (q, scenario)
    })
}

fn asked(chapter: &str) -> &'static Question {
    question(chapter).unwrap_or_else(|| panic!("{chapter} has no question"))
}

/// The values a figure takes on the grid: around every bound the rules use, by the kind of
/// figure, and around each bound the chapter's own checks set on it.
pub(super) fn values(name: &str, checks: &[Check]) -> Vec<f64> {
    let mut values: Vec<f64> = if name == "initial_stock" {
        vec![1.0, 2.0, 6.0, 40.0, 100.0]
    } else if name.ends_with("_ms") {
        vec![
            0.0, 100.0, 500.0, 799.0, 800.0, 1_000.0, 1_001.0, 1_499.0, 1_500.0, 1_900.0, 2_000.0,
            3_200.0, 8_000.0,
        ]
    } else if name.contains("_vs_") || name.ends_with("_over_max") {
        vec![
            0.0, 0.5, 0.89, 0.9, 1.0, 1.05, 1.1, 1.11, 1.5, 1.99, 2.0, 3.0,
        ]
    } else {
        vec![
            0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 10.0, 11.0, 19.0, 20.0, 50.0, 99.0, 100.0, 101.0,
            150.0, 200.0, 300.0,
        ]
    };
    let step = if name.contains("_vs_") || name.ends_with("_over_max") {
        0.01
    } else {
        1.0
    };
    for check in checks.iter().filter(|c| c.figure == name) {
        values.extend([check.value - step, check.value, check.value + step]);
    }
    values.retain(|v| *v >= 0.0);
    values.sort_by(f64::total_cmp);
    values.dedup();
    values
}

/// The checks a run of `scenario` passes by, as far as figures say: its own, or what its
/// verdict reads off the figures (a stall of about a lease that ends with sales and no 503).
/// A deadlock is judged by probes after the run, not by its figures: none.
pub(super) fn checks_of(scenario: &Scenario) -> Vec<Check> {
    match scenario.expect {
        Expect::Figures(checks) | Expect::RefusedThenResume(checks) => checks.to_vec(),
        Expect::StallThenResume => vec![
            Check::gt("orders", 0.0),
            Check::eq("sent_503", 0.0),
            Check::gt("max_latency_ms", 0.8 * scenario.ttl_ms as f64 - 1.0),
        ],
        Expect::StallUntilReset => Vec::new(),
    }
}

fn check_holds(check: &Check, figures: &Figures) -> bool {
    let seen = figures.get(check.figure).copied().unwrap_or(f64::NAN);
    match check.op {
        Op::Gt => seen > check.value,
        Op::Eq => seen == check.value,
        Op::Lt => seen < check.value,
    }
}

/// Every combination of the grid's values of the figures the question reads.
fn grid(question: &Question, checks: &[Check]) -> Vec<Figures> {
    let mut points = vec![Figures::new()];
    for name in question.reads {
        let values = values(name, checks);
        points = points
            .iter()
            .flat_map(|point| {
                values.iter().map(move |v| {
                    let mut next = point.clone();
                    next.insert((*name).to_owned(), *v);
                    next
                })
            })
            .collect();
    }
    points
}

#[test]
fn every_chapter_of_the_catalog_has_a_question_of_three_or_four_options_in_both_languages() {
    for scenario in CATALOG.iter() {
        let q = asked(scenario.id);
        assert!(
            (3..=4).contains(&q.options.len()),
            "{} has {} options",
            q.chapter,
            q.options.len()
        );
        assert!(
            !q.en.trim().is_empty() && !q.zh.trim().is_empty(),
            "{}",
            q.chapter
        );
        for (i, choice) in q.options.iter().enumerate() {
            assert!(
                !choice.en.trim().is_empty() && !choice.zh.trim().is_empty(),
                "{} option {i} lacks a language",
                q.chapter
            );
        }
        assert!(!q.reads.is_empty(), "{} reads no figure", q.chapter);
        for name in q.reads {
            assert!(
                KNOWN_FIGURES.contains(name),
                "{} reads {name}, which no run carries",
                q.chapter
            );
        }
    }
    let own: Vec<&str> = deck()
        .filter(|q| q.id == q.chapter)
        .map(|q| q.chapter)
        .collect();
    let asked: BTreeSet<&str> = own.iter().copied().collect();
    assert_eq!(asked.len(), own.len(), "a chapter is asked twice");
    let ids: BTreeSet<&str> = deck().map(|q| q.id).collect();
    assert_eq!(ids.len(), deck().count(), "two questions share an id");
    let chapters: BTreeSet<&str> = CATALOG.iter().map(|s| s.id).collect();
    assert_eq!(asked, chapters, "questions for chapters the catalog lacks");
    assert!(question("no-such-chapter").is_none());
}

/// A chapter, a run's figures, and the option they must land in.
type Case = (&'static str, &'static [(&'static str, f64)], Option<usize>);

#[test]
fn landed_picks_the_option_the_figures_say_for_chapters_of_every_kind() {
    let cases: &[Case] = &[
        // A race: oversold twice the stock.
        (
            "none-race",
            &[("oversold", 200.0), ("initial_stock", 100.0)],
            Some(3),
        ),
        (
            "none-race",
            &[("oversold", 7.0), ("initial_stock", 100.0)],
            Some(1),
        ),
        (
            "local-one-instance",
            &[("oversold", 0.0), ("initial_stock", 100.0)],
            Some(0),
        ),
        // A deadlock: nothing sold, every buyer waited out its deadline.
        (
            "setnx-crash",
            &[
                ("orders", 0.0),
                ("max_latency_ms", 1_520.0),
                ("sent_503", 20.0),
            ],
            Some(0),
        ),
        // A sale went through before the crash struck; nothing after it.
        (
            "setnx-crash",
            &[
                ("orders", 1.0),
                ("max_latency_ms", 1_520.0),
                ("sold_after_stall", 0.0),
            ],
            Some(0),
        ),
        // A recovery: a stall of one lease, then sales.
        (
            "setnx-expire-crash-after",
            &[("orders", 30.0), ("max_latency_ms", 1_080.0)],
            Some(1),
        ),
        // The database's crash frees the lock at once.
        (
            "postgres-crash-holding",
            &[("orders", 29.0), ("max_latency_ms", 160.0)],
            Some(0),
        ),
        // A store outage: every buyer refused.
        (
            "redis-down",
            &[("orders", 0.0), ("oversold", 0.0), ("sent_503", 20.0)],
            Some(2),
        ),
        (
            "redlock-majority-partition",
            &[("orders", 1.0), ("oversold", 0.0), ("sent_503", 19.0)],
            Some(1),
        ),
        // One item, two holders.
        (
            "failover-loses-lock",
            &[("orders", 2.0), ("oversold", 1.0)],
            Some(0),
        ),
        (
            "fenced-holder-cut-off",
            &[
                ("orders", 1.0),
                ("oversold", 0.0),
                ("stale_writes_rejected", 1.0),
            ],
            Some(1),
        ),
        // A frozen holder's stale write.
        (
            "fenced-freeze",
            &[
                ("overlaps", 3.0),
                ("lost_updates", 0.0),
                ("stale_writes_rejected", 1.0),
            ],
            Some(3),
        ),
        // Safe, and the buyers behind the frozen holder give up.
        (
            "postgres-freeze",
            &[("overlaps", 0.0), ("lost_updates", 0.0), ("sent_503", 12.0)],
            Some(1),
        ),
        // A plain DEL that found its key gone: it deleted nothing and said nothing.
        (
            "unlock-after-expiry-plain-del",
            &[
                ("foreign_releases", 0.0),
                ("lost_releases", 0.0),
                ("overlaps", 4.0),
            ],
            Some(3),
        ),
        ("fair-vs-race", &[("acquires_vs_race", 1.42)], Some(2)),
        (
            "renewal-outlives-unlock",
            &[("orders", 1.0), ("initial_stock", 6.0)],
            Some(2),
        ),
        (
            "late-subscriber-stall",
            &[("orders", 1.0), ("max_latency_ms", 2_004.0)],
            Some(2),
        ),
        (
            "subscribe-first-no-stall",
            &[("orders", 2.0), ("max_latency_ms", 910.0)],
            Some(0),
        ),
        // A run that measured none of the figures the question reads lands nowhere.
        ("none-race", &[("orders", 300.0)], None),
        ("fair-vs-race", &[("orders", 640.0)], None),
        // Nor does a figure that is no count at all.
        (
            "redis-down",
            &[("orders", f64::NAN), ("oversold", 0.0)],
            None,
        ),
    ];
    for (chapter, pairs, expected) in cases {
        assert_eq!(
            asked(chapter).landed(&figures(pairs)),
            *expected,
            "{chapter} with {pairs:?}"
        );
    }
}

/// The options never overlap (at most one holds), and between them they leave no figures
/// out: whatever a run measures, it lands in exactly one, so a run that did not show what its
/// chapter expects still lands somewhere the class can see. Only a run that lacks a figure
/// the rules read lands in none.
#[test]
fn exactly_one_option_of_a_question_holds_on_a_grid_of_figures() {
    for (q, scenario) in answered() {
        let checks = checks_of(scenario);
        let mut ever_held = vec![false; q.options.len()];
        for point in grid(q, &checks) {
            let holding: Vec<usize> = (0..q.options.len())
                .filter(|i| q.options[*i].holds(&point))
                .collect();
            assert!(
                holding.len() <= 1,
                "{}: options {holding:?} all hold for {point:?}",
                q.id
            );
            assert!(
                !holding.is_empty(),
                "{}: no option holds for {point:?}",
                q.chapter
            );
            for i in holding {
                ever_held[i] = true;
            }
        }
        // An option no figures can reach would be a rule with a slip in it.
        for (i, held) in ever_held.iter().enumerate() {
            assert!(held, "{}: option {i} holds for no figures", q.chapter);
        }
    }
}

#[test]
fn a_run_that_shows_what_its_chapter_expects_lands_in_an_option() {
    for (q, scenario) in answered() {
        let checks = checks_of(scenario);
        if checks.is_empty() {
            // A deadlock's verdict is its probes after the run; the whole-curriculum API
            // test ties these to real runs.
            continue;
        }
        let on_the_grid: Vec<&Check> = checks
            .iter()
            .filter(|c| q.reads.contains(&c.figure))
            .collect();
        let mut passing = 0;
        for point in grid(q, &checks) {
            if on_the_grid.iter().all(|c| check_holds(c, &point)) {
                passing += 1;
                assert!(
                    q.landed(&point).is_some(),
                    "{}: a passing run with {point:?} lands in no option",
                    q.chapter
                );
            }
        }
        assert!(passing > 0, "{}: no point of the grid passes", q.chapter);
    }
}

#[test]
fn the_rules_read_only_the_figures_their_question_names() {
    for (q, scenario) in answered() {
        // The other figures at 0, 1 or 1,000 by turns: a rule that read one of them would
        // land somewhere else than with the figure absent (NaN, where no bound holds).
        let mut filled: Vec<Figures> = [0.0, 1.0, 1_000.0]
            .into_iter()
            .map(|filler| {
                KNOWN_FIGURES
                    .iter()
                    .filter(|n| !q.reads.contains(n))
                    .map(|n| ((*n).to_owned(), filler))
                    .collect()
            })
            .collect();
        for (i, point) in grid(q, &checks_of(scenario)).into_iter().enumerate() {
            let full = &mut filled[i % 3];
            full.extend(point.iter().map(|(k, v)| (k.clone(), *v)));
            assert_eq!(
                q.landed(full),
                q.landed(&point),
                "{}: a figure it does not name changes its answer at {point:?}",
                q.chapter
            );
        }
    }
}

#[test]
fn a_question_serializes_its_text_and_options_without_its_rules() {
    let json = serde_json::to_value(asked("none-race")).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["chapter", "en", "options", "zh"]);
    assert_eq!(json["chapter"], "none-race");
    let options = json["options"].as_array().unwrap();
    assert_eq!(options.len(), asked("none-race").options.len());
    for option in options {
        let keys: Vec<&str> = option
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["en", "zh"]);
    }
}
