//! Fencing: the fences of accepted writes (sections that sold, with a fence) rise strictly in
//! commit (exit) order; a write the fence refused is named with the fence it lost to.

use super::findings::{Finding, Firsts, Kind, Op, Verdict};
use super::format::Outcome;
use super::parse::History;
use super::words::{secs, section, value};

/// The verdict and the refused stale writes.
pub fn check(history: &History, origin: i64) -> (Verdict, u64) {
    let sections = &history.sections;
    let mut accepted: Vec<usize> = (0..sections.len())
        .filter(|&i| sections[i].outcome == Outcome::Sold && sections[i].fence.is_some())
        .collect();
    accepted.sort_unstable_by_key(|&i| (sections[i].exit_us.unwrap_or(i64::MAX), i));
    let mut raw: Firsts<(usize, usize)> = Firsts::new();
    let mut highest: Option<usize> = None;
    for &i in &accepted {
        let fence = sections[i].fence;
        match highest {
            Some(h) if fence <= sections[h].fence => {
                raw.push(sections[i].exit_us.unwrap_or(sections[i].enter_us), (h, i));
            }
            _ => highest = Some(i),
        }
    }

    // The fence a refused write lost to: the highest fence any holder had shown (entered
    // with) before the refusal.
    let mut fenced: Vec<usize> = (0..sections.len())
        .filter(|&i| sections[i].fence.is_some())
        .collect();
    fenced.sort_unstable_by_key(|&i| (sections[i].enter_us, i));
    let enters: Vec<i64> = fenced.iter().map(|&i| sections[i].enter_us).collect();
    let mut top: Vec<usize> = Vec::with_capacity(fenced.len());
    for &i in &fenced {
        let keep = match top.last() {
            Some(&t) if sections[t].fence >= sections[i].fence => t,
            _ => i,
        };
        top.push(keep);
    }
    let mut stale: Firsts<(usize, Option<usize>)> = Firsts::new();
    for (i, s) in sections.iter().enumerate() {
        if s.outcome != Outcome::StaleRefused {
            continue;
        }
        let at = s.exit_us.unwrap_or(s.enter_us);
        let seen = enters.partition_point(|&e| e <= at);
        let winner = (seen > 0)
            .then(|| top[seen - 1])
            .filter(|&w| w != i && sections[w].fence > s.fence);
        stale.push(at, (i, winner));
    }

    let count = raw.count;
    let violations = raw
        .into_firsts()
        .into_iter()
        .map(|(at, (h, i))| {
            let ((h_en, h_zh), (i_en, i_zh)) =
                (section("A", &sections[h]), section("B", &sections[i]));
            Finding {
                kind: Kind::FenceNotRising,
                at_us: at,
                ops: vec![Op::Section(sections[h].clone()), Op::Section(sections[i].clone())],
                en: format!(
                    "{i_en} wrote {} at {} after {h_en} had written with a fence as high or higher: the fences went down",
                    value(sections[i].wrote),
                    secs(at, origin)
                ),
                zh: format!(
                    "{i_zh}在 {} 写入 {}，而 {h_zh}已用同样高或更高的 fence 写过：fence 下降了",
                    secs(at, origin),
                    value(sections[i].wrote)
                ),
            }
        })
        .collect();
    let stale_count = stale.count;
    let listed = stale
        .into_firsts()
        .into_iter()
        .map(|(at, (i, winner))| {
            let s = &sections[i];
            let (s_en, s_zh) = section("a write", s);
            let (lost_en, lost_zh) = match winner {
                Some(w) => {
                    let (w_en, w_zh) = section("the holder", &sections[w]);
                    (
                        format!(
                            "it lost to fence {} ({w_en})",
                            value(sections[w].fence.map(|f| f as i64))
                        ),
                        format!(
                            "输给了 fence {}（{w_zh}）",
                            value(sections[w].fence.map(|f| f as i64))
                        ),
                    )
                }
                None => (
                    "it lost to a newer fence".into(),
                    "输给了更新的 fence".into(),
                ),
            };
            let mut ops = vec![Op::Section(s.clone())];
            if let Some(w) = winner {
                ops.push(Op::Section(sections[w].clone()));
            }
            Finding {
                kind: Kind::StaleRefused,
                at_us: at,
                ops,
                en: format!(
                    "{s_en} of {} was refused at {}: {lost_en}",
                    value(s.wrote),
                    secs(at, origin)
                ),
                zh: format!(
                    "{s_zh}要写入的 {} 在 {} 被拒绝：{lost_zh}",
                    value(s.wrote),
                    secs(at, origin)
                ),
            }
        })
        .collect();
    let holds = count == 0;
    let (en, zh) = if accepted.is_empty() {
        (
            "no fenced write to check (the tier gives no fence)".to_string(),
            "没有带 fence 的写入可查（该层级不发 fence）".to_string(),
        )
    } else if holds {
        (
            format!(
                "{} accepted writes, their fences rising in commit order; {stale_count} stale writes refused",
                accepted.len()
            ),
            format!(
                "{} 次被接受的写入，fence 按提交顺序递增；{stale_count} 次过期写入被拒绝",
                accepted.len()
            ),
        )
    } else {
        (
            format!("{count} accepted writes whose fence did not rise"),
            format!("{count} 次被接受的写入 fence 没有递增"),
        )
    };
    let verdict = Verdict {
        holds,
        count,
        violations,
        listed_count: stale_count,
        listed,
        en,
        zh,
    };
    (verdict, stale_count)
}
