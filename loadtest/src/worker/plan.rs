//! Everything the workers of one run share ([`Plan`]): the schedule, the targets with their
//! request heads prepared once, the burst's release, the abort, the progress counters and the
//! recorder.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{watch, Barrier};

use super::load::{Load, Model, RequestSpec, MAX_KEPT_ANSWERS};
use super::schedule::Schedule;
use crate::http::RequestHead;
use crate::stats::Recorder;
use oversell_client::target::{Target, Targets};

/// Ends a run early once one of its threads failed: the loops take no next slot, and the
/// buyers of a burst stop waiting at the release for buyers that will never come.
pub(super) struct Abort {
    /// Read before every slot: a plain load, not the channel's lock, on the hot path.
    raised: AtomicBool,
    /// Wakes whoever waits at the release.
    wake: watch::Sender<bool>,
}

impl Abort {
    fn new() -> Abort {
        Abort {
            raised: AtomicBool::new(false),
            wake: watch::Sender::new(false),
        }
    }

    pub(super) fn raise(&self) {
        self.raised.store(true, Relaxed);
        self.wake.send_replace(true);
    }

    pub(super) fn is_raised(&self) -> bool {
        self.raised.load(Relaxed)
    }

    /// Returns once the abort is raised (at once if it already is).
    pub(super) async fn raised(&self) {
        let _ = self.wake.subscribe().wait_for(|raised| *raised).await;
    }
}

/// A counter alone on its cache line.
#[derive(Default)]
#[repr(align(128))]
pub(super) struct Counter(AtomicU64);

/// A target with its request head prepared once.
pub(super) struct Endpoint {
    pub(super) target: Target,
    head: RequestHead,
}

/// Everything the workers of one run share.
pub(super) struct Plan {
    pub(super) schedule: Schedule,
    /// Size of the pool.
    pub(super) workers: usize,
    pub(super) endpoints: Vec<Endpoint>,
    pub(super) request: RequestSpec,
    /// Makes buyer ids unique across runs and processes: `<run_id>-<slot>`.
    run_id: String,
    pub(super) timeout: Duration,
    /// Burst only: every worker and the coordinator meet here once connections are open.
    pub(super) release: Option<Barrier>,
    pub(super) abort: Abort,
    /// Requests finished (answered or failed) per generator thread, for the progress bar
    /// only. One padded counter per thread, so the threads never fight over a cache line.
    pub(super) done: Vec<Counter>,
    pub(super) recorder: Arc<Recorder>,
    /// Tests only: this worker panics as it starts.
    #[cfg(test)]
    pub(super) panics: Option<usize>,
}

impl Plan {
    pub(super) fn new(targets: &Targets, load: &Load, workers: usize, threads: usize) -> Plan {
        // Worker w takes endpoint w mod len: spread over rooms, consecutive workers take
        // consecutive rooms, each room's workers dealt over the targets in turn.
        let rooms: Vec<Option<&str>> = match targets.spread() {
            [] => vec![targets.room()],
            spread => spread.iter().map(|room| Some(room.as_str())).collect(),
        };
        let endpoints = (0..rooms.len() * targets.len())
            .map(|i| {
                let room = rooms[i % rooms.len()];
                let target = targets.for_connection(i / rooms.len());
                Endpoint {
                    target: target.clone(),
                    head: RequestHead::new(
                        &load.request.method,
                        &targets.path_and_query_in(target, &load.request.path, room),
                        target.authority(),
                        load.request.buyer_qty.is_some(),
                    ),
                }
            })
            .collect();
        let release = match load.model {
            Model::Burst { .. } => Some(Barrier::new(workers + 1)),
            _ => None,
        };
        Plan {
            schedule: Schedule::new(load.model)
                .at_most(load.request.keep_answers.then_some(MAX_KEPT_ANSWERS)),
            workers,
            endpoints,
            request: load.request.clone(),
            run_id: run_id(),
            timeout: load.timeout,
            release,
            abort: Abort::new(),
            done: (0..threads.max(1)).map(|_| Counter::default()).collect(),
            recorder: Arc::new(Recorder::default()),
            #[cfg(test)]
            panics: None,
        }
    }

    /// Worker `w` finished a request. Workers run on thread `w % threads` (see [`super::fire`]).
    pub(super) fn finish_one(&self, w: usize) {
        self.done[w % self.done.len()].0.fetch_add(1, Relaxed);
    }

    pub(super) fn finished(&self) -> u64 {
        self.done.iter().map(|c| c.0.load(Relaxed)).sum()
    }

    /// Writes request number `index` for `endpoint` into `out`.
    /// The buyer id of request slot `index`, for a run with buyers.
    pub(super) fn buyer(&self, index: u64) -> Option<String> {
        self.request
            .buyer_qty
            .map(|_| format!("{}-{index}", self.run_id))
    }

    pub(super) fn request(&self, endpoint: &Endpoint, index: u64, out: &mut Vec<u8>) {
        match self.request.buyer_qty {
            Some(qty) => {
                let body = format!(r#"{{"buyer":"{}-{index}","qty":{qty}}}"#, self.run_id);
                endpoint.head.write(body.as_bytes(), out);
            }
            None => endpoint.head.write(b"", out),
        }
    }
}

/// A short id, different for every run in every process.
fn run_id() -> String {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let run = RUNS.fetch_add(1, Relaxed);
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    format!("lt{:x}{:x}-{run}", ms & 0xff_ffff_ffff, std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::load::tests::load;

    #[test]
    fn buyer_bodies_carry_unique_ids() {
        let targets = Targets::parse(&["http://127.0.0.1:1"], Some("r")).unwrap();
        let plan = Plan::new(&targets, &load(Model::Burst { buyers: 2 }, 2), 2, 1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        plan.request(&plan.endpoints[0], 0, &mut a);
        plan.request(&plan.endpoints[0], 1, &mut b);
        let a = String::from_utf8(a).unwrap();
        let buyer = format!(r#"{{"buyer":"{}-0","qty":1}}"#, plan.run_id);
        assert_eq!(
            a,
            format!(
                "POST /sale?room=r HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{buyer}",
                buyer.len()
            )
        );
        assert_ne!(a.as_bytes(), b);
        assert_ne!(run_id(), run_id());
    }

    #[test]
    fn spread_rooms_take_consecutive_workers_each_dealt_over_the_targets() {
        let targets = Targets::parse(&["http://127.0.0.1:1", "http://127.0.0.1:2"], Some("b"))
            .unwrap()
            .spread_over_rooms(3)
            .unwrap();
        let plan = Plan::new(&targets, &load(Model::Burst { buyers: 6 }, 6), 6, 1);
        let first_line = |w: usize| {
            let mut out = Vec::new();
            plan.request(
                &plan.endpoints[w % plan.endpoints.len()],
                w as u64,
                &mut out,
            );
            let text = String::from_utf8(out).unwrap();
            let host = text
                .split("Host: ")
                .nth(1)
                .unwrap()
                .split('\r')
                .next()
                .unwrap();
            format!("{} {host}", text.split(' ').nth(1).unwrap())
        };
        let dealt: Vec<String> = (0..6).map(first_line).collect();
        assert_eq!(
            dealt,
            [
                "/sale?room=b-001 127.0.0.1:1",
                "/sale?room=b-002 127.0.0.1:1",
                "/sale?room=b-003 127.0.0.1:1",
                "/sale?room=b-001 127.0.0.1:2",
                "/sale?room=b-002 127.0.0.1:2",
                "/sale?room=b-003 127.0.0.1:2",
            ]
        );
    }
}
