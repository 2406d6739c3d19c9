//! `GET /events?room=`: the dashboard's live feed, as Server-Sent Events.
//!
//! Every [`TICK`] the stream sends
//! - `state`: what `GET /state` says, plus `throughput_rps` (orders per second over the last
//!   second, from the change in `orders`), `live_instances` and `per_instance` figures
//!   (orders and items from the ledger, exact; critical sections, overlaps, foreign releases,
//!   stale accesses and renewals from the lock timeline, which Redis keeps bounded);
//! - `timeline`: the lock-timeline entries added since the last one sent (a bounded batch;
//!   when more arrived, only the newest are sent and `skipped` says how many were not). The
//!   event's SSE id is the last stream id sent, so a browser that reconnects resumes with
//!   `Last-Event-ID` instead of starting over;
//! - `reset`: the room was reset (the timeline starts again).
//!
//! The stream ends when the client goes away (the next write fails), when the process is asked
//! to stop (SIGTERM / Ctrl-C: graceful shutdown waits for open responses, so an endless stream
//! would hold it up), and after [`LIFETIME`] as a last resort: `EventSource` reconnects by
//! itself and resumes where it was.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use redis::streams::{StreamId, StreamRangeReply};
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio::sync::watch;

use super::extract::Room;
use crate::error::AppError;
use crate::ground_truth::{self, GroundTruth};
use crate::keys::Keys;
use crate::redis_pool::StoreError;
use crate::state::AppState;

/// How often a state event is sent.
const TICK: Duration = Duration::from_millis(250);
/// A connection is closed after this long; the browser reconnects and resumes.
const LIFETIME: Duration = Duration::from_secs(600);
/// Timeline entries read from Redis per call, and at most per tick.
const READ_BATCH: usize = 2_000;
const READ_PER_TICK: usize = 10_000;
/// Timeline entries sent to the client per tick (the newest ones).
const SEND_PER_TICK: usize = 600;
/// Ledger entries read per tick for the per-instance order counts.
const LEDGER_PER_TICK: i64 = 10_000;
/// The window the throughput is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(1);

pub async fn events(
    State(state): State<AppState>,
    Room(keys): Room,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    // Fail with a plain 503 now rather than open a stream that can only say "unavailable".
    state.fleet.room(&keys).await?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .filter(|id| is_stream_id(id))
        .map(str::to_owned);
    let feed = Feed::new(state, keys, resume);
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok::<_, Infallible>(event), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(10))))
}

/// `<ms>-<seq>`, as Redis stream ids are.
fn is_stream_id(id: &str) -> bool {
    id.split_once('-').is_some_and(|(ms, seq)| {
        !ms.is_empty()
            && !seq.is_empty()
            && ms.bytes().chain(seq.bytes()).all(|b| b.is_ascii_digit())
    })
}

/// Figures of one instance, derived from the ledger and the timeline.
#[derive(Debug, Default, Clone, Serialize)]
struct PerInstance {
    /// Ledger entries written by this instance (exact).
    orders: i64,
    items: i64,
    /// Critical sections entered (timeline).
    sections: i64,
    /// Overlapping pairs counted at this instance's exits (timeline).
    overlaps: i64,
    /// Locks of others this instance deleted (timeline).
    foreign_releases: i64,
    /// Reads or writes refused by the fencing check (timeline).
    stale: i64,
    /// Watchdog renewals (timeline).
    renewals: i64,
}

/// One connection's view of the room.
struct Feed {
    state: AppState,
    /// Turns true when the server starts its graceful shutdown: the stream ends then.
    stopping: watch::Receiver<bool>,
    keys: Keys,
    started: Instant,
    ticker: tokio::time::Interval,
    /// Events made at the last tick and not yet sent.
    queue: VecDeque<Event>,
    /// Last timeline id tallied; `None` until the first read.
    tallied: Option<String>,
    /// Last timeline id sent to the client.
    sent: Option<String>,
    /// Ledger entries tallied so far.
    ledger_seen: i64,
    initial_stock: Option<i64>,
    per_instance: BTreeMap<String, PerInstance>,
    /// (when, orders) over the last [`RATE_WINDOW`].
    rate: VecDeque<(Instant, i64)>,
    first: bool,
    done: bool,
}

impl Feed {
    fn new(state: AppState, keys: Keys, resume: Option<String>) -> Self {
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Feed {
            stopping: state.stopping.subscribe(),
            state,
            keys,
            started: Instant::now(),
            ticker,
            queue: VecDeque::new(),
            tallied: None,
            sent: resume,
            ledger_seen: 0,
            initial_stock: None,
            per_instance: BTreeMap::new(),
            rate: VecDeque::new(),
            first: true,
            done: false,
        }
    }

    /// The next event to send; `None` ends the stream.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.done {
                return None;
            }
            tokio::select! {
                _ = self.stopping.wait_for(|stop| *stop) => return None,
                _ = self.ticker.tick() => {}
            }
            if self.started.elapsed() > LIFETIME {
                self.done = true;
                // Reconnect soon, resuming from the last id.
                self.queue.push_back(
                    Event::default()
                        .event("bye")
                        .retry(Duration::from_millis(200))
                        .data("{}"),
                );
                continue;
            }
            if let Err(err) = self.poll().await {
                let data = json!({ "error": "redis_unavailable", "message": err.to_string() });
                self.queue
                    .push_back(Event::default().event("unavailable").data(data.to_string()));
            }
        }
    }

    /// Reads the room once and queues this tick's events.
    async fn poll(&mut self) -> Result<(), StoreError> {
        let room = self.state.fleet.room(&self.keys).await?;
        let truth =
            ground_truth::read(&self.state.redis, &self.state.lock_store, &self.keys).await?;
        let now = Instant::now();

        // A reset deletes the ledger and the timeline and sets a new initial stock.
        let llen = truth.orders;
        let was_reset = llen < self.ledger_seen
            || self
                .initial_stock
                .is_some_and(|initial| initial != truth.initial_stock);
        if was_reset {
            self.per_instance.clear();
            self.ledger_seen = 0;
            self.rate.clear();
            self.queue
                .push_back(Event::default().event("reset").data("{}"));
        }
        self.initial_stock = Some(truth.initial_stock);

        self.tally_ledger().await?;
        let (entries, skipped) = self.read_timeline(was_reset).await?;

        self.rate.push_back((now, truth.orders));
        while self
            .rate
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > RATE_WINDOW)
        {
            self.rate.pop_front();
        }
        let throughput = match (self.rate.front(), self.rate.back()) {
            (Some((t0, o0)), Some((t1, o1))) if t1 > t0 => {
                ((o1 - o0).max(0) as f64) / t1.duration_since(*t0).as_secs_f64()
            }
            _ => 0.0,
        };
        let live: Vec<Value> = self
            .state
            .fleet
            .live_instances()
            .await?
            .into_iter()
            .map(|(id, ago)| json!({ "instance": id, "last_seen_ms": ago }))
            .collect();

        let view = state_json(
            &self.state,
            &self.keys,
            &room,
            truth,
            throughput,
            live,
            &self.per_instance,
        );
        let mut event = Event::default().event("state").data(view.to_string());
        if self.first {
            event = event.retry(Duration::from_millis(1000));
            self.first = false;
        }
        self.queue.push_back(event);

        if !entries.is_empty() || skipped > 0 {
            let last = entries.last().map(|e| e.id.clone());
            let list: Vec<Value> = entries.iter().map(entry_json).collect();
            let data = json!({ "entries": list, "skipped": skipped });
            let mut event = Event::default().event("timeline").data(data.to_string());
            if let Some(last) = last {
                event = event.id(last);
            }
            self.queue.push_back(event);
        }
        Ok(())
    }

    /// Counts ledger entries added since the last tick, per instance.
    async fn tally_ledger(&mut self) -> Result<(), StoreError> {
        let mut conn = self.state.redis.conn().await?;
        let raw: Vec<String> = redis::cmd("LRANGE")
            .arg(self.keys.ledger())
            .arg(self.ledger_seen)
            .arg(self.ledger_seen + LEDGER_PER_TICK - 1)
            .query_async(&mut conn)
            .await?;
        self.ledger_seen += raw.len() as i64;
        for entry in raw {
            let Ok(order) = serde_json::from_str::<Value>(&entry) else {
                continue;
            };
            let instance = order["instance"].as_str().unwrap_or("?").to_owned();
            let figures = self.per_instance.entry(instance).or_default();
            figures.orders += 1;
            figures.items += order["qty"].as_i64().unwrap_or(1);
        }
        Ok(())
    }

    /// Reads the timeline entries added since the last read, tallies them all, and returns the
    /// newest ones to send (at most [`SEND_PER_TICK`]) with how many were left out.
    async fn read_timeline(
        &mut self,
        was_reset: bool,
    ) -> Result<(Vec<StreamId>, usize), StoreError> {
        if was_reset {
            self.tallied = None;
            self.sent = None;
        }
        let mut conn = self.state.redis.conn().await?;
        let mut read: Vec<StreamId> = Vec::new();
        loop {
            let start = match &self.tallied {
                Some(id) => format!("({id}"),
                None => "-".to_owned(),
            };
            let reply: StreamRangeReply = redis::cmd("XRANGE")
                .arg(self.keys.timeline())
                .arg(&start)
                .arg("+")
                .arg("COUNT")
                .arg(READ_BATCH)
                .query_async(&mut conn)
                .await?;
            let n = reply.ids.len();
            if let Some(last) = reply.ids.last() {
                self.tallied = Some(last.id.clone());
            }
            for entry in &reply.ids {
                self.tally(entry);
            }
            read.extend(reply.ids);
            if n < READ_BATCH || read.len() >= READ_PER_TICK {
                break;
            }
        }
        // Only what the client has not seen (it may have resumed with Last-Event-ID).
        if let Some(sent) = &self.sent {
            read.retain(|e| stream_id_after(&e.id, sent));
        }
        let skipped = read.len().saturating_sub(SEND_PER_TICK);
        // A fresh client gets the recent past, not a replay of the whole stream.
        let keep = read.split_off(skipped);
        if let Some(last) = keep.last() {
            self.sent = Some(last.id.clone());
        }
        Ok((keep, skipped))
    }

    fn tally(&mut self, entry: &StreamId) {
        let field = |name: &str| entry.get::<String>(name).unwrap_or_default();
        let figures = self.per_instance.entry(field("instance")).or_default();
        match field("kind").as_str() {
            "enter" => figures.sections += 1,
            "exit" => {
                figures.overlaps += field("overlaps").parse::<i64>().unwrap_or(0);
                if field("outcome") == "stale" {
                    figures.stale += 1;
                }
            }
            "stale" => figures.stale += 1,
            "foreign_release" => figures.foreign_releases += 1,
            "renew" => figures.renewals += 1,
            "deduct" => figures.sections += 1,
            _ => {}
        }
    }
}

/// Whether stream id `a` comes after `b`.
fn stream_id_after(a: &str, b: &str) -> bool {
    let parse = |id: &str| {
        let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
        (
            ms.parse::<u64>().unwrap_or(0),
            seq.parse::<u64>().unwrap_or(0),
        )
    };
    parse(a) > parse(b)
}

/// A timeline entry as JSON: its id and fields, numbers where they are numbers.
fn entry_json(entry: &StreamId) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), Value::String(entry.id.clone()));
    for (name, value) in &entry.map {
        let text: String = redis::from_redis_value_ref(value).unwrap_or_default();
        let value = match name.as_str() {
            "at_us" | "stock" | "overlaps" => text
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(text)),
            _ => Value::String(text),
        };
        out.insert(name.clone(), value);
    }
    Value::Object(out)
}

/// The `GET /state` document plus the live figures.
fn state_json(
    state: &AppState,
    keys: &Keys,
    room: &crate::fleet::RoomConfig,
    truth: GroundTruth,
    throughput: f64,
    live: Vec<Value>,
    per_instance: &BTreeMap<String, PerInstance>,
) -> Value {
    let mut view = json!({
        "instance": state.instance,
        "room": keys.room(),
        "tier": room.settings.tier,
        "settings": room.settings,
        "faults": room.faults.to_vec(),
    });
    if let (Value::Object(view), Ok(Value::Object(truth))) =
        (&mut view, serde_json::to_value(truth))
    {
        view.extend(truth);
    }
    view["throughput_rps"] = json!((throughput * 10.0).round() / 10.0);
    view["live_instances"] = Value::Array(live);
    view["per_instance"] = json!(per_instance);
    view["at_ms"] = json!(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0));
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_compare_numerically() {
        assert!(is_stream_id("1700000000000-0"));
        assert!(!is_stream_id("1700000000000"));
        assert!(!is_stream_id("a-1"));
        assert!(stream_id_after("10-0", "9-5"));
        assert!(stream_id_after("10-2", "10-1"));
        assert!(!stream_id_after("10-1", "10-1"));
    }
}
