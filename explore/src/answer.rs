//! The search's answer: "broken at depth N" with each broken property's shortest schedule,
//! "no break within these bounds (K states)", or "bound reached" when the search was cut
//! before it could say; in words or as JSON, with the exit status `loadtest explore` ends
//! with (the checker's: 0 holds, 1 broken, 3 undecided).

use oversell_api::grade::Outcome;
use serde::Serialize;

use crate::bounds::Bounds;
use crate::judge::Property;
use crate::said::Lang;
use crate::search::{Ended, Found, Searched};

/// The exit statuses of `loadtest explore`.
pub const NO_BREAK: u8 = 0;
pub const BROKEN: u8 = 1;
pub const BAD_INPUT: u8 = 2;
pub const BOUND_REACHED: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A property with an outcome is broken.
    Broken,
    /// Every state within the bounds was seen and none breaks one.
    NoBreak,
    /// None found, but a bound cut the search before it saw every state.
    BoundReached,
}

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub lock: String,
    pub verdict: Verdict,
    /// The grader's outcomes the breaks are (`overlap`, `foreign-release`, `deadlock`,
    /// `failed`), as a rung's row of the tier table lists them.
    pub outcomes: Vec<Outcome>,
    /// The least depth of a break, when broken.
    pub depth: Option<usize>,
    pub found: Vec<Found>,
    pub states: usize,
    pub ended: Ended,
    pub seconds: f64,
    pub states_per_s: u64,
    pub bounds: Bounds,
}

/// The outcomes a break can be, in the order the answer lists them.
const OUTCOMES: [Outcome; 4] = [
    Outcome::Overlap,
    Outcome::ForeignRelease,
    Outcome::Deadlock,
    Outcome::Failed,
];

impl Answer {
    pub fn new(lock: &str, bounds: &Bounds, searched: Searched) -> Answer {
        let breaks: Vec<&Found> = searched
            .found
            .iter()
            .filter(|f| f.property.outcome().is_some())
            .collect();
        let outcomes = OUTCOMES
            .into_iter()
            .filter(|o| breaks.iter().any(|f| f.property.outcome() == Some(*o)))
            .collect();
        let depth = breaks.iter().map(|f| f.depth).min();
        let verdict = if depth.is_some() {
            Verdict::Broken
        } else if matches!(searched.ended, Ended::Exhausted | Ended::AllBroken) {
            Verdict::NoBreak
        } else {
            Verdict::BoundReached
        };
        let seconds = searched.elapsed.as_secs_f64();
        Answer {
            lock: lock.to_owned(),
            verdict,
            outcomes,
            depth,
            states: searched.states,
            ended: searched.ended,
            seconds,
            states_per_s: (searched.states as f64 / seconds.max(1e-6)) as u64,
            found: searched.found,
            bounds: bounds.clone(),
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self.verdict {
            Verdict::Broken => BROKEN,
            Verdict::NoBreak => NO_BREAK,
            Verdict::BoundReached => BOUND_REACHED,
        }
    }

    pub fn found(&self, property: Property) -> Option<&Found> {
        self.found.iter().find(|f| f.property == property)
    }

    /// The answer in words, in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let mut out = match self.verdict {
            Verdict::Broken => {
                let outcomes: Vec<&str> = self.outcomes.iter().map(|o| o.id()).collect();
                let (depth, outcomes) = (self.depth.unwrap_or(0), outcomes.join(", "));
                match zh {
                    false => format!("{}: broken at depth {depth} ({outcomes})\n", self.lock),
                    true => format!("{}：在第 {depth} 步被攻破（{outcomes}）\n", self.lock),
                }
            }
            Verdict::NoBreak => match zh {
                false => format!(
                    "{}: no break within these bounds ({} states)\n",
                    self.lock, self.states
                ),
                true => format!(
                    "{}：在这些界限内没有被攻破（{} 个状态）\n",
                    self.lock, self.states
                ),
            },
            Verdict::BoundReached => {
                let (bound, bound_zh) = match self.ended {
                    Ended::StateBound => ("state bound", "状态上限"),
                    Ended::TimeBound => ("time budget", "时间预算"),
                    _ => ("depth bound", "深度上限"),
                };
                match zh {
                    false => format!(
                        "{}: no break found, but the search was cut at its {bound} ({} states): a bound reached\n",
                        self.lock,
                        self.states
                    ),
                    true => format!(
                        "{}：没有找到攻破，但搜索在{bound_zh}处被截断（{} 个状态）：到达界限\n",
                        self.lock,
                        self.states
                    ),
                }
            }
        };
        out += &match zh {
            false => format!("  bounds: {}\n", self.bounds.words(lang)),
            true => format!("  界限：{}\n", self.bounds.words(lang)),
        };
        for found in &self.found {
            let words = found.property.words(lang);
            let what = match found.property.outcome() {
                Some(outcome) if zh => format!("{words}（{}）", outcome.id()),
                Some(outcome) => format!("{words} ({})", outcome.id()),
                None if self.found(Property::SoldTwice).is_some() => words.to_owned(),
                None if zh => format!("{words}，但没有重复卖出：库存拒绝了过期持有者的写入，算作守住"),
                None => format!(
                    "{words}, and nothing sold twice: the stock refused the stale holder, which is held"
                ),
            };
            out += &match zh {
                false => format!("\n  {what}, at depth {}:\n", found.depth),
                true => format!("\n  {what}，第 {} 步：\n", found.depth),
            };
            for (i, step) in found.schedule.iter().enumerate() {
                let note = if zh { &step.note_zh } else { &step.note };
                out += &format!("    {:>2}. {note}\n", i + 1);
            }
        }
        let missing: Vec<&str> = Property::ALL
            .iter()
            // A failing step is said when it happens, not listed as a property kept.
            .filter(|p| p.outcome().is_some() && **p != Property::ScriptFailed)
            .filter(|p| self.found(**p).is_none())
            .map(|p| p.id())
            .collect();
        if !missing.is_empty() {
            let bound = self.verdict == Verdict::BoundReached;
            let missing = missing.join(", ");
            out += &match (zh, bound) {
                (false, true) => format!("\n  not broken before the bound: {missing}\n"),
                (false, false) => format!("\n  not broken within these bounds: {missing}\n"),
                (true, true) => format!("\n  到达界限前没有被攻破：{missing}\n"),
                (true, false) => format!("\n  在这些界限内没有被攻破：{missing}\n"),
            };
        }
        out += &match zh {
            false => format!(
                "\n  {} states explored in {:.2} s ({} states/s)\n",
                self.states, self.seconds, self.states_per_s
            ),
            true => format!(
                "\n  共探索 {} 个状态，用时 {:.2} 秒（每秒 {} 个状态）\n",
                self.states, self.seconds, self.states_per_s
            ),
        };
        out
    }
}
