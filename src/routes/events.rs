//! `GET /events?room=`: the dashboard's live feed, as Server-Sent Events. The room is read by
//! one poller per instance and fanned out to every stream ([`crate::feed`]); this handler
//! only joins it. Events and their data: see [`crate::feed::stream`].

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;

use super::extract::Room;
use crate::error::AppError;
use crate::feed::{stream, tally};
use crate::state::AppState;

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
        .filter(|id| tally::is_stream_id(id))
        .map(str::to_owned);
    let subscription = crate::poller::subscribe(&state, &keys)?;
    let events = stream::events(subscription, state.stopping.subscribe(), resume);
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(10))))
}
