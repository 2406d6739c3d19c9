//! One `/poll/events` connection: event `poll`, data the public view (with the poll's
//! `version` it was read at, by which a page tells it from an older one), sent on connect (a
//! student who joins late or reloads sees the open question) and on every change, at most one
//! every [`MIN_GAP`]: changes in between are folded into the next (the watch channel keeps
//! only the newest view).
//!
//! The stream ends when the client goes away, when the server starts its graceful shutdown,
//! and after [`LIFETIME`] (the browser reconnects and is sent the view again).

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::Stream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::watch::Watching;

/// The least time between two events of one stream: about two a second.
pub const MIN_GAP: Duration = Duration::from_millis(500);
/// A connection is closed after this long, as the dashboard's feed is.
pub const LIFETIME: Duration = Duration::from_secs(600);
/// Where the browser reconnects after a connection ends.
const RECONNECT: Duration = Duration::from_millis(1000);

struct Client {
    watching: Watching,
    stopping: watch::Receiver<bool>,
    deadline: Instant,
    /// When the last event went out; `None` before the first.
    sent: Option<Instant>,
}

/// The events of one connection.
pub fn events(
    watching: Watching,
    stopping: watch::Receiver<bool>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let client = Client {
        watching,
        stopping,
        deadline: Instant::now() + LIFETIME,
        sent: None,
    };
    futures_util::stream::unfold(client, |mut client| async move {
        let event = client.next().await?;
        Some((Ok(event), client))
    })
}

impl Client {
    async fn next(&mut self) -> Option<Event> {
        let Client {
            watching,
            stopping,
            deadline,
            sent,
        } = self;
        let rx = &mut watching.rx;
        match *sent {
            // The view as it is, once the instance has read it.
            None => tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => return None,
                _ = tokio::time::sleep_until(*deadline) => return None,
                loaded = rx.wait_for(|current| current.loaded) => {
                    loaded.ok()?;
                }
            },
            Some(at) => tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => return None,
                _ = tokio::time::sleep_until(*deadline) => return None,
                changed = async {
                    tokio::time::sleep_until(at + MIN_GAP).await;
                    rx.changed().await
                } => changed.ok()?,
            },
        }
        let data = rx.borrow_and_update().json.clone();
        let mut event = Event::default().event("poll").data(&*data);
        if sent.is_none() {
            event = event.retry(RECONNECT);
        }
        *sent = Some(Instant::now());
        Some(event)
    }
}
