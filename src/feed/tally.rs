//! Running totals of one room, fed only what is new: ledger entries and lock-timeline entries
//! are append-only, so each is read and counted once. Pure: no Redis, no clock of its own.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use redis::streams::StreamId;
use serde::{Deserialize, Serialize};

/// The window the throughput is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(1);

/// Figures of one instance, derived from the ledger and the timeline.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct PerInstance {
    /// Ledger entries written by this instance (exact).
    pub orders: i64,
    pub items: i64,
    /// Critical sections entered (timeline).
    pub sections: i64,
    /// Overlapping pairs counted at this instance's exits (timeline).
    pub overlaps: i64,
    /// Locks of others this instance deleted (timeline).
    pub foreign_releases: i64,
    /// Reads or writes refused by the fencing check (timeline).
    pub stale: i64,
    /// Watchdog renewals (timeline).
    pub renewals: i64,
}

/// One lock-timeline entry: its stream id and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineEntry {
    pub id: String,
    pub fields: BTreeMap<String, String>,
}

impl TimelineEntry {
    pub fn from_stream(entry: &StreamId) -> Self {
        let fields = entry
            .map
            .iter()
            .map(|(name, value)| {
                let text: String = redis::from_redis_value_ref(value).unwrap_or_default();
                (name.clone(), text)
            })
            .collect();
        TimelineEntry {
            id: entry.id.clone(),
            fields,
        }
    }

    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

/// The fields of a ledger entry the tally needs.
#[derive(Deserialize)]
struct LedgerFields {
    #[serde(default)]
    instance: Option<String>,
    #[serde(default)]
    qty: Option<i64>,
}

/// The room's running totals since its last reset.
#[derive(Debug, Default)]
pub struct Tally {
    per_instance: BTreeMap<String, PerInstance>,
    /// Ledger entries counted so far: the next read starts here.
    ledger_seen: i64,
    /// The last timeline id counted: the next read starts after it.
    timeline_seen: Option<String>,
    /// (when, orders) over the last [`RATE_WINDOW`].
    rate: VecDeque<(Instant, i64)>,
}

impl Tally {
    pub fn per_instance(&self) -> &BTreeMap<String, PerInstance> {
        &self.per_instance
    }

    pub fn ledger_seen(&self) -> i64 {
        self.ledger_seen
    }

    pub fn timeline_seen(&self) -> Option<&str> {
        self.timeline_seen.as_deref()
    }

    /// Starts again from nothing (the room was reset).
    pub fn clear(&mut self) {
        *self = Tally::default();
    }

    /// Counts ledger entries read from position [`Tally::ledger_seen`] on.
    pub fn ledger(&mut self, entries: &[String]) {
        self.ledger_seen += entries.len() as i64;
        for entry in entries {
            let Ok(order) = serde_json::from_str::<LedgerFields>(entry) else {
                continue;
            };
            let instance = order.instance.unwrap_or_else(|| "?".into());
            let figures = self.per_instance.entry(instance).or_default();
            figures.orders += 1;
            figures.items += order.qty.unwrap_or(1);
        }
    }

    /// Counts timeline entries read after [`Tally::timeline_seen`], oldest first.
    pub fn timeline(&mut self, entries: &[TimelineEntry]) {
        for entry in entries {
            // A lease the lock store stamped names no instance: no figure of one.
            if entry.field("kind") == "lease" {
                continue;
            }
            let figures = self
                .per_instance
                .entry(entry.field("instance").to_owned())
                .or_default();
            match entry.field("kind") {
                "enter" | "deduct" => figures.sections += 1,
                "exit" => {
                    figures.overlaps += entry.field("overlaps").parse::<i64>().unwrap_or(0);
                    if entry.field("outcome") == "stale" {
                        figures.stale += 1;
                    }
                }
                "stale" => figures.stale += 1,
                "foreign_release" => figures.foreign_releases += 1,
                "renew" => figures.renewals += 1,
                _ => {}
            }
        }
        if let Some(last) = entries.last() {
            self.timeline_seen = Some(last.id.clone());
        }
    }

    /// Orders per second over the last second, given the order count read at `now`.
    pub fn throughput(&mut self, now: Instant, orders: i64) -> f64 {
        self.rate.push_back((now, orders));
        while self
            .rate
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > RATE_WINDOW)
        {
            self.rate.pop_front();
        }
        match (self.rate.front(), self.rate.back()) {
            (Some((t0, o0)), Some((t1, o1))) if t1 > t0 => {
                ((o1 - o0).max(0) as f64) / t1.duration_since(*t0).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, fields: &[(&str, &str)]) -> TimelineEntry {
        TimelineEntry {
            id: id.into(),
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn ledger_entries_are_counted_once_per_instance_with_their_items() {
        let mut tally = Tally::default();
        tally.ledger(&[
            r#"{"instance":"app1","qty":2}"#.into(),
            r#"{"instance":"app2"}"#.into(),
            "not json".into(),
        ]);
        tally.ledger(&[r#"{"instance":"app1","qty":1}"#.into()]);
        assert_eq!(
            tally.ledger_seen(),
            4,
            "the next read starts after all four"
        );
        let app1 = &tally.per_instance()["app1"];
        assert_eq!((app1.orders, app1.items), (2, 3));
        assert_eq!(tally.per_instance()["app2"].items, 1);
    }

    #[test]
    fn timeline_entries_feed_each_instance_figure() {
        let mut tally = Tally::default();
        tally.timeline(&[
            entry("1-0", &[("kind", "enter"), ("instance", "a")]),
            entry(
                "1-1",
                &[("kind", "exit"), ("instance", "a"), ("overlaps", "2")],
            ),
            entry(
                "2-0",
                &[("kind", "exit"), ("instance", "b"), ("outcome", "stale")],
            ),
            entry("2-1", &[("kind", "foreign_release"), ("instance", "b")]),
            entry("3-0", &[("kind", "renew"), ("instance", "b")]),
            entry("3-1", &[("kind", "deduct"), ("instance", "c")]),
        ]);
        assert_eq!(tally.timeline_seen(), Some("3-1"));
        let a = &tally.per_instance()["a"];
        assert_eq!((a.sections, a.overlaps), (1, 2));
        let b = &tally.per_instance()["b"];
        assert_eq!((b.stale, b.foreign_releases, b.renewals), (1, 1, 1));
        assert_eq!(tally.per_instance()["c"].sections, 1);
        tally.clear();
        assert!(tally.per_instance().is_empty());
        assert_eq!((tally.ledger_seen(), tally.timeline_seen()), (0, None));
    }

    #[test]
    fn throughput_is_the_order_rate_over_the_last_second() {
        let mut tally = Tally::default();
        let t0 = Instant::now();
        assert_eq!(tally.throughput(t0, 0), 0.0);
        let rate = tally.throughput(t0 + Duration::from_millis(500), 50);
        assert!((rate - 100.0).abs() < 1e-6, "{rate}");
        // Older than the window: forgotten.
        let rate = tally.throughput(t0 + Duration::from_millis(2000), 50);
        assert_eq!(rate, 0.0);
    }
}
