//! Prometheus metrics of one instance, per tier, written by the `prometheus-client` crate (the
//! Prometheus project's own Rust client): sales by outcome, the lock's wait and the request's
//! latency as histograms, and what an operator of a lock watches — renewals and failed
//! renewals, hand-offs, lost releases, fencing refusals — and the dashboards watching, the
//! class's votes, and the requests the instance's own per-client limit refused.
//!
//! Every series is a `Family` keyed by tier (and the instance, so that one scrape of several
//! instances keeps them apart); the crate's counters and histograms are atomics behind an
//! `Arc`, so every request touches them without a lock and a handle may be cloned into a task
//! (the watchdog's renewals).

use std::time::Duration;

use oversell_api::tier::Tier;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upper bounds of the histogram buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How a sale request ended, for the counters.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    Sold,
    SoldOut,
    LockTimeout,
    LockLost,
    Unavailable,
    Failed,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TierLabels {
    tier: String,
    instance: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InstanceLabels {
    instance: String,
}

/// A vote counted, by the round it was counted in.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RoundLabels {
    round: String,
    instance: String,
}

/// A vote refused, by why (`no_token`, `other_room`, `no_open_round`, …).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabels {
    reason: String,
    instance: String,
}

type PerTier<M> = Family<TierLabels, M>;

fn histograms() -> PerTier<Histogram> {
    Family::new_with_constructor(|| Histogram::new(BUCKETS))
}

/// What one sale met on its way, beside its outcome: written once as it ends
/// ([`Metrics::sale`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SaleRecord {
    /// The room's tier when the sale began (`None`: the room could not be read).
    pub tier: Option<Tier>,
    /// How long it waited for the lock, when it took one.
    pub lock_wait: Option<Duration>,
    /// It handed the lock to the next buyer of its instance (a cohort's pass).
    pub passed: bool,
    /// It was told "sold out" at the door, without the lock.
    pub turned_away: bool,
    /// The fencing check refused its stock write.
    pub stale_write_rejected: bool,
    /// Items its write took beyond the room's initial stock.
    pub oversold: u64,
}

/// A lock's renewals as its watchdog counts them, for one tier: cloned into the watchdog's
/// task, which outlives the borrow of the sale's metrics.
#[derive(Clone)]
pub struct RenewalCounters {
    renewed: Counter,
    failed: Counter,
}

impl RenewalCounters {
    pub fn renewed(&self) {
        self.renewed.inc();
    }

    pub fn failed(&self) {
        self.failed.inc();
    }
}

/// The instance's own per-client limit counts its refusals here: a handle cloned into the
/// limiter, which answers in the accept loop, before any request reaches `AppState`. A
/// default one counts into no registry (a limiter on its own, in a test).
#[derive(Clone, Default)]
pub struct ClientLimitRefusals(Counter);

impl ClientLimitRefusals {
    pub fn refused(&self) {
        self.0.inc();
    }
}

pub struct Metrics {
    instance: String,
    registry: Registry,
    /// By [`Outcome`], in its order.
    outcomes: [PerTier<Counter>; 6],
    passes: PerTier<Counter>,
    at_the_door: PerTier<Counter>,
    lost_releases: PerTier<Counter>,
    renewals: PerTier<Counter>,
    renewals_failed: PerTier<Counter>,
    stale_writes: PerTier<Counter>,
    oversold: PerTier<Counter>,
    lock_wait: PerTier<Histogram>,
    request: PerTier<Histogram>,
    viewers: Family<InstanceLabels, Gauge>,
    votes: Family<RoundLabels, Counter>,
    votes_refused: Family<RefusedLabels, Counter>,
    /// Per instance only: a label per client address would be a series per address.
    client_limit_refused: Family<InstanceLabels, Counter>,
}

impl Metrics {
    pub fn new(instance: &str) -> Self {
        let mut metrics = Metrics {
            instance: instance.to_owned(),
            registry: Registry::default(),
            outcomes: Default::default(),
            passes: Family::default(),
            at_the_door: Family::default(),
            lost_releases: Family::default(),
            renewals: Family::default(),
            renewals_failed: Family::default(),
            stale_writes: Family::default(),
            oversold: Family::default(),
            lock_wait: histograms(),
            request: histograms(),
            viewers: Family::default(),
            votes: Family::default(),
            votes_refused: Family::default(),
            client_limit_refused: Family::default(),
        };
        metrics.register();
        metrics.touch_every_tier();
        metrics
    }

    /// Names and help texts. A counter's name gets `_total` from the crate.
    fn register(&mut self) {
        let r = &mut self.registry;
        let outcomes = [
            ("oversell_sales", "Sales acknowledged with 200"),
            ("oversell_sold_out", "Sales refused with 409: sold out"),
            (
                "oversell_lock_timeouts",
                "Buyers who hit the lock wait deadline",
            ),
            (
                "oversell_lock_lost",
                "Sales refused because a newer lock holder wrote first",
            ),
            (
                "oversell_redis_unavailable",
                "Sales refused because Redis was unavailable",
            ),
            (
                "oversell_failures",
                "Sales that failed with an internal error",
            ),
        ];
        for ((name, help), family) in outcomes.into_iter().zip(&self.outcomes) {
            r.register(name, help, family.clone());
        }
        r.register(
            "oversell_lock_passes",
            "Locks handed to the next buyer of the instance without a release (wait: cohort)",
            self.passes.clone(),
        );
        r.register(
            "oversell_sold_out_at_the_door",
            "Buyers told sold out by an unlocked read, once the room was seen sold out",
            self.at_the_door.clone(),
        );
        r.register(
            "oversell_lost_releases",
            "Releases that found the lock already gone or someone else's: the holder had lost \
             it without knowing (Redisson throws IllegalMonitorStateException here)",
            self.lost_releases.clone(),
        );
        r.register(
            "oversell_lock_renewals",
            "Leases the watchdog renewed while their holder worked",
            self.renewals.clone(),
        );
        r.register(
            "oversell_lock_renewals_failed",
            "Renewals that failed (the lock store did not answer): the lease runs on towards \
             its end",
            self.renewals_failed.clone(),
        );
        r.register(
            "oversell_stale_writes_rejected",
            "Stock writes the fencing check refused: a holder whose token was no longer the \
             highest",
            self.stale_writes.clone(),
        );
        r.register(
            "oversell_oversold_items",
            "Items this instance sold beyond the room's initial stock (the ground truth's \
             oversold, as each sale's write found it)",
            self.oversold.clone(),
        );
        r.register(
            "oversell_lock_wait_seconds",
            "Time spent waiting for the lock",
            self.lock_wait.clone(),
        );
        r.register(
            "oversell_request_duration_seconds",
            "Time to answer POST /sale",
            self.request.clone(),
        );
        r.register(
            "oversell_viewers",
            "Dashboards (event streams) this instance serves now",
            self.viewers.clone(),
        );
        r.register(
            "oversell_votes",
            "Class votes counted, by the round they were cast in (a room voting again in the round \
             counts again)",
            self.votes.clone(),
        );
        r.register(
            "oversell_votes_refused",
            "Class votes refused, by why (no_token, admin_token, unknown_token, other_room, \
             not_in_class, no_open_round, out_of_range)",
            self.votes_refused.clone(),
        );
        r.register(
            "oversell_client_limit_refused",
            "Requests this instance's own per-client limit (--client-rate, --client-burst) \
             refused with 429 too_many_requests, before routing; nginx's refusals in front of \
             it are not counted here",
            self.client_limit_refused.clone(),
        );
    }

    /// Every tier's series exists from the start, at zero: a rate over a series that appears
    /// only with its first event misses that event.
    fn touch_every_tier(&self) {
        for tier in Tier::ALL {
            let labels = self.labels(tier);
            for family in self.outcomes.iter().chain([
                &self.passes,
                &self.at_the_door,
                &self.lost_releases,
                &self.renewals,
                &self.renewals_failed,
                &self.stale_writes,
                &self.oversold,
            ]) {
                let _ = family.get_or_create(&labels);
            }
            let _ = self.lock_wait.get_or_create(&labels);
            let _ = self.request.get_or_create(&labels);
        }
        let _ = self.viewers.get_or_create(&self.instance_labels());
        let _ = self
            .client_limit_refused
            .get_or_create(&self.instance_labels());
        for round in 1..=crate::poll::ballot_box::LAST_ROUND {
            let _ = self.votes.get_or_create(&self.round_labels(round));
        }
    }

    fn instance_labels(&self) -> InstanceLabels {
        InstanceLabels {
            instance: self.instance.clone(),
        }
    }

    /// The counter the per-client limit counts its refusals in.
    pub fn client_limit_refusals(&self) -> ClientLimitRefusals {
        ClientLimitRefusals(
            self.client_limit_refused
                .get_or_create(&self.instance_labels())
                .clone(),
        )
    }

    fn round_labels(&self, round: u8) -> RoundLabels {
        RoundLabels {
            round: round.to_string(),
            instance: self.instance.clone(),
        }
    }

    /// A class vote was counted in `round`.
    pub fn vote_counted(&self, round: u8) {
        self.votes.get_or_create(&self.round_labels(round)).inc();
    }

    /// A class vote was refused for `reason`.
    pub fn vote_refused(&self, reason: &str) {
        let labels = RefusedLabels {
            reason: reason.to_owned(),
            instance: self.instance.clone(),
        };
        self.votes_refused.get_or_create(&labels).inc();
    }

    fn labels(&self, tier: Tier) -> TierLabels {
        TierLabels {
            tier: tier.to_string(),
            instance: self.instance.clone(),
        }
    }

    /// A holder's release found its lock already gone or someone else's.
    pub fn lost_release(&self, tier: Tier) {
        self.lost_releases.get_or_create(&self.labels(tier)).inc();
    }

    /// The counters a watchdog of this tier's lock counts its renewals in.
    pub fn renewals(&self, tier: Tier) -> RenewalCounters {
        let labels = self.labels(tier);
        RenewalCounters {
            renewed: self.renewals.get_or_create(&labels).clone(),
            failed: self.renewals_failed.get_or_create(&labels).clone(),
        }
    }

    /// The event streams this instance serves, as the feed counts them.
    pub fn set_viewers(&self, streams: usize) {
        self.viewers
            .get_or_create(&self.instance_labels())
            .set(i64::try_from(streams).unwrap_or(i64::MAX));
    }

    /// One sale as it ended: how, how long it took, and what it met on the way.
    pub fn sale(&self, tier: Tier, outcome: Outcome, took: Duration, met: &SaleRecord) {
        let labels = self.labels(tier);
        self.outcomes[outcome as usize].get_or_create(&labels).inc();
        self.request
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        if let Some(waited) = met.lock_wait {
            self.lock_wait
                .get_or_create(&labels)
                .observe(waited.as_secs_f64());
        }
        if met.passed {
            self.passes.get_or_create(&labels).inc();
        }
        if met.turned_away {
            self.at_the_door.get_or_create(&labels).inc();
        }
        if met.stale_write_rejected {
            self.stale_writes.get_or_create(&labels).inc();
        }
        if met.oversold > 0 {
            self.oversold.get_or_create(&labels).inc_by(met.oversold);
        }
    }

    /// The exposition, in Prometheus' text format 0.0.4 (see [`as_prometheus_text`]).
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        as_prometheus_text(&out)
    }
}

/// The crate writes OpenMetrics, where a counter's family is named without the `_total` its
/// samples carry and the text ends with `# EOF`. Prometheus' text format 0.0.4 — what
/// `/metrics` says it serves, and what `promtool check metrics` reads — names the family as
/// its samples: a counter's `# HELP` and `# TYPE` take `_total` here, and `# EOF` goes.
fn as_prometheus_text(openmetrics: &str) -> String {
    let counters: Vec<&str> = openmetrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 16 * counters.len());
    for line in openmetrics.lines() {
        if line == "# EOF" {
            continue;
        }
        let family = ["# HELP ", "# TYPE "].into_iter().find_map(|tag| {
            let rest = line.strip_prefix(tag)?;
            let name = rest.split(' ').next()?;
            counters
                .contains(&name)
                .then(|| format!("{tag}{name}_total{}", &rest[name.len()..]))
        });
        out.push_str(family.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::new("i1");
        let plain = SaleRecord::default();
        m.sale(
            Tier::None,
            Outcome::Sold,
            Duration::from_micros(300),
            &plain,
        );
        m.sale(Tier::None, Outcome::Sold, Duration::from_millis(30), &plain);
        let text = m.render();
        assert!(
            text.contains("oversell_sales_total{tier=\"none\",instance=\"i1\"} 2"),
            "{text}"
        );
        assert!(text.contains(
            "oversell_request_duration_seconds_bucket{le=\"0.0005\",tier=\"none\",instance=\"i1\"} 1"
        ), "{text}");
        assert!(text.contains(
            "oversell_request_duration_seconds_bucket{le=\"0.05\",tier=\"none\",instance=\"i1\"} 2"
        ));
    }

    #[test]
    fn the_client_limits_refusals_are_a_series_from_the_start() {
        let text = Metrics::new("i1").render();
        let line = "oversell_client_limit_refused_total{instance=\"i1\"} 0";
        assert!(text.contains(line), "{line} not in\n{text}");
    }

    #[test]
    fn what_a_lock_operator_watches_is_counted_per_tier() {
        let m = Metrics::new("i1");
        let took = Duration::from_millis(1);
        let passed = SaleRecord {
            lock_wait: Some(took),
            passed: true,
            ..SaleRecord::default()
        };
        m.sale(Tier::Fenced, Outcome::Sold, took, &passed);
        m.sale(Tier::Fenced, Outcome::Sold, took, &passed);
        let turned_away = SaleRecord {
            turned_away: true,
            ..SaleRecord::default()
        };
        m.sale(Tier::LuaRelease, Outcome::SoldOut, took, &turned_away);
        m.lost_release(Tier::Redlock);
        let stale = SaleRecord {
            lock_wait: Some(took),
            stale_write_rejected: true,
            ..SaleRecord::default()
        };
        m.sale(Tier::Fenced, Outcome::LockLost, took, &stale);
        let oversold = SaleRecord {
            oversold: 2,
            ..SaleRecord::default()
        };
        m.sale(Tier::None, Outcome::Sold, took, &oversold);
        m.sale(Tier::None, Outcome::Sold, took, &SaleRecord::default());
        let renewals = m.renewals(Tier::ReentrantWatchdog);
        renewals.renewed();
        renewals.renewed();
        renewals.failed();
        m.set_viewers(3);
        m.vote_counted(2);
        m.vote_refused("no_open_round");
        let refusals = m.client_limit_refusals();
        refusals.refused();
        refusals.refused();
        let text = m.render();
        for line in [
            "oversell_lost_releases_total{tier=\"redlock\",instance=\"i1\"} 1",
            "oversell_lock_passes_total{tier=\"fenced\",instance=\"i1\"} 2",
            "oversell_lock_passes_total{tier=\"lua-release\",instance=\"i1\"} 0",
            "oversell_sold_out_at_the_door_total{tier=\"lua-release\",instance=\"i1\"} 1",
            "oversell_stale_writes_rejected_total{tier=\"fenced\",instance=\"i1\"} 1",
            "oversell_lock_renewals_total{tier=\"reentrant-watchdog\",instance=\"i1\"} 2",
            "oversell_lock_renewals_failed_total{tier=\"reentrant-watchdog\",instance=\"i1\"} 1",
            "oversell_viewers{instance=\"i1\"} 3",
            "oversell_oversold_items_total{tier=\"none\",instance=\"i1\"} 2",
            "oversell_lock_wait_seconds_count{tier=\"fenced\",instance=\"i1\"} 3",
            "oversell_votes_total{round=\"1\",instance=\"i1\"} 0",
            "oversell_votes_total{round=\"2\",instance=\"i1\"} 1",
            "oversell_votes_refused_total{reason=\"no_open_round\",instance=\"i1\"} 1",
            "oversell_client_limit_refused_total{instance=\"i1\"} 2",
            "# TYPE oversell_client_limit_refused_total counter",
            "# TYPE oversell_votes_total counter",
            "# TYPE oversell_sales_total counter",
            "# HELP oversell_sales_total Sales acknowledged with 200",
        ] {
            assert!(text.contains(line), "{line} not in\n{text}");
        }
        assert!(!text.contains("# EOF"), "{text}");
    }
}
