//! What each chapter asks the class before it runs: a question, in English and Chinese, and
//! three or four options about what the ground truth will show. No option is stored as the
//! answer: each carries a rule on the run's figures ([`super::ScenarioRun::figures`]), and the
//! option a run landed in is the one whose rule holds on what that run measured. The options
//! of a question do not overlap, and between them they leave no figures out: a run lands in
//! exactly one, whether or not it showed what its chapter expects (the run's own `passed` says
//! that). Only a run that lacks a figure the rules read lands in none, and the reveal then says
//! so instead of pretending.
//!
//! The questions live one file per chapter group, as the chapters do (`catalog/`); this file
//! holds the types, the lookup and the helpers the rules are written with.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Serialize;

mod beyond;
mod database;
mod field;
mod ladder;
mod partitions;
mod shared;
#[cfg(test)]
mod tests;
mod zookeeper;

/// A run's figures by name, as [`super::ScenarioRun::figures`] holds them.
pub type Figures = BTreeMap<String, f64>;

/// What a chapter asks the class before it runs.
#[derive(Debug, Serialize)]
pub struct Question {
    /// The scenario id.
    pub chapter: &'static str,
    pub en: &'static str,
    pub zh: &'static str,
    /// Three or four.
    pub options: &'static [Choice],
    /// The figures the options' rules read (the reveal's figures to show first; the tests
    /// build figures from them). Not serialized: the options are what the class is asked.
    #[serde(skip)]
    pub reads: &'static [&'static str],
}

/// One option of a question.
#[derive(Debug, Serialize)]
pub struct Choice {
    pub en: &'static str,
    pub zh: &'static str,
    /// Whether a run's figures land in this option. The options of a question do not
    /// overlap (at most one holds for any figures) and leave none out (one holds for any
    /// figures that name what the rules read). Not serialized: the class sees the options, and
    /// learns which one the run chose from the run.
    #[serde(skip)]
    pub holds: fn(&Figures) -> bool,
}

impl Question {
    /// The option this run's figures landed in, by the question's own rule; `None` when the
    /// run landed in no option (it lacks a figure the rules read).
    pub fn landed(&self, figures: &Figures) -> Option<usize> {
        self.options
            .iter()
            .position(|choice| (choice.holds)(figures))
    }
}

/// A set of options and the figures their rules read, as several chapters share it.
struct Family {
    reads: &'static [&'static str],
    options: &'static [Choice],
}

/// The question of `chapter`, asked in both languages, with `family`'s options.
const fn ask(
    chapter: &'static str,
    en: &'static str,
    zh: &'static str,
    family: &Family,
) -> Question {
    Question {
        chapter,
        en,
        zh,
        options: family.options,
        reads: family.reads,
    }
}

/// Every question, in the order of the chapter groups.
static QUESTIONS: LazyLock<Vec<&'static Question>> = LazyLock::new(|| {
    [
        ladder::QUESTIONS,
        beyond::QUESTIONS,
        zookeeper::QUESTIONS,
        database::QUESTIONS,
        partitions::QUESTIONS,
        field::QUESTIONS,
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// The question of a chapter; every chapter of [`super::CATALOG`] has one.
pub fn question(chapter: &str) -> Option<&'static Question> {
    QUESTIONS.iter().copied().find(|q| q.chapter == chapter)
}

/// A figure of the run; NaN when the run did not measure it, so that every comparison with it
/// is false and a rule on a figure the run lacks holds for no option.
fn fig(figures: &Figures, name: &str) -> f64 {
    figures.get(name).copied().unwrap_or(f64::NAN)
}
