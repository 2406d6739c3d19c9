//! Nothing acknowledged lost: every `200` a buyer was answered has its order in the ledger (a
//! section that sold), found by its order id (or, without one, by its buyer).

use super::findings::{Finding, Firsts, Kind, Ledger, Op, Verdict};
use super::parse::History;
use super::words::request;

/// The verdict and the acknowledged sales missing from the ledger.
pub fn check(history: &History, ledger: &Ledger, origin: i64) -> (Verdict, u64) {
    let requests = &history.requests;
    let mut missing: Firsts<usize> = Firsts::new();
    let mut acknowledged = 0u64;
    for (i, r) in requests.iter().enumerate() {
        if r.status != 200 {
            continue;
        }
        acknowledged += 1;
        if ledger.find(r).is_none() {
            missing.push(r.return_us, i);
        }
    }
    let count = missing.count;
    let violations = missing
        .into_firsts()
        .into_iter()
        .map(|(at, i)| {
            let (en, zh) = request(&requests[i], origin);
            let order = requests[i].order_id.as_deref().unwrap_or("(no order id)");
            let (cut_en, cut_zh) = if ledger.incomplete {
                (
                    " (the sections are cut: it may be in the part not kept)",
                    "（临界区记录不完整：可能在未保留的部分）",
                )
            } else {
                ("", "")
            };
            Finding {
                kind: Kind::AcknowledgedLost,
                at_us: at,
                ops: vec![Op::Request(requests[i].clone())],
                en: format!(
                    "{en} was told its order {order} sold, but the ledger has no such sale{cut_en}"
                ),
                zh: format!("{zh}被告知订单 {order} 成交，但账本里没有这笔销售{cut_zh}"),
            }
        })
        .collect();
    let holds = count == 0;
    let (en, zh) = if holds {
        (
            format!("all {acknowledged} acknowledged sales are in the ledger"),
            format!("全部 {acknowledged} 笔已确认的销售都在账本里"),
        )
    } else {
        (
            format!("{count} of {acknowledged} acknowledged sales are not in the ledger"),
            format!("{acknowledged} 笔已确认的销售中有 {count} 笔不在账本里"),
        )
    };
    let verdict = Verdict {
        holds,
        count,
        violations,
        listed_count: 0,
        listed: Vec::new(),
        en,
        zh,
    };
    (verdict, count)
}
