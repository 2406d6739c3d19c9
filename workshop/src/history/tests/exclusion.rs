//! Mutual exclusion, and its false alarms: a holder that never left holds while its lease is
//! valid; a lapse the fence contained passes, named; an overlap the store's own order
//! contradicts is the clocks' error, unknown.

use super::build::{history, lease, request, sold, sold_out};
use crate::history::check::{check, CheckReport, Kind, State};
use crate::history::parse::History;
use oversell_api::history::{End, Fault, Outcome, Section};

fn text(report: &CheckReport) -> String {
    report.text(crate::history::Lang::En)
}

/// A holder that entered at 0 and never left (its lease granted at -5 to run to
/// `deadline`), and a second granted at 95, entering at 100 and selling the one unit.
fn open_holder(deadline: i64) -> History {
    let mut h = history(1, "lua-release");
    h.requests.push(request("a", -20, 500, 0, None));
    h.requests.push(request("b", 90, 190, 200, Some(0)));
    let mut a = sold_out("app1:a", 0, 0, 1);
    a.exit_us = None;
    a.outcome = Outcome::Crashed;
    h.sections.push(a);
    let mut b = sold("b", 100, 150, 1);
    b.instance = "app2".into();
    h.sections.push(b);
    h.leases.push(lease("app1:a", -5, deadline, None));
    h.leases.push(lease("app1:b", 95, 10_000, Some(155)));
    h.end = Some(End {
        at_us: 600,
        stock: Some(0),
    });
    h
}

#[test]
fn a_second_holder_granted_while_the_first_never_left_and_its_lease_ran_is_a_violation() {
    let report = check(&open_holder(1_000));
    assert_eq!(
        report.mutual_exclusion.state,
        State::Violated,
        "{}",
        text(&report)
    );
    let first = &report.mutual_exclusion.violations[0];
    assert_eq!(first.kind, Kind::Overlap);
    assert!(first.en.contains("A's lease still ran to"), "{}", first.en);
    assert!(first.en.contains("the lock is wrong"), "{}", first.en);
    // The service's figure counts closed pairs only, as it always did.
    assert_eq!(report.counts.overlaps, 0);
}

#[test]
fn a_holder_that_never_left_after_its_lease_ran_out_holds_nobody_up() {
    let report = check(&open_holder(50));
    assert_eq!(
        report.mutual_exclusion.state,
        State::Holds,
        "{}",
        text(&report)
    );
    assert_eq!(report.counts.open_sections, 1);
    assert_eq!(report.mutual_exclusion.listed[0].kind, Kind::OpenSection);
    assert!(report.ok, "{}", text(&report));
}

#[test]
fn an_overlap_where_the_second_read_the_firsts_write_is_the_clocks_error() {
    // A sold at 60 (2 → 1); B entered at 50 by the clock, yet read the 1 A wrote: the store
    // ran A's write before B's read. 10 µs on the clock, no bound on its error known.
    let mut h = history(2, "lua-release");
    h.requests.push(request("a", 0, 70, 200, Some(1)));
    h.requests.push(request("b", 40, 110, 200, Some(0)));
    h.sections.push(sold("a", 0, 60, 2));
    h.sections.push(sold("b", 50, 100, 1));
    h.leases.push(lease("app1:a", -5, 10_000, Some(65)));
    h.leases.push(lease("app1:b", 45, 10_000, Some(105)));
    let report = check(&h);
    assert_eq!(report.counts.overlaps, 1);
    assert_eq!(
        report.mutual_exclusion.state,
        State::Unknown,
        "{}",
        text(&report)
    );
    assert_eq!(report.mutual_exclusion.unknown[0].kind, Kind::ClockError);
    assert!(
        !text(&report).contains("the lock is wrong"),
        "{}",
        text(&report)
    );
    assert_eq!(report.state, State::Unknown);

    // B read the stock A read: the overlap is real, and the lock is wrong.
    h.sections[1].read = Some(2);
    h.sections[1].wrote = Some(1);
    let report = check(&h);
    assert_eq!(report.mutual_exclusion.state, State::Violated);
}

/// The `fenced` tier working as designed: A (fence 1) is frozen past its lease; B (fence 2)
/// is granted after it ran out and sells the unit; A wakes and its write is refused.
pub fn fenced_as_designed() -> History {
    let mut h = history(1, "fenced");
    h.requests.push(request("a", -10, 400, 503, None));
    h.requests.push(request("b", 140, 210, 200, Some(0)));
    let a = Section {
        outcome: Outcome::StaleRefused,
        fence: Some(1),
        order_id: None,
        buyer: None,
        qty: None,
        ..sold("a", 0, 300, 1)
    };
    let mut b = sold("b", 155, 200, 1);
    b.instance = "app2".into();
    b.fence = Some(2);
    h.sections.extend([a, b]);
    h.leases.push(lease("app1:a", -5, 100, None));
    h.leases.push(lease("app1:b", 150, 10_000, Some(205)));
    h.faults.push(Fault {
        kind: "freeze".into(),
        target: "app1".into(),
        from_us: 10,
        to_us: Some(290),
    });
    h.end = Some(End {
        at_us: 500,
        stock: Some(0),
    });
    h
}

#[test]
fn a_fenced_run_working_as_designed_holds_with_the_lapse_named() {
    let report = check(&fenced_as_designed());
    assert_eq!(report.state, State::Holds, "{}", text(&report));
    assert!(report.ok);
    assert_eq!(
        report.mutual_exclusion.en,
        "exclusion lapsed; the fence refused the stale write; nothing oversold"
    );
    assert_eq!(report.counts.overlaps, 1);
    assert_eq!(report.counts.lapses, 1);
    let lapse = report
        .mutual_exclusion
        .listed
        .iter()
        .find(|f| f.kind == Kind::Lapse)
        .expect("the lapse named");
    assert!(lapse.en.contains("A was frozen until"), "{}", lapse.en);
    assert!(lapse.en.contains("which the fence refused"), "{}", lapse.en);

    // Had the frozen holder's write been accepted too, both wrote: violated.
    let mut h = fenced_as_designed();
    h.sections[0].outcome = Outcome::Sold;
    assert_eq!(check(&h).mutual_exclusion.state, State::Violated);
}
