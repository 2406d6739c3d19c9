//! The runner: drives one scenario through a live fleet (disarm, reset, set and wait for the
//! settings, arm and wait for the fault, fire, read the ground truth, heal) and judges it,
//! including the judging that has to go back to the fleet (a deadlock probed after twice the
//! lease, sales after a reset or once the store is back). Apart from the scenario's data and
//! the judging of plain figures, which need no fleet and are read without one (the catalog,
//! `GET /scenarios`, the text tests).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use http::Method;
use oversell_api::{BurstReport, BurstRequest, LockStoreKind, SettingsPatch, StateView, Tier};

use super::verdict::{judge_figures, judge_recovery, verdict, Fired};
use super::{Expect, Fault, FaultKind, Scenario, ScenarioRun, Verdict, Via};
use crate::recorder::{self, RunInfo};
use loadtest::fairness::Fairness;
use loadtest::worker::{burst, BurstOptions};
use oversell_client::admin::AdminClient;
use oversell_client::target::Targets;

/// How the runner reaches the fleet.
pub struct Runner<'a> {
    pub targets: &'a Targets,
    pub admin: &'a AdminClient,
    /// How many instances serve behind the targets.
    pub instances: usize,
    /// An instance the fault must not strike: the one running the scenario from the server
    /// side, which would otherwise crash under its own runner.
    pub spare: Option<String>,
    /// Where the run stands, for whoever bounds it to say where it stalled.
    pub step: Step,
}

/// The chapter a runner is on and its step, kept as it goes: a run cut short by its bound
/// says where it was (`preparing`, `firing`, `collecting the history`…), not only that it
/// took too long.
#[derive(Clone, Default)]
pub struct Step(Arc<Mutex<String>>);

impl Step {
    /// The runner is on `what` of `chapter`.
    pub fn set(&self, chapter: &str, what: &str) {
        let mut now = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *now = format!("{chapter}: {what}");
    }

    /// The last step set, or `starting` before any.
    pub fn now(&self) -> String {
        let now = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match now.is_empty() {
            true => "starting".to_owned(),
            false => now.clone(),
        }
    }
}

impl Runner<'_> {
    /// Why this fleet cannot run `scenario` (its lock store is not the one it needs), if so.
    pub async fn misfit(&self, scenario: &Scenario) -> anyhow::Result<Option<String>> {
        if !scenario.store.is_special() {
            return Ok(None);
        }
        Ok(scenario.fleet().misfit(&self.admin.state().await?))
    }

    pub async fn run(&self, scenario: &Scenario) -> anyhow::Result<ScenarioRun> {
        if let Some(why) = self.misfit(scenario).await? {
            return Err(anyhow!("scenario {}: {why}", scenario.id));
        }
        let started = Instant::now();
        let mut figures = BTreeMap::new();
        self.step.set(scenario.id, "the reference load");
        // `throughput_vs_<tier>`: the same load under that tier first, as the reference.
        let baseline = match reference_tier(scenario)? {
            Some((figure, tier)) => {
                let reference = self.fire_as(scenario, tier).await?.throughput;
                Some((figure, reference))
            }
            None => None,
        };
        // The same load under the race for the lock first, to set the queue beside it: the
        // tier's own lock without its queue (its row of the tier table says which).
        let needs_race = matches!(scenario.expect, Expect::Figures(c) if c.iter().any(|c| c.figure.starts_with("race_") || c.figure.ends_with("_vs_race")));
        if needs_race {
            let Some(race) = scenario.tier.facts().race else {
                bail!(
                    "scenario {}: its race figures need a tier with a race twin; {} has none",
                    scenario.id,
                    scenario.tier
                );
            };
            let race = self.fire_as(scenario, race).await?;
            race.figures("race_", &mut figures);
        }
        self.step.set(scenario.id, "preparing the room");
        self.prepare(scenario, scenario.settings()).await?;
        if scenario.store.lock_store == Some(LockStoreKind::Sentinel) {
            // Set by every Sentinel chapter, so none inherits it from the one before.
            let config = serde_json::json!({ "min_replicas": scenario.store.min_replicas });
            self.admin
                .request(Method::PUT, "/admin/lock-store", Some(config))
                .await?;
        }
        // The room as the run begins: its history's first line.
        let before = self.admin.state().await?;
        let clocks_at_start = recorder::clock_bound::measure(self.admin).await.ok();
        if let Some(fault) = &scenario.fault {
            self.step.set(scenario.id, "arming the fault");
            self.arm(fault).await?;
        }
        self.step.set(scenario.id, "firing the buyers");
        let mut fired = self.fire(scenario, true).await?;
        // `stall_ms`, where the chapter's question reads it: the widest gap between two sales
        // answered one after the other (from the first request to the first sale, then sale to
        // sale). A line of buyers sells every few milliseconds however long it is, so the
        // slowest buyer's wait cannot tell a stall from a long line; a gap can.
        let stall_ms = super::question(scenario.id)
            .is_some_and(|q| q.reads.contains(&"stall_ms"))
            .then(|| fired.exchanges.as_deref().and_then(widest_gap_ms))
            .flatten();
        // The ground truth is read before the heal: what the split did, not what the heal
        // undid (the resource store was never cut off, so the figures are the same either way).
        self.step.set(scenario.id, "reading the ground truth");
        let state = self.admin.state().await?;
        // The history is read back before any judging that resets the room (a deadlock's).
        let run_id = recorder::run_id();
        self.step.set(scenario.id, "collecting the history");
        let info = RunInfo {
            id: run_id.clone(),
            chapter: Some(scenario.id),
            before: &before,
            clocks_at_start,
        };
        let history = recorder::collect(self.admin, info, fired.exchanges.take().as_deref())
            .await
            .map(std::sync::Arc::new)
            .map_err(|e| format!("{e:#}"));
        self.step.set(scenario.id, "healing");
        if scenario.store.netns {
            self.heal().await?;
        }
        if scenario.store.min_replicas > 0 {
            // Redis' default again: the next user of the fleet expects a store that writes.
            let config = serde_json::json!({ "min_replicas": 0 });
            self.admin
                .request(Method::PUT, "/admin/lock-store", Some(config))
                .await?;
        }
        for (name, value) in state.truth.figures() {
            figures.insert(name.to_owned(), value as f64);
        }
        figures.insert("sent_ok".into(), fired.ok);
        figures.insert("sent_sold_out".into(), fired.sold_out);
        figures.insert("sent_503".into(), fired.unavailable);
        figures.insert("sent_other".into(), fired.other);
        figures.insert("throughput_rps".into(), fired.throughput);
        figures.insert("max_latency_ms".into(), fired.max_ms);
        fired.figures("", &mut figures);
        // How much more evenly this tier shared the lock than the race on the same load.
        if let (Some(ours), Some(race)) = (
            figures.get("acquires_min_over_max"),
            figures.get("race_acquires_min_over_max"),
        ) {
            let vs = ours / race.max(1e-9);
            figures.insert("acquires_vs_race".into(), vs);
        }
        if let Some((figure, reference)) = baseline {
            figures.insert(figure.into(), fired.throughput / reference.max(1e-9));
        }
        if let Some(stall) = stall_ms {
            figures.insert("stall_ms".into(), stall);
        }

        self.step.set(scenario.id, "judging");
        let verdicts = match scenario.expect {
            Expect::Figures(checks) => {
                if checks.iter().any(|c| c.figure == "min_depth") {
                    figures.insert("min_depth".into(), self.min_depth().await?);
                }
                judge_figures(checks, &figures)
            }
            Expect::StallUntilReset => {
                let (verdicts, sold_after) = self.judge_deadlock(scenario, &state, &fired).await?;
                figures.insert("sold_after_stall".into(), sold_after);
                verdicts
            }
            Expect::StallThenResume => judge_recovery(scenario, &state, &fired),
            Expect::RefusedThenResume(checks) => {
                let mut verdicts = judge_figures(checks, &figures);
                verdicts.push(self.judge_back().await?);
                verdicts
            }
        };
        // Leave nothing armed for whoever comes next.
        self.step.set(scenario.id, "disarming");
        self.disarm().await?;
        let check = history
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|lines| recorder::check(lines, &figures));
        Ok(ScenarioRun {
            id: scenario.id,
            tier: scenario.tier,
            passed: verdicts.iter().all(|v| v.held),
            expectation: scenario.expectation(),
            verdicts,
            figures,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            check,
            run_id,
            history,
        })
    }

    /// The scenario's load, fault-free, under another tier.
    async fn fire_as(&self, scenario: &Scenario, tier: Tier) -> anyhow::Result<Fired> {
        let reference = SettingsPatch {
            tier: Some(tier),
            ..scenario.settings()
        };
        self.prepare(scenario, reference).await?;
        self.fire(scenario, false).await
    }

    async fn prepare(&self, scenario: &Scenario, settings: SettingsPatch) -> anyhow::Result<()> {
        self.disarm().await?;
        if scenario.store.netns {
            self.heal().await?;
        }
        if scenario.store.is_special() {
            self.wait_store_healthy().await?;
        }
        self.admin.reset(scenario.stock).await?;
        let applied = self.admin.set_config(&settings).await?;
        self.admin
            .wait_for_settings(&applied, self.instances, Duration::from_secs(10))
            .await
    }

    /// Ends the partition in force, if any: the next run starts on a whole network.
    async fn heal(&self) -> anyhow::Result<()> {
        self.admin
            .request(Method::DELETE, "/admin/partition", None)
            .await
            .map(drop)
    }

    async fn disarm(&self) -> anyhow::Result<()> {
        self.admin
            .request(Method::DELETE, "/admin/faults", None)
            .await
            .map(drop)
    }

    /// Waits until every lock-store node answers, one of them is the primary, the rest are
    /// its replicas, and every Sentinel names that primary (Redlock: every master answers as
    /// a primary; a cluster: half its nodes are masters): a scenario that kills the primary needs a store that has recovered from the
    /// last one.
    async fn wait_store_healthy(&self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let store = self.admin.state().await?.lock_store;
            let nodes = &store.nodes;
            let primaries: Vec<&str> = nodes
                .iter()
                .filter(|n| n.role.as_deref() == Some("primary"))
                .map(|n| n.addr.as_str())
                .collect();
            let independent = store.kind == LockStoreKind::Redlock;
            // A cluster: as many masters as replicas (a killed master back as a replica).
            let sharded = store.kind == LockStoreKind::Cluster;
            // Every ZooKeeper server serving (standalone, or a leader and followers).
            let zookeeper_up = store
                .zookeeper
                .iter()
                .flat_map(|z| &z.servers)
                .all(|s| s.mode.is_some());
            let healthy = zookeeper_up
                && !nodes.is_empty()
                && nodes.iter().all(|n| n.up)
                && (primaries.len() == 1
                    || independent && primaries.len() == nodes.len()
                    || sharded && primaries.len() * 2 == nodes.len())
                && store
                    .sentinels
                    .iter()
                    .all(|s| s.up && s.primary.as_deref() == primaries.first().copied());
            if healthy {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(anyhow!(
                    "the lock store did not recover within 30 s: {store:?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Arms the fault and waits until every instance holds it: an instance that has not heard
    /// of it would not fire it.
    async fn arm(&self, fault: &Fault) -> anyhow::Result<()> {
        let mut fault = fault.clone();
        // Only a fault that stops a process (a crash, a freeze) could take the runner's
        // instance down. One that strikes its room alone or the lock store is left to the
        // next holder anywhere, as the scenario means: pinned to one instance, it may meet a
        // holder nobody waits for, and buyers on the other instances, who do not see it
        // armed, do not wait for it to strike.
        let stops_a_process = !fault.kind.strikes_room_only()
            && !fault.kind.strikes_lock_store()
            && fault.kind != FaultKind::Partition;
        let spare = self.spare.as_ref().filter(|_| stops_a_process);
        if let Some(spare) = spare {
            let listed = self.admin.request(Method::GET, "/instances", None).await?;
            let target = listed["instances"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["instance"].as_str())
                .find(|id| id != spare)
                .ok_or_else(|| anyhow!("no instance other than {spare} to take the fault"))?;
            fault.instance = Some(target.to_owned());
        }
        self.admin
            .request(
                Method::POST,
                "/admin/faults",
                Some(serde_json::to_value(&fault)?),
            )
            .await?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut armed: BTreeMap<String, bool> = BTreeMap::new();
        loop {
            for target in self.targets.iter() {
                let state = self.admin.state_of(target).await?;
                armed.insert(state.instance, !state.faults.is_empty());
            }
            if armed.len() >= self.instances && armed.values().all(|k| *k) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(anyhow!(
                    "the fault did not reach every instance within 10 s"
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Fires the chapter's buyers; `keep`: keep every request whole, for the run's history.
    async fn fire(&self, scenario: &Scenario, keep: bool) -> anyhow::Result<Fired> {
        let limit = Duration::from_millis(scenario.wait_deadline_ms + 30_000);
        match scenario.via {
            Via::Fleet => {
                let options = BurstOptions {
                    timeout: limit,
                    connections: scenario.connections,
                    keep_answers: keep,
                    ..BurstOptions::default()
                };
                let mut stats = burst(self.targets, scenario.buyers, &options).await?;
                let fairness = Fairness::of(&stats.ok_per_client);
                Ok(Fired {
                    ok: stats.status(200) as f64,
                    sold_out: stats.status(409) as f64,
                    unavailable: stats.status(503) as f64,
                    other: (stats.sent()
                        - stats.status(200)
                        - stats.status(409)
                        - stats.status(503)) as f64,
                    throughput: stats.throughput(),
                    max_ms: stats.max_ms(),
                    p99_ms: Some(stats.latency_ms(0.99)),
                    min_over_max: fairness.min_over_max,
                    exchanges: keep.then(|| std::mem::take(&mut stats.exchanges)),
                })
            }
            Via::Instance => {
                let request = BurstRequest {
                    buyers: scenario.buyers,
                    qty: None,
                    via: Some(Via::Instance),
                };
                let reply = self
                    .admin
                    .clone()
                    .with_timeout(limit)
                    .request(
                        Method::POST,
                        "/admin/burst",
                        Some(serde_json::to_value(&request)?),
                    )
                    .await?;
                let report: BurstReport = serde_json::from_value(reply)
                    .context("POST /admin/burst did not answer a burst report")?;
                Ok(Fired {
                    ok: report.ok as f64,
                    sold_out: report.sold_out as f64,
                    unavailable: report.unavailable as f64,
                    other: report.errors as f64,
                    throughput: report.throughput_rps,
                    // The buyers start together: the last answer is the slowest buyer's.
                    max_ms: report.elapsed_ms,
                    p99_ms: None,
                    min_over_max: None,
                    exchanges: None,
                })
            }
        }
    }

    /// The lowest hold count any ledger entry recorded (2 = every sale re-entered).
    async fn min_depth(&self) -> anyhow::Result<f64> {
        let ledger = self
            .admin
            .request(Method::GET, "/ledger?limit=10000", None)
            .await?;
        let orders = ledger["orders"]
            .as_array()
            .context("/ledger has no orders list")?;
        Ok(orders
            .iter()
            .filter_map(|o| o["depth"].as_f64())
            .fold(f64::INFINITY, f64::min))
    }

    /// Deadlock, as a user sees it: nothing sold, 503s, a lock with no TTL; still stuck after
    /// twice the lease would have run; sales come back only after a reset.
    async fn judge_deadlock(
        &self,
        scenario: &Scenario,
        state: &StateView,
        fired: &Fired,
    ) -> anyhow::Result<(Vec<Verdict>, f64)> {
        let lock_ttl = state.truth.lock.ttl_ms;
        let mut verdicts = vec![verdict(
            "deadlock-no-ttl",
            lock_ttl.unwrap_or(-2) as f64,
            lock_ttl == Some(-1),
        )];
        // Twice the lease: a lock with an expiry would have been gone by now. Waiting is the
        // point of this check, not a guess at a timing.
        tokio::time::sleep(Duration::from_millis(2 * scenario.ttl_ms)).await;
        let (sold_after, refused) = self.probe(5).await?;
        verdicts.push(verdict("deadlock-stalled", sold_after, sold_after == 0.0));
        // The burst's own buyers may all have been sold or gone with the crashed instance
        // (whichever instance the fault strikes, its buyers die with it); the probe's buyers
        // wait on the dead holder's lock until their deadline either way.
        let waited_out = fired.unavailable + refused;
        verdicts.insert(0, verdict("deadlock-503", waited_out, waited_out > 0.0));
        self.admin.reset(scenario.stock).await?;
        let (sold, _) = self.probe(5).await?;
        verdicts.push(verdict("deadlock-reset", sold, sold == 5.0));
        Ok((verdicts, sold_after))
    }

    /// Sales come back by themselves once the lock store is: waits until it is healthy again
    /// (its supervisor restarts it), then a few buyers must all be sold.
    async fn judge_back(&self) -> anyhow::Result<Verdict> {
        self.wait_store_healthy().await?;
        let (sold, _) = self.probe(5).await?;
        Ok(verdict("store-back", sold, sold == 5.0))
    }

    /// Fires a few buyers through the fleet; how many were sold, and how many got a 503.
    async fn probe(&self, buyers: usize) -> anyhow::Result<(f64, f64)> {
        let options = BurstOptions {
            connections: Some(buyers),
            timeout: Duration::from_secs(30),
            ..BurstOptions::default()
        };
        let stats = burst(self.targets, buyers, &options).await?;
        Ok((stats.status(200) as f64, stats.status(503) as f64))
    }
}

/// The widest gap, in ms, between a load's first request and its first sale or between two
/// sales answered in a row; `None` for a load that kept no requests.
fn widest_gap_ms(exchanges: &[loadtest::Exchange]) -> Option<f64> {
    let start = exchanges.iter().map(|e| e.call_us).min()?;
    let mut sold: Vec<i64> = exchanges
        .iter()
        .filter(|e| e.status == 200)
        .map(|e| e.return_us)
        .collect();
    sold.sort_unstable();
    let (mut last, mut widest) = (start, 0);
    for at in sold {
        widest = widest.max(at - last);
        last = at;
    }
    Some(widest as f64 / 1000.0)
}

/// The reference tier a chapter's `throughput_vs_<tier>` figure names (its id with `_` for
/// `-`), and that figure's name.
fn reference_tier(scenario: &Scenario) -> anyhow::Result<Option<(&'static str, Tier)>> {
    let Expect::Figures(checks) = scenario.expect else {
        return Ok(None);
    };
    let Some((figure, id)) = checks
        .iter()
        .find_map(|c| Some((c.figure, c.figure.strip_prefix("throughput_vs_")?)))
    else {
        return Ok(None);
    };
    let tier = id
        .replace('_', "-")
        .parse::<Tier>()
        .map_err(|e| anyhow!("scenario {}: figure {figure}: {e}", scenario.id))?;
    Ok(Some((figure, tier)))
}
