//! What each chapter asks the class before it runs: a question, in English and Chinese, and
//! three or four options about what the ground truth will show. No option is stored as the
//! answer: each carries a rule on the run's figures ([`super::ScenarioRun::figures`]), and the
//! option a run landed in is the one whose rule holds on what that run measured. The options
//! of a question do not overlap, so at most one holds; a run that shows something none of them
//! names lands in none, and the reveal says so instead of pretending.
//!
//! The questions live one file per chapter group, as the chapters do (`catalog/`); this file
//! holds the types, the lookup and the helpers the rules are written with.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Serialize;

mod beyond;
mod ladder;

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
}

/// One option of a question.
#[derive(Debug, Serialize)]
pub struct Choice {
    pub en: &'static str,
    pub zh: &'static str,
    /// Whether a run's figures land in this option. The options of a question do not
    /// overlap: at most one holds for any figures. Not serialized: the class sees the options,
    /// and learns which one the run chose from the run.
    #[serde(skip)]
    pub holds: fn(&Figures) -> bool,
}

impl Question {
    /// The option this run's figures landed in, by the question's own rule; `None` when the
    /// run landed in no option.
    pub fn landed(&self, figures: &Figures) -> Option<usize> {
        self.options
            .iter()
            .position(|choice| (choice.holds)(figures))
    }
}

/// Every question, in the order of the chapter groups.
static QUESTIONS: LazyLock<Vec<&'static Question>> = LazyLock::new(|| {
    [ladder::QUESTIONS, beyond::QUESTIONS]
        .into_iter()
        .flatten()
        .collect()
});

/// The question of a chapter; every chapter of [`super::CATALOG`] has one.
pub fn question(chapter: &str) -> Option<&'static Question> {
    QUESTIONS.iter().copied().find(|q| q.chapter == chapter)
}

/// Nothing sold beyond the stock.
fn oversold_none(figures: &Figures) -> bool {
    fig(figures, "oversold") == 0.0
}

/// Something sold beyond the stock, at most a tenth of it.
fn oversold_few(figures: &Figures) -> bool {
    let oversold = fig(figures, "oversold");
    oversold > 0.0 && oversold <= fig(figures, "initial_stock") / 10.0
}

/// More than a tenth of the stock sold beyond it.
fn oversold_many(figures: &Figures) -> bool {
    fig(figures, "oversold") > fig(figures, "initial_stock") / 10.0
}

/// A figure of the run; NaN when the run did not measure it, so that every comparison with it
/// is false and a rule on a figure the run lacks holds for no option.
fn fig(figures: &Figures, name: &str) -> f64 {
    figures.get(name).copied().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(pairs: &[(&str, f64)]) -> Figures {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn a_run_of_none_race_that_oversold_much_of_the_stock_lands_in_many() {
        let q = question("none-race").unwrap();
        let run = figures(&[
            ("oversold", 180.0),
            ("initial_stock", 100.0),
            ("lost_updates", 150.0),
        ]);
        assert_eq!(q.landed(&run), Some(2));
    }

    #[test]
    fn a_question_serializes_without_its_rules() {
        let json = serde_json::to_value(question("none-race").unwrap()).unwrap();
        assert_eq!(json["chapter"], "none-race");
        let first = json["options"][0].as_object().unwrap();
        let keys: Vec<&str> = first.keys().map(String::as_str).collect();
        assert_eq!(keys, ["en", "zh"]);
    }
}
