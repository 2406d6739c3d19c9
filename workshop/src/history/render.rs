//! The checker's report as text, in English or Chinese: each verdict, its first violations in
//! words, what is listed, the figures, and where the history is incomplete.

use std::fmt::Write;

use super::check::{CheckReport, Lang, State};

impl CheckReport {
    /// The report as the terminal shows it.
    pub fn text(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let mut out = String::new();
        let chapter = self.chapter.as_deref().unwrap_or("-");
        let _ = writeln!(
            out,
            "{} {} · tier {} · {} {chapter} · {} {} · {} {}",
            if zh { "历史" } else { "history" },
            self.run_id,
            self.tier,
            if zh { "章节" } else { "chapter" },
            if zh { "初始库存" } else { "initial stock" },
            self.initial_stock,
            self.counts.requests + self.counts.sections,
            if zh { "个操作" } else { "operations" },
        );
        for cut in &self.cuts {
            let _ = if zh {
                writeln!(out, "⚠ 历史不完整：{}：{}", cut.what, cut.reason)
            } else {
                writeln!(
                    out,
                    "⚠ the history is incomplete: {}: {}",
                    cut.what, cut.reason
                )
            };
        }
        for (en, zh_name, verdict) in self.verdicts() {
            let mark = match verdict.state {
                State::Holds => "✓",
                State::Unknown => "?",
                State::Violated => "✗",
            };
            let name = if zh { zh_name } else { en };
            let _ = writeln!(out, "{mark} {name}: {}", verdict.words(lang));
            for v in &verdict.violations {
                let _ = writeln!(out, "    - {}", v.words(lang));
            }
            let more = verdict
                .count
                .saturating_sub(verdict.violations.len() as u64);
            if more > 0 {
                let _ = if zh {
                    writeln!(out, "    …另有 {more} 处")
                } else {
                    writeln!(out, "    … and {more} more")
                };
            }
            for u in &verdict.unknown {
                let _ = writeln!(out, "    ? {}", u.words(lang));
            }
            let more = verdict
                .unknown_count
                .saturating_sub(verdict.unknown.len() as u64);
            if more > 0 {
                let _ = if zh {
                    writeln!(out, "    ? …另有 {more} 处无法判定")
                } else {
                    writeln!(out, "    ? … and {more} more undecided")
                };
            }
            for l in &verdict.listed {
                let _ = writeln!(out, "    · {}", l.words(lang));
            }
            let more = verdict
                .listed_count
                .saturating_sub(verdict.listed.len() as u64);
            if more > 0 {
                let _ = if zh {
                    writeln!(out, "    · …另有 {more} 个")
                } else {
                    writeln!(out, "    · … and {more} more listed")
                };
            }
        }
        let c = &self.counts;
        let lost = c
            .lost_updates
            .map_or_else(|| "?".to_string(), |l| l.to_string());
        let _ = if zh {
            writeln!(
                out,
                "数字：重叠 {} · fence 挡住的失效 {} · 超卖 {} · 丢失更新 {lost} · 拒绝的过期写入 {} · 丢失的确认 {} · 不确定 {} 已核对 / {} 未核对 · 未结束的临界区 {}",
                c.overlaps, c.lapses, c.oversold, c.stale_refused, c.acknowledged_lost,
                c.indeterminate_settled, c.indeterminate_unsettled, c.open_sections
            )
        } else {
            writeln!(
                out,
                "figures: overlaps {} · lapses the fence contained {} · oversold {} · lost updates {lost} · stale refused {} · acknowledged lost {} · indeterminate {} settled / {} unsettled · open sections {}",
                c.overlaps, c.lapses, c.oversold, c.stale_refused, c.acknowledged_lost,
                c.indeterminate_settled, c.indeterminate_unsettled, c.open_sections
            )
        };
        let _ = match (self.state, zh) {
            (State::Holds, false) => writeln!(out, "all four hold"),
            (State::Holds, true) => writeln!(out, "四项全部成立"),
            (State::Unknown, false) => {
                writeln!(out, "UNKNOWN: nothing violated, something undecided")
            }
            (State::Unknown, true) => writeln!(out, "无法判定：没有违反，但有未决之处"),
            (State::Violated, false) => writeln!(out, "VIOLATED"),
            (State::Violated, true) => writeln!(out, "有违反"),
        };
        out
    }
}
