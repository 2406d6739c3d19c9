//! The one generic worker, and [`fire`], which runs a pool of them under a load model.
//!
//! Every model is the same loop: a worker owns one keep-alive connection to one target, takes
//! the next request slot from a [`Schedule`] shared by the whole pool (an atomic counter: the
//! request budget), waits until the slot is due (open loop only), sends, and tallies the answer.
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

use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use tokio::sync::Barrier;
use tokio::task::JoinSet;

use crate::http::{self as wire, Body, Driver, Sender};
use crate::progress::Progress;
use crate::stats::{Recorder, RunStats, Tally};
use crate::target::{Target, Targets};

/// How often the progress bar is refreshed from the workers' counter.
const PROGRESS_TICK: Duration = Duration::from_millis(100);
/// After a failed connect, a worker pauses this long before the next attempt, so a dead target
/// is not hammered in a hot loop (not in a burst: there every buyer gets exactly one try).
const RECONNECT_PAUSE: Duration = Duration::from_millis(10);

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
pub async fn burst(targets: &Targets, buyers: usize, options: &BurstOptions) -> RunStats {
    let load = Load {
        model: Model::Burst {
            buyers: buyers as u64,
        },
        connections: options.connections.unwrap_or(buyers),
        request: RequestSpec::sale(options.qty),
        timeout: options.timeout,
    };
    fire(targets, &load, &Progress::hidden()).await
}

/// Runs `load` against `targets` and returns what it measured. Failures to connect or to get
/// an answer are counted, not returned: check the targets first (see [`wire::preflight`]).
pub async fn fire(targets: &Targets, load: &Load, progress: &Progress) -> RunStats {
    let workers = load.workers();
    let plan = Arc::new(Plan::new(targets, load, workers));
    let mut pool = JoinSet::new();
    for w in 0..workers {
        pool.spawn(Worker::new(Arc::clone(&plan), w).run());
    }
    let started = match &plan.release {
        Some(release) => {
            release.wait().await;
            Instant::now()
        }
        None => plan.schedule.start,
    };
    let mut tallies = Vec::with_capacity(workers);
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    loop {
        tokio::select! {
            joined = pool.join_next() => match joined {
                Some(Ok(tally)) => tallies.push(tally),
                Some(Err(err)) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
                Some(Err(_)) => {}
                None => break,
            },
            _ = tick.tick() => progress.set_run(plan.done.load(Relaxed)),
        }
    }
    let elapsed = started.elapsed();
    progress.set_run(plan.done.load(Relaxed));
    RunStats::collect(tallies, &plan.recorder, elapsed)
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
            next: AtomicU64::new(0),
            limit,
            deadline,
            interval: rate.map(|r| 1.0 / r),
            start,
        }
    }

    fn take(&self) -> Option<Slot> {
        if self.interval.is_none() && self.deadline.is_some_and(|d| Instant::now() >= d) {
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

/// A target with its request line and `Host` header prepared once.
struct Endpoint {
    target: Target,
    uri: Uri,
    host: HeaderValue,
}

/// Everything the workers of one run share.
struct Plan {
    schedule: Schedule,
    endpoints: Vec<Endpoint>,
    request: RequestSpec,
    /// Makes buyer ids unique across runs and processes: `<run_id>-<slot>`.
    run_id: String,
    timeout: Duration,
    /// Burst only: every worker and the coordinator meet here once connections are open.
    release: Option<Barrier>,
    /// Requests finished (answered or failed), for the progress bar only.
    done: AtomicU64,
    recorder: Arc<Recorder>,
}

impl Plan {
    fn new(targets: &Targets, load: &Load, workers: usize) -> Plan {
        let endpoints = targets
            .iter()
            .map(|target| Endpoint {
                target: target.clone(),
                uri: targets
                    .path_and_query(target, &load.request.path)
                    .parse()
                    .unwrap_or_else(|_| Uri::from_static("/")),
                host: HeaderValue::from_str(target.authority())
                    .unwrap_or_else(|_| HeaderValue::from_static("localhost")),
            })
            .collect();
        let release = match load.model {
            Model::Burst { .. } => Some(Barrier::new(workers + 1)),
            _ => None,
        };
        Plan {
            schedule: Schedule::new(load.model),
            endpoints,
            request: load.request.clone(),
            run_id: run_id(),
            timeout: load.timeout,
            release,
            done: AtomicU64::new(0),
            recorder: Arc::new(Recorder::default()),
        }
    }

    fn request(&self, endpoint: &Endpoint, index: u64) -> Request<Body> {
        let body = match self.request.buyer_qty {
            Some(qty) => Bytes::from(format!(
                r#"{{"buyer":"{}-{index}","qty":{qty}}}"#,
                self.run_id
            )),
            None => Bytes::new(),
        };
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = self.request.method.clone();
        *req.uri_mut() = endpoint.uri.clone();
        let headers = req.headers_mut();
        headers.insert(HOST, endpoint.host.clone());
        if self.request.buyer_qty.is_some() {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        req
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

/// What a worker does after a connection ends.
enum Next {
    Done,
    Reconnect,
    /// The connection died before carrying a request: count one request as failed, so a
    /// server that accepts and hangs up cannot make the pool loop forever.
    Broken(String),
}

struct Worker {
    plan: Arc<Plan>,
    endpoint: usize,
    tally: Tally,
    /// A slot taken just before the connection turned out closed; sent on the next one.
    carried: Option<Slot>,
}

impl Worker {
    fn new(plan: Arc<Plan>, w: usize) -> Worker {
        let tally = plan.recorder.tally();
        let endpoint = w % plan.endpoints.len();
        Worker {
            plan,
            endpoint,
            tally,
            carried: None,
        }
    }

    async fn run(mut self) -> Tally {
        let mut conn = self.connect().await;
        if let Some(release) = &self.plan.release {
            release.wait().await;
        }
        loop {
            let next = match conn {
                Ok((sender, driver)) => self.drive(sender, driver).await,
                Err(why) => Next::Broken(why),
            };
            match next {
                Next::Done => break,
                Next::Reconnect => {}
                Next::Broken(why) => {
                    let Some(_slot) = self.next_slot().await else {
                        break;
                    };
                    self.tally.conn_error(|| why);
                    self.plan.done.fetch_add(1, Relaxed);
                    if self.plan.release.is_none() {
                        tokio::time::sleep(RECONNECT_PAUSE).await;
                    }
                }
            }
            conn = self.connect().await;
        }
        self.tally.flush();
        self.tally
    }

    fn target(&self) -> &Target {
        &self.plan.endpoints[self.endpoint].target
    }

    async fn connect(&self) -> Result<(Sender, Driver), String> {
        match tokio::time::timeout(self.plan.timeout, wire::connect(self.target())).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(format!(
                "cannot reach {}: {}",
                self.target(),
                wire::phrase(&e)
            )),
            Err(_) => Err(format!("cannot reach {}: connect timed out", self.target())),
        }
    }

    /// Runs the connection's I/O and the request loop in this one task: no hand-off to a
    /// separate connection task per request. When the loop ends, the connection is dropped
    /// (closed) even if an answer is still outstanding.
    async fn drive(&mut self, sender: Sender, driver: Driver) -> Next {
        let mut driver = pin!(driver);
        let mut work = pin!(self.send_loop(sender));
        let mut driver_done = false;
        loop {
            tokio::select! {
                biased;
                next = &mut work => return next,
                _ = &mut driver, if !driver_done => driver_done = true,
            }
        }
    }

    async fn send_loop(&mut self, mut sender: Sender) -> Next {
        let mut fresh = true;
        loop {
            if sender.ready().await.is_err() {
                // A keep-alive connection the server closed while idle is not a failure.
                return match fresh {
                    true => Next::Broken(format!("{}: connection closed", self.target())),
                    false => Next::Reconnect,
                };
            }
            let Some(slot) = self.next_slot().await else {
                return Next::Done;
            };
            if sender.is_closed() {
                self.carried = Some(slot);
                return Next::Reconnect;
            }
            fresh = false;
            let started = slot.due.unwrap_or_else(Instant::now);
            let req = self
                .plan
                .request(&self.plan.endpoints[self.endpoint], slot.index);
            let answer = tokio::time::timeout(self.plan.timeout, exchange(&mut sender, req)).await;
            self.plan.done.fetch_add(1, Relaxed);
            match answer {
                Ok(Ok(status)) => self.tally.response(status.as_u16(), started.elapsed()),
                Ok(Err(e)) => {
                    let target = self.target().to_string();
                    self.tally.conn_error(|| format!("{target}: {e}"));
                    return Next::Reconnect;
                }
                Err(_) => {
                    self.tally.timeout();
                    return Next::Reconnect;
                }
            }
        }
    }

    /// The carried slot, or the next one from the schedule once it is due.
    async fn next_slot(&mut self) -> Option<Slot> {
        if let Some(slot) = self.carried.take() {
            return Some(slot);
        }
        let slot = self.plan.schedule.take()?;
        if let Some(due) = slot.due {
            tokio::time::sleep_until(due.into()).await;
        }
        Some(slot)
    }
}

/// Sends one request and reads its answer to the end (so the connection can carry the next).
async fn exchange(sender: &mut Sender, req: Request<Body>) -> hyper::Result<StatusCode> {
    let resp = sender.send_request(req).await?;
    let status = resp.status();
    let mut body = resp.into_body();
    while let Some(frame) = body.frame().await {
        frame?;
    }
    Ok(status)
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
        let slots: Vec<u64> = std::iter::from_fn(|| schedule.take())
            .map(|s| s.index)
            .collect();
        assert_eq!(slots, [0, 1, 2]);
        assert!(schedule.take().is_none());
    }

    #[test]
    fn an_open_loop_spaces_due_times_by_the_rate_and_stops_at_the_deadline() {
        let schedule = Schedule::new(Model::Open {
            rate: 100.0,
            stop: Stop::After(Duration::from_millis(50)),
        });
        let due: Vec<Duration> = std::iter::from_fn(|| schedule.take())
            .map(|s| s.due.unwrap() - schedule.start)
            .collect();
        assert_eq!(due.len(), 5);
        assert_eq!(due[1], Duration::from_millis(10));
    }

    #[test]
    fn buyer_bodies_carry_unique_ids() {
        let targets = Targets::parse(&["http://127.0.0.1:1"], Some("r")).unwrap();
        let plan = Plan::new(&targets, &load(Model::Burst { buyers: 2 }, 2), 2);
        let a = plan.request(&plan.endpoints[0], 0);
        let b = plan.request(&plan.endpoints[0], 1);
        assert_eq!(a.uri(), "/sale?room=r");
        assert_eq!(a.headers()[HOST], "127.0.0.1:1");
        let body = |r: &Request<Body>| format!("{:?}", r.body());
        assert_ne!(body(&a), body(&b));
        assert!(body(&a).contains(&format!("{}-0", plan.run_id)));
        assert_ne!(run_id(), run_id());
    }
}
