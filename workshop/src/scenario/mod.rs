//! Scenarios: a tier, its settings, a fault, a load, and the outcome it must show, run against
//! a live fleet and judged from the ground truth in Redis.
//!
//! Running one: disarm faults → reset the stock → set tier and settings → wait until every
//! instance has them → arm the fault and wait until every instance knows it → fire → read
//! `/state` (and the ledger where a check needs it) → judge.
//!
//! This file holds the scenario itself; beside it, `catalog` holds the chapters, `store` what
//! a scenario needs of the fleet, `expect` what it must show, `question` what the class is asked before it runs, `runner` the run against a
//! fleet, and `verdict` what a run reports. Everything callers use is re-exported here, so
//! they name it `scenario::…` whichever file it lives in.

mod catalog;
#[cfg(feature = "cli")]
pub mod command;
mod expect;
mod question;
mod runner;
mod store;
mod verdict;

use oversell_api::{LeaseMode, SettingsPatch, Tier, WaitStrategy};
use serde::Serialize;

pub use oversell_api::{Fault, FaultKind, Via};

/// The settings every chapter starts from: the lab's attacks start from them too.
pub(crate) use catalog::BASE;
pub use catalog::{find, group_of, CATALOG, GROUPS};
pub use expect::{Check, Expect, Op};
pub use question::{deck, question, rule, Choice, Figures, Question};
pub use runner::{Runner, Step};
pub use store::StoreSetup;
pub use verdict::{ScenarioRun, Verdict, SENTENCE_CHECKS};

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub id: &'static str,
    pub tier: Tier,
    pub ttl_ms: u64,
    pub business_ms: u64,
    pub wait: WaitStrategy,
    pub wait_deadline_ms: u64,
    /// Whether the reentrant tiers renew their lease.
    pub lease: LeaseMode,
    pub fault: Option<Fault>,
    pub stock: i64,
    pub buyers: usize,
    /// At most this many connections for the buyers, each sending its next buyer's sale as
    /// soon as the last one is answered (the same clients again and again: acquires per
    /// client say how evenly the lock was shared); `None`: one per buyer.
    pub connections: Option<usize>,
    pub via: Via,
    /// The lock store it needs, and the replica sync it runs with.
    pub store: StoreSetup,
    pub expect: Expect,
    /// Whether the outcome depends on timing (these are repeated to measure how often it holds).
    pub timing_sensitive: bool,
    /// Which article and section the story comes from.
    pub source: &'static str,
    pub en: &'static str,
    pub zh: &'static str,
}

impl Scenario {
    /// What it needs of the fleet: its own store setup, and its tier's stores.
    pub fn fleet(&self) -> StoreSetup {
        self.store.with_needs_of(self.tier)
    }

    fn settings(&self) -> SettingsPatch {
        SettingsPatch {
            tier: Some(self.tier),
            ttl_ms: Some(self.ttl_ms),
            business_ms: Some(self.business_ms),
            wait: Some(self.wait),
            wait_deadline_ms: Some(self.wait_deadline_ms),
            sync_replicas: Some(self.store.sync_replicas),
            sync_timeout_ms: None,
            lease: Some(self.lease),
        }
    }

    /// The expectation in words.
    pub fn expectation(&self) -> String {
        match self.expect {
            Expect::Figures(checks) => checks
                .iter()
                .map(Check::describe)
                .collect::<Vec<_>>()
                .join(", "),
            Expect::StallUntilReset => "sales stall (503s, lock with no TTL) until reset".into(),
            Expect::StallThenResume => "sales stall until the lease expires, then resume".into(),
            Expect::RefusedThenResume(checks) => {
                let checks: Vec<String> = checks.iter().map(Check::describe).collect();
                format!(
                    "{}; sales resume once the lock store is back",
                    checks.join(", ")
                )
            }
        }
    }
}
