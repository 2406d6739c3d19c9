//! Each rung's shortest break, in words: what the class's reveal says after a chapter of a
//! ladder rung, and what the book's table says, both from one search of the rung at the
//! default bounds, so neither can say what the search does not.
//!
//! The words are the schedule's own steps (`said`), in order, then what they broke: "A
//! acquire-1 → 1: holds the lock; 300 ms pass …; A release-1 → 1: deletes B's lock: a release
//! deleted another holder's lock". A rung no schedule breaks (`fenced`) says so, with the
//! bounds it holds within.

use oversell_api::grade::Outcome;
use oversell_api::tier::Tier;
use serde::Serialize;

use crate::answer::{Answer, Verdict};
use crate::bounds::Bounds;
use crate::lock::{rung, RUNGS};
use crate::said::Lang;
use crate::search::Found;
use crate::Refused;

/// A rung's shortest break at the default bounds, in both languages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RungBreak {
    /// `broken`, or `no-break` (every state within the bounds seen, none breaks it).
    pub verdict: Verdict,
    /// Every outcome a schedule within the bounds breaks it by, as the answer lists them.
    pub outcomes: Vec<Outcome>,
    /// The grader's outcome of the shortest break; `null` with no break.
    pub outcome: Option<Outcome>,
    /// Its length in steps; `null` with no break.
    pub depth: Option<usize>,
    /// The break in words (its steps, then what they broke); with no break, the sentence
    /// that no schedule sells a unit twice within the bounds.
    pub en: String,
    pub zh: String,
    /// The states the search saw.
    pub states: usize,
}

/// The break of least depth among those the grader counts (two holders alone is not one: a
/// fence refuses the stale holder); of two as short, the one the answer lists first.
pub fn shortest(answer: &Answer) -> Option<&Found> {
    answer
        .found
        .iter()
        .filter(|f| f.property.outcome().is_some())
        .min_by_key(|f| f.depth)
}

/// The shortest break of `tier` at the default bounds; `None` for a tier that is not a rung
/// of the ladder (`RUNGS`), or a search a bound cut before it could say.
pub fn rung_break(tier: Tier) -> Option<Result<RungBreak, Refused>> {
    if !RUNGS.contains(&tier) {
        return None;
    }
    let lock = rung(tier)?;
    let answer = match crate::explore(&lock, Bounds::default()) {
        Ok(answer) => answer,
        Err(refused) => return Some(Err(refused)),
    };
    of(&answer).map(Ok)
}

/// The shortest break an answer names, in words; `None` when a bound cut the search.
pub fn of(answer: &Answer) -> Option<RungBreak> {
    let found = shortest(answer);
    if found.is_none() && answer.verdict != Verdict::NoBreak {
        return None;
    }
    let words = |lang| match found {
        Some(f) => break_words(f, lang),
        None => no_break_words(&answer.bounds, lang),
    };
    Some(RungBreak {
        verdict: answer.verdict,
        outcomes: answer.outcomes.clone(),
        outcome: found.and_then(|f| f.property.outcome()),
        depth: found.map(|f| f.depth),
        en: words(Lang::En),
        zh: words(Lang::Zh),
        states: answer.states,
    })
}

/// A break's steps in order, then what they broke.
pub fn break_words(found: &Found, lang: Lang) -> String {
    let steps: Vec<&str> = found
        .schedule
        .iter()
        .map(|s| match lang {
            Lang::En => s.note.as_str(),
            Lang::Zh => s.note_zh.as_str(),
        })
        .collect();
    let broke = found.property.words(lang);
    match lang {
        Lang::En => format!("{}: {broke}", steps.join("; ")),
        Lang::Zh => format!("{}：{broke}", steps.join("；")),
    }
}

/// That no schedule sells a unit twice within `bounds`.
fn no_break_words(bounds: &Bounds, lang: Lang) -> String {
    let within = bounds.words(lang);
    match lang {
        Lang::En => format!(
            "no schedule sells a unit twice, deletes another's lock or locks everyone out within these bounds ({within})"
        ),
        Lang::Zh => format!("在这些界限内（{within}），没有任何调度会把一件商品卖两次、删掉别人的锁或让所有人再也拿不到锁"),
    }
}

/// The book's tables of the ladder's breaks, English then Chinese, as `docs/src/workshop/
/// explore.md` holds them between its `ladder` markers (`explore/tests/ladder_book.rs` holds
/// the book to it).
pub fn markdown() -> Result<String, Refused> {
    let mut en = String::from(
        "| rung | outcomes | shortest break (steps: the schedule, then what it broke) | states |\n|---|---|---|---|\n",
    );
    let mut zh =
        String::from("| 梯级 | 结果 | 最短攻破（步数：调度，然后它破坏了什么） |\n|---|---|---|\n");
    for tier in RUNGS {
        let Some(found) = rung_break(tier) else {
            continue;
        };
        let b = found?;
        let outcomes: Vec<&str> = b.outcomes.iter().map(|o| o.id()).collect();
        let outcomes = if outcomes.is_empty() {
            "none".to_owned()
        } else {
            outcomes.join(", ")
        };
        let depth = b.depth.map_or("—".to_owned(), |d| d.to_string());
        let id = tier.id();
        let (words, words_zh, states) = (cell(&b.en), cell(&b.zh), b.states);
        en += &format!("| `{id}` | {outcomes} | {depth}: {words} | {states} |\n");
        zh += &format!("| `{id}` | {outcomes} | {depth}：{words_zh} |\n");
    }
    Ok(format!("{en}\n{zh}"))
}

/// Words as one table cell: a `|` would end it.
fn cell(words: &str) -> String {
    words.replace('|', "\\|")
}
