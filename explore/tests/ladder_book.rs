//! The book's tables of the ladder's breaks (`docs/src/workshop/explore.md`, between its
//! `ladder` markers) are what the search says of each rung, in English and Chinese: the book
//! cannot drift from the code. `BLESS=1 cargo test -p explore --test ladder_book` writes
//! them after a change of the model or of the rungs' steps.

use std::path::PathBuf;

use explore::answer::Verdict;
use explore::ladder::{self, RungBreak};
use explore::lock::RUNGS;
use oversell_api::tier::Tier;

const BEGIN: &str = "<!-- ladder: written by `explore::ladder::markdown`; BLESS=1 cargo test -p explore --test ladder_book -->\n";
const END: &str = "<!-- /ladder -->";

fn book() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/src/workshop/explore.md")
}

#[test]
fn the_books_ladder_tables_are_what_the_search_says_of_each_rung() {
    let path = book();
    let text = std::fs::read_to_string(&path).expect("the book's explore page");
    let start = text.find(BEGIN).expect("the book's ladder markers") + BEGIN.len();
    let end = start + text[start..].find(END).expect("the ladder's end marker");
    let tables = ladder::markdown().expect("every rung searchable");
    if std::env::var_os("BLESS").is_some() {
        let blessed = format!("{}{tables}{}", &text[..start], &text[end..]);
        std::fs::write(&path, blessed).expect("the book written");
        return;
    }
    assert_eq!(
        &text[start..end],
        tables,
        "the book's ladder tables are stale: BLESS=1 cargo test -p explore --test ladder_book"
    );
}

fn rung(tier: Tier) -> RungBreak {
    ladder::rung_break(tier)
        .expect("a rung of the ladder")
        .expect("searchable")
}

#[test]
fn a_rungs_break_reads_its_steps_then_what_they_broke_in_both_languages() {
    let b = rung(Tier::AtomicExpiry);
    assert_eq!(b.verdict, Verdict::Broken);
    assert_eq!(b.depth, Some(6));
    assert!(
        b.en.starts_with("A acquire-1 → 1: holds the lock; "),
        "{}",
        b.en
    );
    assert!(
        b.en.ends_with(
            "A release-1 → 1: deletes B's lock: a release deleted another holder's lock"
        ),
        "{}",
        b.en
    );
    assert_eq!(b.en.matches("; ").count(), 5, "six steps: {}", b.en);
    assert!(
        b.zh.starts_with("A 执行 acquire-1 → 1：拿到锁；"),
        "{}",
        b.zh
    );
    assert!(b.zh.ends_with("：解锁删掉了别人的锁"), "{}", b.zh);
}

#[test]
fn fenced_says_no_schedule_sells_a_unit_twice_and_a_tier_off_the_ladder_has_no_break() {
    let b = rung(Tier::Fenced);
    assert_eq!(
        (b.verdict, b.outcome, b.depth),
        (Verdict::NoBreak, None, None)
    );
    assert!(
        b.en.starts_with("no schedule sells a unit twice"),
        "{}",
        b.en
    );
    assert!(
        b.en.contains("lease 300 ms"),
        "the bounds it holds within: {}",
        b.en
    );
    assert!(b.zh.contains("卖两次"), "{}", b.zh);
    for tier in [Tier::Fair, Tier::Zookeeper, Tier::Redlock, Tier::Postgres] {
        assert!(ladder::rung_break(tier).is_none(), "{}", tier.id());
    }
    assert_eq!(RUNGS.len(), 7);
}
