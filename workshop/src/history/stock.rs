//! The stock as a decrement-if-enough counter, linearizable: checked in n log n because every
//! acknowledged sale names its units (a 200's `stock_left` is the stock it left, so it took
//! `stock_left+1 ..= stock_left+qty`).
//!
//! - every acknowledged sale took units of its own, none below zero, none above the initial;
//! - real time respected: a sale called after another returned took lower units;
//! - a sold-out (409) only when the stock was short: no sale for as much called after it;
//! - timeouts (status 0) and 5xx are indeterminate, settled against the ledger (Jepsen's
//!   `:info`): a ledger entry says it sold (its unit then counts), none says it did not —
//!   unless the sections are cut, when it stays unsettled;
//! - the ledger beyond the initial stock is oversold; the final stock against it, lost updates.

use super::findings::{Finding, Firsts, Kind, Ledger, Op, Verdict};
use super::format::{Outcome, Request, Section};
use super::parse::History;
use super::words::{request, secs, section, units, value};

/// The figures this verdict yields.
#[derive(Debug, Default)]
pub struct Figures {
    pub oversold: u64,
    pub lost_updates: Option<i64>,
    pub settled: u64,
    pub unsettled: u64,
}

/// A unit range taken: by an acknowledged request, or by a settled indeterminate one (whose
/// units its section wrote).
#[derive(Clone, Copy)]
struct Taken {
    left: i64,
    qty: i64,
    request: usize,
}

enum Raw {
    Twice(usize, usize),
    Below(usize),
    Above(usize),
    Order(usize, usize),
    SoldOut(usize, usize),
    Oversold(usize, u64),
    Lost(Option<(usize, usize)>, i64),
}

pub fn check(history: &History, ledger: &Ledger, origin: i64) -> (Verdict, Figures) {
    let requests = &history.requests;
    let initial = history.run.stock;
    let mut raw: Firsts<Raw> = Firsts::new();
    let mut listed: Firsts<(Kind, usize)> = Firsts::new();
    let mut figures = Figures::default();

    let mut taken: Vec<Taken> = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let qty = i64::from(r.qty.max(1));
        if r.status == 200 {
            match r.stock_left {
                Some(left) => {
                    taken.push(Taken {
                        left,
                        qty,
                        request: i,
                    });
                    if left < 0 {
                        raw.push(r.return_us, Raw::Below(i));
                    } else if left + qty > initial {
                        raw.push(r.return_us, Raw::Above(i));
                    }
                }
                None => listed.push(r.return_us, (Kind::NoUnit, i)),
            }
        } else if r.status == 0 || r.status >= 500 {
            match ledger.find(r) {
                Some(s) => {
                    figures.settled += 1;
                    if let Some(left) = history.sections[s].wrote {
                        taken.push(Taken {
                            left,
                            qty,
                            request: i,
                        });
                    }
                }
                None if ledger.incomplete => {
                    figures.unsettled += 1;
                    listed.push(r.call_us, (Kind::Unsettled, i));
                }
                None => figures.settled += 1,
            }
        }
    }

    // Units of their own: sorted by the lowest unit, each range must start above every range
    // below it.
    taken.sort_unstable_by_key(|t| (t.left, requests[t.request].call_us, t.request));
    let mut top: Option<Taken> = None;
    for t in &taken {
        if let Some(prev) = top {
            if t.left < prev.left + prev.qty {
                let (a, b) = (prev.request, t.request);
                let at = requests[a].return_us.max(requests[b].return_us);
                raw.push(at, Raw::Twice(a, b));
            }
        }
        if top.is_none_or(|p| t.left + t.qty > p.left + p.qty) {
            top = Some(*t);
        }
    }

    // Real time: acknowledged sales by return, the lowest unit taken so far; a sale called
    // after those returned must take units below it.
    let oks: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].status == 200 && requests[i].stock_left.is_some())
        .collect();
    let mut by_return = oks.clone();
    by_return.sort_unstable_by_key(|&i| requests[i].return_us);
    let returns: Vec<i64> = by_return.iter().map(|&i| requests[i].return_us).collect();
    let mut lowest: Vec<usize> = Vec::with_capacity(by_return.len());
    for &i in &by_return {
        let keep = match lowest.last() {
            Some(&l) if requests[l].stock_left <= requests[i].stock_left => l,
            _ => i,
        };
        lowest.push(keep);
    }
    // Sold-outs by return, the smallest quantity refused so far.
    let mut sold_outs: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].status == 409)
        .collect();
    sold_outs.sort_unstable_by_key(|&i| requests[i].return_us);
    let so_returns: Vec<i64> = sold_outs.iter().map(|&i| requests[i].return_us).collect();
    let mut smallest: Vec<usize> = Vec::with_capacity(sold_outs.len());
    for &i in &sold_outs {
        let keep = match smallest.last() {
            Some(&s) if requests[s].qty <= requests[i].qty => s,
            _ => i,
        };
        smallest.push(keep);
    }
    for &b in &oks {
        let rb = &requests[b];
        let left = rb.stock_left.unwrap_or(0);
        let top_b = left + i64::from(rb.qty.max(1));
        let before = returns.partition_point(|&t| t < rb.call_us);
        if before > 0 {
            let a = lowest[before - 1];
            let la = requests[a].stock_left.unwrap_or(0);
            // Meeting ranges are a unit sold twice, said above.
            if la < top_b && la + i64::from(requests[a].qty.max(1)) <= left {
                raw.push(rb.call_us, Raw::Order(a, b));
            }
        }
        let before = so_returns.partition_point(|&t| t < rb.call_us);
        if before > 0 {
            let x = smallest[before - 1];
            if top_b >= i64::from(requests[x].qty.max(1)) {
                raw.push(rb.call_us, Raw::SoldOut(x, b));
            }
        }
    }

    // The ledger against the initial and the final stock.
    let sections = &history.sections;
    let mut sold: Vec<usize> = (0..sections.len())
        .filter(|&i| sections[i].outcome == Outcome::Sold)
        .collect();
    sold.sort_unstable_by_key(|&i| (sections[i].exit_us.unwrap_or(i64::MAX), i));
    let items: i64 = sold
        .iter()
        .map(|&i| i64::from(sections[i].qty.unwrap_or(1).max(1)))
        .sum();
    if items > initial {
        figures.oversold = (items - initial) as u64;
        // The sale that took the first item beyond the initial stock, in commit order.
        let mut running = 0;
        if let Some(&first) = sold.iter().find(|&&i| {
            running += i64::from(sections[i].qty.unwrap_or(1).max(1));
            running > initial
        }) {
            let at = sections[first].exit_us.unwrap_or(sections[first].enter_us);
            raw.push(at, Raw::Oversold(first, figures.oversold));
        }
    }
    if let Some(end) = history
        .end
        .as_ref()
        .and_then(|e| e.stock.map(|s| (e.at_us, s)))
    {
        let lost = items - (initial - end.1);
        figures.lost_updates = Some(lost);
        if lost != 0 {
            // The first sold section whose read did not see the sale committed before it.
            let pair = sold.windows(2).find_map(|w| {
                let (p, n) = (&sections[w[0]], &sections[w[1]]);
                (p.wrote.is_some() && n.read.is_some() && n.read != p.wrote).then_some((w[0], w[1]))
            });
            let at = pair.map_or(end.0, |(_, n)| sections[n].enter_us);
            raw.push(at, Raw::Lost(pair, lost));
        }
    }

    let count = raw.count;
    let violations = raw
        .into_firsts()
        .into_iter()
        .map(|(at, r)| words(history, r, at, origin))
        .collect();
    let listed_count = listed.count;
    let listed = listed
        .into_firsts()
        .into_iter()
        .map(|(at, (kind, i))| {
            let (en, zh) = request(&requests[i], origin);
            let (en, zh) = if kind == Kind::NoUnit {
                (
                    format!("{en} was acknowledged but named no unit (no stock_left)"),
                    format!("{zh}已确认，但未指明单位（没有 stock_left）"),
                )
            } else {
                (
                    format!(
                        "{en} got no answer, and the ledger is cut: it may or may not have sold"
                    ),
                    format!("{zh}没有得到回答，而账本不完整：可能卖出，也可能没有"),
                )
            };
            Finding {
                kind,
                at_us: at,
                ops: vec![Op::Request(requests[i].clone())],
                en,
                zh,
            }
        })
        .collect();
    let holds = count == 0;
    let (en, zh) = if holds {
        (
            format!(
                "every acknowledged sale took units of its own, in real-time order ({} sales, {} indeterminate settled)",
                oks.len(),
                figures.settled
            ),
            format!(
                "每个已确认的销售都拿到自己的单位，且符合实时顺序（{} 笔，{} 笔不确定的已核对）",
                oks.len(),
                figures.settled
            ),
        )
    } else {
        (
            format!("{count} violations of a decrement-if-enough counter"),
            format!("{count} 处违反「够才扣减」计数器"),
        )
    };
    let verdict = Verdict {
        holds,
        count,
        violations,
        listed_count,
        listed,
        en,
        zh,
    };
    (verdict, figures)
}

fn req(r: &Request) -> Op {
    Op::Request(r.clone())
}

fn sec(s: &Section) -> Op {
    Op::Section(s.clone())
}

fn words(history: &History, raw: Raw, at: i64, origin: i64) -> Finding {
    let rq = &history.requests;
    let sc = &history.sections;
    let initial = history.run.stock;
    let (kind, ops, en, zh) = match raw {
        Raw::Twice(a, b) => {
            let ((a_en, a_zh), (b_en, b_zh)) = (request(&rq[a], origin), request(&rq[b], origin));
            let (u_en, u_zh) = units(&rq[b]);
            (
                Kind::UnitSoldTwice,
                vec![req(&rq[a]), req(&rq[b])],
                format!("{u_en} was sold twice: to {a_en} and to {b_en}"),
                format!("{u_zh}被卖了两次：卖给 {a_zh} 和 {b_zh}"),
            )
        }
        Raw::Below(i) => {
            let (r_en, r_zh) = request(&rq[i], origin);
            (
                Kind::BelowZero,
                vec![req(&rq[i])],
                format!("{r_en} left the stock below zero"),
                format!("{r_zh}让库存低于零"),
            )
        }
        Raw::Above(i) => {
            let (r_en, r_zh) = request(&rq[i], origin);
            (
                Kind::AboveInitial,
                vec![req(&rq[i])],
                format!("{r_en} names a unit the initial stock of {initial} never had"),
                format!("{r_zh}指明的单位超出初始库存 {initial}"),
            )
        }
        Raw::Order(a, b) => {
            let ((a_en, a_zh), (b_en, b_zh)) = (request(&rq[a], origin), request(&rq[b], origin));
            (
                Kind::RealTimeOrder,
                vec![req(&rq[a]), req(&rq[b])],
                format!("{b_en} was called after {a_en} returned, yet took a higher unit: no order of the sales explains both"),
                format!("{b_zh}在 {a_zh}返回之后才调用，却拿到更高的单位：没有任何顺序能同时解释两者"),
            )
        }
        Raw::SoldOut(x, b) => {
            let ((x_en, x_zh), (b_en, b_zh)) = (request(&rq[x], origin), request(&rq[b], origin));
            (
                Kind::SoldOutTooEarly,
                vec![req(&rq[x]), req(&rq[b])],
                format!("{x_en} was told sold out, yet {b_en}, called after that answer, was sold: the stock was not short"),
                format!("{x_zh}被告知售罄，但之后调用的 {b_zh}却成交了：库存其实并不短缺"),
            )
        }
        Raw::Oversold(s, n) => {
            let (s_en, s_zh) = section("the sale", &sc[s]);
            (
                Kind::Oversold,
                vec![sec(&sc[s])],
                format!("the ledger holds {n} items beyond the initial stock of {initial}; {s_en} at {} was the first beyond it", secs(at, origin)),
                format!("账本比初始库存 {initial} 多卖了 {n} 件；{s_zh}在 {} 是第一笔超卖", secs(at, origin)),
            )
        }
        Raw::Lost(pair, n) => {
            let head_en = if n > 0 {
                format!("{n} sales are in the ledger but not off the stock (lost updates)")
            } else {
                format!("the stock went down by {} more than the ledger sold", -n)
            };
            let head_zh = if n > 0 {
                format!("{n} 笔销售在账本里，却没从库存中扣掉（丢失更新）")
            } else {
                format!("库存比账本多扣了 {}", -n)
            };
            match pair {
                Some((p, q)) => {
                    let ((p_en, p_zh), (q_en, q_zh)) = (section("A", &sc[p]), section("B", &sc[q]));
                    let (w, r) = (value(sc[p].wrote), value(sc[q].read));
                    let (p_at, q_at) = (
                        secs(sc[p].exit_us.unwrap_or(sc[p].enter_us), origin),
                        secs(sc[q].exit_us.unwrap_or(sc[q].enter_us), origin),
                    );
                    let qw = value(sc[q].wrote);
                    (
                        if n > 0 { Kind::LostUpdates } else { Kind::StockDrift },
                        vec![sec(&sc[p]), sec(&sc[q])],
                        format!("{head_en}: the first, {q_en} read {r} at {} and wrote {qw} at {q_at}, over the {w} {p_en} had written at {p_at}: A's sale never came off the stock", secs(at, origin)),
                        format!("{head_zh}：第一处是 {q_zh}在 {} 读到 {r}，在 {q_at} 写入 {qw}，覆盖了 {p_zh}在 {p_at} 写入的 {w}：A 的销售没有从库存扣掉", secs(at, origin)),
                    )
                }
                None => (
                    if n > 0 {
                        Kind::LostUpdates
                    } else {
                        Kind::StockDrift
                    },
                    vec![],
                    head_en,
                    head_zh,
                ),
            }
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
