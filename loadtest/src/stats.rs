//! What a run measured: status counts, failures, and latencies in an HDR histogram.
//!
//! Each worker keeps a [`Tally`]: its counts are plain fields (no sharing), and its latencies are
//! buffered and poured into one shared histogram in batches, so a lock is taken once per
//! thousands of requests and a burst of thousands of one-request workers does not allocate a
//! histogram each. At the end the tallies are merged into one [`RunStats`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latencies are recorded in microseconds, from 1 µs to one hour, to three significant digits.
const LOWEST_US: u64 = 1;
const HIGHEST_US: u64 = 3_600_000_000;
const SIGFIG: u8 = 3;
/// Latencies a worker buffers before taking the shared histogram's lock.
const BATCH: usize = 1024;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_US, HIGHEST_US, SIGFIG).expect("valid histogram bounds")
}

/// The histogram every worker of a run pours into. A std `Mutex`: it is held only to add a
/// batch, never across an `.await`.
#[derive(Debug)]
pub struct Recorder {
    histogram: Mutex<Histogram<u64>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            histogram: Mutex::new(histogram()),
        }
    }
}

impl Recorder {
    /// A fresh tally for one worker.
    pub fn tally(self: &Arc<Self>) -> Tally {
        Tally {
            exchanges: Vec::new(),
            statuses: BTreeMap::new(),
            conn_errors: 0,
            timeouts: 0,
            first_error: None,
            pending: Vec::new(),
            sink: Arc::clone(self),
        }
    }

    fn pour(&self, latencies: &[u64]) {
        let mut h = self.histogram.lock().unwrap_or_else(|p| p.into_inner());
        for &us in latencies {
            h.saturating_record(us.max(LOWEST_US));
        }
    }

    fn take(&self) -> Histogram<u64> {
        let mut h = self.histogram.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *h, histogram())
    }
}

/// One worker's counts.
#[derive(Debug)]
pub struct Tally {
    /// Every request whole, when the run keeps its answers (for a history).
    exchanges: Vec<Exchange>,
    statuses: BTreeMap<u16, u64>,
    conn_errors: u64,
    timeouts: u64,
    first_error: Option<String>,
    pending: Vec<u64>,
    sink: Arc<Recorder>,
}

impl Tally {
    /// An answer arrived after `latency`.
    pub fn response(&mut self, status: u16, latency: Duration) {
        *self.statuses.entry(status).or_default() += 1;
        if self.pending.capacity() == 0 {
            self.pending.reserve_exact(BATCH);
        }
        self.pending
            .push(latency.as_micros().min(u128::from(u64::MAX)) as u64);
        if self.pending.len() == BATCH {
            self.flush();
        }
    }

    /// The request could not be sent or its answer was cut off.
    pub fn conn_error(&mut self, what: impl FnOnce() -> String) {
        self.conn_errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what());
        }
    }

    /// No answer within the request timeout.
    pub fn timeout(&mut self) {
        self.timeouts += 1;
    }

    /// A request kept whole, for a history.
    pub fn exchange(&mut self, exchange: Exchange) {
        self.exchanges.push(exchange);
    }

    pub fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.sink.pour(&self.pending);
            self.pending.clear();
        }
    }
}

/// One request as a run's history keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The buyer id the request carried (`None`: a request with no buyer).
    pub buyer: Option<String>,
    /// When it was sent and when its answer was complete (or given up on), on this client's
    /// clock, in µs since the Unix epoch.
    pub call_us: i64,
    pub return_us: i64,
    /// The answer's status; 0 when none came (a timeout, a connection that failed).
    pub status: u16,
    /// The answer's body (its first 4 KiB).
    pub body: Vec<u8>,
}

/// The wall clock in µs since the Unix epoch, as a history stamps a request.
pub fn wall_clock_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// The outcome of one run, merged over all workers.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// Answers by HTTP status.
    pub statuses: BTreeMap<u16, u64>,
    /// Requests that failed at the connection level (refused, reset, cut off mid-answer).
    pub conn_errors: u64,
    /// Requests with no answer within the timeout.
    pub timeouts: u64,
    /// The first connection error, to say *why* in a report.
    pub first_error: Option<String>,
    /// Latency of every answered request, in microseconds.
    pub latency: Histogram<u64>,
    /// From the first request (or the burst's release) to the last answer.
    pub elapsed: Duration,
    /// The 200 answers each worker (a client: one connection at a time) got, in no particular
    /// order: how evenly the sales were shared (see the `fairness` module).
    pub ok_per_client: Vec<u64>,
    /// Every request whole, in no particular order, when the run kept its answers
    /// ([`RequestSpec::keep_answers`](crate::RequestSpec::keep_answers)); else empty.
    pub exchanges: Vec<Exchange>,
}

impl Default for RunStats {
    fn default() -> Self {
        RunStats {
            statuses: BTreeMap::new(),
            conn_errors: 0,
            timeouts: 0,
            first_error: None,
            latency: histogram(),
            elapsed: Duration::ZERO,
            ok_per_client: Vec::new(),
            exchanges: Vec::new(),
        }
    }
}

impl RunStats {
    /// Merges the worker tallies; the histogram comes from the recorder they poured into.
    pub fn collect(tallies: Vec<Tally>, recorder: &Recorder, elapsed: Duration) -> RunStats {
        let mut stats = RunStats {
            elapsed,
            ..RunStats::default()
        };
        stats.ok_per_client.reserve(tallies.len());
        for mut tally in tallies {
            tally.flush();
            stats
                .ok_per_client
                .push(tally.statuses.get(&200).copied().unwrap_or(0));
            for (status, n) in tally.statuses {
                *stats.statuses.entry(status).or_default() += n;
            }
            stats.exchanges.append(&mut tally.exchanges);
            stats.conn_errors += tally.conn_errors;
            stats.timeouts += tally.timeouts;
            if stats.first_error.is_none() {
                stats.first_error = tally.first_error;
            }
        }
        stats.latency = recorder.take();
        stats
    }

    /// Requests answered, whatever the status.
    pub fn responses(&self) -> u64 {
        self.statuses.values().sum()
    }

    /// Requests attempted: answered, failed or timed out.
    pub fn sent(&self) -> u64 {
        self.responses() + self.conn_errors + self.timeouts
    }

    pub fn status(&self, code: u16) -> u64 {
        self.statuses.get(&code).copied().unwrap_or(0)
    }

    /// Answers other than 200, 409 and 503.
    pub fn other_statuses(&self) -> u64 {
        self.responses() - self.status(200) - self.status(409) - self.status(503)
    }

    /// Answers per second over the run.
    pub fn throughput(&self) -> f64 {
        match self.elapsed.as_secs_f64() {
            s if s > 0.0 => self.responses() as f64 / s,
            _ => 0.0,
        }
    }

    /// The latency at quantile `q` (0.5 = median), in milliseconds; 0 with no answers.
    pub fn latency_ms(&self, q: f64) -> f64 {
        match self.latency.is_empty() {
            true => 0.0,
            false => self.latency.value_at_quantile(q) as f64 / 1000.0,
        }
    }

    pub fn max_ms(&self) -> f64 {
        self.latency.max() as f64 / 1000.0
    }

    /// The figures a report prints.
    pub fn summary(&self) -> Summary {
        Summary {
            sent: self.sent(),
            ok: self.status(200),
            sold_out: self.status(409),
            unavailable: self.status(503),
            other: self.other_statuses(),
            conn_errors: self.conn_errors,
            timeouts: self.timeouts,
            statuses: self
                .statuses
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            first_error: self.first_error.clone(),
            elapsed_s: round(self.elapsed.as_secs_f64(), 3),
            throughput_rps: round(self.throughput(), 1),
            latency_ms: Percentiles {
                p50: round(self.latency_ms(0.5), 3),
                p90: round(self.latency_ms(0.9), 3),
                p99: round(self.latency_ms(0.99), 3),
                p99_9: round(self.latency_ms(0.999), 3),
                max: round(self.max_ms(), 3),
            },
        }
    }
}

/// Serializable view of a [`RunStats`].
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub sent: u64,
    pub ok: u64,
    pub sold_out: u64,
    pub unavailable: u64,
    pub other: u64,
    pub conn_errors: u64,
    pub timeouts: u64,
    pub statuses: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    pub elapsed_s: f64,
    pub throughput_rps: f64,
    pub latency_ms: Percentiles,
}

#[derive(Debug, Clone, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    pub max: f64,
}

pub fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(workers: &[&[(u16, u64)]]) -> RunStats {
        let recorder = Arc::new(Recorder::default());
        let tallies = workers
            .iter()
            .map(|answers| {
                let mut t = recorder.tally();
                for &(status, ms) in *answers {
                    t.response(status, Duration::from_millis(ms));
                }
                t
            })
            .collect();
        RunStats::collect(tallies, &recorder, Duration::from_secs(2))
    }

    #[test]
    fn tallies_merge_into_counts_and_one_histogram() {
        let stats = run_with(&[&[(200, 1), (409, 2)], &[(409, 3), (503, 4), (500, 5)]]);
        assert_eq!(stats.responses(), 5);
        assert_eq!(
            (stats.status(200), stats.status(409), stats.status(503)),
            (1, 2, 1)
        );
        assert_eq!(stats.other_statuses(), 1);
        assert_eq!(stats.latency.len(), 5);
        assert_eq!(stats.throughput(), 2.5);
        assert_eq!(
            stats.ok_per_client,
            [1, 0],
            "one entry per worker, its 200s"
        );
    }

    #[test]
    fn percentiles_come_from_the_histogram_in_milliseconds() {
        let answers: Vec<(u16, u64)> = (1..=100).map(|ms| (200, ms)).collect();
        let stats = run_with(&[&answers]);
        assert!(
            (stats.latency_ms(0.5) - 50.0).abs() < 0.1,
            "{}",
            stats.latency_ms(0.5)
        );
        assert!((stats.latency_ms(0.99) - 99.0).abs() < 0.1);
        assert!((stats.max_ms() - 100.0).abs() < 0.1);
        let s = stats.summary();
        assert_eq!(s.latency_ms.p50, round(stats.latency_ms(0.5), 3));
    }

    #[test]
    fn failures_count_as_sent_but_not_as_answers() {
        let recorder = Arc::new(Recorder::default());
        let mut t = recorder.tally();
        t.response(200, Duration::from_millis(1));
        t.conn_error(|| "connection refused".into());
        t.conn_error(|| "later".into());
        t.timeout();
        let stats = RunStats::collect(vec![t], &recorder, Duration::from_secs(1));
        assert_eq!((stats.sent(), stats.responses()), (4, 1));
        assert_eq!(stats.first_error.as_deref(), Some("connection refused"));
        assert_eq!(stats.throughput(), 1.0);
    }

    #[test]
    fn batches_larger_than_one_flush_reach_the_histogram() {
        let answers: Vec<(u16, u64)> = (0..3000).map(|_| (200, 1)).collect();
        assert_eq!(run_with(&[&answers]).latency.len(), 3000);
    }

    #[test]
    fn an_empty_run_reports_zeros() {
        let stats = RunStats::default();
        assert_eq!((stats.latency_ms(0.99), stats.throughput()), (0.0, 0.0));
    }
}
