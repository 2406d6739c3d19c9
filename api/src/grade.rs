//! The lab grader's vocabulary: what one attack on a lock found. The grader itself (its
//! attacks, run as scenarios) is `loadtest`'s `lab`; the outcomes each rung of the ladder gets
//! are facts of that rung, kept in its row of the tier table (`tier::Facts::outcomes`).

use serde::Serialize;

/// What one attack found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every figure exact: the lock held.
    Held,
    /// Two holders at once: overlapping critical sections, lost updates or oversell.
    Overlap,
    /// A release deleted a lock another holder had taken (and two holders followed).
    ForeignRelease,
    /// The lock outlived its holder: sales stalled until a reset.
    Deadlock,
    /// The attack needs a step the lock does not have (a gap between two of them).
    NotApplicable,
    /// The lock's own scripts failed (an error, a refused command, a runaway): see the
    /// message.
    Failed,
}

impl Outcome {
    pub fn id(self) -> &'static str {
        match self {
            Outcome::Held => "held",
            Outcome::Overlap => "overlap",
            Outcome::ForeignRelease => "foreign-release",
            Outcome::Deadlock => "deadlock",
            Outcome::NotApplicable => "not-applicable",
            Outcome::Failed => "failed",
        }
    }
}

/// The attacks that tell one rung from another, in the grader's order: `contention`,
/// `holder-dies`, `holder-dies-between-steps`, `slow-work`, `release-gap`, `holder-pause`
/// (the `failover`, which needs a fleet of its own, tells none apart and comes after them).
pub const RUNG_ATTACKS: usize = 6;

/// A rung's outcome per telling attack, in the order of [`RUNG_ATTACKS`].
pub type RungOutcomes = [Outcome; RUNG_ATTACKS];
