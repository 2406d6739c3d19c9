//! Leases the lock store stamped (`source: store`): each second grant judged against the
//! deadline the store really set — inside it, the lock is wrong; after it while the first holder
//! still worked, the lease lapsed; in its millisecond, unknown by how much.

use super::build::{history, request, sold};
use crate::history::check::{check, CheckReport, Kind, State};
use crate::history::parse::{parse, History};
use oversell_api::history::{End, Lease, LeaseSource, Renewal};

fn text(report: &CheckReport) -> String {
    report.text(crate::history::Lang::En)
}

fn stamped(owner: &str, granted: i64, deadline: Option<i64>, released: Option<i64>) -> Lease {
    Lease {
        owner: owner.into(),
        granted_us: granted,
        deadline_us: deadline,
        renewals: Vec::new(),
        released_us: released,
        refused_release_us: None,
        source: LeaseSource::Store,
    }
}

/// A sells in [0, 5000] under a lease the store stamped to run to `a_deadline`; B is granted
/// at `b_granted` and sells in [b_granted + 5, b_granted + 500]; both read the same stock of 2.
fn two_sales(a_deadline: i64, b_granted: i64) -> History {
    let mut h = history(2, "lua-release");
    h.requests.push(request("a", -20, 5_100, 200, Some(1)));
    h.requests
        .push(request("b", b_granted - 10, b_granted + 600, 200, Some(1)));
    h.sections.push(sold("a", 0, 5_000, 2));
    let mut b = sold("b", b_granted + 5, b_granted + 500, 2);
    b.instance = "app2".into();
    h.sections.push(b);
    let mut a = stamped("app1:a", -5, Some(a_deadline), None);
    a.refused_release_us = Some(5_005);
    h.leases.push(a);
    h.leases.push(stamped(
        "app1:b",
        b_granted,
        Some(b_granted + 10_000),
        Some(b_granted + 505),
    ));
    h.end = Some(End {
        at_us: 6_000,
        stock: Some(1),
    });
    h
}

#[test]
fn a_grant_inside_anothers_stamped_lease_is_the_lock_being_wrong() {
    let report = check(&two_sales(10_000, 1_000));
    assert_eq!(
        report.mutual_exclusion.state,
        State::Violated,
        "{}",
        text(&report)
    );
    let first = &report.mutual_exclusion.violations[0];
    assert_eq!(first.kind, Kind::Overlap);
    assert!(first.en.contains("the lock is wrong"), "{}", first.en);
    assert!(
        !first.en.contains("lapsed under a working holder"),
        "{}",
        first.en
    );
}

#[test]
fn a_grant_after_the_stamped_deadline_under_a_working_holder_is_a_lapse() {
    let report = check(&two_sales(1_000, 2_000));
    assert_eq!(
        report.mutual_exclusion.state,
        State::Violated,
        "{}",
        text(&report)
    );
    let first = &report.mutual_exclusion.violations[0];
    assert!(first.en.contains("A's lease ran out at"), "{}", first.en);
    assert!(
        first.en.contains("the lease lapsed under a working holder"),
        "{}",
        first.en
    );
    assert!(!first.en.contains("the lock is wrong"), "{}", first.en);
    assert!(first.en.contains("only a fence helps"), "{}", first.en);
}

#[test]
fn a_grant_in_the_deadlines_own_millisecond_is_unknown_by_how_much() {
    // Both wrote, so exclusion is violated either way; why is what the clock cannot tell.
    let report = check(&two_sales(1_000, 1_400));
    let first = &report.mutual_exclusion.violations[0];
    assert!(
        first
            .en
            .contains("unknown within the clock error, by 400 µs"),
        "{}",
        first.en
    );
    assert!(!first.en.contains("the lock is wrong"), "{}", first.en);
    assert!(
        !first.en.contains("lapsed under a working holder"),
        "{}",
        first.en
    );

    // A wrote nothing (its write never made): no sale of two, only the lease in doubt.
    let mut h = two_sales(1_000, 1_400);
    h.sections[0].wrote = None;
    h.sections[0].outcome = oversell_api::history::Outcome::SoldOut;
    h.sections[0].order_id = None;
    h.requests[0].status = 409;
    h.requests[0].order_id = None;
    let report = check(&h);
    assert_eq!(
        report.mutual_exclusion.state,
        State::Unknown,
        "{}",
        text(&report)
    );
    let unknown = &report.mutual_exclusion.unknown[0];
    assert_eq!(unknown.kind, Kind::ClockError);
    assert!(unknown.en.contains("by 400 µs"), "{}", unknown.en);
    // A derived lease's deadline is the section's own time: 400 µs past it is a lapse.
    for lease in &mut h.leases {
        lease.source = LeaseSource::Derived;
    }
    let report = check(&h);
    assert_ne!(
        report.mutual_exclusion.state,
        State::Unknown,
        "{}",
        text(&report)
    );
}

#[test]
fn a_stamped_grant_with_no_deadline_yet_holds_until_a_renewal_sets_one() {
    // setnx-expire: the first step takes the lock with no lease, the second gives it one.
    let mut h = two_sales(0, 2_000);
    h.leases[0].deadline_us = None;
    h.leases[0].renewals.push(Renewal {
        renew_us: 10,
        deadline_us: 1_000,
    });
    let report = check(&h);
    let first = &report.mutual_exclusion.violations[0];
    assert!(
        first.en.contains("the lease lapsed under a working holder"),
        "{}",
        first.en
    );
    // With no renewal it never ran out: the second grant is the lock being wrong.
    h.leases[0].renewals.clear();
    let report = check(&h);
    let first = &report.mutual_exclusion.violations[0];
    assert!(first.en.contains("the lock is wrong"), "{}", first.en);
}

#[test]
fn a_v1_history_is_still_read_its_leases_derived_and_no_bound_stated() {
    let mut h = two_sales(1_000, 2_000);
    h.run.v = 1;
    let v2 = h.to_jsonl();
    let v1 = v2
        .replace(",\"source\":\"store\"", "")
        .replace(",\"refused_release_us\":5005", "")
        .replace(",\"refused_release_us\":null", "");
    assert!(!v1.contains("source"), "{v1}");
    let read = parse(&v1).expect("a v1 file reads");
    assert_eq!(read.run.v, 1);
    assert_eq!(read.run.clocks.bound_us, None);
    assert!(read.leases.iter().all(|l| l.source == LeaseSource::Derived));
    let again = parse(&v2).expect("v2 reads");
    assert!(again.leases.iter().all(|l| l.source == LeaseSource::Store));
    assert_eq!(again.leases[0].refused_release_us, Some(5_005));
}
