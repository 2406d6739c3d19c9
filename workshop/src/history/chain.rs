//! The ledger and the sections' read → write chain: what the stock went through, from the
//! sections alone, so a lost update is found with no `end` line and with 200s that name no
//! unit.
//!
//! In commit (exit) order, each sale must have read the stock the sale before it wrote (the
//! first, the initial stock) and written its read less its quantity. A sale that read more
//! than the last write left read a stock already sold from: its write overwrote that sale (a
//! lost update). One that read less read a stock nobody's sale left (drift). Beside that, the
//! ledger's items against the initial stock (oversold) and, with an `end` line, against the
//! final stock (the service's `lost_updates`).
//!
//! Two commits in the same microsecond are taken the higher read first, the order the stock
//! went down in. Arithmetic is in `i128`, each figure converted back only when it fits.

use std::cmp::Reverse;

use super::findings::{Finding, Firsts, Kind, Op};
use super::ledger::Ledger;
use super::parse::History;
use super::words::{secs, section, value};
use oversell_api::history::Outcome;

pub(crate) struct Chained {
    pub count: u64,
    pub violations: Vec<Finding>,
    pub unknown_count: u64,
    pub unknown: Vec<Finding>,
    pub oversold: u64,
    pub lost_updates: Option<i64>,
}

enum Raw {
    /// (the previous sale, or none: the initial stock; the sale that broke the chain)
    Read(Option<usize>, usize),
    /// A sale that did not write its read less its quantity.
    Wrote(usize),
    Oversold(usize, u64),
    Lost(i64),
}

pub(crate) fn check(history: &History, ledger: &Ledger, origin: i64) -> Chained {
    let sections = &history.sections;
    let initial = i128::from(history.run.stock);
    let qty = |i: usize| i128::from(sections[i].qty.unwrap_or(1).max(1));
    let mut sold: Vec<usize> = (0..sections.len())
        .filter(|&i| sections[i].outcome == Outcome::Sold)
        .collect();
    let exit = |i: usize| sections[i].exit_us.unwrap_or(sections[i].enter_us);
    sold.sort_unstable_by_key(|&i| (exit(i), Reverse(sections[i].read), i));

    let mut raw: Firsts<Raw> = Firsts::new();
    // With sections cut (or the room reset under a sale), a break may be a sale not kept.
    let unsure_chain = ledger.sections_cut || sections.iter().any(|s| s.outcome == Outcome::Reset);
    let mut unsure: Firsts<Raw> = Firsts::new();
    let mut last: (Option<usize>, Option<i128>) = (None, Some(initial));
    let mut breaks = 0u64;
    for &n in &sold {
        let s = &sections[n];
        let read = s.read.map(i128::from);
        if let (Some(read), Some(before)) = (read, last.1) {
            if read != before {
                breaks += 1;
                let to = if unsure_chain { &mut unsure } else { &mut raw };
                to.push(s.enter_us, Raw::Read(last.0, n));
            }
        }
        let wrote = s.wrote.map(i128::from);
        if let (Some(read), Some(wrote)) = (read, wrote) {
            if wrote != read - qty(n) {
                raw.push(exit(n), Raw::Wrote(n));
            }
        }
        last = (Some(n), wrote);
    }

    let items: i128 = sold.iter().map(|&i| qty(i)).sum();
    let mut oversold = 0;
    if items > initial {
        oversold = u64::try_from(items - initial).unwrap_or(u64::MAX);
        let mut running = 0i128;
        if let Some(&first) = sold.iter().find(|&&i| {
            running += qty(i);
            running > initial
        }) {
            raw.push(exit(first), Raw::Oversold(first, oversold));
        }
    }
    // The final stock against the ledger: the kept part of a history cut at a line is not
    // the whole ledger, so no figure is made from it.
    let end = history
        .end
        .as_ref()
        .and_then(|e| e.stock.map(|s| (e.at_us, i128::from(s))))
        .filter(|_| !history.is_prefix());
    let lost_updates = end.and_then(|(_, stock)| i64::try_from(items - (initial - stock)).ok());
    if let (Some((at, _)), Some(lost)) = (end, lost_updates) {
        // A break in the chain already names what the figure counts.
        if lost != 0 && breaks == 0 {
            let to = if ledger.sections_cut {
                &mut unsure
            } else {
                &mut raw
            };
            to.push(at, Raw::Lost(lost));
        }
    }
    if history.is_prefix() && history.end.as_ref().is_some_and(|e| e.stock.is_some()) {
        unsure.push(history.end.as_ref().map_or(0, |e| e.at_us), Raw::Lost(0));
    }

    let (count, violations) = raw.said(|at, r| words(history, r, at, origin));
    let (unknown_count, unknown) = unsure.said(|at, r| {
        let mut f = words(history, r, at, origin);
        if let Kind::LostUpdates | Kind::StockDrift = f.kind {
            if f.ops.is_empty() {
                f.en = "the final stock is not checked against the ledger: the history is cut, and the sales after the cut are not here".into();
                f.zh = "未用最终库存核对账本：历史被截断，截断之后的销售不在这里".into();
            }
        }
        f.kind = Kind::Hidden;
        f.en += " (the sections are cut: the sale between may be one not kept)";
        f.zh += "（临界区记录不完整：中间的销售可能未被保留）";
        f
    });
    Chained {
        count,
        violations,
        unknown_count,
        unknown,
        oversold,
        lost_updates,
    }
}

fn words(history: &History, raw: Raw, at: i64, origin: i64) -> Finding {
    let sc = &history.sections;
    let initial = history.run.stock;
    let t = |us: i64| secs(us, origin);
    let exit = |i: usize| sc[i].exit_us.unwrap_or(sc[i].enter_us);
    let (kind, ops, en, zh) = match raw {
        Raw::Read(prev, n) => {
            let (n_en, n_zh) = section("B", &sc[n]);
            let (r, w) = (value(sc[n].read), value(sc[n].wrote));
            let (before, before_en, before_zh, mut ops) = match prev {
                Some(p) => {
                    let (p_en, p_zh) = section("A", &sc[p]);
                    (
                        sc[p].wrote,
                        format!(
                            "the {} {p_en} had written at {}",
                            value(sc[p].wrote),
                            t(exit(p))
                        ),
                        format!("{p_zh}在 {} 写入的 {}", t(exit(p)), value(sc[p].wrote)),
                        vec![Op::Section(sc[p].clone())],
                    )
                }
                None => (
                    Some(initial),
                    format!("the initial stock of {initial}"),
                    format!("初始库存 {initial}"),
                    vec![],
                ),
            };
            ops.push(Op::Section(sc[n].clone()));
            let stale = sc[n].read > before;
            if stale {
                (
                    Kind::LostUpdates,
                    ops,
                    format!("a lost update: {n_en} read {r} at {} and wrote {w} at {}, over {before_en}: that sale never came off the stock", t(sc[n].enter_us), t(exit(n))),
                    format!("丢失更新：{n_zh}在 {} 读到 {r}，在 {} 写入 {w}，覆盖了{before_zh}：那笔销售没有从库存扣掉", t(sc[n].enter_us), t(exit(n))),
                )
            } else {
                (
                    Kind::StockDrift,
                    ops,
                    format!("{n_en} read {r} at {}, less than {before_en}: the stock went down with no sale in the ledger", t(sc[n].enter_us)),
                    format!("{n_zh}在 {} 读到 {r}，少于{before_zh}：库存减少了，账本里却没有销售", t(sc[n].enter_us)),
                )
            }
        }
        Raw::Wrote(n) => {
            let (n_en, n_zh) = section("the sale", &sc[n]);
            let q = sc[n].qty.unwrap_or(1).max(1);
            let (r, w) = (value(sc[n].read), value(sc[n].wrote));
            (
                Kind::StockDrift,
                vec![Op::Section(sc[n].clone())],
                format!(
                    "{n_en} read {r} and wrote {w} for {q} items at {}",
                    t(exit(n))
                ),
                format!("{n_zh}读到 {r}，卖出 {q} 件，却在 {} 写入 {w}", t(exit(n))),
            )
        }
        Raw::Oversold(s, n) => {
            let (s_en, s_zh) = section("the sale", &sc[s]);
            (
                Kind::Oversold,
                vec![Op::Section(sc[s].clone())],
                format!("the ledger holds {n} items beyond the initial stock of {initial}; {s_en} at {} was the first beyond it", t(at)),
                format!("账本比初始库存 {initial} 多卖了 {n} 件；{s_zh}在 {} 是第一笔超卖", t(at)),
            )
        }
        Raw::Lost(n) => {
            let (en, zh) = if n >= 0 {
                (
                    format!(
                        "{n} sales are in the ledger but not off the final stock (lost updates)"
                    ),
                    format!("{n} 笔销售在账本里，却没从最终库存中扣掉（丢失更新）"),
                )
            } else {
                (
                    format!(
                        "the final stock went down by {} more than the ledger sold",
                        n.unsigned_abs()
                    ),
                    format!("最终库存比账本多扣了 {}", n.unsigned_abs()),
                )
            };
            (
                if n >= 0 {
                    Kind::LostUpdates
                } else {
                    Kind::StockDrift
                },
                vec![],
                en,
                zh,
            )
        }
    };
    Finding {
        kind,
        at_us: at,
        ops,
        en,
        zh,
    }
}
