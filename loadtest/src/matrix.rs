//! The tier matrix: for each tier, reset the room, switch the fleet to the tier, fire a burst of
//! buyers, and read what really happened from the ground truth (`GET /state`). One row per tier.

use std::time::Duration;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::admin::{field, Admin};
use crate::progress::Progress;
use crate::stats::{round, RunStats};
use crate::target::Targets;
use crate::worker::{fire, Load, Model, RequestSpec};

/// The tiers in the workshop's order.
pub const ALL_TIERS: [&str; 13] = [
    "none",
    "local",
    "setnx",
    "setnx-expire",
    "atomic-expiry",
    "uuid-owner",
    "lua-release",
    "reentrant-watchdog",
    "fenced",
    "redlock",
    "zookeeper",
    "zookeeper-fenced",
    "atomic-deduct",
];

/// Tiers that need more than the default fleet, and the `oversell up` flags that give it.
pub const STORE_TIERS: [(&str, &str); 3] = [
    ("redlock", "--lock-store redlock"),
    ("zookeeper", "--zookeeper"),
    ("zookeeper-fenced", "--zookeeper"),
];

/// Whether a fleet whose `/state` says `lock_store` can run a tier that needs `flags`.
fn fleet_has(lock_store: &Value, flags: &str) -> bool {
    match flags {
        "--zookeeper" => lock_store["zookeeper"].is_object(),
        _ => lock_store["kind"] == "redlock",
    }
}

/// The tiers that do not even claim mutual exclusion across instances.
pub const UNSAFE_TIERS: [&str; 2] = ["none", "local"];

/// `all`, `safe` (all but none and local), or a comma-separated list of tier ids (checked by
/// the server, so new tiers need no change here).
pub fn parse_tiers(spec: &str) -> anyhow::Result<Vec<String>> {
    let tiers: Vec<String> = match spec.trim() {
        "all" => ALL_TIERS.map(str::to_owned).to_vec(),
        "safe" => ALL_TIERS
            .iter()
            .filter(|t| !UNSAFE_TIERS.contains(t))
            .map(|t| t.to_string())
            .collect(),
        list => list
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
    };
    if tiers.is_empty() {
        bail!("no tiers given: use all, safe, or a list like none,lua-release");
    }
    Ok(tiers)
}

#[derive(Debug, Clone)]
pub struct MatrixOptions {
    pub tiers: Vec<String>,
    /// Stock each tier starts from.
    pub stock: i64,
    /// Buyers per tier, released together.
    pub buyers: usize,
    /// At most this many connections per burst; `None`: one per buyer.
    pub connections: Option<usize>,
    /// Settings sent with every tier switch (`business_ms`, `ttl_ms`, `wait`,
    /// `wait_deadline_ms`); the server keeps its own for those not given.
    pub settings: Map<String, Value>,
    /// Distinct instances that must report a switch before the burst fires.
    pub instances: usize,
    /// Per request.
    pub timeout: Duration,
    /// How long the fleet may take to report a switch.
    pub switch_limit: Duration,
}

impl Default for MatrixOptions {
    fn default() -> Self {
        MatrixOptions {
            tiers: ALL_TIERS.map(str::to_owned).to_vec(),
            stock: 100,
            buyers: 1000,
            connections: None,
            settings: Map::new(),
            instances: 1,
            timeout: Duration::from_secs(30),
            switch_limit: Duration::from_secs(10),
        }
    }
}

/// One tier's outcome. The first group is what the load generator saw; the second is the
/// ground truth read from Redis through `GET /state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRow {
    pub tier: String,
    pub sent: u64,
    /// Answers 200: sales the service acknowledged to a buyer.
    pub ok: u64,
    /// Answers 409.
    pub sold_out: u64,
    /// Answers 503 (lock wait deadline, lock lost, Redis down).
    pub unavailable: u64,
    /// Other statuses, connection errors and timeouts.
    pub errors: u64,
    pub ledger_orders: i64,
    pub final_stock: i64,
    pub oversold: i64,
    pub lost_updates: i64,
    pub overlaps: i64,
    pub foreign_releases: i64,
    pub stale_writes_rejected: i64,
    pub lock_timeouts: i64,
    pub throughput_rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl MatrixRow {
    pub fn new(tier: &str, stats: &RunStats, state: &Value) -> anyhow::Result<MatrixRow> {
        Ok(MatrixRow {
            tier: tier.to_owned(),
            sent: stats.sent(),
            ok: stats.status(200),
            sold_out: stats.status(409),
            unavailable: stats.status(503),
            errors: stats.other_statuses() + stats.conn_errors + stats.timeouts,
            ledger_orders: field(state, "orders")?,
            final_stock: field(state, "stock")?,
            oversold: field(state, "oversold")?,
            lost_updates: field(state, "lost_updates")?,
            overlaps: field(state, "overlaps")?,
            foreign_releases: field(state, "foreign_releases")?,
            stale_writes_rejected: field(state, "stale_writes_rejected")?,
            lock_timeouts: field(state, "lock_timeouts")?,
            throughput_rps: round(stats.throughput(), 1),
            p50_ms: round(stats.latency_ms(0.5), 3),
            p99_ms: round(stats.latency_ms(0.99), 3),
        })
    }

    pub fn is_unsafe_tier(&self) -> bool {
        UNSAFE_TIERS.contains(&self.tier.as_str())
    }
}

/// Everything a matrix run printed, for JSON output and the chart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixReport {
    pub targets: Vec<String>,
    pub room: Option<String>,
    pub stock: i64,
    pub buyers: usize,
    /// The settings the last tier ran with, as the server reported them.
    pub settings: Value,
    pub rows: Vec<MatrixRow>,
    /// Tiers left out, with why (a lock store this fleet does not have).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// Runs every tier in turn. Stops at the first admin or state error; connection errors of the
/// buyers themselves are counted in the rows.
pub async fn run_matrix(
    targets: &Targets,
    admin: &Admin,
    options: &MatrixOptions,
    progress: &dyn Progress,
) -> anyhow::Result<MatrixReport> {
    let load = Load {
        model: Model::Burst {
            buyers: options.buyers as u64,
        },
        connections: options.connections.unwrap_or(options.buyers),
        request: RequestSpec::sale(1),
        timeout: options.timeout,
    };
    let mut rows = Vec::with_capacity(options.tiers.len());
    let mut settings = Value::Null;
    let store = admin.state().await?["lock_store"].clone();
    let mut skipped = Vec::new();
    for tier in &options.tiers {
        let needs = STORE_TIERS.iter().find(|(t, _)| t == tier).map(|(_, f)| *f);
        if let Some(flags) = needs.filter(|flags| !fleet_has(&store, flags)) {
            skipped.push(format!(
                "{tier}: needs a fleet started with `oversell up {flags}`"
            ));
            continue;
        }
        progress.set_message(tier.as_str());
        admin.reset(options.stock).await?;
        let mut config = options.settings.clone();
        config.insert("tier".into(), Value::String(tier.clone()));
        settings = admin.set_config(Value::Object(config)).await?;
        admin
            .wait_for_settings(&settings, options.instances, options.switch_limit)
            .await
            .with_context(|| format!("switching to {tier}"))?;
        let stats = fire(targets, &load, progress).await?;
        progress.end_run(stats.sent());
        let state = admin.state().await?;
        rows.push(MatrixRow::new(tier, &stats, &state)?);
    }
    Ok(MatrixReport {
        targets: targets.iter().map(|t| t.url().to_owned()).collect(),
        room: targets.room().map(str::to_owned),
        stock: options.stock,
        buyers: options.buyers,
        settings,
        rows,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_lists_expand_and_split() {
        assert_eq!(parse_tiers("all").unwrap().len(), 13);
        let safe = parse_tiers("safe").unwrap();
        assert_eq!(safe.len(), 11);
        assert!(!safe.contains(&"none".to_owned()));
        assert_eq!(parse_tiers(" none, fenced ").unwrap(), ["none", "fenced"]);
        assert!(parse_tiers(" , ").is_err());
    }

    #[test]
    fn a_row_takes_the_truth_from_state_and_the_counts_from_the_run() {
        let state = serde_json::json!({
            "orders": 130, "stock": 0, "oversold": 30, "lost_updates": 30, "overlaps": 99,
            "foreign_releases": 0, "stale_writes_rejected": 0, "lock_timeouts": 0
        });
        let row = MatrixRow::new("none", &RunStats::default(), &state).unwrap();
        assert_eq!((row.ledger_orders, row.oversold, row.sent), (130, 30, 0));
        assert!(row.is_unsafe_tier());
        assert!(MatrixRow::new("none", &RunStats::default(), &serde_json::json!({})).is_err());
    }
}
