//! Mutual exclusion: no section comes in while a holder it should have waited for is still
//! inside. A holder is inside from its enter to its exit, or, one that never left (it
//! crashed, or the run ended first), until its lease ran out or was released: a holder that
//! never left still holds while its lease is valid, and a second one granted then is the
//! lock letting two in.
//!
//! Two sections on the clock at once are not always a violation:
//!
//! - **a lapse the fence contained**: the first holder's lease had run out when the second
//!   was granted (a pause, long work), and at most one of the two had its write accepted
//!   (the older one's refused by the fence, or never made): the lock lapsed as a lease lock
//!   must, and the stock stayed whole. Named, not counted;
//! - **within the clocks' error**: the second read the stock the first wrote (the only sale
//!   that wrote that figure), so the store ran the first's write before the second's read,
//!   whatever the clocks say: unknown, not violated, and said with the bound the run measured
//!   (or that none is known). Or the second was granted in the very millisecond the first's
//!   stamped lease ran out (the store keeps a deadline to the millisecond, `lease_time.rs`):
//!   whether the first's lease was still valid is unknown, by how much said.
//!
//! Each grant is judged against the leases as the history has them: a lease the lock store
//! stamped is the deadline it really set, so a grant before it is **the lock is wrong**, and a
//! grant after it while the first holder still worked is **the lease lapsed under a working
//! holder**; a derived lease (a tier whose store stamps none, a v1 file) is judged the same way
//! on the section's own times.
//!
//! A section counts once however many holders it came in on; `overlaps` is the service's own
//! figure (`src/sale/commit.lua`: every pair of closed sections that meet, once). One sweep in
//! enter order over the holders inside, kept by how late their lease ran and whether they
//! sold: n log n whatever the number of overlapping pairs.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

// A fast hasher: a million owners and stock values are hashed per check, and SipHash was a
// tenth of it; foldhash's seeds are still random per process.
use foldhash::{HashMap, HashMapExt};

use super::findings::{Finding, Firsts, Kind, Op, Verdict};
use super::lease_time::{lapse, lease_at, lease_end, precision, Why};
use super::parse::History;
use super::words::{fault_done, secs, section, value};
use oversell_api::history::{Fault, Lease, Outcome, Section};

/// How a section that came in on holders stands: the holder to name, and why.
#[derive(Clone, Copy)]
enum Came {
    /// On a holder whose lease was valid, or both wrote: (holder, newcomer).
    Violation(usize, usize),
    /// Only on holders whose lease had run out, the fence keeping one write.
    Lapse(usize, usize),
    /// On a holder whose write it read: within the clocks' error.
    Clock(usize, usize),
    /// Granted after the holder's stamped deadline, within its millisecond.
    Deadline(usize, usize),
}

/// The verdict, the overlapping pairs (the service's `overlaps`), the open sections, and the
/// lapses the fence contained.
pub fn check(history: &History, origin: i64) -> (Verdict, u64, u64, Lapses) {
    let sections = &history.sections;
    let leases: HashMap<&str, &Lease> = history
        .leases
        .iter()
        .map(|l| (l.owner.as_str(), l))
        .collect();
    // Each section's lease looked up once: asked for again and again below.
    let lease_for: Vec<Option<&Lease>> = sections
        .iter()
        .map(|s| leases.get(s.owner.as_str()).copied())
        .collect();
    let lease_of = |i: usize| lease_for[i];
    // A fenced read refused at the enter never ran inside the lock's section (the service
    // counts no exit for it), and a reset section wrote nothing: marks, not holders.
    let holds = |s: &Section| {
        let refused_at_enter = s.outcome == Outcome::StaleRefused && s.exit_us == Some(s.enter_us);
        s.outcome != Outcome::Reset && !refused_at_enter
    };
    let closed: Vec<usize> = (0..sections.len())
        .filter(|&i| sections[i].exit_us.is_some() && holds(&sections[i]))
        .collect();
    let overlaps = count_pairs(sections, &closed);

    // Until when each holder is inside, and when its lease ran out (MAX: it never did, or
    // it was released first). An open holder with no lease has no known end: apart.
    let mut ends: Vec<i64> = vec![i64::MAX; sections.len()];
    let mut lapses: Vec<i64> = vec![i64::MAX; sections.len()];
    let mut order: Vec<usize> = Vec::with_capacity(sections.len());
    let mut no_lease: Vec<usize> = Vec::new();
    let mut open = Firsts::new();
    for (i, s) in sections.iter().enumerate() {
        if !holds(s) {
            continue;
        }
        let lease = lease_of(i);
        lapses[i] = lease.map_or(i64::MAX, lapse);
        match s.exit_us {
            Some(exit) => ends[i] = exit,
            None => match lease {
                Some(l) => {
                    ends[i] = lease_end(l);
                    open.push(s.enter_us, i);
                }
                None => {
                    no_lease.push(i);
                    continue;
                }
            },
        }
        order.push(i);
    }
    order.sort_unstable_by_key(|&i| (sections[i].enter_us, i));

    // The one sale that wrote each figure (None: more than one did).
    let mut writer: HashMap<i64, Option<usize>> = HashMap::new();
    for (i, s) in sections.iter().enumerate() {
        if let (Outcome::Sold, Some(w)) = (s.outcome, s.wrote) {
            writer.entry(w).and_modify(|e| *e = None).or_insert(Some(i));
        }
    }
    let sold = |i: usize| sections[i].outcome == Outcome::Sold;
    let granted = |i: usize| lease_of(i).map_or(sections[i].enter_us, |l| l.granted_us);

    let mut expiring: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut inside = vec![false; sections.len()];
    let mut by_lapse: BTreeSet<(i64, usize)> = BTreeSet::new();
    let mut sold_inside: BTreeSet<(i64, usize)> = BTreeSet::new();
    let mut raw: Firsts<Came> = Firsts::new();
    let mut unsure: Firsts<Came> = Firsts::new();
    let mut lapsed: Firsts<Came> = Firsts::new();
    let mut lapse_stale = Lapses::default();
    for &b in &order {
        let enter = sections[b].enter_us;
        while let Some(&Reverse((end, a))) = expiring.peek() {
            if end > enter {
                break;
            }
            expiring.pop();
            inside[a] = false;
            by_lapse.remove(&(lapses[a], a));
            sold_inside.remove(&(sections[a].enter_us, a));
        }
        if !by_lapse.is_empty() {
            let grant = granted(b);
            // The holder whose write b read, if it is inside: the clocks' error.
            let clock = sections[b]
                .read
                .and_then(|r| writer.get(&r).copied().flatten())
                .filter(|&c| c != b && inside[c]);
            let valid = by_lapse
                .iter()
                .rev()
                .find(|&&(_, a)| Some(a) != clock)
                .filter(|&&(l, _)| l > grant)
                .map(|&(_, a)| a);
            let both_wrote = sold(b)
                .then(|| sold_inside.iter().find(|&&(_, a)| Some(a) != clock))
                .flatten()
                .map(|&(_, a)| a);
            // The holder whose lease ran out last before the grant, if the grant fell in the
            // millisecond its stamped deadline is known to.
            let near = by_lapse
                .iter()
                .rev()
                .filter(|&&(l, a)| Some(a) != clock && l <= grant)
                .find(|&&(l, a)| grant - l < lease_of(a).map_or(0, precision))
                .map(|&(_, a)| a);
            let at = grant.max(enter);
            if let Some(a) = valid.or(both_wrote) {
                raw.push(at, Came::Violation(a, b));
            } else if let Some(a) = near {
                unsure.push(at, Came::Deadline(a, b));
            } else {
                if let Some(c) = clock.filter(|&c| lapses[c] > grant || sold(b)) {
                    unsure.push(at, Came::Clock(c, b));
                }
                let contained = by_lapse
                    .iter()
                    .rev()
                    .map(|&(_, a)| a)
                    .find(|&a| Some(a) != clock || (lapses[a] <= grant && !sold(b)));
                if let Some(a) = contained {
                    lapsed.push(at, Came::Lapse(a, b));
                    lapse_stale.count += 1;
                    if sections[a].outcome != Outcome::StaleRefused {
                        lapse_stale.not_refused += 1;
                    }
                }
            }
        }
        inside[b] = true;
        by_lapse.insert((lapses[b], b));
        if sold(b) {
            sold_inside.insert((enter, b));
        }
        expiring.push(Reverse((ends[b], b)));
    }

    // An open holder with no lease: whether those after it came in on it is not known.
    let enters: Vec<i64> = order.iter().map(|&i| sections[i].enter_us).collect();
    let mut open_unknown: Firsts<usize> = Firsts::new();
    for &a in &no_lease {
        let after = enters.partition_point(|&e| e <= sections[a].enter_us);
        if after < enters.len() {
            open_unknown.push(sections[a].enter_us, a);
        }
        open.push(sections[a].enter_us, a);
    }

    let pair = |c: Came| match c {
        Came::Violation(a, b) | Came::Lapse(a, b) | Came::Clock(a, b) | Came::Deadline(a, b) => {
            (a, b)
        }
    };
    let (bound_en, bound_zh) = match history.run.clocks.bound_us {
        Some(bound) => (
            format!("which the run measured at {bound} µs"),
            format!("本次运行测得的误差上限为 {bound} 微秒"),
        ),
        None => (
            "which no bound is known for".to_string(),
            "而误差没有已知的上限".to_string(),
        ),
    };
    let explained = |at: i64, c: Came| {
        let (a, b) = pair(c);
        let mut f = explain(&sections[a], &sections[b], &leases, &history.faults, origin);
        f.at_us = at;
        match c {
            Came::Violation(..) => {}
            Came::Lapse(..) => {
                f.kind = Kind::Lapse;
                f.en = format!("exclusion lapsed: {}", f.en);
                f.zh = format!("互斥失效：{}", f.zh);
            }
            Came::Clock(..) => {
                let (sa, sb) = (&sections[a], &sections[b]);
                let ((a_en, a_zh), (b_en, b_zh)) = (section("A", sa), section("B", sb));
                let by = ends[a].saturating_sub(sb.enter_us);
                let w = value(sa.wrote);
                f.kind = Kind::ClockError;
                f.en = format!(
                    "{b_en} entered at {} while {a_en} was inside by the clock (to {}), yet B read the {w} A wrote: the store ran A's write before B's read, so the {by} µs overlap is within the clocks' error, {bound_en}",
                    secs(sb.enter_us, origin),
                    secs(ends[a], origin)
                );
                f.zh = format!(
                    "按时钟，{b_zh}在 {} 进入时 {a_zh}仍在其中（到 {}），但 B 读到的正是 A 写入的 {w}：存储先执行了 A 的写入，再执行 B 的读取，所以这 {by} 微秒的重叠在时钟误差之内，{bound_zh}",
                    secs(sb.enter_us, origin),
                    secs(ends[a], origin)
                );
            }
            // The why is explain's: A's lease ran out within its millisecond.
            Came::Deadline(..) => f.kind = Kind::ClockError,
        }
        f
    };
    let (count, violations) = raw.said(explained);
    let (clock_count, mut unknown) = unsure.said(explained);
    let (no_lease_count, more) = open_unknown.said(|at, a| {
        let (en, zh) = section("a holder", &sections[a]);
        Finding {
            kind: Kind::OpenNoLease,
            at_us: at,
            ops: vec![Op::Section(sections[a].clone())],
            en: format!(
                "{en} entered at {} and never left, with no lease recorded: whether those who came after came in on it is not known",
                secs(at, origin)
            ),
            zh: format!(
                "{zh}于 {} 进入，再未离开，且没有租约记录：之后进入的是否与它同时持有，无从得知",
                secs(at, origin)
            ),
        }
    });
    unknown.extend(more);
    unknown.sort_by_key(|f| f.at_us);
    unknown.truncate(super::findings::DETAIL);
    let unknown_count = clock_count + no_lease_count;

    let open_count = open.count;
    let (_, mut listed) = open.said(|at, i| {
        let s = &sections[i];
        let (en, zh) = section("a section", s);
        let (until_en, until_zh) = match lease_of(i).map(lease_end) {
            Some(end) if end < i64::MAX => (
                format!("holding until its lease ended at {}", secs(end, origin)),
                format!("其租约到 {} 结束前都算持有", secs(end, origin)),
            ),
            Some(_) => (
                "holding to the end (its lease never ran out)".to_string(),
                "一直算持有（租约从未到期）".to_string(),
            ),
            None => (
                "with no lease recorded".to_string(),
                "没有租约记录".to_string(),
            ),
        };
        Finding {
            kind: Kind::OpenSection,
            at_us: at,
            ops: vec![Op::Section(s.clone())],
            en: format!(
                "{en} entered at {} and never left (its holder crashed, or the run ended first): {until_en}",
                secs(at, origin)
            ),
            zh: format!(
                "{zh}于 {} 进入，再未离开（持有者崩溃，或运行先结束）：{until_zh}",
                secs(at, origin)
            ),
        }
    });
    let (lapse_count, lapses_said) = lapsed.said(explained);
    listed.extend(lapses_said);
    listed.sort_by_key(|f| f.at_us);
    listed.truncate(2 * super::findings::DETAIL);

    let sentence = if count > 0 {
        (
            format!(
                "{count} {} in while a holder was still inside ({overlaps} overlapping {} of closed sections)",
                if count == 1 { "section came" } else { "sections came" },
                if overlaps == 1 { "pair" } else { "pairs" },
            ),
            format!("{count} 个临界区在持有者仍在其中时进入（已结束的临界区中有 {overlaps} 对重叠）"),
        )
    } else if unknown_count > 0 {
        (
            format!("no violation seen, but {unknown_count} overlaps the history cannot settle"),
            format!("未见违反，但有 {unknown_count} 处重叠历史无法判定"),
        )
    } else if lapse_count > 0 && lapse_stale.not_refused == 0 {
        (
            "exclusion lapsed; the fence refused the stale write".to_string(),
            "互斥失效；fence 拒绝了过期的写入".to_string(),
        )
    } else if lapse_count > 0 {
        (
            "exclusion lapsed; the older holder's write was refused or never made".to_string(),
            "互斥失效；较早持有者的写入被拒绝或未发生".to_string(),
        )
    } else {
        (
            format!(
                "no section came in while another held ({} closed, {open_count} never closed, each holding while its lease ran)",
                closed.len()
            ),
            format!(
                "没有临界区在别人持有时进入（{} 个已结束，{open_count} 个未结束，按租约计为持有）",
                closed.len()
            ),
        )
    };
    let verdict = Verdict::of(
        (count, violations),
        (unknown_count, unknown),
        (open_count + lapse_count, listed),
        sentence,
    );
    (verdict, overlaps, open_count, lapse_stale)
}

/// The lapses the fence contained: how many, and how many of those the older holder's write
/// was not refused but never made.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lapses {
    pub count: u64,
    pub not_refused: u64,
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
        Why::Unsure { deadline, by } => {
            let ms = super::lease_time::STAMP_PRECISION_US;
            en += &format!(
                "; A's lease ran out at {}, {by} µs before: the store keeps a deadline to the millisecond ({ms} µs), so whether it was still valid is unknown within the clock error, by {by} µs",
                t(deadline)
            );
            zh += &format!(
                "；A 的租约在 {} 到期，仅早 {by} 微秒：存储只把期限记到毫秒（{ms} 微秒），它当时是否仍有效，在时钟误差之内无从判定，相差 {by} 微秒",
                t(deadline)
            );
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
    let died = fault.is_some_and(|f| f.kind.starts_with("crash"));
    if matches!(why, Why::RanOut(_)) && a_exit > granted && !died {
        en += " (the lease lapsed under a working holder)";
        zh += "（租约在持有者仍在工作时失效）";
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
