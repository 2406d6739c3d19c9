//! The tier matrix: for each tier, reset the room, switch the fleet to the tier, fire a burst of
//! buyers, and read what really happened from the ground truth (`GET /state`, and the ledger for
//! the hand-offs: see [`crate::hand_off`]). One row per tier.

use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use oversell_api::{GroundTruth, Settings, SettingsPatch, Tier, WaitStrategy};
use serde::{Deserialize, Serialize};

use crate::fairness::Fairness;
use crate::hand_off::{self, HandOff, Mark};
use crate::progress::Progress;
use crate::stats::{round, RunStats};
use crate::store_counts::{Counts, StoreProbe};
use crate::worker::{fire, Load, Model, RequestSpec};
use oversell_client::admin::AdminClient;
use oversell_client::target::Targets;

/// `all`, `safe` (every tier that claims mutual exclusion across instances), or a
/// comma-separated list of tier ids.
pub fn parse_tiers(spec: &str) -> anyhow::Result<Vec<Tier>> {
    let tiers: Vec<Tier> = match spec.trim() {
        "all" => Tier::built_in().collect(),
        "safe" => Tier::built_in()
            .filter(|t| t.excludes_across_instances())
            .collect(),
        list => list
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| t.parse().map_err(|e: String| anyhow!(e)))
            .collect::<anyhow::Result<_>>()?,
    };
    if tiers.is_empty() {
        bail!("no tiers given: use all, safe, or a list like none,lua-release");
    }
    Ok(tiers)
}

#[derive(Debug, Clone)]
pub struct MatrixOptions {
    pub tiers: Vec<Tier>,
    /// Stock each tier starts from.
    pub stock: i64,
    /// Buyers per tier, released together.
    pub buyers: usize,
    /// At most this many connections per burst; `None`: one per buyer.
    pub connections: Option<usize>,
    /// Settings sent with every tier switch (`business_ms`, `ttl_ms`, `wait`,
    /// `wait_deadline_ms`); the server keeps its own for those not given.
    pub settings: SettingsPatch,
    /// Distinct instances that must report a switch before the burst fires.
    pub instances: usize,
    /// Per request.
    pub timeout: Duration,
    /// How long the fleet may take to report a switch.
    pub switch_limit: Duration,
    /// Ways of waiting to run each tier with, one row each; empty: the settings' own.
    pub waits: Vec<WaitStrategy>,
    /// Read the lock store's own counts of each row (see `store_counts`).
    pub store_counts: bool,
}

impl Default for MatrixOptions {
    fn default() -> Self {
        MatrixOptions {
            tiers: Tier::built_in().collect(),
            stock: 100,
            buyers: 1000,
            connections: None,
            settings: SettingsPatch::default(),
            instances: 1,
            timeout: Duration::from_secs(30),
            switch_limit: Duration::from_secs(10),
            waits: Vec::new(),
            store_counts: false,
        }
    }
}

/// One tier's outcome. The first group is what the load generator saw; the second is the
/// ground truth read from Redis through `GET /state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRow {
    pub tier: Tier,
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
    #[serde(default)]
    pub p99_9_ms: f64,
    /// How fast the lock handed over, from the ledger (absent in a report from before it was
    /// measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand_off: Option<HandOff>,
    /// Acquires per client (the burst's workers) and sales per instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
    /// The way of waiting, when the matrix ran several (`--waits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitStrategy>,
    /// `SET NX PX` the lock store ran per sale, for the tiers whose acquire attempt is one
    /// (its own count; the tries of buyers who then found the stock gone included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_tries_per_sale: Option<f64>,
    /// Requests the lock store served per sale: Redis commands, or ZooKeeper packets for the
    /// ZooKeeper tiers (pings included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_requests_per_sale: Option<f64>,
}

impl MatrixRow {
    pub fn new(tier: Tier, stats: &RunStats, truth: &GroundTruth) -> MatrixRow {
        MatrixRow {
            tier,
            sent: stats.sent(),
            ok: stats.status(200),
            sold_out: stats.status(409),
            unavailable: stats.status(503),
            errors: stats.other_statuses() + stats.conn_errors + stats.timeouts,
            ledger_orders: truth.orders,
            final_stock: truth.stock,
            oversold: truth.oversold,
            lost_updates: truth.lost_updates,
            overlaps: truth.overlaps,
            foreign_releases: truth.foreign_releases,
            stale_writes_rejected: truth.stale_writes_rejected,
            lock_timeouts: truth.lock_timeouts,
            throughput_rps: round(stats.throughput(), 1),
            p50_ms: round(stats.latency_ms(0.5), 3),
            p99_ms: round(stats.latency_ms(0.99), 3),
            p99_9_ms: round(stats.latency_ms(0.999), 3),
            hand_off: None,
            fairness: Some(Fairness::of(&stats.ok_per_client)),
            wait: None,
            acquire_tries_per_sale: None,
            lock_requests_per_sale: None,
        }
    }

    /// The lock store's own counts of this row's run, per sale.
    fn with_counts(mut self, counts: &Counts) -> MatrixRow {
        let sales = self.ledger_orders.max(1) as f64;
        let per_sale = |n: u64| round(n as f64 / sales, 2);
        let zookeeper = self.tier.needs_zookeeper();
        // Redlock asks every master, so the first one sees every attempt too.
        let set_per_try = self.tier.facts().set_per_try;
        self.acquire_tries_per_sale = set_per_try.then(|| per_sale(counts.set_calls));
        self.lock_requests_per_sale = Some(per_sale(match zookeeper {
            true => counts.zk_packets,
            false => counts.redis_commands,
        }));
        self
    }

    pub fn is_unsafe_tier(&self) -> bool {
        !self.tier.excludes_across_instances()
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
    pub settings: Option<Settings>,
    pub rows: Vec<MatrixRow>,
    /// Tiers left out, with why (a lock store this fleet does not have).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// Runs every tier in turn. Stops at the first admin or state error; connection errors of the
/// buyers themselves are counted in the rows.
pub async fn run_matrix(
    targets: &Targets,
    admin: &AdminClient,
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
    let mut settings = None;
    let store = admin.state().await?.lock_store;
    let mut skipped = Vec::new();
    let probe = match options.store_counts {
        true => Some(StoreProbe::of(admin).await?),
        false => None,
    };
    let waits: Vec<Option<WaitStrategy>> = match options.waits.is_empty() {
        true => vec![None],
        false => options.waits.iter().copied().map(Some).collect(),
    };
    let runs = options
        .tiers
        .iter()
        .flat_map(|tier| waits.iter().map(move |wait| (*tier, *wait)));
    for (tier, wait) in runs {
        if tier
            .misfit(
                store.kind,
                oversell_api::Beside {
                    zookeeper: store.zookeeper.is_some(),
                    postgres: store.postgres.is_some(),
                },
            )
            .is_some()
        {
            let flags = tier.up_flags().unwrap_or_default();
            skipped.push(format!(
                "{tier}: needs a fleet started with `oversell up {flags}`"
            ));
            continue;
        }
        progress.set_message(tier.id());
        admin.reset(options.stock).await?;
        let patch = SettingsPatch {
            tier: Some(tier),
            wait: wait.or(options.settings.wait),
            ..options.settings.clone()
        };
        let applied = admin.set_config(&patch).await?;
        admin
            .wait_for_settings(&applied, options.instances, options.switch_limit)
            .await
            .with_context(|| format!("switching to {tier}"))?;
        settings = Some(applied);
        let start = match &probe {
            Some(probe) => Some(probe.start().await?),
            None => None,
        };
        let stats = fire(targets, &load, progress).await?;
        progress.end_run(stats.sent());
        let counts = match (&probe, start) {
            (Some(probe), Some(start)) => Some(probe.since(&start).await?),
            _ => None,
        };
        let state = admin.state().await?;
        let mut row = MatrixRow::new(tier, &stats, &state.truth);
        // The reset emptied the ledger and the overlap count: the run is all of them.
        let buyers = Some(stats.ok_per_client.len());
        let (hand_off, per_instance) =
            hand_off::from_ledger(admin, Mark::default(), &state.truth, buyers)
                .await
                .with_context(|| format!("reading the ledger of {tier}"))?;
        row.hand_off = Some(hand_off);
        row.fairness = row.fairness.map(|f| f.with_instances(per_instance));
        row.wait = wait;
        if let Some(counts) = counts {
            row = row.with_counts(&counts);
        }
        rows.push(row);
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
        let built_in: Vec<Tier> = Tier::built_in().collect();
        assert_eq!(parse_tiers("all").unwrap(), built_in);
        let safe = parse_tiers("safe").unwrap();
        assert_eq!(safe.len(), built_in.len() - 2);
        assert!(!safe.contains(&Tier::None) && !safe.contains(&Tier::Local));
        assert_eq!(
            parse_tiers(" none, fenced ").unwrap(),
            [Tier::None, Tier::Fenced]
        );
        assert!(parse_tiers(" , ").is_err());
        let err = parse_tiers("none,chubby").unwrap_err().to_string();
        assert!(
            err.contains("chubby") && err.contains("lua-release"),
            "{err}"
        );
    }

    #[test]
    fn a_row_takes_the_truth_from_state_and_the_counts_from_the_run() {
        let truth: GroundTruth = serde_json::from_value(serde_json::json!({
            "stock": 0, "initial_stock": 100, "orders": 130, "items_sold": 130,
            "oversold": 30, "lost_updates": 30, "overlaps": 99, "foreign_releases": 0,
            "lost_releases": 0, "store_faults": 0, "stale_writes_rejected": 0,
            "lock_timeouts": 0, "lock": {"held": false, "ttl_ms": null}
        }))
        .unwrap();
        let row = MatrixRow::new(Tier::None, &RunStats::default(), &truth);
        assert_eq!((row.ledger_orders, row.oversold, row.sent), (130, 30, 0));
        assert!(row.is_unsafe_tier());
    }

    #[test]
    fn store_counts_become_per_sale_figures_where_they_mean_an_attempt() {
        let truth: GroundTruth = serde_json::from_value(serde_json::json!({
            "stock": 0, "initial_stock": 100, "orders": 100, "items_sold": 100,
            "oversold": 0, "lost_updates": 0, "overlaps": 0, "foreign_releases": 0,
            "lost_releases": 0, "store_faults": 0, "stale_writes_rejected": 0,
            "lock_timeouts": 0, "lock": {"held": false, "ttl_ms": null}
        }))
        .unwrap();
        let counts = Counts {
            set_calls: 2_500,
            redis_commands: 5_450,
            zk_packets: 550,
        };
        let spin =
            MatrixRow::new(Tier::LuaRelease, &RunStats::default(), &truth).with_counts(&counts);
        assert_eq!(spin.acquire_tries_per_sale, Some(25.0));
        assert_eq!(spin.lock_requests_per_sale, Some(54.5));
        let watch =
            MatrixRow::new(Tier::Zookeeper, &RunStats::default(), &truth).with_counts(&counts);
        assert_eq!(watch.acquire_tries_per_sale, None);
        assert_eq!(watch.lock_requests_per_sale, Some(5.5));
    }
}
