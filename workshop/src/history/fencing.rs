//! Fencing as the store enforces it (`src/sale/commit.lua`, `src/sale/enter.lua`): the store
//! keeps the highest fence it has seen, raised by every fenced read it lets in and every write
//! it accepts, and refuses a read or a write whose fence is *below* it. A fence *equal* to the
//! highest is accepted — it must be, since a holder's own read raises the highest to its own
//! fence before its write comes. So the rule checked is the store's:
//!
//! - an accepted write's fence is at least every fence the store let in before the write;
//! - a refused one is below one the store let in first: a newer fence granted before it. A
//!   refusal with no newer fence ever let in is a violation (the store refused a holder it
//!   should have let write); with the sections cut, the newer one may be in the part not
//!   kept, so that is unknown.
//!
//! Which comes first at one microsecond is not known; each side is given the benefit: a newer
//! fence let in at the same microsecond as a write does not make the write stale, and does
//! excuse a refusal.

use super::findings::{Finding, Firsts, Kind, Op, Verdict};
use super::parse::History;
use super::words::{fence, secs, section, value};
use oversell_api::history::{Outcome, Section};

fn refused_at_enter(s: &Section) -> bool {
    s.outcome == Outcome::StaleRefused && s.exit_us == Some(s.enter_us)
}

/// The verdict and the refused stale writes.
pub fn check(history: &History, origin: i64) -> (Verdict, u64) {
    let sections = &history.sections;
    // The fenced reads the store let in, by time, and the highest fence so far.
    let mut entered: Vec<usize> = (0..sections.len())
        .filter(|&i| sections[i].fence.is_some() && !refused_at_enter(&sections[i]))
        .collect();
    entered.sort_unstable_by_key(|&i| (sections[i].enter_us, i));
    let enters: Vec<i64> = entered.iter().map(|&i| sections[i].enter_us).collect();
    let mut top: Vec<usize> = Vec::with_capacity(entered.len());
    for &i in &entered {
        let keep = match top.last() {
            Some(&t) if sections[t].fence >= sections[i].fence => t,
            _ => i,
        };
        top.push(keep);
    }
    // The section with the highest fence let in before `at` (or at it, with `inclusive`).
    let highest = |at: i64, inclusive: bool| {
        let seen = enters.partition_point(|&e| if inclusive { e <= at } else { e < at });
        (seen > 0).then(|| top[seen - 1])
    };

    let mut accepted = 0u64;
    let mut raw: Firsts<(usize, Option<usize>)> = Firsts::new();
    let mut unsure: Firsts<(usize, Option<usize>)> = Firsts::new();
    let mut stale: Firsts<(usize, usize)> = Firsts::new();
    for (i, s) in sections.iter().enumerate() {
        let at = s.exit_us.unwrap_or(s.enter_us);
        match s.outcome {
            Outcome::Sold if s.fence.is_some() => {
                accepted += 1;
                if let Some(h) = highest(at, false).filter(|&h| sections[h].fence > s.fence) {
                    raw.push(at, (i, Some(h)));
                }
            }
            Outcome::StaleRefused => {
                let winner = highest(at, true)
                    .filter(|&w| w != i && s.fence.is_some() && sections[w].fence > s.fence);
                match winner {
                    Some(w) => stale.push(at, (i, w)),
                    None if history.is_cut("section") => unsure.push(at, (i, None)),
                    None => raw.push(at, (i, None)),
                }
            }
            _ => {}
        }
    }

    let broken = |kind: Kind| {
        move |at: i64, (i, h): (usize, Option<usize>)| {
            let s = &sections[i];
            let (i_en, i_zh) = section("B", s);
            match h {
                Some(h) => {
                    let (h_en, h_zh) = section("A", &sections[h]);
                    Finding {
                        kind: Kind::FenceNotRising,
                        at_us: at,
                        ops: vec![Op::Section(sections[h].clone()), Op::Section(s.clone())],
                        en: format!(
                            "{i_en} wrote {} at {}, accepted, after {h_en} had been let in with a newer fence: the store let a stale write through",
                            value(s.wrote),
                            secs(at, origin)
                        ),
                        zh: format!(
                            "{i_zh}在 {} 写入 {} 并被接受，而 {h_zh}已带着更新的 fence 进入：存储放过了过期的写入",
                            secs(at, origin),
                            value(s.wrote)
                        ),
                    }
                }
                None => Finding {
                    kind,
                    at_us: at,
                    ops: vec![Op::Section(s.clone())],
                    en: format!(
                        "{i_en}'s write was refused as stale at {}, yet no newer fence than {} had been granted",
                        secs(at, origin),
                        fence(s.fence)
                    ),
                    zh: format!(
                        "{i_zh}的写入在 {} 被当作过期拒绝，但此前没有比 {} 更新的 fence",
                        secs(at, origin),
                        fence(s.fence)
                    ),
                },
            }
        }
    };
    let (count, violations) = raw.said(broken(Kind::RefusedWithoutNewer));
    let (unknown_count, mut unknown) = unsure.said(broken(Kind::Hidden));
    for f in &mut unknown {
        f.en += " in the sections kept (the sections are cut: it may be in the part not kept)";
        f.zh += "（在保留的临界区里；记录不完整，它可能在未保留的部分）";
    }
    let stale_count = stale.count;
    let listed = stale.said(|at, (i, w)| {
        let s = &sections[i];
        let (s_en, s_zh) = section("a write", s);
        let (w_en, w_zh) = section("the holder", &sections[w]);
        let lost = fence(sections[w].fence);
        Finding {
            kind: Kind::StaleRefused,
            at_us: at,
            ops: vec![Op::Section(s.clone()), Op::Section(sections[w].clone())],
            en: format!(
                "{s_en} of {} was refused at {}: it lost to fence {lost} ({w_en})",
                value(s.wrote),
                secs(at, origin)
            ),
            zh: format!(
                "{s_zh}要写入的 {} 在 {} 被拒绝：输给了 fence {lost}（{w_zh}）",
                value(s.wrote),
                secs(at, origin)
            ),
        }
    });
    let sentence = if count > 0 {
        (
            format!("{count} writes the store's fence rule does not explain"),
            format!("{count} 次写入无法用存储的 fence 规则解释"),
        )
    } else if accepted == 0 && stale_count == 0 && unknown_count == 0 {
        (
            "no fenced write to check (the tier gives no fence)".to_string(),
            "没有带 fence 的写入可查（该层级不发 fence）".to_string(),
        )
    } else {
        (
            format!(
                "{accepted} accepted writes, none below a fence already let in; {stale_count} stale writes refused, each below a newer fence"
            ),
            format!(
                "{accepted} 次被接受的写入，没有一次低于已进入的 fence；{stale_count} 次过期写入被拒绝，每次都低于更新的 fence"
            ),
        )
    };
    let verdict = Verdict::of(
        (count, violations),
        (unknown_count, unknown),
        listed,
        sentence,
    );
    (verdict, stale_count)
}
