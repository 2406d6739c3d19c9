//! The search's answer: "broken at depth N" with each broken property's shortest schedule,
//! "no break within these bounds (K states)", or "bound reached" when the search was cut
//! before it could say; in words or as JSON, with the exit status `loadtest explore` ends
//! with (the checker's: 0 holds, 1 broken, 3 undecided).

use oversell_api::grade::Outcome;
use serde::Serialize;

use crate::bounds::Bounds;
use crate::judge::Property;
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

    /// The answer in words.
    pub fn text(&self) -> String {
        let mut out = match self.verdict {
            Verdict::Broken => {
                let outcomes: Vec<&str> = self.outcomes.iter().map(|o| o.id()).collect();
                format!(
                    "{}: broken at depth {} ({})\n",
                    self.lock,
                    self.depth.unwrap_or(0),
                    outcomes.join(", ")
                )
            }
            Verdict::NoBreak => format!(
                "{}: no break within these bounds ({} states)\n",
                self.lock, self.states
            ),
            Verdict::BoundReached => format!(
                "{}: no break found, but the search was cut at its {} ({} states): a bound reached\n",
                self.lock,
                if self.ended == Ended::StateBound { "state bound" } else { "depth bound" },
                self.states
            ),
        };
        out += &format!("  bounds: {}\n", self.bounds.words());
        for found in &self.found {
            let what = match found.property.outcome() {
                Some(outcome) => format!("{} ({})", found.property.words(), outcome.id()),
                None if self.found(Property::SoldTwice).is_none() => format!(
                    "{}, and nothing sold twice: the stock refused the stale holder, which is held",
                    found.property.words()
                ),
                None => found.property.words().to_owned(),
            };
            out += &format!("\n  {what}, at depth {}:\n", found.depth);
            for (i, step) in found.schedule.iter().enumerate() {
                out += &format!("    {:>2}. {}\n", i + 1, step.note);
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
            let within = if self.verdict == Verdict::BoundReached {
                "before the bound"
            } else {
                "within these bounds"
            };
            out += &format!("\n  not broken {within}: {}\n", missing.join(", "));
        }
        out += &format!(
            "\n  {} states explored in {:.2} s ({} states/s)\n",
            self.states, self.seconds, self.states_per_s
        );
        out
    }
}
