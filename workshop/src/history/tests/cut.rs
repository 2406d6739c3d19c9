//! A history cut at its size bound is checked as the prefix it is: nothing after the cut is
//! claimed lost, and what the cut hides is unknown.

use super::build::sales;
use crate::history::check::{check, Kind, State};
use crate::history::parse::parse;
use oversell_api::history::Cut;

#[test]
fn a_cut_history_claims_nothing_lost_and_is_unknown_where_hidden() {
    // Three sales; the fleet kept the requests and the first two sections, then cut (the
    // end line is always kept).
    let mut h = sales(3, 3);
    h.sections.pop();
    h.leases.pop();
    h.cuts.push(Cut {
        what: "history".into(),
        reason: "the fleet keeps 1048576 bytes of a run".into(),
    });
    let report = check(&parse(&h.to_jsonl()).unwrap());
    let text = report.text(crate::history::Lang::En);
    assert_eq!(report.acknowledged.state, State::Unknown, "{text}");
    assert_eq!(report.counts.acknowledged_lost, 0);
    assert_eq!(report.acknowledged.unknown[0].kind, Kind::Hidden);
    assert!(report.acknowledged.unknown[0].en.contains("o-b2"));
    // The final stock is not set against the part of the ledger kept.
    assert_eq!(report.counts.lost_updates, None);
    assert_eq!(report.state, State::Unknown, "{text}");
    assert!(
        report
            .verdicts()
            .iter()
            .all(|(_, _, v)| v.state != State::Violated),
        "{text}"
    );

    // What the kept part proves is still proven: a unit sold twice before the cut.
    let mut bad = h.clone();
    bad.requests[1].stock_left = bad.requests[0].stock_left;
    assert_eq!(check(&bad).stock.state, State::Violated);
}
