//! Mutual exclusion: no two closed sections overlap in time, and for the first pairs that do,
//! why — was the first holder's lease still valid when the second was granted (the lock is
//! wrong), or had it run out while the first still worked (a pause or long work: only a fence
//! helps)?
//!
//! Counted as the service counts (`src/sale/commit.lua`): a pair counts when the intervals
//! meet, once; a section that never closed (a crashed holder) is listed, never counted, so it
//! never makes a false overlap.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::findings::{Finding, Firsts, Kind, Op, Verdict, DETAIL};
use super::format::{Fault, Lease, Outcome, Section};
use super::parse::History;
use super::words::{fault_done, secs, section, value};

/// The verdict, the overlapping pairs (the service's `overlaps`) and the open sections.
pub fn check(history: &History, origin: i64) -> (Verdict, u64, u64) {
    let sections = &history.sections;
    let closed: Vec<usize> = (0..sections.len())
        // A fenced read refused at the enter never ran inside the lock's section (the
        // service counts no exit for it): a mark, not a section that can overlap.
        .filter(|&i| {
            let s = &sections[i];
            let refused_at_enter =
                s.outcome == Outcome::StaleRefused && s.exit_us == Some(s.enter_us);
            s.exit_us.is_some() && s.outcome != Outcome::Reset && !refused_at_enter
        })
        .collect();
    let overlaps = count_pairs(sections, &closed);
    let pairs = first_pairs(sections, &closed, DETAIL);

    let leases: HashMap<&str, &Lease> = history
        .leases
        .iter()
        .map(|l| (l.owner.as_str(), l))
        .collect();
    let violations = pairs
        .into_iter()
        .map(|(a, b)| explain(&sections[a], &sections[b], &leases, &history.faults, origin))
        .collect();

    let mut open = Firsts::new();
    for (i, s) in sections.iter().enumerate() {
        if s.exit_us.is_none() {
            open.push(s.enter_us, i);
        }
    }
    let open_count = open.count;
    let listed = open
        .into_firsts()
        .into_iter()
        .map(|(at, i)| {
            let s = &sections[i];
            let (en, zh) = section("a section", s);
            Finding {
                kind: Kind::OpenSection,
                at_us: at,
                ops: vec![Op::Section(s.clone())],
                en: format!(
                    "{en} entered at {} and never left (its holder crashed, or the run ended first): not counted as an overlap",
                    secs(at, origin)
                ),
                zh: format!(
                    "{zh}于 {} 进入，再未离开（持有者崩溃，或运行先结束）：不计为重叠",
                    secs(at, origin)
                ),
            }
        })
        .collect();

    let holds = overlaps == 0;
    let (en, zh) = if holds {
        (
            format!(
                "no two closed sections overlap ({} closed, {open_count} never closed)",
                closed.len()
            ),
            format!(
                "没有两个已结束的临界区重叠（{} 个已结束，{open_count} 个未结束）",
                closed.len()
            ),
        )
    } else {
        (
            format!("{overlaps} pairs of sections ran at the same time"),
            format!("{overlaps} 对临界区同时运行"),
        )
    };
    let verdict = Verdict {
        holds,
        count: overlaps,
        violations,
        listed_count: open_count,
        listed,
        en,
        zh,
    };
    (verdict, overlaps, open_count)
}

/// Pairs of `closed` sections whose intervals meet, each once: for each section, the sections
/// that exited after it entered and no later than it exited (ties broken by position, so a
/// pair is counted by whichever of the two exits last). n log n.
pub fn count_pairs(sections: &[Section], closed: &[usize]) -> u64 {
    let exit = |i: usize| sections[i].exit_us.unwrap_or(i64::MAX);
    let mut order = closed.to_vec();
    order.sort_unstable_by_key(|&i| (exit(i), sections[i].enter_us, i));
    let exits: Vec<i64> = order.iter().map(|&i| exit(i)).collect();
    order
        .iter()
        .enumerate()
        .map(|(p, &i)| {
            let enter = sections[i].enter_us;
            let before = exits.partition_point(|&e| e <= enter);
            p.saturating_sub(before) as u64
        })
        .sum()
}

/// The first `limit` overlapping pairs, in the order the second of each entered: (the
/// earliest-entered section still inside, the one that came in on it).
fn first_pairs(sections: &[Section], closed: &[usize], limit: usize) -> Vec<(usize, usize)> {
    let mut order = closed.to_vec();
    order.sort_unstable_by_key(|&i| (sections[i].enter_us, i));
    let mut inside: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut pairs = Vec::new();
    for &b in &order {
        let enter = sections[b].enter_us;
        while inside
            .peek()
            .is_some_and(|Reverse((exit, _))| *exit <= enter)
        {
            inside.pop();
        }
        if let Some(a) = inside
            .iter()
            .map(|Reverse((_, a))| *a)
            .min_by_key(|&a| (sections[a].enter_us, a))
        {
            pairs.push((a, b));
            if pairs.len() >= limit {
                break;
            }
        }
        inside.push(Reverse((sections[b].exit_us.unwrap_or(i64::MAX), b)));
    }
    pairs
}

/// Where the first holder's lock stood when the second was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Still valid (to this deadline; `None`: a lock with no lease, never released): the lock
    /// let two holders in.
    LeaseValid(Option<i64>),
    /// Released (deleted) at this time while its holder still worked.
    Released(i64),
    /// Ran out at this deadline while its holder still worked.
    RanOut(i64),
    /// No lease line for the first holder.
    NoLease,
}

/// The state of `lease` at `t`: renewals extend the deadline.
pub fn lease_at(lease: Option<&Lease>, t: i64) -> Why {
    let Some(lease) = lease else {
        return Why::NoLease;
    };
    if let Some(released) = lease.released_us.filter(|&r| r <= t) {
        return Why::Released(released);
    }
    let deadline = lease
        .renewals
        .iter()
        .filter(|r| r.renew_us <= t)
        .max_by_key(|r| r.renew_us)
        .map(|r| r.deadline_us)
        .or(lease.deadline_us);
    match deadline {
        None => Why::LeaseValid(None),
        Some(d) if d > t => Why::LeaseValid(Some(d)),
        Some(d) => Why::RanOut(d),
    }
}

/// The pair in words: A entered first and was still inside when B was granted.
pub fn explain(
    a: &Section,
    b: &Section,
    leases: &HashMap<&str, &Lease>,
    faults: &[Fault],
    origin: i64,
) -> Finding {
    let t = |us: i64| secs(us, origin);
    let (a_en, a_zh) = section("A", a);
    let (b_en, b_zh) = section("B", b);
    let b_lease = leases.get(b.owner.as_str()).copied();
    let granted = b_lease.map_or(b.enter_us, |l| l.granted_us);
    let a_exit = a.exit_us.unwrap_or(i64::MAX);
    let (verb_en, verb_zh) = if b_lease.is_some() {
        ("was granted", "获得锁")
    } else {
        ("entered", "进入")
    };
    let mut en = format!(
        "{b_en} {verb_en} at {} while {a_en} was still inside ({} → {})",
        t(granted),
        t(a.enter_us),
        t(a_exit)
    );
    let mut zh = format!(
        "{b_zh}在 {} {verb_zh}，而 {a_zh}仍在临界区内（{} → {}）",
        t(granted),
        t(a.enter_us),
        t(a_exit)
    );
    let why = lease_at(leases.get(a.owner.as_str()).copied(), granted);
    let wrong_en = ": the lock let two holders in at once (the lock is wrong)";
    let wrong_zh = "：锁同时放进了两个持有者（锁本身有错）";
    let fence_en = ": a pause or long work past the lease — only a fence helps";
    let fence_zh = "：暂停或业务超过租约——只有 fence 令牌能挡住";
    match why {
        Why::LeaseValid(Some(d)) => {
            en += &format!("; A's lease still ran to {}{wrong_en}", t(d));
            zh += &format!("；A 的租约仍有效，到 {}{wrong_zh}", t(d));
        }
        Why::LeaseValid(None) => {
            en += &format!("; A's lock had no lease and was never released{wrong_en}");
            zh += &format!("；A 的锁没有租约，也未释放{wrong_zh}");
        }
        Why::Released(r) => {
            en += &format!(
                "; A's lock was deleted at {} while A still worked (a release not its own){wrong_en}",
                t(r)
            );
            zh += &format!(
                "；A 的锁在 {} 被删除，A 仍在工作（不是它自己的释放）{wrong_zh}",
                t(r)
            );
        }
        Why::RanOut(d) => {
            en += &format!("; A's lease ran out at {}", t(d));
            zh += &format!("；A 的租约已在 {} 到期", t(d));
        }
        Why::NoLease => {
            en += "; no lease recorded";
            zh += "；没有记录租约";
        }
    }
    let fault = faults.iter().find(|f| {
        f.target == a.instance && f.from_us < a_exit && f.to_us.unwrap_or(i64::MAX) > a.enter_us
    });
    if let Some(f) = fault {
        let (done_en, done_zh) = fault_done(&f.kind);
        let until = f.to_us.map_or_else(|| "the end".to_string(), t);
        en += &format!("; A was {done_en} until {until}");
        zh += &format!("；A {done_zh}直到 {until}");
    } else if matches!(why, Why::RanOut(_)) {
        en += "; A was still working";
        zh += "；A 仍在工作";
    }
    let (tail_en, tail_zh) = tail(a, b, a_exit, origin);
    en += &tail_en;
    zh += &tail_zh;
    if matches!(why, Why::RanOut(_)) {
        en += fence_en;
        zh += fence_zh;
    }
    Finding {
        kind: Kind::Overlap,
        at_us: granted.max(b.enter_us),
        ops: vec![Op::Section(a.clone()), Op::Section(b.clone())],
        en,
        zh,
    }
}

/// What A did when it came out: wrote over B, was refused, or wrote nothing.
fn tail(a: &Section, b: &Section, a_exit: i64, origin: i64) -> (String, String) {
    let at = if a_exit == i64::MAX {
        "never".to_string()
    } else {
        secs(a_exit, origin)
    };
    let a_wrote = value(a.wrote);
    let after_b = b.exit_us.is_some_and(|e| e < a_exit);
    match (a.outcome, a.wrote, b.wrote) {
        (Outcome::StaleRefused, _, _) => (
            format!(", and then at {at} tried to write {a_wrote}, which the fence refused"),
            format!("，随后在 {at} 试图写入 {a_wrote}，被 fence 拒绝"),
        ),
        (_, Some(_), Some(bw)) if after_b => (
            format!(" and then wrote {a_wrote} over B's {bw} at {at}"),
            format!("，随后在 {at} 把 {a_wrote} 写在 B 的 {bw} 之上"),
        ),
        (_, Some(_), _) => (
            format!(", and wrote {a_wrote} at {at}"),
            format!("，并在 {at} 写入 {a_wrote}"),
        ),
        _ => (
            format!(", and left at {at} writing nothing"),
            format!("，在 {at} 离开，未写入"),
        ),
    }
}
