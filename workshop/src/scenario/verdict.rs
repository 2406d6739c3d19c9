//! What a run reports and how it is judged: the load's own counts (`Fired`), a verdict per
//! check, the checks that are a sentence (keyed for the dashboard's translation), and the
//! judging that needs only what the run saw. Apart from the runner, which talks to the fleet:
//! these are plain functions of the figures and counts, and the dashboard, the command and the
//! tests read what they return.

use std::collections::BTreeMap;

use oversell_api::{StateView, Tier};
use serde::Serialize;

use super::{Check, Scenario};

/// The load's own counts, kept beside the ground truth.
#[derive(Debug, Default, Clone)]
pub(super) struct Fired {
    pub(super) ok: f64,
    pub(super) sold_out: f64,
    pub(super) unavailable: f64,
    pub(super) other: f64,
    pub(super) throughput: f64,
    pub(super) max_ms: f64,
    /// The sale's p99 and the fewest sales a client got over the most, when the load knows
    /// its clients (through the fleet, not a server-side burst).
    pub(super) p99_ms: Option<f64>,
    pub(super) min_over_max: Option<f64>,
    /// Every buyer's request whole, for the run's history, when the buyers were this client's.
    pub(super) exchanges: Option<Vec<loadtest::Exchange>>,
}

impl Fired {
    /// The figures of the load's own, under `prefix`.
    pub(super) fn figures(&self, prefix: &str, figures: &mut BTreeMap<String, f64>) {
        let mut put = |name: &str, value: Option<f64>| {
            if let Some(value) = value {
                figures.insert(format!("{prefix}{name}"), value);
            }
        };
        put("sale_p99_ms", self.p99_ms);
        put("acquires_min_over_max", self.min_over_max);
    }
}

/// One judged check.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `figure op value` (see [`Check::describe`]), or one of [`SENTENCE_CHECKS`] in English.
    pub check: String,
    pub seen: String,
    pub held: bool,
    /// For a sentence check, its key in [`SENTENCE_CHECKS`]: the dashboard shows the check in
    /// the page's language by it (`verdict.<key>` in `static/i18n.js`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<&'static str>,
}

/// The checks that are a sentence rather than a figure against a bound: the key the
/// dashboard translates each by, and its English.
pub const SENTENCE_CHECKS: &[(&str, &str)] = &[
    (
        "deadlock-503",
        "buyers got 503 (lock wait deadline; burst and probe)",
    ),
    ("deadlock-no-ttl", "lock held with no TTL (ttl_ms == -1)"),
    (
        "deadlock-stalled",
        "still stalled after 2 × TTL (sold of 5)",
    ),
    ("deadlock-reset", "after reset, sales resume (sold of 5)"),
    (
        "recovery-waited",
        "a buyer waited about a lease (max latency ms)",
    ),
    ("recovery-resumed", "sales resumed by themselves (orders)"),
    ("recovery-no-503", "no buyer hit the wait deadline (503s)"),
    (
        "store-back",
        "the lock store back, sales resume (sold of 5)",
    ),
];

/// The outcome of one run of a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioRun {
    pub id: &'static str,
    pub tier: Tier,
    pub passed: bool,
    pub expectation: String,
    pub verdicts: Vec<Verdict>,
    /// The ground truth after the load, and the load's own counts.
    pub figures: BTreeMap<String, f64>,
    pub elapsed_ms: f64,
    /// The run's id, under which its history is kept.
    pub run_id: String,
    /// The run's whole history (`Err`: why it could not be read back; the run itself stands).
    #[serde(skip)]
    pub history: Result<std::sync::Arc<Vec<oversell_api::history::Line>>, String>,
    /// What the history checker said of that history, beside these figures (`Err`: why it
    /// could not check it).
    pub check: Result<crate::recorder::Checked, String>,
}

/// Each check against the figures after the load.
pub(super) fn judge_figures(checks: &[Check], figures: &BTreeMap<String, f64>) -> Vec<Verdict> {
    checks
        .iter()
        .map(|check| {
            let seen = figures.get(check.figure).copied().unwrap_or(f64::NAN);
            Verdict {
                check: check.describe(),
                seen: format!("{}", (seen * 100.0).round() / 100.0),
                held: check.holds(seen),
                key: None,
            }
        })
        .collect()
}

/// Recovery after a dead holder's lease: the burst stalled for about a lease, then sold.
pub(super) fn judge_recovery(
    scenario: &Scenario,
    state: &StateView,
    fired: &Fired,
) -> Vec<Verdict> {
    let stalled = fired.max_ms >= 0.8 * scenario.ttl_ms as f64;
    let sold = state.truth.orders as f64;
    vec![
        verdict("recovery-waited", fired.max_ms, stalled),
        verdict("recovery-resumed", sold, sold > 0.0),
        verdict(
            "recovery-no-503",
            fired.unavailable,
            fired.unavailable == 0.0,
        ),
    ]
}

/// A sentence check's verdict, by its key in [`SENTENCE_CHECKS`].
pub(super) fn verdict(key: &'static str, seen: f64, held: bool) -> Verdict {
    let check = SENTENCE_CHECKS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key, |(_, english)| english);
    Verdict {
        check: check.to_owned(),
        seen: format!("{}", (seen * 100.0).round() / 100.0),
        held,
        key: Some(key),
    }
}
