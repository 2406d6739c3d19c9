//! Where the right answers sit. No option is stored as the answer: the right one is the option
//! a run lands in when it shows what its chapter expects. So the test builds that run's
//! figures from the chapter's own checks, lands them by the question's rules, and counts the
//! letters. A class that learns "it is usually C" has learned the deck, not the locks.

use std::collections::{BTreeMap, BTreeSet};

use super::tests::{checks_of, values};
use super::{deck, Figures, Question};
use crate::scenario::{Check, Expect, Op, Scenario, CATALOG};

/// The value a figure has in an uneventful run of `scenario`: nothing went wrong that its
/// checks do not say, and the stock sold to the buyers there are. A deadlock, judged by probes
/// rather than figures, sold nothing after the crash and refused every buyer at its deadline.
fn uneventful(name: &str, scenario: &Scenario) -> f64 {
    let deadlock = matches!(scenario.expect, Expect::StallUntilReset);
    match name {
        "initial_stock" => scenario.stock as f64,
        "orders" | "sold_after_stall" if deadlock => 0.0,
        "orders" | "sold_after_stall" => (scenario.stock as f64).min(scenario.buyers as f64),
        "max_latency_ms" if deadlock => scenario.wait_deadline_ms as f64,
        "max_latency_ms" => 100.0,
        "sent_503" if deadlock => scenario.buyers as f64,
        n if n.contains("_vs_") || n.ends_with("_over_max") => 1.0,
        _ => 0.0,
    }
}

/// The options the runs that show what the chapter expects land in: each figure its checks
/// bound takes every value of the grid (`tests.rs`) inside the bounds, the others their
/// uneventful value. One option is the question's right answer; several mean the chapter's
/// checks leave the answer to the run (how many a race oversells), and the test says so.
pub(super) fn right_answers(q: &Question) -> BTreeSet<usize> {
    let scenario = CATALOG
        .iter()
        .find(|s| s.id == q.chapter)
        .unwrap_or_else(|| panic!("{} is answered by no chapter", q.id));
    let checks = checks_of(scenario);
    let mut points = vec![Figures::new()];
    for name in q.reads {
        let on: Vec<&Check> = checks.iter().filter(|c| c.figure == *name).collect();
        let holds = |v: f64| {
            on.iter().all(|c| match c.op {
                Op::Gt => v > c.value,
                Op::Eq => v == c.value,
                Op::Lt => v < c.value,
            })
        };
        let choices: Vec<f64> = if on.is_empty() {
            vec![uneventful(name, scenario)]
        } else {
            values(name, &checks)
                .into_iter()
                .filter(|v| holds(*v))
                .collect()
        };
        assert!(!choices.is_empty(), "{}: no value of {name} passes", q.id);
        points = points
            .iter()
            .flat_map(|point| {
                choices.iter().map(move |v| {
                    let mut next = point.clone();
                    next.insert((*name).to_owned(), *v);
                    next
                })
            })
            .collect();
    }
    let landed: BTreeSet<usize> = points.iter().filter_map(|p| q.landed(p)).collect();
    assert!(
        !landed.is_empty(),
        "{}: no run its chapter expects lands in an option",
        q.id
    );
    landed
}

/// The right answers where real runs' figures are known (`tests/api/fair.rs` pins where
/// `fair-dead-waiter`'s run lands; `tests.rs` lands the figures of a deadlock, a store outage,
/// a failover and the fenced chapters), under the letters the deck now gives them: the run
/// built from a chapter's checks lands where those do.
#[test]
fn the_expected_run_lands_where_the_fleets_runs_do() {
    for (id, letter) in [
        ("fair-dead-waiter", 1),
        ("setnx-crash", 0),
        ("postgres-crash-holding", 0),
        ("redis-down", 2),
        ("claim-single-point", 3),
        ("fenced-freeze", 3),
        ("fenced-holder-cut-off", 1),
        ("failover-loses-lock", 0),
        ("lua-release-normal", 2),
    ] {
        let q = super::question(id).unwrap();
        assert_eq!(right_answers(q), BTreeSet::from([letter]), "{id}");
    }
}

/// The bounds on how often one letter is right among the questions with as many options:
/// the share a letter would have by chance (a quarter, a third), give or take about 40 %
/// of it, so no letter is right in more than 35 % or fewer than 15 % of the four-option
/// questions, nor in more than 47 % or fewer than 20 % of the three-option ones.
const BOUNDS: &[(usize, f64, f64)] = &[(3, 0.20, 0.47), (4, 0.15, 0.35)];

#[test]
fn the_right_answers_spread_over_the_letters_within_the_bounds() {
    let mut spread: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut undecided = Vec::new();
    for q in deck() {
        let right = right_answers(q);
        let letters = spread
            .entry(q.options.len())
            .or_insert_with(|| vec![0; q.options.len()]);
        match right.iter().collect::<Vec<_>>()[..] {
            [one] => letters[*one] += 1,
            _ => undecided.push(format!("{} {right:?}", q.id)),
        }
    }
    let mut report = Vec::new();
    let mut wrong = Vec::new();
    for (options, letters) in &spread {
        let total: usize = letters.iter().sum();
        let shares: Vec<String> = letters
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{}: {n}", char::from(b'A' + i as u8)))
            .collect();
        report.push(format!(
            "{total} questions of {options} options: {}",
            shares.join(", ")
        ));
        let (_, low, high) = BOUNDS
            .iter()
            .find(|(n, _, _)| n == options)
            .unwrap_or_else(|| panic!("no bound for {options} options"));
        for (i, n) in letters.iter().enumerate() {
            let share = *n as f64 / total as f64;
            if share < *low || share > *high {
                wrong.push(format!(
                    "{} is right in {n} of {total} questions of {options} options ({:.0} %, \
                     outside {:.0}–{:.0} %)",
                    char::from(b'A' + i as u8),
                    share * 100.0,
                    low * 100.0,
                    high * 100.0
                ));
            }
        }
    }
    // The chapters whose checks leave the option to the run are few, or the spread says
    // little: at most one in ten.
    let total = deck().count();
    report.push(format!(
        "{} of {total} left to the run: {}",
        undecided.len(),
        undecided.join(", ")
    ));
    if undecided.len() * 10 > total {
        wrong.push(format!("{} questions are left to the run", undecided.len()));
    }
    report.extend(never_right());
    // Printed so that `cargo test -- --nocapture` shows the spread even when it passes.
    println!("{}", report.join("\n"));
    assert!(
        wrong.is_empty(),
        "{}\n{}",
        report.join("\n"),
        wrong.join("\n")
    );
}

/// The options no chapter's expected run lands in, the most shown first, with the number of
/// questions that show them: a distractor is good when it is a belief somebody holds, but one
/// shown in many questions and never right teaches the class to skip it. Reported beside the
/// spread for the deck's author; the spread is the bound.
fn never_right() -> Vec<String> {
    let mut shown: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for q in deck() {
        let right = right_answers(q);
        for (i, choice) in q.options.iter().enumerate() {
            let (won, asked) = shown.entry(choice.en).or_default();
            *asked += 1;
            if right.len() == 1 && right.contains(&i) {
                *won += 1;
            }
        }
    }
    let mut never: Vec<(usize, &str)> = shown
        .into_iter()
        .filter(|(_, (won, _))| *won == 0)
        .map(|(en, (_, asked))| (asked, en))
        .collect();
    never.sort_by(|a, b| b.cmp(a));
    never
        .iter()
        .take(5)
        .map(|(asked, en)| format!("never right, shown in {asked} questions: {en}"))
        .collect()
}
