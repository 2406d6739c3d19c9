//! The stock as a decrement-if-enough counter, linearizable, checked exactly in n log n.
//!
//! Every acknowledged sale names the stock it left (a 200's `stock_left`: it took units
//! `stock_left+1 ..= stock_left+qty`), and a sale the ledger settled names it by the stock its
//! section wrote, so the sales have one order: from the highest unit down. A counter's
//! history is linearizable exactly when, walked in that order from the initial stock,
//!
//! - each sale takes the units right below the last (none twice, none skipped), none above
//!   the initial stock, none below zero;
//! - a sale that returned before another was called comes first (real time);
//! - each sold-out answer (a 409 naming the stock it saw) has a moment in its call where the
//!   stock could already be short: each sale is placed as early as it may (at its call, never
//!   before the sale ahead of it), and the first that leaves the stock short must be placed
//!   by the time the 409 was answered. Placing every sale as early as it may is the schedule
//!   that suits every 409 at once, so this is exact, not a heuristic;
//! - a 409 whose order is in the ledger sold after all (a phantom sale).
//!
//! A timeout or a 5xx is indeterminate, as Jepsen's `:info`: it took units if the ledger has
//! its sale (placed no earlier than its call, never holding up another), else none. What
//! the history does not hold (requests or sections cut, a call the ledger could not settle,
//! a 200 with no unit) makes a finding that depends on it unknown, never violated.
//!
//! Units are counted in `i128`: a `stock_left` near `i64::MAX` plus its quantity cannot wrap.

use std::cmp::Reverse;

use super::chain;
use super::findings::{Finding, Firsts, Kind, Op, Verdict};
use super::ledger::Ledger;
use super::parse::History;
use super::words::{request, units_of};
use oversell_api::history::{Request, Section};

/// The figures this verdict yields.
#[derive(Debug, Default)]
pub struct Figures {
    pub oversold: u64,
    pub lost_updates: Option<i64>,
    pub settled: u64,
    pub unsettled: u64,
}

/// Who a sale is: a request (answered, or settled by the ledger), or a sale in the ledger no
/// recorded request asked for.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Who {
    Request(usize),
    Section(usize),
}

/// A sale in the walk: the units `left+1 ..= top`, its call (`i64::MIN`: not known), its
/// return when it was acknowledged (an indeterminate one holds no other back).
#[derive(Clone, Copy)]
struct Step {
    top: i128,
    left: i128,
    call: i64,
    ret: Option<i64>,
    who: Who,
}

pub(crate) enum Raw {
    Twice(Who, Who),
    Below(Who),
    Above(Who),
    Skipped(Option<Who>, Who),
    Order(usize, Who),
    TooEarly(usize, Who),
    WithStock(usize),
    Phantom(usize, usize),
}

fn qty(r: &Request) -> i128 {
    i128::from(r.qty.max(1))
}

pub fn check(history: &History, ledger: &Ledger, origin: i64) -> (Verdict, Figures) {
    let (requests, sections) = (&history.requests, &history.sections);
    let initial = i128::from(history.run.stock);
    let mut raw: Firsts<Raw> = Firsts::new();
    // Findings that would be violations were the history whole: unknown instead.
    let mut unsure: Firsts<Raw> = Firsts::new();
    let mut unknown: Firsts<(Kind, usize)> = Firsts::new();
    let mut listed: Firsts<usize> = Firsts::new();
    let mut figures = Figures::default();

    let wrote = |s: usize| sections[s].wrote.map(i128::from);
    let mut steps: Vec<Step> = Vec::new();
    let mut sold_outs: Vec<usize> = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let settled = ledger.of_request[i];
        let step = |left: i128, ret: Option<i64>| Step {
            top: left + qty(r),
            left,
            call: r.call_us,
            ret,
            who: Who::Request(i),
        };
        match r.status {
            200 => match r
                .stock_left
                .map(i128::from)
                .or_else(|| settled.and_then(wrote))
            {
                Some(left) => steps.push(step(left, Some(r.return_us))),
                None => unknown.push(r.return_us, (Kind::NoUnit, i)),
            },
            0 | 500.. => match settled {
                Some(s) => {
                    figures.settled += 1;
                    match wrote(s) {
                        Some(left) => steps.push(step(left, None)),
                        None => unknown.push(r.call_us, (Kind::NoUnit, i)),
                    }
                }
                None if ledger.sections_cut => {
                    figures.unsettled += 1;
                    unknown.push(r.call_us, (Kind::Unsettled, i));
                }
                None => figures.settled += 1,
            },
            409 => {
                if let Some(s) = settled {
                    // Matched by buyer while requests are cut, the sale may be another call's.
                    let sure = ledger.by_order[i] || !ledger.requests_cut;
                    let to = if sure { &mut raw } else { &mut unsure };
                    to.push(r.return_us, Raw::Phantom(i, s));
                    if let Some(left) = wrote(s) {
                        steps.push(step(left, None));
                    }
                }
                if r.stock_left.is_some() {
                    sold_outs.push(i);
                }
            }
            _ => {}
        }
    }
    for (s, section) in sections.iter().enumerate() {
        if section.outcome != oversell_api::history::Outcome::Sold || ledger.request_of[s].is_some()
        {
            continue;
        }
        if !ledger.requests_cut {
            listed.push(section.exit_us.unwrap_or(section.enter_us), s);
        }
        if let Some(left) = wrote(s) {
            let q = i128::from(section.qty.unwrap_or(1).max(1));
            steps.push(Step {
                top: left + q,
                left,
                call: i64::MIN,
                ret: None,
                who: Who::Section(s),
            });
        }
    }
    let at_of = |who: Who| match who {
        Who::Request(i) => requests[i].ret_or_call(),
        Who::Section(s) => sections[s].exit_us.unwrap_or(sections[s].enter_us),
    };
    // Something the walk cannot see may have taken units: gaps and 409s are then unknown.
    let hidden = ledger.requests_cut || unknown.count > 0;

    // The walk, from the highest unit down.
    steps.sort_unstable_by_key(|t| (Reverse(t.top), Reverse(t.left), t.call, t.who));
    let mut expected = initial;
    let mut holder: Option<Who> = None;
    // Along the walk: the lowest stock reached, and the earliest it could have been reached.
    let mut lowest: Vec<i128> = Vec::with_capacity(steps.len());
    let mut earliest: Vec<i64> = Vec::with_capacity(steps.len());
    for t in &steps {
        let at = at_of(t.who);
        if t.top > initial {
            raw.push(at, Raw::Above(t.who));
        }
        if t.top > expected {
            if let Some(h) = holder {
                raw.push(at.max(at_of(h)), Raw::Twice(h, t.who));
            }
        } else if t.top < expected {
            let to = if hidden { &mut unsure } else { &mut raw };
            to.push(at, Raw::Skipped(holder, t.who));
        }
        if t.left < 0 {
            raw.push(at, Raw::Below(t.who));
        }
        if t.left < expected {
            expected = t.left;
            holder = Some(t.who);
        }
        lowest.push(expected);
        earliest.push(earliest.last().map_or(t.call, |&e: &i64| e.max(t.call)));
    }

    // Real time: acknowledged sales by return, the lowest-unit one so far; a sale called
    // after it returned must take units below it.
    let mut by_return: Vec<usize> = (0..steps.len())
        .filter(|&k| steps[k].ret.is_some())
        .collect();
    by_return.sort_unstable_by_key(|&k| steps[k].ret);
    let returns: Vec<i64> = by_return.iter().filter_map(|&k| steps[k].ret).collect();
    let mut lowest_returned: Vec<usize> = Vec::with_capacity(by_return.len());
    for &k in &by_return {
        let keep = match lowest_returned.last() {
            Some(&l) if steps[l].left <= steps[k].left => l,
            _ => k,
        };
        lowest_returned.push(keep);
    }
    for b in &steps {
        let before = returns.partition_point(|&t| t < b.call);
        if before > 0 {
            let a = &steps[lowest_returned[before - 1]];
            // Ranges that meet are a unit sold twice, said in the walk.
            if a.top <= b.left {
                if let Who::Request(ai) = a.who {
                    raw.push(b.call, Raw::Order(ai, b.who));
                }
            }
        }
    }

    // Sold-outs: the first sale that left the stock short of the 409's quantity must be
    // placeable by the 409's answer.
    for x in sold_outs {
        let r = &requests[x];
        if initial < qty(r) {
            continue;
        }
        let k = lowest.partition_point(|&m| m >= qty(r));
        let to = if hidden { &mut unsure } else { &mut raw };
        match steps.get(k) {
            None => to.push(r.return_us, Raw::WithStock(x)),
            Some(t) if earliest[k] > r.return_us => {
                to.push(r.return_us.max(earliest[k]), Raw::TooEarly(x, t.who))
            }
            Some(_) => {}
        }
    }

    // The ledger against the initial and the final stock, and the sections' read → write
    // chain.
    let chained = chain::check(history, ledger, origin);
    figures.oversold = chained.oversold;
    figures.lost_updates = chained.lost_updates;

    let ok_sales = requests.iter().filter(|r| r.status == 200).count();
    let (count, mut violations) = raw.said(|at, r| words(history, r, at, origin));
    let count = count + chained.count;
    violations.extend(chained.violations);
    violations.sort_by_key(|f| f.at_us);
    violations.truncate(super::findings::DETAIL);

    let hidden_words = |at, r| {
        let mut f = words(history, r, at, origin);
        f.kind = Kind::Hidden;
        f.en += " — unless a sale the history does not hold explains it";
        f.zh += "——除非历史未记录的某笔销售能解释它";
        f
    };
    let (unsure_count, mut undecided) = unsure.said(hidden_words);
    let (unknown_count, more) =
        unknown.said(|at, (kind, i)| unknown_words(history, kind, i, at, origin));
    undecided.extend(more);
    undecided.extend(chained.unknown);
    undecided.sort_by_key(|f| f.at_us);
    undecided.truncate(super::findings::DETAIL);
    let undecided_count = unsure_count + unknown_count + chained.unknown_count;

    let listed = listed.said(|at, s| {
        let section = &sections[s];
        let order = section.order_id.as_deref().unwrap_or("?");
        Finding {
            kind: Kind::Orphan,
            at_us: at,
            ops: vec![Op::Section(section.clone())],
            en: format!("the ledger's order {order} answers no recorded request"),
            zh: format!("账本中的订单 {order} 没有对应的已记录请求"),
        }
    });
    let sentence = if count > 0 {
        (
            format!("{count} violations of a decrement-if-enough counter"),
            format!("{count} 处违反「够才扣减」计数器"),
        )
    } else if undecided_count > 0 {
        (
            format!("no violation seen, but {undecided_count} things the history cannot settle"),
            format!("未见违反，但有 {undecided_count} 处历史无法判定"),
        )
    } else {
        (
            format!(
                "every sale took the units right below the last, in real-time order, sold out only when short ({ok_sales} acknowledged, {} indeterminate settled)",
                figures.settled
            ),
            format!(
                "每笔销售都紧接着上一笔取走单位，符合实时顺序，只在不够时售罄（{ok_sales} 笔已确认，{} 笔不确定的已核对）",
                figures.settled
            ),
        )
    };
    let verdict = Verdict::of(
        (count, violations),
        (undecided_count, undecided),
        listed,
        sentence,
    );
    (verdict, figures)
}

trait RetOrCall {
    fn ret_or_call(&self) -> i64;
}

impl RetOrCall for Request {
    /// When a request's answer is said to have happened: its return, or for one never
    /// answered, its call.
    fn ret_or_call(&self) -> i64 {
        if self.status == 0 {
            self.call_us
        } else {
            self.return_us
        }
    }
}

fn unknown_words(history: &History, kind: Kind, i: usize, at: i64, origin: i64) -> Finding {
    let r = &history.requests[i];
    let (en, zh) = request(r, origin);
    let (en, zh) = if kind == Kind::NoUnit {
        (
            format!("{en} sold, but neither its answer nor the ledger names the units it took"),
            format!("{zh}已成交，但回答和账本都没有指明它拿走的单位"),
        )
    } else {
        (
            format!("{en} got no answer, and the ledger is cut: it may or may not have sold"),
            format!("{zh}没有得到回答，而账本不完整：可能卖出，也可能没有"),
        )
    };
    Finding {
        kind,
        at_us: at,
        ops: vec![Op::Request(r.clone())],
        en,
        zh,
    }
}

fn op(history: &History, who: Who) -> Op {
    match who {
        Who::Request(i) => Op::Request(history.requests[i].clone()),
        Who::Section(s) => Op::Section(history.sections[s].clone()),
    }
}

/// A sale in a sentence: its request, or the ledger's order no request asked for.
fn named(history: &History, who: Who, origin: i64) -> (String, String) {
    match who {
        Who::Request(i) => request(&history.requests[i], origin),
        Who::Section(s) => {
            let order = history.sections[s].order_id.as_deref().unwrap_or("?");
            (
                format!("the ledger's order {order}"),
                format!("账本中的订单 {order}"),
            )
        }
    }
}

/// The units a sale took, in words.
fn took(history: &History, who: Who) -> (String, String) {
    match who {
        Who::Request(i) => {
            let r = &history.requests[i];
            units_of(r.stock_left.or_else(|| sold_wrote(history, r)), r.qty)
        }
        Who::Section(s) => {
            let section: &Section = &history.sections[s];
            units_of(section.wrote, section.qty.unwrap_or(1))
        }
    }
}

fn sold_wrote(history: &History, r: &Request) -> Option<i64> {
    let order = r.order_id.as_deref()?;
    history
        .sections
        .iter()
        .find(|s| s.order_id.as_deref() == Some(order))
        .and_then(|s| s.wrote)
}

fn words(history: &History, raw: Raw, at: i64, origin: i64) -> Finding {
    let rq = &history.requests;
    let initial = history.run.stock;
    let (kind, ops, en, zh) = match raw {
        Raw::Twice(a, b) => {
            let ((a_en, a_zh), (b_en, b_zh)) =
                (named(history, a, origin), named(history, b, origin));
            let (u_en, u_zh) = took(history, b);
            (
                Kind::UnitSoldTwice,
                vec![op(history, a), op(history, b)],
                format!("{u_en} was sold twice: to {a_en} and to {b_en}"),
                format!("{u_zh}被卖了两次：卖给 {a_zh} 和 {b_zh}"),
            )
        }
        Raw::Below(w) => {
            let (w_en, w_zh) = named(history, w, origin);
            (
                Kind::BelowZero,
                vec![op(history, w)],
                format!("{w_en} left the stock below zero"),
                format!("{w_zh}让库存低于零"),
            )
        }
        Raw::Above(w) => {
            let (w_en, w_zh) = named(history, w, origin);
            (
                Kind::AboveInitial,
                vec![op(history, w)],
                format!("{w_en} names a unit the initial stock of {initial} never had"),
                format!("{w_zh}指明的单位超出初始库存 {initial}"),
            )
        }
        Raw::Skipped(above, w) => {
            let (w_en, w_zh) = named(history, w, origin);
            let (after_en, after_zh) = match above {
                Some(a) => {
                    let (a_en, a_zh) = named(history, a, origin);
                    (format!("after {a_en}"), format!("在 {a_zh}之后"))
                }
                None => (
                    format!("from the initial stock of {initial}"),
                    format!("从初始库存 {initial} 起"),
                ),
            };
            let mut ops = vec![op(history, w)];
            if let Some(a) = above {
                ops.insert(0, op(history, a));
            }
            (
                Kind::UnitsSkipped,
                ops,
                format!("{w_en} is the next sale {after_en}, yet units between them were taken by no sale: the stock went down without one"),
                format!("{w_zh}是{after_zh}的下一笔销售，但两者之间的单位没有任何销售拿走：库存无故减少"),
            )
        }
        Raw::Order(a, b) => {
            let ((a_en, a_zh), (b_en, b_zh)) = (request(&rq[a], origin), named(history, b, origin));
            (
                Kind::RealTimeOrder,
                vec![Op::Request(rq[a].clone()), op(history, b)],
                format!("{b_en} was called after {a_en} returned, yet took a higher unit: no order of the sales explains both"),
                format!("{b_zh}在 {a_zh}返回之后才调用，却拿到更高的单位：没有任何顺序能同时解释两者"),
            )
        }
        Raw::TooEarly(x, b) => {
            let ((x_en, x_zh), (b_en, b_zh)) = (request(&rq[x], origin), named(history, b, origin));
            (
                Kind::SoldOutTooEarly,
                vec![Op::Request(rq[x].clone()), op(history, b)],
                format!("{x_en} was told sold out, yet the sale that left the stock short, {b_en}, was called only after that answer: units remained when it was given"),
                format!("{x_zh}被告知售罄，但让库存不足的那笔销售 {b_zh}在这个回答之后才调用：回答时库存其实还有"),
            )
        }
        Raw::WithStock(x) => {
            let (x_en, x_zh) = request(&rq[x], origin);
            (
                Kind::SoldOutWithStock,
                vec![Op::Request(rq[x].clone())],
                format!("{x_en} was told sold out, yet no sale ever left the stock short of {}: units remained", rq[x].qty.max(1)),
                format!("{x_zh}被告知售罄，但没有任何销售让库存少于 {}：库存其实还有", rq[x].qty.max(1)),
            )
        }
        Raw::Phantom(x, s) => {
            let (x_en, x_zh) = request(&rq[x], origin);
            let order = history.sections[s].order_id.as_deref().unwrap_or("?");
            (
                Kind::PhantomSale,
                vec![Op::Request(rq[x].clone()), Op::Section(history.sections[s].clone())],
                format!("{x_en} was told 409, yet its order {order} is in the ledger: a sale it was told did not happen"),
                format!("{x_zh}收到 409，但它的订单 {order} 在账本里：被告知没有发生的销售其实发生了"),
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
