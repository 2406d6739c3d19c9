//! The lab grader's rung-telling attacks (`workshop/src/lab/`), each as a fault budget for
//! the search, and each judged as the grader judges its run: so a lock gets a card from the
//! model that can be set beside the fleet's, and for every rung of the ladder the two must
//! agree with its row of the tier table.
//!
//! | attack | the search's budget |
//! |---|---|
//! | `contention` | no fault; time passes only while nobody live is in the middle of the lock |
//! | `holder-dies` | one crash of a holder, inside its section |
//! | `holder-dies-between-steps` | one crash between acquire steps 1 and 2 |
//! | `slow-work` | no fault; time may also pass during the business work |
//! | `release-gap` | no fault; time may also pass between release steps 1 and 2 |
//! | `holder-pause` | one pause (the holder and its renewals stop while time runs) |
//!
//! An attack needing a gap the lock does not have is `not-applicable`, as on the fleet.

use oversell_api::grade::{Outcome, RungOutcomes, RUNG_ATTACKS};
use serde::Serialize;

use crate::answer::Answer;
use crate::bounds::{Bounds, CrashAt, TimePasses};
use crate::judge::Property;
use crate::lock::LockSource;
use crate::world::FaultKind;
use crate::Refused;

/// How an attack's run is read (`lab::Judge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judge {
    /// Deadlock, or held.
    Deadlock,
    /// A foreign release (when it counts), two holders whose harm the stock shows, or held.
    Figures { foreign: bool },
}

#[derive(Debug, Clone, Copy)]
pub struct Attack {
    pub id: &'static str,
    faults: &'static [FaultKind],
    time: TimePasses,
    crash_at: CrashAt,
    judge: Judge,
}

/// The attacks, in the grader's order (`grade::RUNG_ATTACKS`).
pub const ATTACKS: [Attack; RUNG_ATTACKS] = [
    Attack {
        id: "contention",
        faults: &[],
        time: TimePasses::Calmly,
        crash_at: CrashAt::Anywhere,
        judge: Judge::Figures { foreign: false },
    },
    Attack {
        id: "holder-dies",
        faults: &[FaultKind::Crash],
        time: TimePasses::Calmly,
        crash_at: CrashAt::InSection,
        judge: Judge::Deadlock,
    },
    Attack {
        id: "holder-dies-between-steps",
        faults: &[FaultKind::Crash],
        time: TimePasses::Calmly,
        crash_at: CrashAt::BetweenAcquireSteps,
        judge: Judge::Deadlock,
    },
    Attack {
        id: "slow-work",
        faults: &[],
        time: TimePasses::InBusiness,
        crash_at: CrashAt::Anywhere,
        judge: Judge::Figures { foreign: true },
    },
    Attack {
        id: "release-gap",
        faults: &[],
        time: TimePasses::InReleaseGap,
        crash_at: CrashAt::Anywhere,
        judge: Judge::Figures { foreign: true },
    },
    Attack {
        id: "holder-pause",
        faults: &[FaultKind::Pause],
        time: TimePasses::Calmly,
        crash_at: CrashAt::Anywhere,
        judge: Judge::Figures { foreign: false },
    },
];

impl Attack {
    /// Whether the lock has the gap this attack needs.
    fn applies(&self, lock: &LockSource) -> bool {
        match self.id {
            "holder-dies-between-steps" => lock.acquire.len() >= 2,
            "release-gap" => lock.release.len() >= 2,
            _ => true,
        }
    }

    /// The search's bounds for this attack, from `base` (its buyers, lease, limits).
    pub fn bounds(&self, base: &Bounds) -> Bounds {
        Bounds {
            budget: u32::from(!self.faults.is_empty()),
            faults: self.faults.to_vec(),
            time: self.time,
            crash_at: self.crash_at,
            ..base.clone()
        }
    }

    /// The outcome the grader reads off a run that found what `answer` found.
    fn judge(&self, answer: &Answer) -> Outcome {
        let found = |p| answer.found(p).is_some();
        match self.judge {
            Judge::Deadlock if found(Property::Deadlock) => Outcome::Deadlock,
            Judge::Figures { foreign: true } if found(Property::ForeignRelease) => {
                Outcome::ForeignRelease
            }
            Judge::Figures { .. } if found(Property::SoldTwice) => Outcome::Overlap,
            _ if found(Property::ScriptFailed) => Outcome::Failed,
            _ => Outcome::Held,
        }
    }
}

/// One attack's result on the model.
#[derive(Debug, Clone, Serialize)]
pub struct Graded {
    pub attack: &'static str,
    pub outcome: Outcome,
    /// The search behind it; `None` when the attack does not apply.
    #[serde(skip)]
    pub answer: Option<Answer>,
}

/// Every attack on `lock`, searched with `base`'s buyers and limits.
pub fn grade(lock: &LockSource, base: &Bounds) -> Result<Vec<Graded>, Refused> {
    ATTACKS
        .iter()
        .map(|attack| {
            if !attack.applies(lock) {
                return Ok(Graded {
                    attack: attack.id,
                    outcome: Outcome::NotApplicable,
                    answer: None,
                });
            }
            let answer = crate::explore(lock, attack.bounds(base))?;
            Ok(Graded {
                attack: attack.id,
                outcome: attack.judge(&answer),
                answer: Some(answer),
            })
        })
        .collect()
}

/// The outcomes of [`grade`], in the order of a rung's row.
pub fn card(graded: &[Graded]) -> RungOutcomes {
    let mut card = [Outcome::Held; RUNG_ATTACKS];
    for (slot, g) in card.iter_mut().zip(graded) {
        *slot = g.outcome;
    }
    card
}

/// The search's shortest break of a lock every attack left standing: "a schedule none of the
/// attacks made". `None` when an attack broke it (the card already says so) or the search,
/// every schedule within `search`'s bounds, did not either.
pub fn beyond<'a>(graded: &[Graded], search: &'a Answer) -> Option<&'a crate::search::Found> {
    let attacks_held = graded
        .iter()
        .all(|g| matches!(g.outcome, Outcome::Held | Outcome::NotApplicable));
    if !attacks_held {
        return None;
    }
    search
        .found
        .iter()
        .filter(|f| f.property.outcome().is_some())
        .min_by_key(|f| f.depth)
}

/// What [`beyond`] found, in words: the plain sentence a card shows under its attacks.
pub fn beyond_words(found: &crate::search::Found, lang: crate::said::Lang) -> String {
    let what = found.property.words(lang);
    match lang {
        crate::said::Lang::En => format!(
            "every attack held, but the search breaks it: {what}, at depth {} — a schedule none \
             of the attacks made",
            found.depth
        ),
        crate::said::Lang::Zh => format!(
            "每一种攻击都守住了，但穷举搜索攻破了它：{what}，第 {} 步——这是任何一种攻击都没有构造出的调度",
            found.depth
        ),
    }
}
