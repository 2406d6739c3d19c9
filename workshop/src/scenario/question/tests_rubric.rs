//! The deck against its rubric (`RUBRIC.md`), as far as a test can read it: every option has
//! its sources and every cited line lies inside its article; every rule reads as words, names
//! exactly the figures its question reads, and says its numbers in the option's words in both
//! languages; no stem names a chapter or repeats an option's words; the articles' claims are
//! on trial, and pairs point at questions that exist.

use std::collections::BTreeSet;

use super::rule::{self, Operand};
use super::{deck, question, Question};
use crate::scenario::CATALOG;

/// Where the five articles are: `OVERSELL_SEEDS`, else `../shared/seeds` beside the
/// workspace (as `workshop/tests/curriculum_text/citations.rs` finds them).
fn article_lengths() -> [usize; 5] {
    let dir = match std::env::var_os("OVERSELL_SEEDS") {
        Some(dir) => dir.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds"),
    };
    let mut found = [0; 5];
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|err| {
        panic!(
            "the articles are not at {} ({err}): set OVERSELL_SEEDS to the directory holding \
             000_*.txt … 004_*.txt",
            dir.display()
        )
    });
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(a) = (0..5).find(|a| name.starts_with(&format!("00{a}_"))) {
            if name.ends_with(".txt") {
                // Only counted, as `wc -l` does: nothing of the text is kept.
                found[a] = std::fs::read_to_string(entry.path())
                    .unwrap()
                    .lines()
                    .count();
            }
        }
    }
    assert!(
        found.iter().all(|n| *n > 0),
        "an article is missing: {found:?}"
    );
    found
}

/// An article line as the deck cites it, `002:644` or `000:423-424`: the article and the
/// first and last line; `None` if `cited` is not written so.
fn article_line(cited: &str) -> Option<(usize, usize, usize)> {
    let (article, lines) = cited.split_once(':')?;
    if article.len() != 3 || !article.starts_with("00") {
        return None;
    }
    let article: usize = article.parse().ok().filter(|a| *a < 5)?;
    let (first, last) = lines.split_once('-').unwrap_or((lines, lines));
    Some((article, first.parse().ok()?, last.parse().ok()?))
}

fn inside(cited: &str, lengths: &[usize; 5]) -> Result<(), String> {
    let (article, first, last) =
        article_line(cited).ok_or_else(|| format!("`{cited}` is not `NNN:line`"))?;
    if first == 0 || first > last || last > lengths[article] {
        return Err(format!(
            "`{cited}` lies outside article 00{article} ({} lines)",
            lengths[article]
        ));
    }
    Ok(())
}

#[test]
fn every_option_names_its_sources_and_every_cited_line_lies_in_its_article() {
    let lengths = article_lengths();
    let mut wrong = Vec::new();
    for q in deck() {
        for (i, choice) in q.options.iter().enumerate() {
            if choice.sources.is_empty() {
                wrong.push(format!("{} option {i}: no source", q.id));
            }
            for source in choice.sources {
                let checked = match source.strip_prefix("belief: ") {
                    Some(belief)
                        if belief
                            .split_once(" — ")
                            .is_some_and(|(b, w)| b.trim().len() > 10 && w.trim().len() > 10) =>
                    {
                        Ok(())
                    }
                    Some(_) => Err(format!(
                        "`{source}` is no `belief: <belief> — <where held>`"
                    )),
                    None => inside(source, &lengths),
                };
                if let Err(err) = checked {
                    wrong.push(format!("{} option {i}: {err}", q.id));
                }
            }
        }
        if let Some(claim) = q.claim {
            if let Err(err) = inside(claim, &lengths) {
                wrong.push(format!("{} claim: {err}", q.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_rule_reads_as_words_and_names_the_figures_its_question_reads() {
    for q in deck() {
        let mut named = BTreeSet::new();
        for (i, choice) in q.options.iter().enumerate() {
            rule::parse(choice.rule).unwrap_or_else(|err| panic!("{} option {i}: {err}", q.id));
            named.extend(rule::figures_named(choice.rule));
        }
        let reads: BTreeSet<&str> = q.reads.iter().copied().collect();
        assert_eq!(
            named, reads,
            "{}: the rules name other figures than `reads`",
            q.id
        );
    }
}

/// A number as the words say it: `800`, `0.8`, `1.5`.
fn said(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// How an option may say that `figure` is compared with `n`, in English and in Chinese.
fn spellings(figure: &str, n: f64) -> (Vec<String>, Vec<String>) {
    if figure.ends_with("_ms") {
        let s = said(n / 1000.0);
        (
            vec![format!("{} ms", said(n)), format!("{s} s")],
            vec![format!("{} 毫秒", said(n)), format!("{s} 秒")],
        )
    } else if figure.contains("_vs_") {
        let off = said(((n - 1.0).abs() * 100.0).round());
        (
            vec![format!("{}×", said(n)), format!("{off}%")],
            vec![format!("{} 倍", said(n)), format!("{off}%")],
        )
    } else {
        (vec![said(n)], vec![said(n)])
    }
}

/// The numbers a rule compares with and the figure each is compared with; `None` for a
/// fraction of another figure (`initial_stock / 10`): its words are `a tenth`.
fn thresholds(words: &str) -> Vec<(String, f64, Option<f64>)> {
    let mut out = Vec::new();
    for alternative in rule::parse(words).unwrap() {
        for c in alternative {
            match (&c.left, &c.right) {
                (Operand::Figure(f), Operand::Number(n)) if *n != 0.0 => {
                    out.push(((*f).to_owned(), *n, None));
                }
                (Operand::Figure(f), Operand::Scaled(_, '/', by)) => {
                    out.push(((*f).to_owned(), 0.0, Some(*by)));
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn every_number_a_rule_compares_with_is_in_its_options_words() {
    let mut wrong = Vec::new();
    for q in deck() {
        for (i, choice) in q.options.iter().enumerate() {
            for (figure, n, fraction) in thresholds(choice.rule) {
                let (en, zh) = match fraction {
                    Some(10.0) => (vec!["a tenth".to_owned()], vec!["十分之一".to_owned()]),
                    Some(by) => (
                        vec![format!("1/{}", said(by))],
                        vec![format!("1/{}", said(by))],
                    ),
                    None => spellings(&figure, n),
                };
                if !en.iter().any(|s| choice.en.contains(s.as_str())) {
                    wrong.push(format!(
                        "{} option {i} en lacks {en:?}: {}",
                        q.id, choice.en
                    ));
                }
                if !zh.iter().any(|s| choice.zh.contains(s.as_str())) {
                    wrong.push(format!(
                        "{} option {i} zh lacks {zh:?}: {}",
                        q.id, choice.zh
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How many words in a row an option may share with its stem: more is the option's key
/// phrase given away.
const SHARED_WORDS: usize = 4;

#[test]
fn no_stem_names_a_chapter_or_repeats_an_options_words() {
    let mut wrong = Vec::new();
    for q in deck() {
        for s in CATALOG.iter() {
            if q.en.contains(s.id) || q.zh.contains(s.id) {
                wrong.push(format!("{}: the stem names the chapter `{}`", q.id, s.id));
            }
        }
        let stem = words(q.en).join(" ");
        for (i, choice) in q.options.iter().enumerate() {
            let option = words(choice.en);
            for run in option.windows(SHARED_WORDS) {
                let run = run.join(" ");
                if format!(" {stem} ").contains(&format!(" {run} ")) {
                    wrong.push(format!("{} option {i}: the stem says `{run}`", q.id));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_deck_is_in_course_order_puts_twenty_claims_on_trial_and_pairs_what_exists() {
    let deck: Vec<&Question> = deck().collect();
    assert!(deck.len() >= 76, "the deck has {} questions", deck.len());
    let place = |q: &Question| CATALOG.iter().position(|s| s.id == q.chapter).unwrap();
    assert!(
        deck.windows(2).all(|w| place(w[0]) <= place(w[1])),
        "the deck is not in the course's order"
    );
    let claims: Vec<&&Question> = deck.iter().filter(|q| q.claim.is_some()).collect();
    assert!(claims.len() >= 20, "{} claims on trial", claims.len());
    for q in &claims {
        assert_ne!(
            q.id, q.chapter,
            "{}: a claim is a question of its own",
            q.id
        );
        let (article, first, _) = article_line(q.claim.unwrap()).unwrap();
        let cited = [
            format!("00{article} (line {first}"),
            format!("00{article} (lines {first}"),
        ];
        assert!(
            cited.iter().any(|c| q.en.contains(c.as_str())),
            "{}: the stem does not say which line it puts on trial",
            q.id
        );
    }
    for q in &deck {
        if let Some(pair) = q.pair {
            let other = question(pair).unwrap_or_else(|| panic!("{} pairs with no {pair}", q.id));
            assert_ne!(other.id, q.id, "{} pairs with itself", q.id);
            assert_ne!(
                other.chapter, q.chapter,
                "{}: a pair is another surface",
                q.id
            );
        }
        assert_eq!(question(q.id).map(|found| found.id), Some(q.id));
    }
    assert!(deck.iter().filter(|q| q.pair.is_some()).count() >= 6);
}

/// Chinese a Chinese instructor would not write, as a review of the deck found it: a stem that
/// asks what the buyers "get", a renewal "every a third", a master restarted "empty", a
/// majority of votes "handed back", and 倍 that reads as "more by" where it means "times".
const UNIDIOMATIC: &[&str] = &[
    "买家会得到什么",
    "每隔三分之一",
    "空着重启",
    "交还迟到的多数票",
    "至少快一倍",
    "不到两倍",
];

#[test]
fn the_chinese_reads_as_an_instructor_writes_it_and_glosses_its_terms_once_first() {
    let mut texts = Vec::new();
    for q in deck() {
        texts.push((q.id.to_owned(), q.zh));
        for (i, choice) in q.options.iter().enumerate() {
            texts.push((format!("{} option {i}", q.id), choice.zh));
        }
    }
    for (name, text) in &texts {
        for phrase in UNIDIOMATIC {
            assert!(!text.contains(phrase), "{name} says `{phrase}`: {text}");
        }
    }
    // The first mention of each term in the deck's order carries its English once.
    for (term, gloss) in [
        ("红锁", "红锁（Redlock）"),
        ("围栏令牌", "围栏令牌（fencing token）"),
    ] {
        let first = texts.iter().find(|(_, t)| t.contains(term));
        let (name, text) = first.unwrap_or_else(|| panic!("no question says {term}"));
        assert!(
            text.contains(gloss),
            "{name} first says {term} without `{gloss}`: {text}"
        );
        let glossed = texts.iter().filter(|(_, t)| t.contains(gloss)).count();
        assert_eq!(glossed, 1, "{gloss} is glossed {glossed} times");
    }
}

/// The words that name the mechanism deciding a figure, in English and in Chinese, by the
/// figure they decide. A question whose options read the figure must leave the class to find
/// the mechanism: its stem says what is configured and what happens to whom and when, never
/// what the mechanism does with it (a stem that says the stock checks the token has told the
/// class that the late write is refused). Matched case-insensitively, anywhere in the stem.
const MECHANISM: &[(&str, &[&str])] = &[
    (
        "stale_writes_rejected",
        &[
            "check",
            "refuse",
            "reject",
            "highest",
            "at least",
            "校验",
            "核对",
            "拒绝",
            "不小于",
            "最大",
        ],
    ),
    (
        "foreign_releases",
        &[
            "outlast",
            "expire",
            "deletes another",
            "远小于",
            "误删",
            "到期",
        ],
    ),
    (
        "sold_after_stall",
        &[
            "times out after",
            "is freed",
            "frees the lock",
            "后超时",
            "被释放",
        ],
    ),
    ("lost_updates", &["overwrite", "覆盖", "stale", "陈旧"]),
    (
        "overlaps",
        &[
            "runs out",
            "ends before",
            "others get in",
            "到期",
            "别人进来",
        ],
    ),
    ("validity_lapsed", &["too late", "已过", "gives back"]),
];

/// Words that give any answer away whatever the question reads.
const GIVEAWAY: &[&str] = &["well inside", "safely", "远小于", "安全地"];

#[test]
fn no_stem_names_the_mechanism_that_decides_it() {
    let mut wrong = Vec::new();
    for q in deck() {
        let stem = format!("{} {}", q.en, q.zh).to_lowercase();
        let named = MECHANISM
            .iter()
            .filter(|(figure, _)| q.reads.contains(figure))
            .flat_map(|(figure, words)| words.iter().map(move |w| (*figure, *w)));
        let given = GIVEAWAY.iter().map(|w| ("any", *w));
        for (figure, word) in named.chain(given) {
            if stem.contains(word) {
                wrong.push(format!("{}: the stem says `{word}` ({figure})", q.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
