//! Nothing acknowledged lost: every `200` a buyer was answered has its order in the ledger (a
//! section that sold), found by its order id — never by its buyer, whose other sale would
//! hide the one missing. A 200 with no order id is settled by its buyer (see [`Ledger`]).
//! With the sections cut, a 200 not found may be in the part not kept: unknown, not lost.

use super::findings::{Finding, Firsts, Kind, Op, Verdict};
use super::ledger::Ledger;
use super::parse::History;
use super::words::request;

/// The verdict and the acknowledged sales missing from the ledger.
pub fn check(history: &History, ledger: &Ledger, origin: i64) -> (Verdict, u64) {
    let requests = &history.requests;
    let mut missing: Firsts<usize> = Firsts::new();
    let mut hidden: Firsts<usize> = Firsts::new();
    let mut acknowledged = 0u64;
    for (i, r) in requests.iter().enumerate() {
        if r.status != 200 {
            continue;
        }
        acknowledged += 1;
        if ledger.of_request[i].is_none() {
            let to = if ledger.sections_cut {
                &mut hidden
            } else {
                &mut missing
            };
            to.push(r.return_us, i);
        }
    }
    let said = |kind: Kind, tail: (&'static str, &'static str)| {
        move |at: i64, i: usize| {
            let (en, zh) = request(&requests[i], origin);
            let order = requests[i].order_id.as_deref().unwrap_or("(no order id)");
            Finding {
                kind,
                at_us: at,
                ops: vec![Op::Request(requests[i].clone())],
                en: format!(
                    "{en} was told its order {order} sold, but the ledger has no such sale{}",
                    tail.0
                ),
                zh: format!(
                    "{zh}被告知订单 {order} 成交，但账本里没有这笔销售{}",
                    tail.1
                ),
            }
        }
    };
    let (count, violations) = missing.said(said(Kind::AcknowledgedLost, ("", "")));
    let (unknown_count, unknown) = hidden.said(said(
        Kind::Hidden,
        (
            " (the sections are cut: it may be in the part not kept)",
            "（临界区记录不完整：可能在未保留的部分）",
        ),
    ));
    let sentence = if count > 0 {
        (
            format!("{count} of {acknowledged} acknowledged sales are not in the ledger"),
            format!("{acknowledged} 笔已确认的销售中有 {count} 笔不在账本里"),
        )
    } else if unknown_count > 0 {
        (
            format!("{unknown_count} of {acknowledged} acknowledged sales are not in the part of the ledger kept"),
            format!("{acknowledged} 笔已确认的销售中有 {unknown_count} 笔不在保留的账本部分里"),
        )
    } else {
        (
            format!("all {acknowledged} acknowledged sales are in the ledger"),
            format!("全部 {acknowledged} 笔已确认的销售都在账本里"),
        )
    };
    let verdict = Verdict::of(
        (count, violations),
        (unknown_count, unknown),
        (0, Vec::new()),
        sentence,
    );
    (verdict, count)
}
