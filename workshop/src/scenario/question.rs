//! What the class is asked before a chapter runs: a question, in English and Chinese, and
//! three or four options about what the ground truth will show. No option is stored as the
//! answer: each carries a rule on the run's figures ([`super::ScenarioRun::figures`]), written
//! as words (`oversold > initial_stock / 10 and …`, see [`rule`]) that are both what the run
//! is judged by and what `loadtest questions` prints, and the option a run landed in is the one
//! whose rule holds on what that run measured. The options of a question do not overlap, and
//! between them they leave no figures out: a run lands in exactly one, whether or not it
//! showed what its chapter expects (the run's own `passed` says that). Only a run that lacks
//! a figure the rules read lands in none, and the reveal then says so instead of pretending.
//!
//! Every question is held to `question/RUBRIC.md`: one concept; each option a belief with
//! its sources (an article's line, `002:644`, or a named belief held in the field); a stem that
//! gives the setup and the facts the answer needs, not the mechanism; option words that say
//! the numbers their rule compares with. The tests check what of that can be checked.
//!
//! A chapter's own question has the chapter's id; a question that puts an article's claim on
//! trial (`claim`) has an id of its own, is answered by an existing chapter's run, and is
//! asked *instead of* that chapter's question (`alternative_to`), never as a second vote on
//! the same run. The questions live one file per chapter group, as the chapters do
//! (`catalog/`), the claims in files of their own; this file holds the types, the lookup and
//! the deck's order.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Serialize;

mod beyond;
mod claims;
mod claims_confirmed;
mod claims_unasked;
mod database;
mod field;
mod ladder;
mod partitions;
pub mod rule;
mod shared;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_balance;
#[cfg(test)]
mod tests_claims;
#[cfg(test)]
mod tests_glossary;
#[cfg(test)]
mod tests_rubric;
mod trackers;
mod zookeeper;

/// A run's figures by name, as [`super::ScenarioRun::figures`] holds them.
pub type Figures = BTreeMap<String, f64>;

/// What the class is asked before a chapter runs.
#[derive(Debug, Serialize)]
pub struct Question {
    /// The question's own id: the chapter's id for the chapter's own question, a name of its
    /// own (`claim-…`) for one that puts an article's claim on trial. Not serialized: the
    /// phones and the projector show a neutral label while the class votes.
    #[serde(skip)]
    pub id: &'static str,
    /// The scenario whose run answers it.
    pub chapter: &'static str,
    pub en: &'static str,
    pub zh: &'static str,
    /// Three or four.
    pub options: &'static [Choice],
    /// The figures the options' rules read, the deciding ones first (the reveal's figures to
    /// show first; the tests build figures from them). Not serialized: the options are what
    /// the class is asked.
    #[serde(skip)]
    pub reads: &'static [&'static str],
    /// The article line whose claim the question puts on trial (`002:644`); the reveal cites
    /// it. Not serialized while the class votes.
    #[serde(skip)]
    pub claim: Option<&'static str>,
    /// The option a class that believes the claim picks (by its place as shown): the run
    /// confirms the claim when it lands there and refutes it anywhere else. The deck puts
    /// claims of both kinds to the class (`question/tests_claims.rs`): were the articles
    /// always wrong, a class would learn to vote against them, not to read them.
    #[serde(skip)]
    pub article_says: Option<usize>,
    /// The chapter question this one is asked *instead of*: a claim is answered by the run of
    /// a chapter that has a question of its own, so asked after that question its answer is
    /// already on screen, and asked before it, it gives that question's answer away. The class
    /// is asked one of the two on a run: the claim when it has read the article, the chapter's
    /// own question otherwise. `None` for a chapter's own question. Not serialized while the
    /// class votes; `GET /admin/class/deck` lists it for the presenter.
    #[serde(skip)]
    pub alternative_to: Option<&'static str>,
    /// The id of an isomorphic question: the same concept on another surface, so the results
    /// can say whether a class that got one right got the other.
    #[serde(skip)]
    pub pair: Option<&'static str>,
}

/// One option of a question.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Choice {
    pub en: &'static str,
    pub zh: &'static str,
    /// Where the belief this option states is held: article lines (`002:644`, `000:423-424`)
    /// or `belief: <the belief> — <where it is held>`. Not serialized: the class sees the
    /// options, not whose belief each is.
    #[serde(skip)]
    pub sources: &'static [&'static str],
    /// Whether a run's figures land in this option, in words ([`rule`]). The options of a
    /// question do not overlap (at most one holds for any figures) and leave none out (one
    /// holds for any figures that name what the rules read). Not serialized: the class learns
    /// which one the run chose from the run.
    #[serde(skip)]
    pub rule: &'static str,
}

impl Choice {
    /// Whether this run's figures land in this option.
    pub fn holds(&self, figures: &Figures) -> bool {
        rule::holds(self.rule, figures)
    }
}

impl Question {
    /// The option this run's figures landed in, by the question's own rule; `None` when the
    /// run landed in no option (it lacks a figure the rules read).
    pub fn landed(&self, figures: &Figures) -> Option<usize> {
        self.options.iter().position(|choice| choice.holds(figures))
    }

    /// The question with an article's claim put on trial: the line it cites, and the option
    /// (by its place as shown) that the claim predicts. A claim is asked instead of the
    /// question of the chapter whose run answers it ([`Question::alternative_to`]).
    const fn claims(self, line: &'static str, says: usize) -> Self {
        assert!(
            says < self.options.len(),
            "the claim predicts one of the options"
        );
        Question {
            claim: Some(line),
            article_says: Some(says),
            alternative_to: Some(self.chapter),
            ..self
        }
    }

    /// The question marked as isomorphic to the question `id`.
    const fn paired(self, id: &'static str) -> Self {
        Question {
            pair: Some(id),
            ..self
        }
    }
}

/// A set of options and the figures their rules read, as one or several chapters ask it.
struct Family {
    reads: &'static [&'static str],
    options: &'static [Choice],
}

impl Family {
    /// The family's options shown in another order, `order[i]` being the option shown
    /// `i`-th. The rules go with their options, so a run lands in the same belief under
    /// another letter: this is how the right answers are spread over the letters
    /// (`tests_balance.rs`) without touching what a run measures. An order that is not a
    /// permutation of the options fails to compile.
    const fn reordered<const N: usize>(&self, order: [usize; N]) -> [Choice; N] {
        assert!(N == self.options.len(), "an order names every option once");
        let mut shown = [self.options[0]; N];
        let mut used = [false; N];
        let mut i = 0;
        while i < N {
            assert!(!used[order[i]], "an order names every option once");
            used[order[i]] = true;
            shown[i] = self.options[order[i]];
            i += 1;
        }
        shown
    }
}

/// The question of `chapter`, asked in both languages, with `family`'s options.
const fn ask(
    chapter: &'static str,
    en: &'static str,
    zh: &'static str,
    family: &Family,
) -> Question {
    Question {
        id: chapter,
        chapter,
        en,
        zh,
        options: family.options,
        reads: family.reads,
        claim: None,
        article_says: None,
        alternative_to: None,
        pair: None,
    }
}

/// A question of its own id, answered by `chapter`'s run.
const fn ask_as(
    id: &'static str,
    chapter: &'static str,
    en: &'static str,
    zh: &'static str,
    family: &Family,
) -> Question {
    Question {
        id,
        ..ask(chapter, en, zh, family)
    }
}

/// Every question, by group, as written.
fn written() -> impl Iterator<Item = &'static Question> {
    [
        ladder::QUESTIONS,
        beyond::QUESTIONS,
        zookeeper::QUESTIONS,
        database::QUESTIONS,
        partitions::QUESTIONS,
        field::QUESTIONS,
        trackers::QUESTIONS,
        claims::QUESTIONS,
        claims::MORE,
        claims_unasked::QUESTIONS,
        claims_confirmed::QUESTIONS,
    ]
    .into_iter()
    .flatten()
}

/// The deck in course order: the chapters in the catalog's order, and at each chapter the
/// articles' claims its run answers *before* the chapter's own question. Each claim is an
/// alternative to that question ([`Question::alternative_to`]), not a second vote on the same
/// run: placed after it, a claim would be asked with its answer already on screen.
static DECK: LazyLock<Vec<&'static Question>> = LazyLock::new(|| {
    let mut deck: Vec<&'static Question> = written().collect();
    let place = |q: &Question| {
        let at = super::CATALOG.iter().position(|s| s.id == q.chapter);
        (at.unwrap_or(usize::MAX), q.id == q.chapter)
    };
    deck.sort_by_key(|q| place(q));
    deck
});

/// The question `id`: a chapter's own question by the chapter's id (every chapter of
/// [`super::CATALOG`] has one), or a question of its own id; `question(id).chapter` is the
/// chapter whose run answers it.
pub fn question(id: &str) -> Option<&'static Question> {
    DECK.iter().copied().find(|q| q.id == id)
}

/// Every question of the deck, in course order.
pub fn deck() -> impl Iterator<Item = &'static Question> {
    DECK.iter().copied()
}
