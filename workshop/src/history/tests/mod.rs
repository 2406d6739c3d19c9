//! Faults planted in a clean synthetic history are caught and named; a clean one passes; a bad
//! file is said in one line with its line number and field. The hand-made cases, one per rule,
//! are in the files beside this one.

mod build;
mod cut;
mod exclusion;
mod exit;
mod fencing;
mod parse;
mod stamped;
mod stock;
mod view;

use super::check::{check, CheckReport, Kind};
use super::parse::{parse, History};
use super::synth::Synth;
use oversell_api::history::{Cut, Fault, Outcome, Section};

fn clean(fenced: bool) -> History {
    Synth {
        requests: 200,
        instances: 3,
        leases: true,
        fenced,
    }
    .build()
}

fn kinds(report: &CheckReport) -> Vec<Kind> {
    report
        .verdicts()
        .iter()
        .flat_map(|(_, _, v)| v.violations.iter().map(|f| f.kind))
        .collect()
}

#[test]
fn a_clean_history_passes_all_four() {
    for fenced in [false, true] {
        let report = check(&clean(fenced));
        assert!(report.ok, "{}", report.text(super::Lang::En));
        assert_eq!(report.counts.overlaps, 0);
        assert_eq!(report.counts.lost_updates, Some(0));
        assert_eq!(report.counts.oversold, 0);
        assert!(report.first().is_none());
    }
}

#[test]
fn the_jsonl_round_trips() {
    let history = clean(true);
    assert_eq!(parse(&history.to_jsonl()).unwrap(), history);
}

#[test]
fn a_unit_sold_twice_is_named() {
    let mut history = clean(false);
    history.requests[41].stock_left = history.requests[40].stock_left;
    let report = check(&history);
    assert!(!report.ok && !report.stock.holds);
    let first = &report.stock.violations[0];
    assert_eq!(first.kind, Kind::UnitSoldTwice);
    assert!(
        first.en.contains("buyer b40") && first.en.contains("buyer b41"),
        "{}",
        first.en
    );
    assert!(first.en.contains("was sold twice"), "{}", first.en);
    assert!(first.zh.contains("被卖了两次"));
    assert!(report.mutual_exclusion.holds && report.acknowledged.holds);
}

#[test]
fn a_fence_that_goes_down_is_named() {
    let mut history = clean(true);
    let (a, b) = (history.sections[10].fence, history.sections[11].fence);
    history.sections[10].fence = b;
    history.sections[11].fence = a;
    let report = check(&history);
    assert!(!report.fencing.holds);
    let first = &report.fencing.violations[0];
    assert_eq!(first.kind, Kind::FenceNotRising);
    assert!(
        first.en.contains("fence 11") && first.en.contains("fence 12"),
        "{}",
        first.en
    );
}

#[test]
fn a_lost_acknowledgement_is_named() {
    let mut history = clean(false);
    history
        .sections
        .retain(|s| s.order_id.as_deref() != Some("o7"));
    let report = check(&history);
    assert!(!report.acknowledged.holds);
    assert_eq!(report.counts.acknowledged_lost, 1);
    let first = &report.acknowledged.violations[0];
    assert_eq!(first.kind, Kind::AcknowledgedLost);
    assert!(
        first.en.contains("buyer b7") && first.en.contains("o7"),
        "{}",
        first.en
    );
}

/// Section 21 comes in while section 20 still works: its lease still valid, or run out. It
/// reads the stock section 20 read (not the one it wrote, which would put 20's write before
/// 21's read in the store, whatever the clocks say), and writes over it.
fn overlap(valid: bool) -> History {
    let mut history = clean(false);
    let enter = history.sections[20].enter_us;
    history.sections[21].read = history.sections[20].read;
    history.sections[21].wrote = history.sections[20].wrote;
    let (a_owner, b_owner) = (
        history.sections[20].owner.clone(),
        history.sections[21].owner.clone(),
    );
    history.sections[20].exit_us = Some(enter + 130);
    history.sections[21].enter_us = enter + 100;
    for lease in &mut history.leases {
        if lease.owner == a_owner {
            lease.released_us = None;
            if !valid {
                lease.deadline_us = Some(enter + 20);
            }
        }
        if lease.owner == b_owner {
            lease.granted_us = enter + 95;
        }
    }
    history
}

#[test]
fn an_overlap_inside_a_valid_lease_says_the_lock_is_wrong() {
    let report = check(&overlap(true));
    assert!(!report.mutual_exclusion.holds);
    assert_eq!(report.counts.overlaps, 1);
    let first = report.first().unwrap();
    assert_eq!(first.kind, Kind::Overlap);
    assert!(first.en.contains("was granted at"), "{}", first.en);
    assert!(first.en.contains("A's lease still ran to"), "{}", first.en);
    assert!(first.en.contains("the lock is wrong"), "{}", first.en);
    assert!(first.zh.contains("锁本身有错"), "{}", first.zh);
}

#[test]
fn an_overlap_after_the_lease_ran_out_says_only_a_fence_helps() {
    let mut history = overlap(false);
    let a = history.sections[20].clone();
    history.faults.push(Fault {
        kind: "freeze".into(),
        target: a.instance.clone(),
        from_us: a.enter_us + 10,
        to_us: Some(a.enter_us + 120),
    });
    let report = check(&history);
    let first = report.first().unwrap();
    assert!(first.en.contains("A's lease ran out at"), "{}", first.en);
    assert!(first.en.contains("A was frozen until"), "{}", first.en);
    assert!(first.en.contains("only a fence helps"), "{}", first.en);
    assert!(!first.en.contains("the lock is wrong"), "{}", first.en);
    assert!(first.zh.contains("被冻结"), "{}", first.zh);
}

#[test]
fn no_lease_recorded_is_said() {
    let mut history = overlap(true);
    history.leases.clear();
    let first = check(&history).first().cloned().unwrap();
    assert!(first.en.contains("no lease recorded"), "{}", first.en);
    assert!(first.en.contains("entered at"), "{}", first.en);
}

#[test]
fn an_open_section_is_listed_not_counted() {
    let mut history = clean(false);
    history.sections[30].exit_us = None;
    history.sections[30].outcome = Outcome::Crashed;
    history.sections[30].wrote = None;
    let report = check(&history);
    assert_eq!(report.counts.overlaps, 0);
    assert!(report.mutual_exclusion.holds);
    assert_eq!(report.counts.open_sections, 1);
    assert_eq!(report.mutual_exclusion.listed[0].kind, Kind::OpenSection);
}

#[test]
fn a_sold_out_before_a_later_sale_is_named() {
    let mut history = clean(false);
    history.requests[3].status = 409;
    let report = check(&history);
    assert!(!report.stock.holds);
    assert!(
        kinds(&report).contains(&Kind::SoldOutTooEarly),
        "{:?}",
        kinds(&report)
    );
    let found = report
        .stock
        .violations
        .iter()
        .find(|f| f.kind == Kind::SoldOutTooEarly)
        .unwrap();
    assert!(
        found.en.contains("buyer b3") && found.en.contains("sold out"),
        "{}",
        found.en
    );
}

#[test]
fn real_time_order_is_checked() {
    let mut history = clean(false);
    let (a, b) = (
        history.requests[10].stock_left,
        history.requests[60].stock_left,
    );
    history.requests[10].stock_left = b;
    history.requests[60].stock_left = a;
    let report = check(&history);
    assert!(
        kinds(&report).contains(&Kind::RealTimeOrder),
        "{:?}",
        kinds(&report)
    );
}

#[test]
fn oversold_and_lost_updates_are_counted() {
    let mut history = clean(false);
    let mut extra: Section = history.sections[0].clone();
    extra.order_id = Some("extra".into());
    extra.buyer = Some("extra".into());
    extra.enter_us = history.sections.last().unwrap().exit_us.unwrap() + 10;
    extra.exit_us = Some(extra.enter_us + 10);
    history.sections.push(extra);
    let report = check(&history);
    assert_eq!(report.counts.oversold, 1);
    assert_eq!(report.counts.lost_updates, Some(1));
    assert!(kinds(&report).contains(&Kind::Oversold));
}

#[test]
fn timeouts_are_settled_against_the_ledger() {
    // A timeout and a 503 that sold (their sales in the ledger), and a timeout that did not
    // (a call after the stock ran out: no sale of its buyer's).
    let mut history = clean(false);
    history.requests[5].status = 0;
    history.requests[5].order_id = None;
    history.requests[5].stock_left = None;
    history.requests[6].status = 503;
    history.requests[6].order_id = None;
    let last = history.requests.len() - 1;
    history.requests[last].status = 0;
    history.requests[last].stock_left = None;
    let report = check(&history);
    assert!(report.ok, "{}", report.text(super::Lang::En));
    assert_eq!(report.counts.indeterminate_settled, 3);
    history.cuts.push(Cut {
        what: "section".into(),
        reason: "over the limit".into(),
    });
    let report = check(&history);
    assert_eq!(report.counts.indeterminate_unsettled, 1);
}

#[test]
fn a_cut_is_reported() {
    let mut history = clean(false);
    history.cuts.push(Cut {
        what: "request".into(),
        reason: "more than 1,000,000 requests: the rest not kept".into(),
    });
    let text = history.to_jsonl();
    let report = check(&parse(&text).unwrap());
    assert_eq!(report.cuts.len(), 1);
    assert!(report
        .text(super::Lang::En)
        .contains("the history is incomplete: request: more than"));
}

#[test]
fn overlaps_count_as_the_service_counts() {
    // Every pair whose intervals meet, once, against the plain quadratic count.
    let mut seed: u64 = 7;
    let mut next = |m: i64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        ((seed >> 33) as i64) % m
    };
    let mut history = clean(false);
    for s in &mut history.sections {
        s.enter_us = next(2_000);
        s.exit_us = Some(s.enter_us + next(60));
    }
    let s = &history.sections;
    let mut quadratic = 0;
    for i in 0..s.len() {
        for j in i + 1..s.len() {
            let (a, b) = (&s[i], &s[j]);
            if a.enter_us < b.exit_us.unwrap() && b.enter_us < a.exit_us.unwrap() {
                quadratic += 1;
            }
        }
    }
    let closed: Vec<usize> = (0..s.len()).collect();
    assert_eq!(super::exclusion::count_pairs(s, &closed), quadratic);
}

fn error_of(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn a_bad_file_is_said_with_its_line_and_field() {
    let history = clean(false);
    let good = history.to_jsonl();
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    let run = lines[0].clone();

    lines[3] = lines[3].replacen("\"call_us\":", "\"call_us\":\"soon\",\"x\":", 1);
    assert_eq!(
        error_of(&lines.join("\n")),
        "line 4: request.call_us: expected an integer, found string \"soon\""
    );

    let section = good
        .lines()
        .find(|l| l.starts_with("{\"type\":\"section\""))
        .unwrap();
    let bad = section.replacen("\"enter_us\":", "\"enter_us\":true,\"y\":", 1);
    assert_eq!(
        error_of(&format!("{run}\n{bad}\n")),
        "line 2: section.enter_us: expected an integer, found boolean `true`".replace('`', "")
    );
    let bad = section.replacen("\"type\":\"section\"", "\"type\":\"sectoin\"", 1);
    assert_eq!(
        error_of(&format!("{run}\n\n{bad}\n")),
        "line 3: unknown type \"sectoin\""
    );
    let bad = section.replacen("\"outcome\":\"sold\"", "\"outcome\":\"sould\"", 1);
    assert!(error_of(&format!("{run}\n{bad}\n"))
        .starts_with("line 2: section.outcome: unknown value \"sould\""));
    let bad = section.replacen("\"owner\":", "\"ownr\":", 1);
    assert_eq!(
        error_of(&format!("{run}\n{bad}\n")),
        "line 2: section.owner: missing"
    );
    assert_eq!(
        error_of(&format!("{section}\n{run}\n")),
        "line 1: the first line must be the run"
    );
    assert_eq!(
        error_of(&run.replacen("\"v\":2", "\"v\":3", 1)),
        "line 1: version 3 is not supported (this checker reads v1 and v2)"
    );
    assert!(error_of(&format!("{run}\n{{nope\n")).starts_with("line 2: not JSON"));
    assert_eq!(
        error_of(&format!(
            "{run}\n{{\"type\":\"end\",\"at_us\":1,\"stock\":0}}\n{section}\n"
        )),
        "line 3: a line after the end (the end must be the last line)"
    );
    assert_eq!(
        error_of(""),
        "line 1: the first line must be the run (the file is empty)"
    );
}

#[test]
fn the_schema_names_every_field_of_every_type() {
    use serde_json::Value;
    let schema: Value = serde_json::from_str(include_str!("../../../history.schema.json"))
        .expect("the schema is JSON");
    let defs = schema["$defs"].as_object().expect("$defs");
    // A line of each type with every field set, as the recorder writes it.
    let text = include_str!("../../../tests/histories/clean-fenced.jsonl");
    let mut seen = std::collections::BTreeSet::new();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        let kind = value["type"].as_str().unwrap().to_string();
        // Through the Rust type and back: the fields the format really has.
        let typed: oversell_api::history::Line = serde_json::from_value(value).unwrap();
        let back = serde_json::to_value(&typed).unwrap();
        let fields: std::collections::BTreeSet<String> =
            back.as_object().unwrap().keys().cloned().collect();
        let def = &defs[&kind];
        let properties: std::collections::BTreeSet<String> = def["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(fields, properties, "the schema's {kind} properties");
        for required in def["required"].as_array().unwrap() {
            assert!(
                fields.contains(required.as_str().unwrap()),
                "{kind}: {required}"
            );
        }
        assert_eq!(def["properties"]["type"]["const"], kind.as_str());
        seen.insert(kind);
    }
    assert!(
        seen.len() >= 6,
        "the sample has a line of most types: {seen:?}"
    );
    let cut = serde_json::to_value(oversell_api::history::Line::Cut(Cut {
        what: "section".into(),
        reason: "r".into(),
    }))
    .unwrap();
    let properties: std::collections::BTreeSet<String> = defs["cut"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        properties,
        cut.as_object().unwrap().keys().cloned().collect()
    );
}
