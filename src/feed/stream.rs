//! One `/events` connection: the room's ticks as Server-Sent Events.
//!
//! - `state`: the `/state` document plus `throughput_rps`, `live_instances` and
//!   `per_instance` (see [`super`]); the first one also tells the browser to reconnect after 1 s;
//! - `timeline`: the lock-timeline entries this stream has not been sent yet (the newest
//!   [`SEND_PER_TICK`]; `skipped` says how many were left out). The event id is the last
//!   entry's stream id, so a browser that reconnects resumes with `Last-Event-ID`;
//! - `reset`: the room was reset (the timeline starts again);
//! - `state_lost`: the store lost the room's state (sales answer 503 until a reset);
//! - `unavailable`: Redis could not be read this time;
//! - `bye`: the connection is closed after [`LIFETIME`], and the browser reconnects soon.
//!
//! The stream ends when the client goes away, when the server starts its graceful shutdown
//! (which waits for open responses), and after [`LIFETIME`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::Stream;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use super::tally::{stream_id_after, TimelineEntry};
use super::{Subscription, Tick, SEND_PER_TICK};

/// A connection is closed after this long; the browser reconnects and resumes.
pub const LIFETIME: Duration = Duration::from_secs(600);

/// `{"entries": [...], "skipped": n}`.
pub fn timeline_json(entries: &[Arc<TimelineEntry>], skipped: usize) -> String {
    let list: Vec<Value> = entries.iter().map(|e| e.to_json()).collect();
    json!({ "entries": list, "skipped": skipped }).to_string()
}

/// One connection's position in the room's feed.
struct Client {
    sub: Subscription,
    stopping: watch::Receiver<bool>,
    deadline: tokio::time::Instant,
    /// The last timeline id sent (or the browser's `Last-Event-ID`).
    sent: Option<String>,
    queue: VecDeque<Event>,
    first_state: bool,
    done: bool,
}

/// The events of one connection, starting with the recent past (after `resume` when given)
/// and the room's latest state.
pub fn events(
    sub: Subscription,
    stopping: watch::Receiver<bool>,
    resume: Option<String>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let mut client = Client {
        sub,
        stopping,
        deadline: tokio::time::Instant::now() + LIFETIME,
        sent: resume,
        queue: VecDeque::new(),
        first_state: true,
        done: false,
    };
    client.catch_up();
    if let Some(last) = client.sub.feed.last() {
        client.push_main(&last);
    }
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
                    // Reconnect soon, resuming from the last id.
                    let bye = Event::default().event("bye").retry(Duration::from_millis(200));
                    self.queue.push_back(bye.data("{}"));
                    continue;
                }
                received = self.sub.rx.recv() => received,
            };
            match received {
                Ok(tick) => self.push_tick(&tick),
                // Fell behind: what was missed is in the recent timeline.
                Err(RecvError::Lagged(_)) => self.catch_up(),
                // The poller stopped (shutdown).
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// Sends the kept timeline entries this client has not had.
    fn catch_up(&mut self) {
        let entries = self.sub.feed.recent(self.sent.as_deref());
        self.push_timeline(&entries, 0, None);
    }

    fn push_tick(&mut self, tick: &Tick) {
        if tick.reset {
            self.sent = None;
            self.queue
                .push_back(Event::default().event("reset").data("{}"));
        }
        self.push_main(tick);
        // In step with the feed (the usual case): the tick's shared text as it is.
        let in_step = match (&self.sent, tick.timeline.first()) {
            (Some(sent), Some(first)) => stream_id_after(&first.id, sent),
            _ => true,
        };
        if in_step {
            self.push_timeline(&tick.timeline, tick.skipped, tick.timeline_data.as_deref());
        } else {
            let fresh: Vec<Arc<TimelineEntry>> = tick
                .timeline
                .iter()
                .filter(|e| {
                    self.sent
                        .as_deref()
                        .is_none_or(|s| stream_id_after(&e.id, s))
                })
                .cloned()
                .collect();
            self.push_timeline(&fresh, 0, None);
        }
    }

    fn push_main(&mut self, tick: &Tick) {
        let mut event = Event::default().event(tick.event).data(&*tick.data);
        if tick.event == "state" && self.first_state {
            event = event.retry(Duration::from_millis(1000));
            self.first_state = false;
        }
        self.queue.push_back(event);
    }

    fn push_timeline(
        &mut self,
        entries: &[Arc<TimelineEntry>],
        skipped: usize,
        shared: Option<&str>,
    ) {
        if entries.is_empty() && skipped == 0 {
            return;
        }
        let keep = entries.len().saturating_sub(SEND_PER_TICK);
        let entries = &entries[keep..];
        let data = match shared {
            Some(text) if keep == 0 => text.to_owned(),
            _ => timeline_json(entries, skipped + keep),
        };
        let mut event = Event::default().event("timeline").data(data);
        if let Some(last) = entries.last() {
            event = event.id(last.id.clone());
            self.sent = Some(last.id.clone());
        }
        self.queue.push_back(event);
    }
}
