//! The dashboard's live feed: one poller per room per instance, fanned out to every `/events`
//! stream of that room.
//!
//! However many dashboards watch a room, an instance reads it once per [`TICK`], and reads
//! only what is new: the ledger and the lock timeline are append-only, so the poller keeps
//! running totals ([`tally`]) and asks Redis for the entries after the last one it counted
//! (at most [`LEDGER_BATCH`] / [`TIMELINE_BATCH`] a tick, so a room with a long history is
//! caught up over a few ticks instead of in one huge read). Each tick is serialised once and
//! broadcast to the room's streams ([`stream`]). The poller stops when its last stream goes.
//!
//! A read that fails is not repeated at once: the poller backs off (up to [`MAX_BACKOFF`]) and
//! halves its read sizes until reads succeed again, so a Redis under pressure is not hit by the
//! same big read four times a second. Streams get an `unavailable` event meanwhile.
//!
//! An instance serves at most `--max-event-streams` streams; one more is a 503
//! `too_many_streams`.

pub mod stream;
pub mod tally;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::streams::StreamRangeReply;
use serde::Serialize;
use serde_json::json;
use tokio::sync::{broadcast, OwnedSemaphorePermit, Semaphore};

use crate::error::AppError;
use crate::ground_truth;
use crate::keys::Keys;
use crate::redis_pool::StoreError;
use crate::rooms::RoomStatus;
use crate::state::AppState;
use crate::view::StateView;
use tally::{PerInstance, Tally, TimelineEntry};

/// How often a room is read and a state event sent.
pub const TICK: Duration = Duration::from_millis(250);
/// Most ledger entries read per tick (halved after a failed read).
const LEDGER_BATCH: usize = 2_000;
/// Most timeline entries read per tick (halved after a failed read); the timeline itself is
/// capped near 5,000 entries by the scripts that write it.
const TIMELINE_BATCH: usize = 2_000;
/// The smallest read sizes backing off goes down to.
const MIN_BATCH: usize = 100;
/// Timeline entries sent per event (the newest), and kept for streams that join later.
pub const SEND_PER_TICK: usize = 600;
/// The longest a poller waits after failed reads before trying again.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Ticks a stream may fall behind before it skips ahead.
const CHANNEL_TICKS: usize = 16;

/// What one tick says to every stream of the room.
#[derive(Debug)]
pub struct Tick {
    /// The room was reset since the last tick: the timeline starts again.
    pub reset: bool,
    /// The SSE event name and its JSON data: `state`, `state_lost` or `unavailable`.
    pub event: &'static str,
    pub data: Arc<str>,
    /// Timeline entries counted this tick (the newest [`SEND_PER_TICK`]), and how many older
    /// ones of this tick were left out.
    pub timeline: Vec<Arc<TimelineEntry>>,
    pub skipped: usize,
    /// `{"entries": …, "skipped": …}` of the above, serialised once for every stream.
    pub timeline_data: Option<Arc<str>>,
}

/// One room's feed on this instance.
pub struct RoomFeed {
    tx: broadcast::Sender<Arc<Tick>>,
    /// The newest timeline entries (at most [`SEND_PER_TICK`]) and the last tick, for a stream
    /// that joins, resumes or fell behind. A std `Mutex`: copied out, never held across
    /// `.await`.
    recent: Mutex<Recent>,
}

#[derive(Default)]
struct Recent {
    timeline: VecDeque<Arc<TimelineEntry>>,
    last: Option<Arc<Tick>>,
}

impl RoomFeed {
    /// The kept timeline entries after `after` (all of them when `None`).
    pub fn recent(&self, after: Option<&str>) -> Vec<Arc<TimelineEntry>> {
        let recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent
            .timeline
            .iter()
            .filter(|e| after.is_none_or(|after| tally::stream_id_after(&e.id, after)))
            .cloned()
            .collect()
    }

    /// The last tick, for a stream that just joined.
    pub fn last(&self) -> Option<Arc<Tick>> {
        let recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.last.clone()
    }
}

/// The feeds of every room this instance is streaming, and the stream limit.
pub struct Feeds {
    /// Room name → its feed. A std `Mutex`: a stream joins and a poller leaves under it, so a
    /// stream never joins a poller that is stopping.
    rooms: Mutex<HashMap<String, Arc<RoomFeed>>>,
    streams: Arc<Semaphore>,
    max_streams: usize,
}

/// A stream's place in a room's feed; dropping it leaves.
pub struct Subscription {
    pub feed: Arc<RoomFeed>,
    pub rx: broadcast::Receiver<Arc<Tick>>,
    /// Held while the stream is open: the stream limit.
    _permit: OwnedSemaphorePermit,
}

impl Feeds {
    pub fn new(max_streams: usize) -> Self {
        Feeds {
            rooms: Mutex::default(),
            streams: Arc::new(Semaphore::new(max_streams)),
            max_streams,
        }
    }

    /// Joins the room's feed, starting its poller if it has none; a 503 past the limit.
    pub fn subscribe(&self, state: &AppState, keys: &Keys) -> Result<Subscription, AppError> {
        let permit = Arc::clone(&self.streams).try_acquire_owned().map_err(|_| {
            AppError::TooManyStreams {
                max: self.max_streams,
            }
        })?;
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        let feed = match rooms.get(keys.room()) {
            Some(feed) => Arc::clone(feed),
            None => {
                let (tx, _) = broadcast::channel(CHANNEL_TICKS);
                let feed = Arc::new(RoomFeed {
                    tx,
                    recent: Mutex::default(),
                });
                rooms.insert(keys.room().to_owned(), Arc::clone(&feed));
                tokio::spawn(poll(state.clone(), keys.clone(), Arc::clone(&feed)));
                feed
            }
        };
        let rx = feed.tx.subscribe();
        Ok(Subscription {
            feed,
            rx,
            _permit: permit,
        })
    }

    /// Removes the room's feed if no stream is left; tells the poller whether to stop.
    fn leave_if_unwatched(&self, room: &str, feed: &Arc<RoomFeed>) -> bool {
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        if feed.tx.receiver_count() > 0 {
            return false;
        }
        if rooms.get(room).is_some_and(|f| Arc::ptr_eq(f, feed)) {
            rooms.remove(room);
        }
        true
    }

    /// Rooms with a running poller on this instance.
    pub fn rooms(&self) -> usize {
        self.rooms.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// The state event: the `/state` document plus the live figures.
#[derive(Serialize)]
struct LiveView<'a> {
    #[serde(flatten)]
    view: StateView,
    throughput_rps: f64,
    live_instances: Vec<LiveInstance>,
    per_instance: &'a std::collections::BTreeMap<String, PerInstance>,
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
                    timeline: Vec::new(),
                    skipped: 0,
                    timeline_data: None,
                }
            }
        };
        let tick = Arc::new(tick);
        {
            let mut recent = feed.recent.lock().unwrap_or_else(|p| p.into_inner());
            if tick.reset {
                recent.timeline.clear();
            }
            recent.timeline.extend(tick.timeline.iter().cloned());
            let extra = recent.timeline.len().saturating_sub(SEND_PER_TICK);
            recent.timeline.drain(..extra);
            recent.last = Some(Arc::clone(&tick));
        }
        // No receiver left is found at the next tick.
        let _ = feed.tx.send(tick);
        next = tokio::time::Instant::now() + TICK.max(backoff);
    }
    state.feeds.leave_if_unwatched(keys.room(), &feed);
}

impl Poller {
    /// One read of the room: the ground truth, then what the ledger and timeline added.
    async fn read(&mut self) -> Result<Tick, StoreError> {
        let room = self.state.fleet.room(&self.keys).await?;
        let (truth, lock_store) = tokio::join!(
            ground_truth::read(&self.state.redis, &self.state.lock_store, &self.keys),
            self.state.lock_store.describe(&self.keys)
        );
        let truth = truth?;
        let status = self.state.rooms.judge(&self.keys, truth.stocked).await?;
        let now = Instant::now();
        if status == RoomStatus::Lost {
            let lost = crate::error::AppError::StateLost;
            let data = json!({ "error": lost.code(), "message": lost.to_string() });
            return Ok(Tick {
                reset: false,
                event: "state_lost",
                data: data.to_string().into(),
                timeline: Vec::new(),
                skipped: 0,
                timeline_data: None,
            });
        }

        let mut conn = self.state.redis.conn().await?;
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
                .cmd("XRANGE")
                .arg(self.keys.timeline())
                .arg(&start)
                .arg("+")
                .arg("COUNT")
                .arg(self.timeline_batch)
                .query_async(&mut conn)
                .await?;
        let live = self.state.fleet.live_instances().await?;

        // A reset deletes the ledger and the timeline: count again from the start, next tick.
        let reset = (self.generation.is_some() && generation != self.generation)
            || truth.orders < self.tally.ledger_seen();
        self.generation = generation;
        let (entries, skipped) = if reset {
            self.tally.clear();
            (Vec::new(), 0)
        } else {
            self.tally.ledger(&ledger);
            let entries: Vec<TimelineEntry> = timeline
                .ids
                .iter()
                .map(TimelineEntry::from_stream)
                .collect();
            self.tally.timeline(&entries);
            let skipped = entries.len().saturating_sub(SEND_PER_TICK);
            let entries: Vec<Arc<TimelineEntry>> =
                entries.into_iter().skip(skipped).map(Arc::new).collect();
            (entries, skipped)
        };

        let throughput = self.tally.throughput(now, truth.orders);
        let view = LiveView {
            view: StateView::new(
                &self.state.instance,
                &self.keys,
                &room,
                truth,
                status,
                lock_store,
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
            at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
        };
        let data = serde_json::to_string(&view).unwrap_or_else(|_| "{}".into());
        let timeline_data = (!entries.is_empty() || skipped > 0)
            .then(|| stream::timeline_json(&entries, skipped).into());
        Ok(Tick {
            reset,
            event: "state",
            data: data.into(),
            timeline: entries,
            skipped,
            timeline_data,
        })
    }
}
