//! The workshop's curriculum: every tier's defect as a named scenario, in the order of the
//! ladder, each with the outcome it must show and why, in English and Chinese.
//!
//! Timings are small so the whole catalog runs in well under a minute, and chosen so each
//! defect's window is forced wide open (see each scenario's `why`), not hoped for.
//!
//! `source` names the article (000–004, the five Chinese articles the project is built from)
//! and the lines the story is told in (line numbers of the article's text as the project keeps
//! it); what none of them says is credited to where it comes from, and where an article is
//! wrong the explanation says so instead of repeating it.
//! The Chinese keeps the terms of the glossary at the top of the zh table in
//! `static/i18n.js` (租约, 陈旧写入, 围栏令牌, 重入次数, 主从切换, 处理业务, the ladder 青铜 …
//! 钻石), with the articles' own words glossed once where they differ;
//! `workshop/tests/curriculum_text.rs` checks both.
//!
//! One file per chapter group, the way the ladder is taught: [`ladder`] (one Redis, `none` …
//! `atomic-deduct` and `redis-down`), [`beyond`] (beyond one Redis: Sentinel failover, restarts
//! and persistence, Redlock), [`zookeeper`], [`database`] (PostgreSQL's advisory locks) and
//! [`partitions`] (links cut between network
//! namespaces: split brain, a cut-off holder), then [`field`] (failures users of the real
//! libraries reported, reproduced live) and [`trackers`] (more of them: a watchdog renewing
//! for a dead or stuck holder, a retried acquire taken twice, a token no resource checks, an
//! extend that revives a lapsed lock, an owner token shared by a thread's tasks, a lock
//! blocked by a lagging replica). Replication and Redlock share one file because
//! they are one lesson — what more than one Redis buys and costs — and share their failure
//! timings. [`CATALOG`] is the groups in [`GROUPS`] order; a new group is one more entry there
//! (and its `mod`). Each chapter states only what differs from [`BASE`], or from a base its
//! group makes from it for the settings several of its chapters share.

use std::sync::LazyLock;

use oversell_api::{LeaseMode, Tier, Via, WaitStrategy};

use super::{Expect, Scenario, StoreSetup};

mod beyond;
mod database;
mod field;
mod ladder;
mod partitions;
mod trackers;
mod zookeeper;

/// The chapter groups, by name, in the order they are taught.
pub const GROUPS: &[(&str, &[Scenario])] = &[
    ("ladder", ladder::SCENARIOS),
    ("beyond", beyond::SCENARIOS),
    ("zookeeper", zookeeper::SCENARIOS),
    ("database", database::SCENARIOS),
    ("partitions", partitions::SCENARIOS),
    ("field", field::SCENARIOS),
    ("trackers", trackers::SCENARIOS),
];

/// The whole curriculum in teaching order: the groups one after another, built once.
pub static CATALOG: LazyLock<Vec<Scenario>> = LazyLock::new(|| {
    GROUPS
        .iter()
        .flat_map(|(_, group)| group.iter().cloned())
        .collect()
});

/// The name of the group a chapter is taught in.
pub fn group_of(id: &str) -> Option<&'static str> {
    GROUPS
        .iter()
        .find(|(_, group)| group.iter().any(|s| s.id == id))
        .map(|(name, _)| *name)
}

/// A chapter whose settings are not the lesson: a 3 s lease, 5 ms of work, buyers who
/// wait on pub/sub for up to 10 s, a watchdog, 300 buyers through nginx for 100 items, any
/// lock store, no fault, and an outcome that does not depend on timing. Each chapter starts
/// from it (or from its group's base, made from it) and states only what differs, so what a
/// chapter changes is what it teaches.
///
/// The id, tier, expectation, source and texts are blanks that every chapter fills in:
/// `every_chapter_fills_in_the_blanks_of_the_base` below checks none is left.
///
/// No base holds a fault, even one its chapters share: a `Fault` may own its strings, and
/// a chapter built from a base with one would leave the rest of that base to be dropped
/// while the static is evaluated, which Rust refuses (E0493). Each chapter states its fault.
pub(crate) const BASE: Scenario = Scenario {
    id: "",
    tier: Tier::None,
    ttl_ms: 3_000,
    business_ms: 5,
    wait: WaitStrategy::PubSub,
    wait_deadline_ms: 10_000,
    lease: LeaseMode::Watchdog,
    fault: None,
    stock: 100,
    buyers: 300,
    connections: None,
    via: Via::Fleet,
    store: StoreSetup::ANY,
    expect: Expect::Figures(&[]),
    timing_sensitive: false,
    source: "",
    en: "",
    zh: "",
};

/// The scenario with this id.
pub fn find(id: &str) -> Option<&'static Scenario> {
    CATALOG.iter().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use oversell_api::Tier;

    use super::{Expect, CATALOG};

    /// A chapter that forgot one of the base's blanks would still build: it would be found by
    /// an empty id, no checks to judge, or the base's `none` tier on a chapter not about it.
    #[test]
    fn every_chapter_fills_in_the_blanks_of_the_base() {
        let mut ids = BTreeSet::new();
        for scenario in CATALOG.iter() {
            let id = scenario.id;
            assert!(!id.is_empty(), "a chapter has no id");
            assert!(ids.insert(id), "two chapters are named {id}");
            assert!(
                !matches!(scenario.expect, Expect::Figures([])),
                "{id} has no checks"
            );
            assert!(
                scenario.tier != Tier::None || id.starts_with("none-"),
                "{id} runs on the `none` tier"
            );
            for (what, text) in [
                ("source", scenario.source),
                ("en", scenario.en),
                ("zh", scenario.zh),
            ] {
                assert!(!text.is_empty(), "{id} has no {what}");
            }
        }
    }
}
