//! Fencing as the store enforces it: a fence equal to the highest seen is accepted, one below
//! it refused, and a refusal needs a newer fence let in first.

use super::build::{history, lease, request, sold};
use crate::history::check::{check, Kind, State};
use oversell_api::history::{Outcome, Section};

fn fenced(buyer: &str, enter: i64, exit: i64, read: i64, fence: u64) -> Section {
    let mut s = sold(buyer, enter, exit, read);
    s.fence = Some(fence);
    s
}

fn refused(s: Section) -> Section {
    Section {
        outcome: Outcome::StaleRefused,
        order_id: None,
        buyer: None,
        qty: None,
        ..s
    }
}

#[test]
fn a_fence_equal_to_the_highest_seen_is_accepted() {
    let mut h = history(2, "fenced");
    h.requests.push(request("a", 0, 90, 200, Some(1)));
    h.requests.push(request("b", 100, 190, 200, Some(0)));
    h.sections.push(fenced("a", 20, 70, 2, 3));
    h.sections.push(fenced("b", 120, 170, 1, 3));
    let report = check(&h);
    assert_eq!(
        report.fencing.state,
        State::Holds,
        "{}",
        report.text(crate::history::Lang::En)
    );
}

#[test]
fn a_fence_below_one_let_in_first_accepted_is_a_violation() {
    let mut h = history(2, "fenced");
    h.requests.push(request("a", 0, 90, 200, Some(1)));
    h.requests.push(request("b", 100, 190, 200, Some(0)));
    h.sections.push(fenced("a", 20, 70, 2, 4));
    h.sections.push(fenced("b", 120, 170, 1, 3));
    let report = check(&h);
    assert_eq!(report.fencing.state, State::Violated);
    assert_eq!(report.fencing.violations[0].kind, Kind::FenceNotRising);
}

#[test]
fn a_stale_write_refused_while_no_newer_fence_was_granted_is_a_violation() {
    let mut h = history(1, "fenced");
    h.requests.push(request("a", 0, 90, 503, None));
    h.sections.push(refused(fenced("a", 20, 70, 1, 5)));
    let report = check(&h);
    assert_eq!(report.fencing.state, State::Violated);
    assert_eq!(report.fencing.violations[0].kind, Kind::RefusedWithoutNewer);

    // Refused with a fence equal to the highest: the store would have let it write.
    let mut h = history(2, "fenced");
    h.requests.push(request("a", 0, 90, 200, Some(1)));
    h.requests.push(request("b", 100, 190, 503, None));
    h.sections.push(fenced("a", 20, 70, 2, 3));
    h.sections.push(refused(fenced("b", 120, 170, 1, 3)));
    assert_eq!(
        check(&h).fencing.violations[0].kind,
        Kind::RefusedWithoutNewer
    );

    // Refused below a newer fence let in first: the fence working, listed.
    let mut h = history(2, "fenced");
    h.requests.push(request("a", 0, 300, 503, None));
    h.requests.push(request("b", 100, 190, 200, Some(1)));
    h.sections.push(refused(fenced("a", 20, 250, 2, 3)));
    h.sections.push(fenced("b", 120, 170, 2, 4));
    h.leases.push(lease("app1:a", 15, 60, None));
    h.leases.push(lease("app1:b", 115, 10_000, Some(175)));
    let report = check(&h);
    assert_eq!(
        report.fencing.state,
        State::Holds,
        "{}",
        report.text(crate::history::Lang::En)
    );
    assert_eq!(report.fencing.listed[0].kind, Kind::StaleRefused);
}

#[test]
fn a_fence_of_u64_max_prints_as_itself() {
    let mut h = history(1, "fenced");
    h.requests.push(request("a", 0, 90, 503, None));
    h.sections.push(refused(fenced("a", 20, 70, 1, u64::MAX)));
    let report = check(&h);
    let said = &report.fencing.violations[0].en;
    assert!(said.contains("18446744073709551615"), "{said}");
    assert!(!said.contains("-1"), "{said}");
}
