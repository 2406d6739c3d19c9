//! The one generic worker, and [`fire`], which runs a pool of them under a load model.
//!
//! Every model is the same loop: a worker owns one keep-alive connection to one target, takes
//! the next request slot from a `Schedule` shared by the whole pool (an atomic counter: the
//! request budget; a burst deals the slots out in advance instead), waits until the slot is due
//! (open loop only), sends, and tallies the answer. The pool runs on one thread per core.
//! The models differ only in the schedule and in when the pool starts:
//!
//! - **burst**: one connection per buyer (or at most `connections`), all opened first; then a
//!   barrier releases every buyer at the same instant, like a flash sale or JMeter's
//!   synchronizing timer. Each buyer sends one request.
//! - **closed loop**: `connections` workers, each sending its next request as soon as the last
//!   one is answered, until `n` requests were sent or the duration is over.
//! - **open loop**: requests are *due* at a fixed rate, whatever the server does. Latency is
//!   measured from when a request was due, not from when a free connection got around to
//!   sending it, so a stalled server shows up in the percentiles (coordinated omission).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context};
use http::Method;
use tokio::sync::{mpsc, watch, Barrier};
use tokio::task::JoinSet;

use crate::http::{self as wire, Conn, RequestHead};
use crate::progress::{Progress, Silent};
use crate::stats::{Recorder, RunStats, Tally};
use crate::target::{Target, Targets};

/// How often the progress bar is refreshed from the workers' counter.
const PROGRESS_TICK: Duration = Duration::from_millis(100);
/// After a failed connect, a worker pauses this long before the next attempt, so a dead target
/// is not hammered in a hot loop (not in a burst: there every buyer gets exactly one try).
const RECONNECT_PAUSE: Duration = Duration::from_millis(10);
/// A connection idle at least this long is checked for a close by the server before reuse.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// When a closed or open loop stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this many requests.
    Requests(u64),
    /// When this much time has passed since the start.
    After(Duration),
}

/// How requests are released.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// `buyers` requests, released together once every connection is open.
    Burst { buyers: u64 },
    /// Each connection sends its next request when the previous one is answered.
    Closed { stop: Stop },
    /// Requests are due `rate` times per second; latency counts from when they were due.
    Open { rate: f64, stop: Stop },
}

/// What each request is.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    pub method: Method,
    /// Path on the service, e.g. `/sale`.
    pub path: String,
    /// `Some(qty)`: the body is `{"buyer":"<unique id>","qty":qty}`. `None`: no body.
    pub buyer_qty: Option<u32>,
}

impl RequestSpec {
    /// `POST /sale` with a unique buyer id per request.
    pub fn sale(qty: u32) -> RequestSpec {
        RequestSpec {
            method: Method::POST,
            path: "/sale".into(),
            buyer_qty: Some(qty),
        }
    }

    /// A request with no body, e.g. `GET /ping`.
    pub fn plain(method: Method, path: impl Into<String>) -> RequestSpec {
        RequestSpec {
            method,
            path: path.into(),
            buyer_qty: None,
        }
    }
}

/// A complete description of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub model: Model,
    /// Connections (workers). A burst uses one per buyer, at most this many.
    pub connections: usize,
    pub request: RequestSpec,
    /// Limit for connecting, and for each request from send to the end of its answer.
    pub timeout: Duration,
}

impl Load {
    /// The number of workers this load runs with.
    pub fn workers(&self) -> usize {
        let cap = self.connections.max(1) as u64;
        let n = match self.model {
            Model::Burst { buyers } => buyers.min(cap),
            Model::Closed { stop } | Model::Open { stop, .. } => match stop {
                Stop::Requests(n) => n.min(cap),
                Stop::After(_) => cap,
            },
        };
        n as usize
    }

    /// The number of requests, when it is known in advance.
    pub fn requests(&self) -> Option<u64> {
        match self.model {
            Model::Burst { buyers } => Some(buyers),
            Model::Closed {
                stop: Stop::Requests(n),
            }
            | Model::Open {
                stop: Stop::Requests(n),
                ..
            } => Some(n),
            _ => None,
        }
    }
}

/// Options of [`burst`] besides the buyers.
#[derive(Debug, Clone)]
pub struct BurstOptions {
    /// At most this many connections; `None`: one per buyer.
    pub connections: Option<usize>,
    pub timeout: Duration,
    /// Items per order.
    pub qty: u32,
}

impl Default for BurstOptions {
    fn default() -> Self {
        BurstOptions {
            connections: None,
            timeout: Duration::from_secs(30),
            qty: 1,
        }
    }
}

/// `buyers` buyers released at the same instant, one `POST /sale` each, connections dealt
/// round robin over the targets.
pub async fn burst(
    targets: &Targets,
    buyers: usize,
    options: &BurstOptions,
) -> anyhow::Result<RunStats> {
    let load = Load {
        model: Model::Burst {
            buyers: buyers as u64,
        },
        connections: options.connections.unwrap_or(buyers),
        request: RequestSpec::sale(options.qty),
        timeout: options.timeout,
    };
    fire(targets, &load, &Silent).await
}

/// Runs `load` against `targets` and returns what it measured. Failures to connect or to get
/// an answer are counted, not returned: check the targets first (see [`wire::preflight`]).
/// An error means the generator itself failed (a thread or runtime that could not start, a
/// worker that panicked); the run's figures are then lost, and no request of it is still in
/// flight.
pub async fn fire(
    targets: &Targets,
    load: &Load,
    progress: &dyn Progress,
) -> anyhow::Result<RunStats> {
    let workers = load.workers();
    let threads = generator_threads().min(workers).max(1);
    run(Plan::new(targets, load, workers, threads), progress).await
}

/// Runs `plan`'s workers on their threads, one thread per `plan.done` counter.
async fn run(plan: Plan, progress: &dyn Progress) -> anyhow::Result<RunStats> {
    let plan = Arc::new(plan);
    let (workers, threads) = (plan.workers, plan.done.len());
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let mut failure = None;
    for t in 0..threads {
        let (share_plan, done_tx) = (Arc::clone(&plan), done_tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("loadtest-{t}"))
            .spawn(move || {
                let share = catch_unwind(AssertUnwindSafe(|| {
                    run_share(Arc::clone(&share_plan), (t..workers).step_by(threads))
                }))
                .unwrap_or_else(|panic| {
                    Err(anyhow!(
                        "a load generator thread panicked: {}",
                        panic_message(&*panic)
                    ))
                });
                if share.is_err() {
                    share_plan.abort.raise();
                }
                let _ = done_tx.send(share);
            });
        if let Err(e) = spawned {
            failure = Some(anyhow!("cannot start a load generator thread: {e}"));
            plan.abort.raise();
            break;
        }
    }
    drop(done_tx);
    let started = match &plan.release {
        Some(release) => {
            // A failed thread never brings its buyers here: its abort lets everyone go on.
            tokio::select! {
                _ = release.wait() => {}
                () = plan.abort.raised() => {}
            }
            Instant::now()
        }
        None => plan.schedule.start,
    };
    let mut tallies = Vec::with_capacity(workers);
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    // Every thread is waited for, a failed run's too, so none of its requests outlives it.
    loop {
        tokio::select! {
            share = done_rx.recv() => match share {
                Some(Ok(share)) => tallies.extend(share),
                Some(Err(why)) => {
                    failure.get_or_insert(why);
                }
                None => break,
            },
            _ = tick.tick() => progress.set_run(plan.finished()),
        }
    }
    if let Some(why) = failure {
        return Err(why);
    }
    let elapsed = started.elapsed();
    progress.set_run(plan.finished());
    Ok(RunStats::collect(tallies, &plan.recorder, elapsed))
}

/// Threads the workers run on: one per core, like wrk. Each has its own single-threaded
/// runtime, so a worker, its connection and its timers never move between cores, and the
/// caller's runtime (a server, a test) is left alone.
fn generator_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs one thread's share of the workers to the end. A worker that panics ends the share
/// with an error (its thread's other workers are dropped with the runtime).
fn run_share(plan: Arc<Plan>, workers: impl Iterator<Item = usize>) -> anyhow::Result<Vec<Tally>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a load generator runtime")?;
    runtime.block_on(async {
        let mut pool = JoinSet::new();
        for w in workers {
            pool.spawn(Worker::new(Arc::clone(&plan), w).run());
        }
        let mut tallies = Vec::new();
        while let Some(joined) = pool.join_next().await {
            match joined {
                Ok(tally) => tallies.push(tally),
                Err(err) if err.is_panic() => bail!(
                    "a load generator worker panicked: {}",
                    panic_message(&*err.into_panic())
                ),
                Err(_) => {}
            }
        }
        Ok(tallies)
    })
}

/// The text a panic was raised with, when it has one.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(text), _) => text,
        (_, Some(text)) => text,
        _ => "(no message)",
    }
}

/// Ends a run early once one of its threads failed: the loops take no next slot, and the
/// buyers of a burst stop waiting at the release for buyers that will never come.
struct Abort {
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

    fn raise(&self) {
        self.raised.store(true, Relaxed);
        self.wake.send_replace(true);
    }

    fn is_raised(&self) -> bool {
        self.raised.load(Relaxed)
    }

    /// Returns once the abort is raised (at once if it already is).
    async fn raised(&self) {
        let _ = self.wake.subscribe().wait_for(|raised| *raised).await;
    }
}

/// A request slot: its number (for the buyer id) and, in an open loop, when it is due.
#[derive(Debug, Clone, Copy)]
struct Slot {
    index: u64,
    due: Option<Instant>,
}

/// The request budget shared by a pool. An atomic counter, not a lock: taking a slot is one
/// `fetch_add` on the hot path.
#[derive(Debug)]
struct Schedule {
    /// Slots are dealt to workers in advance instead of taken from `next` (see `take`).
    dealt: bool,
    next: AtomicU64,
    limit: Option<u64>,
    deadline: Option<Instant>,
    /// Open loop: seconds between due times.
    interval: Option<f64>,
    start: Instant,
}

impl Schedule {
    fn new(model: Model) -> Schedule {
        let start = Instant::now();
        let (stop, rate) = match model {
            Model::Burst { buyers } => (Stop::Requests(buyers), None),
            Model::Closed { stop } => (stop, None),
            Model::Open { rate, stop } => (stop, Some(rate)),
        };
        let (limit, deadline) = match stop {
            Stop::Requests(n) => (Some(n), None),
            Stop::After(d) => (None, Some(start + d)),
        };
        Schedule {
            dealt: matches!(
                model,
                Model::Burst { .. }
                    | Model::Closed {
                        stop: Stop::After(_)
                    }
            ),
            next: AtomicU64::new(0),
            limit,
            deadline,
            interval: rate.map(|r| 1.0 / r),
            start,
        }
    }

    /// The next slot for worker `w` of `workers`.
    ///
    /// Dealt schedules give worker `w` the slots `w`, `w + workers`, … with no shared counter:
    /// a burst, so each buyer's connection carries its own request and no early finisher takes
    /// a slot from a buyer still being released; and a closed loop that runs for a duration,
    /// where the index only has to be unique. The others share one counter: an exact request
    /// budget (a fast connection simply sends more), and the open loop's due times.
    fn take(&self, w: usize, workers: usize, sent: &mut u64, now: Instant) -> Option<Slot> {
        if !self.dealt {
            return self.take_next(now);
        }
        let index = w as u64 + *sent * workers as u64;
        *sent += 1;
        if self.limit.is_some_and(|n| index >= n) || self.deadline.is_some_and(|d| now >= d) {
            return None;
        }
        Some(Slot { index, due: None })
    }

    fn take_next(&self, now: Instant) -> Option<Slot> {
        if self.interval.is_none() && self.deadline.is_some_and(|d| now >= d) {
            return None;
        }
        let index = self.next.fetch_add(1, Relaxed);
        if self.limit.is_some_and(|n| index >= n) {
            return None;
        }
        let due = self
            .interval
            .map(|every| self.start + Duration::from_secs_f64(index as f64 * every));
        if let (Some(due), Some(deadline)) = (due, self.deadline) {
            if due >= deadline {
                return None;
            }
        }
        Some(Slot { index, due })
    }
}

/// A counter alone on its cache line.
#[derive(Default)]
#[repr(align(128))]
struct Counter(AtomicU64);

/// A target with its request head prepared once.
struct Endpoint {
    target: Target,
    head: RequestHead,
}

/// Everything the workers of one run share.
struct Plan {
    schedule: Schedule,
    /// Size of the pool.
    workers: usize,
    endpoints: Vec<Endpoint>,
    request: RequestSpec,
    /// Makes buyer ids unique across runs and processes: `<run_id>-<slot>`.
    run_id: String,
    timeout: Duration,
    /// Burst only: every worker and the coordinator meet here once connections are open.
    release: Option<Barrier>,
    abort: Abort,
    /// Requests finished (answered or failed) per generator thread, for the progress bar
    /// only. One padded counter per thread, so the threads never fight over a cache line.
    done: Vec<Counter>,
    recorder: Arc<Recorder>,
    /// Tests only: this worker panics as it starts.
    #[cfg(test)]
    panics: Option<usize>,
}

impl Plan {
    fn new(targets: &Targets, load: &Load, workers: usize, threads: usize) -> Plan {
        let endpoints = targets
            .iter()
            .map(|target| Endpoint {
                target: target.clone(),
                head: RequestHead::new(
                    &load.request.method,
                    &targets.path_and_query(target, &load.request.path),
                    target.authority(),
                    load.request.buyer_qty.is_some(),
                ),
            })
            .collect();
        let release = match load.model {
            Model::Burst { .. } => Some(Barrier::new(workers + 1)),
            _ => None,
        };
        Plan {
            schedule: Schedule::new(load.model),
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

    /// Worker `w` finished a request. Workers run on thread `w % threads` (see [`fire`]).
    fn finish_one(&self, w: usize) {
        self.done[w % self.done.len()].0.fetch_add(1, Relaxed);
    }

    fn finished(&self) -> u64 {
        self.done.iter().map(|c| c.0.load(Relaxed)).sum()
    }

    /// Writes request number `index` for `endpoint` into `out`.
    fn request(&self, endpoint: &Endpoint, index: u64, out: &mut Vec<u8>) {
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

struct Worker {
    plan: Arc<Plan>,
    endpoint: usize,
    tally: Tally,
    /// The request being sent, reused so the hot loop does not allocate it.
    out: Vec<u8>,
    /// This worker's number in the pool, and how many slots it took (for dealt slots).
    index: usize,
    taken: u64,
}

impl Worker {
    fn new(plan: Arc<Plan>, w: usize) -> Worker {
        let tally = plan.recorder.tally();
        let endpoint = w % plan.endpoints.len();
        Worker {
            plan,
            endpoint,
            tally,
            out: Vec::with_capacity(256),
            index: w,
            taken: 0,
        }
    }

    async fn run(mut self) -> Tally {
        #[cfg(test)]
        if self.plan.panics == Some(self.index) {
            panic!("worker {} panics, as the test asked", self.index);
        }
        // A burst opens its connection before the release; the loops open theirs lazily.
        let mut conn = None;
        if let Some(release) = &self.plan.release {
            conn = self.connect().await.ok();
            tokio::select! {
                _ = release.wait() => {}
                // The run failed before the release: leave with nothing sent.
                () = self.plan.abort.raised() => {}
            }
        }
        let head_only = self.plan.request.method == Method::HEAD;
        // The clock is read once per request, when the answer is complete; that reading also
        // serves as the send time of the next request in a closed loop (nothing but formatting
        // happens in between). Reads are re-taken only after a wait: a connect, a due time.
        let mut now = Instant::now();
        let mut last_used = now;
        // The request timeout. One timer per worker, not one per request: when it fires, it
        // checks the request in flight and, if that one is younger than the timeout, moves
        // itself to that request's deadline. A timer wheel insert and removal per request was
        // the largest user-space cost of the hot loop.
        let watchdog = tokio::time::sleep(self.plan.timeout);
        tokio::pin!(watchdog);
        while let Some(slot) = self.next_slot(now).await {
            if slot.due.is_some() {
                now = Instant::now();
            }
            // A server may close a keep-alive connection that sat idle; that is no failure of
            // the next request, which goes out on a fresh connection instead.
            if conn.is_some() && now.saturating_duration_since(last_used) >= IDLE_CHECK {
                conn = conn.filter(|c: &Conn| !c.closed_while_idle());
            }
            let mut live = match conn.take() {
                Some(live) => live,
                None => {
                    let opened = self.connect().await;
                    now = Instant::now();
                    match opened {
                        Ok(live) => live,
                        Err(why) => {
                            self.tally.conn_error(|| why);
                            self.plan.finish_one(self.index);
                            if self.plan.release.is_none() {
                                tokio::time::sleep(RECONNECT_PAUSE).await;
                                now = Instant::now();
                            }
                            continue;
                        }
                    }
                }
            };
            let endpoint = &self.plan.endpoints[self.endpoint];
            self.plan.request(endpoint, slot.index, &mut self.out);
            let sent = now;
            // Open loop: latency counts from when the request was due, not when it went out.
            let started = slot.due.unwrap_or(sent);
            let answer = {
                let exchange = live.exchange(&self.out, head_only);
                tokio::pin!(exchange);
                loop {
                    tokio::select! {
                        biased;
                        answer = &mut exchange => break Some(answer),
                        () = &mut watchdog => {
                            let due = sent + self.plan.timeout;
                            if Instant::now() >= due {
                                break None;
                            }
                            watchdog.as_mut().reset(due.into());
                        }
                    }
                }
            };
            self.plan.finish_one(self.index);
            now = Instant::now();
            last_used = now;
            let latency = now.saturating_duration_since(started);
            match answer {
                Some(Ok(answer)) => {
                    self.tally.response(answer.status, latency);
                    conn = Some(live).filter(Conn::reusable);
                }
                Some(Err(e)) => {
                    let target = self.target().to_string();
                    self.tally
                        .conn_error(|| format!("{target}: {}", wire::phrase(&e)));
                }
                None => self.tally.timeout(),
            }
        }
        self.tally.flush();
        self.tally
    }

    fn target(&self) -> &Target {
        &self.plan.endpoints[self.endpoint].target
    }

    async fn connect(&self) -> Result<Conn, String> {
        match tokio::time::timeout(self.plan.timeout, Conn::open(self.target())).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(format!(
                "cannot reach {}: {}",
                self.target(),
                wire::phrase(&e)
            )),
            Err(_) => Err(format!("cannot reach {}: connect timed out", self.target())),
        }
    }

    /// The next slot from the schedule (`now`: the clock's last reading), once it is due.
    async fn next_slot(&mut self, now: Instant) -> Option<Slot> {
        if self.plan.abort.is_raised() {
            return None;
        }
        let slot = self
            .plan
            .schedule
            .take(self.index, self.plan.workers, &mut self.taken, now)?;
        if let Some(due) = slot.due {
            tokio::time::sleep_until(due.into()).await;
        }
        Some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(model: Model, connections: usize) -> Load {
        Load {
            model,
            connections,
            request: RequestSpec::sale(1),
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_pool_is_never_bigger_than_the_work() {
        assert_eq!(load(Model::Burst { buyers: 300 }, 1000).workers(), 300);
        assert_eq!(load(Model::Burst { buyers: 300 }, 50).workers(), 50);
        let closed = |stop| Model::Closed { stop };
        assert_eq!(load(closed(Stop::Requests(10)), 50).workers(), 10);
        assert_eq!(
            load(closed(Stop::After(Duration::from_secs(1))), 50).workers(),
            50
        );
        assert_eq!(load(closed(Stop::Requests(10)), 0).workers(), 1);
    }

    #[test]
    fn a_request_budget_hands_out_each_slot_once() {
        let schedule = Schedule::new(Model::Closed {
            stop: Stop::Requests(3),
        });
        let slots: Vec<u64> = std::iter::from_fn(|| schedule.take_next(Instant::now()))
            .map(|s| s.index)
            .collect();
        assert_eq!(slots, [0, 1, 2]);
        assert!(schedule.take_next(Instant::now()).is_none());
    }

    #[test]
    fn a_burst_deals_each_worker_its_own_slots() {
        let schedule = Schedule::new(Model::Burst { buyers: 5 });
        let slots = |w| {
            let mut sent = 0;
            std::iter::from_fn(|| schedule.take(w, 2, &mut sent, Instant::now()))
                .map(|s| s.index)
                .collect::<Vec<_>>()
        };
        assert_eq!((slots(0), slots(1)), (vec![0, 2, 4], vec![1, 3]));
    }

    #[test]
    fn an_open_loop_spaces_due_times_by_the_rate_and_stops_at_the_deadline() {
        let schedule = Schedule::new(Model::Open {
            rate: 100.0,
            stop: Stop::After(Duration::from_millis(50)),
        });
        let due: Vec<Duration> = std::iter::from_fn(|| schedule.take_next(Instant::now()))
            .map(|s| s.due.unwrap() - schedule.start)
            .collect();
        assert_eq!(due.len(), 5);
        assert_eq!(due[1], Duration::from_millis(10));
    }

    #[tokio::test]
    async fn a_worker_that_panics_fails_the_run_and_stops_the_others() {
        // Nothing listens on port 1. The burst's other buyers wait at the release, the loop's
        // workers retry for a minute: only the abort ends either run within the limit below.
        let targets = Targets::parse(&["http://127.0.0.1:1"], None).unwrap();
        let minute = Stop::After(Duration::from_secs(60));
        for model in [Model::Burst { buyers: 4 }, Model::Closed { stop: minute }] {
            let mut plan = Plan::new(&targets, &load(model, 4), 4, 2);
            plan.panics = Some(1);
            let limit = Duration::from_secs(10);
            let outcome = tokio::time::timeout(limit, run(plan, &Silent)).await;
            let err = outcome.expect("the other workers stop").unwrap_err();
            assert_eq!(
                err.to_string(),
                "a load generator worker panicked: worker 1 panics, as the test asked"
            );
        }
    }

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
}
