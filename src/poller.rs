//! The poller behind a room's live feed: reads the room every tick (the ground truth, then
//! only what the ledger and timeline added), backs off when reads fail, and broadcasts each
//! tick to the room's streams until none is left. Apart from [`crate::feed`], the registry of
//! feeds, so that the state can hold the registry without the registry knowing the state.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::streams::StreamRangeReply;
use serde::Serialize;
use serde_json::json;

use crate::error::AppError;
use crate::feed::tally::{PerInstance, Tally, TimelineEntry};
use crate::feed::window::Window;
use crate::feed::{
    RoomFeed, Subscription, Tick, Windows, LEDGER_BATCH, MAX_BACKOFF, MIN_BATCH, TICK,
    TIMELINE_BATCH,
};
use crate::keys::Keys;
use crate::redis_pool::StoreError;
use crate::rooms::RoomStatus;
use crate::state::AppState;
use crate::view::StateView;

/// Joins the room's feed on this instance, starting its poller if it has none.
pub fn subscribe(state: &AppState, keys: &Keys) -> Result<Subscription, AppError> {
    state.feeds.subscribe(keys, |feed| {
        tokio::spawn(poll(state.clone(), keys.clone(), feed));
    })
}

/// The state event: the `/state` document plus the live figures.
#[derive(Serialize)]
struct LiveView<'a> {
    #[serde(flatten)]
    view: StateView,
    throughput_rps: f64,
    live_instances: Vec<LiveInstance>,
    per_instance: &'a std::collections::BTreeMap<String, PerInstance>,
    /// The timeline figures of `per_instance` count part of the timeline only: the sale rate
    /// outran what the feed reads (orders and items, from the ledger, are exact).
    timeline_sampled: bool,
    at_ms: u64,
}

#[derive(Serialize)]
struct LiveInstance {
    instance: String,
    last_seen_ms: i64,
}

/// Where the poller is in the room, and how hard it may read.
struct Poller {
    state: AppState,
    keys: Keys,
    tally: Tally,
    /// What the page draws of the timeline.
    window: Window,
    /// Some timeline entries were never read (more in a tick than [`TIMELINE_BATCH`]).
    timeline_sampled: bool,
    /// The room's reset generation at the last read; a change means a reset.
    generation: Option<String>,
    ledger_batch: usize,
    timeline_batch: usize,
}

/// Reads the room every tick until no stream is left.
async fn poll(state: AppState, keys: Keys, feed: Arc<RoomFeed>) {
    let mut stopping = state.stopping.subscribe();
    let mut poller = Poller {
        state: state.clone(),
        keys: keys.clone(),
        tally: Tally::default(),
        window: Window::default(),
        timeline_sampled: false,
        generation: None,
        ledger_batch: LEDGER_BATCH,
        timeline_batch: TIMELINE_BATCH,
    };
    let mut backoff = Duration::ZERO;
    let mut next = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = stopping.wait_for(|stop| *stop) => break,
            _ = tokio::time::sleep_until(next) => {}
        }
        if state.feeds.leave_if_unwatched(keys.room(), &feed) {
            return;
        }
        let tick = match poller.read().await {
            Ok(tick) => {
                backoff = Duration::ZERO;
                poller.ledger_batch = (poller.ledger_batch * 2).min(LEDGER_BATCH);
                poller.timeline_batch = (poller.timeline_batch * 2).min(TIMELINE_BATCH);
                tick
            }
            Err(err) => {
                backoff = (backoff * 2).clamp(TICK * 2, MAX_BACKOFF);
                poller.ledger_batch = (poller.ledger_batch / 2).max(MIN_BATCH);
                poller.timeline_batch = (poller.timeline_batch / 2).max(MIN_BATCH);
                tracing::debug!(%err, room = keys.room(), ?backoff, "feed read failed; backing off");
                let data = json!({ "error": "redis_unavailable", "message": err.to_string() });
                Tick {
                    reset: false,
                    event: "unavailable",
                    data: data.to_string().into(),
                    windows: None,
                }
            }
        };
        feed.publish(Arc::new(tick));
        next = tokio::time::Instant::now() + TICK.max(backoff);
    }
    state.feeds.leave_if_unwatched(keys.room(), &feed);
}

impl Poller {
    /// One read of the room: the ground truth, then what the ledger and timeline added.
    async fn read(&mut self) -> Result<Tick, StoreError> {
        let room = self.state.fleet.room(&self.keys).await?;
        let (truth, place) = crate::view::read_room(&self.state, &self.keys).await?;
        let status = self.state.rooms.judge(&self.keys, truth.stocked).await?;
        let now = Instant::now();
        if status == RoomStatus::Lost {
            let lost = crate::error::AppError::StateLost;
            let data = json!({ "error": lost.code(), "message": lost.to_string() });
            return Ok(Tick {
                reset: false,
                event: "state_lost",
                data: data.to_string().into(),
                windows: None,
            });
        }

        let mut conn = self.state.resource.conn().await?;
        // Read newest first, down to (not including) the last entry counted.
        let start = match self.tally.timeline_seen() {
            Some(id) => format!("({id}"),
            None => "-".to_owned(),
        };
        let seen = self.tally.ledger_seen();
        let (generation, ledger, timeline): (Option<String>, Vec<String>, StreamRangeReply) =
            redis::pipe()
                .get(self.keys.generation())
                .lrange(
                    self.keys.ledger(),
                    seen as isize,
                    (seen + self.ledger_batch as i64 - 1) as isize,
                )
                .cmd("XREVRANGE")
                .arg(self.keys.timeline())
                .arg("+")
                .arg(&start)
                .arg("COUNT")
                .arg(self.timeline_batch)
                .query_async(&mut conn)
                .await?;
        let live = self.state.fleet.live_instances().await?;

        // A reset deletes the ledger and the timeline: count again from the start, next tick.
        let reset = (self.generation.is_some() && generation != self.generation)
            || truth.orders < self.tally.ledger_seen();
        self.generation = generation;
        let window_changed = if reset {
            self.tally.clear();
            self.window.clear();
            self.timeline_sampled = false;
            true
        } else {
            self.tally.ledger(&ledger);
            // Newest first from XREVRANGE; a full read may have left older ones unread.
            if timeline.ids.len() >= self.timeline_batch {
                self.timeline_sampled = true;
            }
            let entries: Vec<TimelineEntry> = timeline
                .ids
                .iter()
                .rev()
                .map(TimelineEntry::from_stream)
                .collect();
            self.tally.timeline(&entries);
            self.window.add(&entries);
            !entries.is_empty()
        };

        let throughput = self.tally.throughput(now, truth.orders);
        let view = LiveView {
            view: crate::view::state_view(
                &self.state.instance,
                &self.keys,
                &room,
                truth,
                status,
                place,
            ),
            throughput_rps: (throughput * 10.0).round() / 10.0,
            live_instances: live
                .into_iter()
                .map(|(instance, last_seen_ms)| LiveInstance {
                    instance,
                    last_seen_ms,
                })
                .collect(),
            per_instance: self.tally.per_instance(),
            timeline_sampled: self.timeline_sampled,
            at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
        };
        let data = serde_json::to_string(&view).unwrap_or_else(|_| "{}".into());
        Ok(Tick {
            reset,
            event: "state",
            data: data.into(),
            windows: window_changed.then(|| Arc::new(Windows::render(&self.window))),
        })
    }
}
