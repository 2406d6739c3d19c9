//! `loadtest questions`: the deck as its author and the instructor read it — every question
//! in course order with the chapter whose run answers it, both languages, each option's
//! sources and its rule in words, the article line a claim question puts on trial, the option
//! it predicts and the chapter question it is asked instead of, and its isomorphic pair.
//! `--json` prints the same as one JSON array, for a review or a tool. Nothing here runs a
//! chapter: the deck is data.

use clap::Args;
use serde_json::{json, Value};

use crate::scenario::{deck, Question};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  loadtest questions
  loadtest questions --json > deck.json")]
pub struct QuestionsArgs {
    /// Print one JSON array, one object a question, instead of the listing.
    #[arg(long)]
    pub json: bool,
}

/// The letter of option `i`, as the class votes it.
fn letter(i: usize) -> char {
    char::from(b'A' + u8::try_from(i).unwrap_or(25))
}

/// A question's rule in words: each option's letter and its rule.
pub fn rule_in_words(q: &Question) -> String {
    q.options
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{}: {}", letter(i), o.rule))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One question as the JSON of `loadtest questions --json`.
pub fn to_json(q: &Question) -> Value {
    let options: Vec<Value> = q
        .options
        .iter()
        .map(|o| json!({ "en": o.en, "zh": o.zh, "sources": o.sources, "rule": o.rule }))
        .collect();
    json!({
        "id": q.id,
        "chapter": q.chapter,
        "en": q.en,
        "zh": q.zh,
        "options": options,
        "reads": q.reads,
        "rule": rule_in_words(q),
        "claim": q.claim,
        "article_says": q.article_says,
        "alternative_to": q.alternative_to,
        "pair": q.pair,
    })
}

/// The deck, as JSON or as a listing.
pub fn run(args: &QuestionsArgs) -> anyhow::Result<String> {
    if args.json {
        let all: Vec<Value> = deck().map(to_json).collect();
        return Ok(serde_json::to_string_pretty(&all)?);
    }
    let mut out = String::new();
    for (n, q) in deck().enumerate() {
        out.push_str(&format!(
            "{}. {} (answered by {})\n",
            n + 1,
            q.id,
            q.chapter
        ));
        if let Some(claim) = q.claim {
            out.push_str(&format!("   on trial: {claim}"));
            if let Some(says) = q.article_says {
                out.push_str(&format!(", which predicts {}", letter(says)));
            }
            out.push('\n');
        }
        if let Some(instead) = q.alternative_to {
            out.push_str(&format!("   asked instead of: {instead}, not after it\n"));
        }
        if let Some(pair) = q.pair {
            out.push_str(&format!("   pair: {pair}\n"));
        }
        out.push_str(&format!("   {}\n   {}\n", q.en, q.zh));
        for (i, o) in q.options.iter().enumerate() {
            out.push_str(&format!("   {}) {}\n      {}\n", letter(i), o.en, o.zh));
            out.push_str(&format!("      rule: {}\n", o.rule));
            out.push_str(&format!("      sources: {}\n", o.sources.join(" | ")));
        }
        out.push_str(&format!("   reads: {}\n\n", q.reads.join(", ")));
    }
    Ok(out)
}
