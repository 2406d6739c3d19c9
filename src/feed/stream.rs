//! One `/events` connection: the room's ticks as Server-Sent Events.
//!
//! - `state`: the `/state` document plus `throughput_rps`, `live_instances` and
//!   `per_instance` (see [`super`]), every other tick ([`STATE_EVERY`]); the first one also
//!   tells the browser to reconnect after 1 s;
//! - `timeline`: the window of the lock timeline this page draws (`/events?draw=20|50|100|200`,
//!   see [`super::window`]), whole, each time it changed — at most [`TIMELINE_BYTES_PER_SEC`]
//!   of them on average: a window that would go over is skipped, and the next one (newer, and
//!   whole as well) is sent when the budget allows;
//! - `reset`: the room was reset (the timeline starts again);
//! - `state_lost`: the store lost the room's state (sales answer 503 until a reset);
//! - `unavailable`: Redis could not be read this time;
//! - `bye`: the connection is closed after [`LIFETIME`], and the browser reconnects soon.
//!
//! The stream ends when the client goes away, when the server starts its graceful shutdown
//! (which waits for open responses), and after [`LIFETIME`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::Stream;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Subscription, Tick};

/// A connection is closed after this long; the browser reconnects and resumes.
pub const LIFETIME: Duration = Duration::from_secs(600);
/// The most often a stream sends the room's state: figures that change twice a second read
/// as live, and every write to a viewer costs the instance and nginx a little of the CPU the
/// sale path needs (500 viewers at 4 states a second cost the sale rate 5 % more than at 2).
pub const STATE_EVERY: Duration = Duration::from_millis(500);
/// What one viewer's timeline may cost the room's network, on average. With the state events
/// (about 1.3 KB, 2 a second) a viewer stays under 16 KB/s at any sale rate: a classroom of
/// 100 on one access point is about 10 Mbit/s.
pub const TIMELINE_BYTES_PER_SEC: f64 = 8.0 * 1024.0;

/// One connection's position in the room's feed.
struct Client {
    sub: Subscription,
    stopping: watch::Receiver<bool>,
    deadline: Instant,
    /// The window size this page draws.
    draw: usize,
    budget: Budget,
    /// A window newer than the last one sent is waiting for the budget.
    window_due: bool,
    queue: VecDeque<Event>,
    first_state: bool,
    /// When the last state went out.
    state_sent: Option<Instant>,
    done: bool,
}

/// The events of one connection, starting with the room's latest state and timeline window.
pub fn events(
    sub: Subscription,
    stopping: watch::Receiver<bool>,
    draw: usize,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let mut client = Client {
        sub,
        stopping,
        deadline: Instant::now() + LIFETIME,
        draw,
        budget: Budget::full(),
        window_due: true,
        queue: VecDeque::new(),
        first_state: true,
        state_sent: None,
        done: false,
    };
    if let Some(last) = client.sub.feed.last() {
        client.push_main(&last);
    }
    client.push_window();
    futures_util::stream::unfold(client, |mut client| async move {
        let event = client.next().await?;
        Some((Ok(event), client))
    })
}

impl Client {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.done {
                return None;
            }
            let received = tokio::select! {
                _ = self.stopping.wait_for(|stop| *stop) => return None,
                _ = tokio::time::sleep_until(self.deadline) => {
                    self.done = true;
                    // Reconnect soon.
                    let bye = Event::default().event("bye").retry(Duration::from_millis(200));
                    self.queue.push_back(bye.data("{}"));
                    continue;
                }
                received = self.sub.rx.recv() => received,
            };
            match received {
                Ok(tick) => self.push_tick(&tick),
                // Fell behind: the newest window is whole, the state comes with the next tick.
                Err(RecvError::Lagged(_)) => {
                    self.window_due = true;
                    self.push_window();
                }
                // The poller stopped (shutdown).
                Err(RecvError::Closed) => return None,
            }
        }
    }

    fn push_tick(&mut self, tick: &Tick) {
        if tick.reset {
            self.queue
                .push_back(Event::default().event("reset").data("{}"));
        }
        let sent = self.push_main(tick);
        self.window_due |= tick.windows.is_some();
        // With the state, so that a viewer gets one write a tick at most.
        if sent {
            self.push_window();
        }
    }

    /// Queues the tick's main event unless a state went out less than [`STATE_EVERY`] ago;
    /// whether it did.
    fn push_main(&mut self, tick: &Tick) -> bool {
        // A tick is 250 ms: with a little slack, every other one.
        let now = Instant::now();
        let recent = self
            .state_sent
            .is_some_and(|at| now.duration_since(at) < STATE_EVERY - Duration::from_millis(50));
        if tick.event == "state" && recent && !tick.reset {
            return false;
        }
        self.state_sent = Some(now);
        let mut event = Event::default().event(tick.event).data(&*tick.data);
        if tick.event == "state" && self.first_state {
            event = event.retry(Duration::from_millis(1000));
            self.first_state = false;
        }
        self.queue.push_back(event);
        true
    }

    /// Sends the room's newest window in this page's size, if one is due and the budget allows.
    fn push_window(&mut self) {
        if !self.window_due {
            return;
        }
        let Some(windows) = self.sub.feed.window() else {
            return;
        };
        let text = windows.of(self.draw);
        if self.budget.spend(text.len(), Instant::now()) {
            self.window_due = false;
            let event = Event::default().event("timeline").data(&**text);
            self.queue.push_back(event);
        }
    }
}

/// A token bucket of bytes: [`TIMELINE_BYTES_PER_SEC`], up to one second's worth saved.
struct Budget {
    bytes: f64,
    at: Instant,
}

impl Budget {
    fn full() -> Budget {
        Budget {
            bytes: TIMELINE_BYTES_PER_SEC,
            at: Instant::now(),
        }
    }

    /// Whether `n` bytes may go now (and takes them). A full bucket lets anything go, even a
    /// window larger than a second's budget: the bucket then runs into debt, and the next
    /// window waits for it to be paid.
    fn spend(&mut self, n: usize, now: Instant) -> bool {
        let earned = now.duration_since(self.at).as_secs_f64() * TIMELINE_BYTES_PER_SEC;
        self.bytes = (self.bytes + earned).min(TIMELINE_BYTES_PER_SEC);
        self.at = now;
        let full = self.bytes >= TIMELINE_BYTES_PER_SEC;
        if full || self.bytes >= n as f64 {
            self.bytes -= n as f64;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_holds_any_window_rate_to_its_bytes_per_second() {
        let mut budget = Budget::full();
        let start = budget.at;
        let mut sent = 0;
        // 4 windows of 6 KB a second for 10 s: far more than the budget.
        for tick in 0..40u64 {
            if budget.spend(6 * 1024, start + Duration::from_millis(250 * tick)) {
                sent += 6 * 1024;
            }
        }
        let per_sec = sent as f64 / 10.0;
        assert!(per_sec <= TIMELINE_BYTES_PER_SEC * 1.1, "{per_sec}");
        assert!(per_sec >= TIMELINE_BYTES_PER_SEC * 0.5, "{per_sec}");
    }

    #[test]
    fn a_window_larger_than_a_second_of_budget_still_goes_when_the_budget_is_full() {
        let mut budget = Budget::full();
        let now = budget.at;
        assert!(budget.spend(20 * 1024, now));
        assert!(!budget.spend(100, now + Duration::from_millis(250)));
    }
}
