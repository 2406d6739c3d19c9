//! The dashboard's live feed: one poller per room per instance, fanned out to every `/events`
//! stream of that room.
//!
//! However many dashboards watch a room, an instance reads it once per [`TICK`], and reads
//! only what is new: the ledger and the lock timeline are append-only, so the poller keeps
//! running totals ([`tally`]) and asks Redis for the entries after the last one it counted
//! (at most [`LEDGER_BATCH`] / [`TIMELINE_BATCH`] a tick, so a room with a long history is
//! caught up over a few ticks instead of in one huge read). What the page draws of the
//! timeline is kept as a [`window`] of the newest sections. Each tick (the state, and the
//! window when it changed, in every size the page offers) is serialised once and broadcast to
//! the room's streams ([`stream`]). The poller stops when its last stream goes.
//!
//! A read that fails is not repeated at once: the poller backs off (up to [`MAX_BACKOFF`]) and
//! halves its read sizes until reads succeed again, so a Redis under pressure is not hit by the
//! same big read four times a second. Streams get an `unavailable` event meanwhile.
//!
//! The poller itself, which reads the room through the application state, is in the `poller` module.
//!
//! An instance serves at most `--max-event-streams` streams; one more is a 503
//! `too_many_streams`.

pub mod stream;
pub mod tally;
pub mod window;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, OwnedSemaphorePermit, Semaphore};

use crate::error::AppError;
use crate::keys::Keys;

/// How often a room is read and a state event sent.
pub const TICK: Duration = Duration::from_millis(250);
/// Most ledger entries read per tick (halved after a failed read).
pub const LEDGER_BATCH: usize = 2_000;
/// Most timeline entries read per tick, the newest (halved after a failed read): twice the
/// largest window's sections, an enter and an exit each. When more came in one tick (over
/// ~800 sales a second) the older ones are not read: reading every one cost the sale rate
/// 17 % at 3,400 sales a second, and the page draws only the newest. The per-instance timeline
/// figures then count what was read, and the state says so (`timeline_sampled`).
pub const TIMELINE_BATCH: usize = 2 * window::MAX_DRAWN;
/// The smallest read sizes backing off goes down to.
pub const MIN_BATCH: usize = 100;
/// The longest a poller waits after failed reads before trying again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
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
    /// The timeline window in every size, when this tick changed it.
    pub windows: Option<Arc<Windows>>,
}

/// One window of the timeline rendered once for each size the page offers.
#[derive(Debug)]
pub struct Windows([Arc<str>; window::DRAW_SIZES.len()]);

impl Windows {
    pub fn render(window: &window::Window) -> Windows {
        Windows(window::DRAW_SIZES.map(|size| window.render(size).into()))
    }

    /// The window of `draw` sections (one of [`window::DRAW_SIZES`]; the largest otherwise).
    pub fn of(&self, draw: usize) -> &Arc<str> {
        let i = window::DRAW_SIZES.iter().position(|&s| s == draw);
        &self.0[i.unwrap_or(window::DRAW_SIZES.len() - 1)]
    }
}

/// One room's feed on this instance.
pub struct RoomFeed {
    tx: broadcast::Sender<Arc<Tick>>,
    /// The last tick and the newest window, for a stream that joins or skipped one. A std
    /// `Mutex`: copied out, never held across `.await`.
    recent: Mutex<Recent>,
}

#[derive(Default)]
struct Recent {
    last: Option<Arc<Tick>>,
    window: Option<Arc<Windows>>,
}

impl RoomFeed {
    /// Keeps the tick (and its window, for streams that join later) and sends it to every
    /// stream of the room. No receiver left is found at the poller's next tick.
    pub fn publish(&self, tick: Arc<Tick>) {
        {
            let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(windows) = &tick.windows {
                recent.window = Some(Arc::clone(windows));
            }
            recent.last = Some(Arc::clone(&tick));
        }
        let _ = self.tx.send(tick);
    }

    /// The newest window of the timeline.
    pub fn window(&self) -> Option<Arc<Windows>> {
        let recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.window.clone()
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
    /// `start` runs the room's poller when the room has none yet (see `poller`; passed in, so
    /// this registry needs nothing of the application state).
    pub fn subscribe(
        &self,
        keys: &Keys,
        start: impl FnOnce(Arc<RoomFeed>),
    ) -> Result<Subscription, AppError> {
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
                start(Arc::clone(&feed));
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

    /// Open streams per room on this instance.
    pub fn viewers(&self) -> Vec<(String, usize)> {
        let rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        rooms
            .iter()
            .map(|(room, feed)| (room.clone(), feed.tx.receiver_count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Removes the room's feed if no stream is left; tells the poller whether to stop.
    pub fn leave_if_unwatched(&self, room: &str, feed: &Arc<RoomFeed>) -> bool {
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        if feed.tx.receiver_count() > 0 {
            return false;
        }
        if rooms.get(room).is_some_and(|f| Arc::ptr_eq(f, feed)) {
            rooms.remove(room);
        }
        true
    }
}
