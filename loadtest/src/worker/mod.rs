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
//!
//! The pieces, each in its own file around the worker below:
//!
//! - `load`: the shapes as data ([`Load`], [`Model`], [`Stop`], [`RequestSpec`]).
//! - `schedule`: how each shape hands out request slots (dealt in advance, or one shared
//!   budget with the open loop's due times).
//! - `burst`: [`burst()`] and its [`BurstOptions`], the short form the server calls.
//! - `plan`: what the workers of one run share (the burst's release, the abort, the counters).
//! - `pool`: [`fire`]: threads, runtimes, and the tallies collected at the end.

mod burst;
mod load;
mod plan;
mod pool;
mod schedule;

pub use burst::{burst, BurstOptions};
pub use load::{Load, Model, RequestSpec, Stop, MAX_KEPT_ANSWERS};
pub use pool::fire;

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::Method;

use crate::http::Conn;
use crate::stats::{wall_clock_us, Exchange, Tally};
use oversell_client::target::Target;
use plan::Plan;
use schedule::Slot;

/// After a failed connect, a worker pauses this long before the next attempt, so a dead target
/// is not hammered in a hot loop (not in a burst: there every buyer gets exactly one try).
const RECONNECT_PAUSE: Duration = Duration::from_millis(10);
/// A connection idle at least this long is checked for a close by the server before reuse.
const IDLE_CHECK: Duration = Duration::from_secs(1);

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
            let keep = self.plan.request.keep_answers;
            let call_us = if keep { wall_clock_us() } else { 0 };
            let answer = {
                let exchange = async {
                    match keep {
                        true => live.exchange_keeping(&self.out, head_only).await,
                        false => live
                            .exchange(&self.out, head_only)
                            .await
                            .map(|answer| (answer, Vec::new())),
                    }
                };
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
            if keep {
                let (status, body) = match &answer {
                    Some(Ok((answer, body))) => (answer.status, body.clone()),
                    _ => (0, Vec::new()),
                };
                self.tally.exchange(Exchange {
                    buyer: self.plan.buyer(slot.index),
                    call_us,
                    return_us: wall_clock_us(),
                    status,
                    body,
                });
            }
            match answer {
                Some(Ok((answer, _))) => {
                    self.tally.response(answer.status, latency);
                    conn = Some(live).filter(Conn::reusable);
                }
                Some(Err(e)) => {
                    let target = self.target().to_string();
                    self.tally
                        .conn_error(|| format!("{target}: {}", oversell_client::http::phrase(&e)));
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
                oversell_client::http::phrase(&e)
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
