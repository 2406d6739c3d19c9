//! Prometheus metrics of one instance, per tier: sales, sold-outs, lock timeouts, errors, lost
//! releases, and
//! histograms of lock wait and request latency. Plain atomics: every request touches them and
//! none needs a lock.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use oversell_api::tier::Tier;

/// Upper bounds of the histogram buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl Histogram {
    fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.buckets[i].fetch_add(1, Relaxed);
        }
        self.count.fetch_add(1, Relaxed);
        self.sum_us.fetch_add(d.as_micros() as u64, Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let mut cumulative = 0;
        for (bound, n) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += n.load(Relaxed);
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count.load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {count}");
        let sum = self.sum_us.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum{{{labels}}} {sum}");
        let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
    }
}

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

const OUTCOMES: [(&str, &str); 6] = [
    ("oversell_sales_total", "Sales acknowledged with 200"),
    (
        "oversell_sold_out_total",
        "Sales refused with 409: sold out",
    ),
    (
        "oversell_lock_timeouts_total",
        "Buyers who hit the lock wait deadline",
    ),
    (
        "oversell_lock_lost_total",
        "Sales refused because a newer lock holder wrote first",
    ),
    (
        "oversell_redis_unavailable_total",
        "Sales refused because Redis was unavailable",
    ),
    (
        "oversell_failures_total",
        "Sales that failed with an internal error",
    ),
];

#[derive(Default)]
struct TierMetrics {
    outcomes: [AtomicU64; OUTCOMES.len()],
    /// Locks a cohort handed to the next buyer of this instance (`wait: cohort`).
    passes: AtomicU64,
    /// Buyers told "sold out" at the door, without queueing for the lock.
    at_the_door: AtomicU64,
    /// Releases that found the lock already gone or someone else's.
    lost_releases: AtomicU64,
    lock_wait: Histogram,
    request: Histogram,
}

const COUNTERS: [(&str, &str); 3] = [
    (
        "oversell_lock_passes_total",
        "Locks handed to the next buyer of the instance without a release (wait: cohort)",
    ),
    (
        "oversell_sold_out_at_the_door_total",
        "Buyers told sold out by an unlocked read, once the room was seen sold out",
    ),
    (
        "oversell_lost_releases_total",
        "Releases that found the lock already gone or someone else's: the holder had lost it \
         without knowing (Redisson throws IllegalMonitorStateException here)",
    ),
];

pub struct Metrics {
    instance: String,
    tiers: [TierMetrics; Tier::ALL.len()],
}

impl Metrics {
    pub fn new(instance: &str) -> Self {
        Metrics {
            instance: instance.to_owned(),
            tiers: Default::default(),
        }
    }

    pub fn lock_wait(&self, tier: Tier, waited: Duration) {
        self.tiers[tier.index()].lock_wait.observe(waited);
    }

    /// A cohort handed the lock to the next buyer of this instance.
    pub fn lock_passed(&self, tier: Tier) {
        self.tiers[tier.index()].passes.fetch_add(1, Relaxed);
    }

    /// A buyer was told "sold out" at the door, without the lock.
    pub fn turned_away(&self, tier: Tier) {
        self.tiers[tier.index()].at_the_door.fetch_add(1, Relaxed);
    }

    /// A holder's release found its lock already gone or someone else's.
    pub fn lost_release(&self, tier: Tier) {
        self.tiers[tier.index()].lost_releases.fetch_add(1, Relaxed);
    }

    pub fn request(&self, tier: Tier, outcome: Outcome, took: Duration) {
        let t = &self.tiers[tier.index()];
        t.outcomes[outcome as usize].fetch_add(1, Relaxed);
        t.request.observe(took);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let labels = |tier: Tier| format!("tier=\"{tier}\",instance=\"{}\"", self.instance);
        for (i, (name, help)) in OUTCOMES.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for tier in Tier::ALL {
                let n = self.tiers[tier.index()].outcomes[i].load(Relaxed);
                let _ = writeln!(out, "{name}{{{}}} {n}", labels(tier));
            }
        }
        for (i, (name, help)) in COUNTERS.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for tier in Tier::ALL {
                let t = &self.tiers[tier.index()];
                let n = [&t.passes, &t.at_the_door, &t.lost_releases][i].load(Relaxed);
                let _ = writeln!(out, "{name}{{{}}} {n}", labels(tier));
            }
        }
        let histograms = [
            (
                "oversell_lock_wait_seconds",
                "Time spent waiting for the lock",
            ),
            (
                "oversell_request_duration_seconds",
                "Time to answer POST /sale",
            ),
        ];
        for (h, (name, help)) in histograms.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            for tier in Tier::ALL {
                let t = &self.tiers[tier.index()];
                let hist = if h == 0 { &t.lock_wait } else { &t.request };
                hist.render(&mut out, name, &labels(tier));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::new("i1");
        m.request(Tier::None, Outcome::Sold, Duration::from_micros(300));
        m.request(Tier::None, Outcome::Sold, Duration::from_millis(30));
        let text = m.render();
        assert!(text.contains("oversell_sales_total{tier=\"none\",instance=\"i1\"} 2"));
        assert!(text.contains(
            "oversell_request_duration_seconds_bucket{tier=\"none\",instance=\"i1\",le=\"0.0005\"} 1"
        ));
        assert!(text.contains(
            "oversell_request_duration_seconds_bucket{tier=\"none\",instance=\"i1\",le=\"0.05\"} 2"
        ));
    }

    #[test]
    fn passes_buyers_turned_away_and_lost_releases_are_counted_per_tier() {
        let m = Metrics::new("i1");
        m.lock_passed(Tier::Fenced);
        m.lock_passed(Tier::Fenced);
        m.turned_away(Tier::LuaRelease);
        m.lost_release(Tier::Redlock);
        let text = m.render();
        assert!(text.contains("oversell_lost_releases_total{tier=\"redlock\",instance=\"i1\"} 1"));
        assert!(text.contains("oversell_lock_passes_total{tier=\"fenced\",instance=\"i1\"} 2"));
        assert!(text.contains("oversell_lock_passes_total{tier=\"lua-release\",instance=\"i1\"} 0"));
        assert!(text.contains(
            "oversell_sold_out_at_the_door_total{tier=\"lua-release\",instance=\"i1\"} 1"
        ));
    }
}
