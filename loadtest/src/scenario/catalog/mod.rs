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
//! `loadtest/tests/curriculum_text.rs` checks both.
//!
//! One file per chapter group, the way the ladder is taught: [`ladder`] (one Redis, `none` …
//! `atomic-deduct` and `redis-down`), [`beyond`] (beyond one Redis: Sentinel failover, restarts
//! and persistence, Redlock), [`zookeeper`] and [`partitions`] (links cut between network
//! namespaces: split brain, a cut-off holder). Replication and Redlock share one file because
//! they are one lesson — what more than one Redis buys and costs — and share their failure
//! timings. [`CATALOG`] is the groups in [`GROUPS`] order; a new group is one more entry there
//! (and its `mod`).

use std::sync::LazyLock;

use super::Scenario;

mod beyond;
mod ladder;
mod partitions;
mod zookeeper;

/// The chapter groups, in the order they are taught.
const GROUPS: &[&[Scenario]] = &[
    ladder::SCENARIOS,
    beyond::SCENARIOS,
    zookeeper::SCENARIOS,
    partitions::SCENARIOS,
];

/// The whole curriculum in teaching order: the groups one after another, built once.
pub static CATALOG: LazyLock<Vec<Scenario>> = LazyLock::new(|| {
    GROUPS
        .iter()
        .flat_map(|group| group.iter().cloned())
        .collect()
});

/// The lease of the chapters whose lease is not the lesson.
const NORMAL_TTL: u64 = 3_000;

/// The scenario with this id.
pub fn find(id: &str) -> Option<&'static Scenario> {
    CATALOG.iter().find(|s| s.id == id)
}
