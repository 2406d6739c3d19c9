//! `GET /events?room=&draw=&poll=`: the dashboard's live feed, as Server-Sent Events. The room
//! is read by one poller per instance and fanned out to every stream ([`crate::feed`]); this
//! handler only joins it. Events and their data: see [`crate::feed::stream`].
//!
//! With `poll=1` the same connection carries the class vote too (`event: poll`, as
//! `/poll/events` sends it, see [`crate::poll::poll_events`]): a student's phone holds one
//! stream, not two, so a class behind one address spends one of its connections per phone.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;

use super::extract::Room;
use crate::error::AppError;
use crate::feed::stream;
use crate::feed::window::{DEFAULT_DRAW, DRAW_SIZES};
use crate::state::AppState;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// How many critical sections the page draws: its timeline window.
    #[param(value_type = Option<u32>)]
    draw: Option<String>,
    /// `1`: the class vote's `poll` events on this stream too (a student's dashboard).
    #[param(value_type = Option<u8>, minimum = 1, maximum = 1)]
    poll: Option<String>,
}

/// The room's live feed as Server-Sent Events (`text/event-stream`): a `state` event with the
/// `/state` document, then the room's changes as they happen; a comment every 10 s keeps it
/// open. It never ends by itself. With `poll=1`, the class vote's `poll` events as well.
#[utoipa::path(
    get,
    path = "/events",
    tag = "observe",
    params(super::openapi::RoomParam, EventsQuery),
    responses(
        (status = 200, description = "An endless stream of Server-Sent Events: `event: state` (the `/state` document), then the room's figures, sections and chart points; with `poll=1`, `event: poll` (the vote's public view, as `/poll/events` sends it) on connect and each change", content_type = "text/event-stream", body = String),
        (status = 503, description = "The store does not answer, or this instance serves its most streams (`too_many_streams`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn events(
    State(state): State<AppState>,
    Room(keys): Room,
    Query(query): Query<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    let draw = match query.draw.as_deref() {
        None => DEFAULT_DRAW,
        Some(text) => text
            .parse()
            .ok()
            .filter(|n| DRAW_SIZES.contains(n))
            .ok_or_else(|| {
                AppError::BadRequest(format!(
                    "draw must be one of {DRAW_SIZES:?} (the sections the timeline shows); got `{text}`"
                ))
            })?,
    };
    let with_poll = match query.poll.as_deref() {
        None => false,
        Some("1") => true,
        Some(text) => {
            return Err(AppError::BadRequest(format!(
                "poll must be 1 (the class vote on this stream too) or absent; got `{text}`"
            )))
        }
    };
    // Fail with a plain 503 now rather than open a stream that can only say "unavailable".
    state.fleet.room(&keys).await?;
    // The vote's place first: refused, it takes no feed subscription with it.
    let watching = match with_poll {
        true => Some(
            state
                .poll
                .watch()
                .map_err(|max| AppError::TooManyStreams { max })?,
        ),
        false => None,
    };
    let subscription = crate::poller::subscribe(&state, &keys)?;
    let feed = stream::events(subscription, state.stopping.subscribe(), draw);
    // Both streams end on shutdown and after their lifetime (the same ten minutes); the
    // merged one ends when both have.
    let votes = match watching {
        Some(watching) => {
            crate::poll::poll_events::events(watching, state.stopping.subscribe()).left_stream()
        }
        None => futures_util::stream::empty().right_stream(),
    };
    let events = futures_util::stream::select(feed, votes);
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(10))))
}
