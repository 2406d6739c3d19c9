//! The stock, one rule a case: each history small enough to work out by hand.

use super::build::{history, request, sales, sold};
use crate::history::check::{check, CheckReport, Kind, State};

fn kinds(report: &CheckReport) -> Vec<Kind> {
    report.stock.violations.iter().map(|f| f.kind).collect()
}

#[test]
fn good_runs_hold() {
    for (initial, n) in [(3, 3), (5, 2), (1, 0)] {
        let mut h = sales(initial, n);
        // Told sold out after the last sale, when the stock was short.
        if initial == n {
            h.requests
                .push(request("late", 100 * n, 100 * n + 50, 409, Some(0)));
        }
        let report = check(&h);
        assert_eq!(
            report.state,
            State::Holds,
            "{}",
            report.text(crate::history::Lang::En)
        );
        assert!(report.ok && report.stock.holds && report.acknowledged.holds);
    }
}

#[test]
fn a_409_while_units_remained_is_a_violation() {
    // Three units, two sold: one remains, yet a buyer is told sold out after both.
    let mut h = sales(3, 2);
    h.requests.push(request("x", 300, 390, 409, Some(0)));
    let report = check(&h);
    assert_eq!(report.stock.state, State::Violated);
    assert_eq!(kinds(&report), vec![Kind::SoldOutWithStock]);
    assert!(report.stock.violations[0].en.contains("buyer x"));
}

#[test]
fn a_409_answered_before_the_stock_could_be_short_is_a_violation() {
    // Two units: the second sale, which left the stock at 0, was called at 100; a 409
    // answered at 50 came before any schedule could make the stock short.
    let mut h = sales(2, 2);
    h.requests.push(request("early", 10, 50, 409, Some(0)));
    let report = check(&h);
    assert_eq!(kinds(&report), vec![Kind::SoldOutTooEarly]);
    assert!(report.stock.violations[0].en.contains("buyer b1"));

    // Answered at 195, after the second sale was called at 100: it may have come after it.
    let mut h = sales(2, 2);
    h.requests.push(request("later", 150, 195, 409, Some(0)));
    assert_eq!(check(&h).stock.state, State::Holds);
}

#[test]
fn a_buyer_told_409_whose_order_is_in_the_ledger_is_a_phantom_sale() {
    // By buyer: the 409 named no order, but its buyer's sale is in the ledger.
    let mut h = sales(3, 2);
    h.requests.push(request("x", 200, 290, 409, Some(0)));
    h.sections.push(sold("x", 220, 270, 1));
    h.end.as_mut().unwrap().stock = Some(0);
    let report = check(&h);
    assert_eq!(
        kinds(&report),
        vec![Kind::PhantomSale],
        "{}",
        report.text(crate::history::Lang::En)
    );
    assert!(report.stock.violations[0].en.contains("o-x"));

    // By order id.
    let mut h = sales(2, 2);
    h.requests[1].status = 409;
    let report = check(&h);
    assert!(
        kinds(&report).contains(&Kind::PhantomSale),
        "{:?}",
        kinds(&report)
    );
}

#[test]
fn a_sale_whose_stock_left_skips_units_is_a_violation() {
    // Three units; b0 left 2, b1 says it left 0: unit 2 was taken by no sale.
    let mut h = sales(3, 2);
    h.requests[1].stock_left = Some(0);
    let report = check(&h);
    assert_eq!(
        kinds(&report),
        vec![Kind::UnitsSkipped],
        "{}",
        report.text(crate::history::Lang::En)
    );
}

#[test]
fn a_stock_left_above_the_initial_stock_does_not_wrap() {
    let mut h = sales(2, 1);
    h.requests[0].stock_left = Some(i64::MAX);
    let report = check(&h);
    let above = report
        .stock
        .violations
        .iter()
        .find(|f| f.kind == Kind::AboveInitial)
        .expect("a unit the initial stock never had");
    assert!(
        above.en.contains("stock_left 9223372036854775807"),
        "{}",
        above.en
    );
    assert_eq!(report.stock.state, State::Violated);
}

#[test]
fn an_acknowledged_order_missing_is_not_hidden_by_the_buyers_other_sale() {
    // ann bought twice; the ledger has her first order, not her second.
    let mut h = history(2, "lua-release");
    let mut first = request("ann", 0, 90, 200, Some(1));
    first.order_id = Some("o1".into());
    let mut second = request("ann", 100, 190, 200, Some(0));
    second.order_id = Some("o2".into());
    h.requests.extend([first, second]);
    let mut sale = sold("ann", 20, 70, 2);
    sale.order_id = Some("o1".into());
    h.sections.push(sale);
    let report = check(&h);
    assert_eq!(report.acknowledged.state, State::Violated);
    assert_eq!(report.counts.acknowledged_lost, 1);
    let lost = &report.acknowledged.violations[0];
    assert_eq!(lost.kind, Kind::AcknowledgedLost);
    assert!(lost.en.contains("o2"), "{}", lost.en);
}

#[test]
fn a_lost_update_is_found_with_no_end_line_and_no_unit_named() {
    // Two sales one after the other, the second reading the stock the first read (a stale
    // read): the first sale never came off the stock. No end line; the 200s name no unit.
    let mut h = history(2, "none");
    h.requests.push(request("a", 0, 90, 200, None));
    h.requests.push(request("b", 100, 190, 200, None));
    h.sections.push(sold("a", 20, 70, 2));
    h.sections.push(sold("b", 120, 170, 2));
    assert!(h.end.is_none());
    let report = check(&h);
    let lost = report
        .stock
        .violations
        .iter()
        .find(|f| f.kind == Kind::LostUpdates)
        .unwrap_or_else(|| panic!("{}", report.text(crate::history::Lang::En)));
    assert!(lost.en.contains("read 2"), "{}", lost.en);
    assert_eq!(report.stock.state, State::Violated);
}

#[test]
fn an_unsettled_timeout_leaves_the_stock_unknown_not_violated() {
    let mut h = sales(2, 1);
    h.requests.push(request("t", 100, 190, 0, None));
    h.cuts.push(oversell_api::history::Cut {
        what: "section".into(),
        reason: "test".into(),
    });
    let report = check(&h);
    assert_eq!(
        report.stock.state,
        State::Unknown,
        "{}",
        report.text(crate::history::Lang::En)
    );
    assert_eq!(report.stock.unknown[0].kind, Kind::Unsettled);
}
