//! `GET /timeline`: the room's lock timeline read back whole, a page at a time, for a run's
//! history (`loadtest … --history`, a chapter's runner): every critical section's enter (the
//! stock it read) and exit (how it ended), each renewal, release and stale write, the faults as
//! they struck. Read-only, as `/ledger` is.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use super::extract::{Query, Room};
use crate::error::AppError;
use crate::ground_truth::timeline;
use crate::rooms::RoomStatus;
use crate::state::AppState;

const MAX_PAGE: usize = 10_000;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Cursor {
    /// The entries after this one (a `next` of the last page) [default: from the first].
    #[param(pattern = "^[0-9]{1,19}-[0-9]{1,19}$", example = "1700000000000-0")]
    after: Option<String>,
    /// How many entries, 1–10000 [default: 1000].
    #[param(minimum = 1, maximum = 10000)]
    limit: Option<usize>,
}

/// `GET /timeline?after=&limit=`: a page of the room's lock timeline, oldest first.
#[utoipa::path(
    get,
    path = "/timeline",
    tag = "observe",
    params(super::openapi::RoomParam, Cursor),
    responses(
        (status = 200, description = "`{\"entries\": [{\"id\", \"kind\", \"at_us\", …}], \"added\", \"kept\", \"next\"}`: `added` entries since the room's reset, `kept` still held (the stream keeps about 5,000); `next` is the cursor of the following page, null on the last", body = Object),
        (status = 400, description = "A bad cursor or limit", body = Object),
    )
)]
pub async fn timeline(
    State(state): State<AppState>,
    Room(keys): Room,
    Query(cursor): Query<Cursor>,
) -> Result<Json<timeline::Page>, AppError> {
    let (after, limit) = checked(&cursor)?;
    let page = timeline::page(&state.resource, &keys, after, limit).await?;
    if page.added == 0 && state.rooms.status(&keys).await? == RoomStatus::Lost {
        return Err(AppError::StateLost);
    }
    Ok(Json(page))
}

/// `GET /leases?after=&limit=`: a page of the leases the room's lab lock stamped in the lock
/// store, oldest first (empty where the room's locks stamp theirs on the timeline itself, or
/// stamp none).
#[utoipa::path(
    get,
    path = "/leases",
    tag = "observe",
    params(super::openapi::RoomParam, Cursor),
    responses(
        (status = 200, description = "`{\"entries\": [{\"id\", \"kind\": \"lease\", \"lease\", \"owner\", \"deadline_us\", \"at_us\"}], \"added\", \"kept\", \"next\"}` as `GET /timeline`'s, on the lock store's clock: each grant, renewal, release and refused release a lab lock's step made, stamped by the lock store with the deadline the key then carried", body = Object),
        (status = 400, description = "A bad cursor or limit", body = Object),
    )
)]
pub async fn leases(
    State(state): State<AppState>,
    Room(keys): Room,
    Query(cursor): Query<Cursor>,
) -> Result<Json<timeline::Page>, AppError> {
    let (after, limit) = checked(&cursor)?;
    let stream = keys.lock_leases();
    let page = timeline::page_of(state.lock_store.pool(), &stream, after, limit).await?;
    Ok(Json(page))
}

/// The cursor's entry and page size, or a 400 saying what is wrong.
fn checked(cursor: &Cursor) -> Result<(Option<&str>, usize), AppError> {
    let limit = cursor.limit.unwrap_or(1000);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(AppError::BadRequest(format!(
            "limit must be 1..={MAX_PAGE}"
        )));
    }
    if let Some(after) = &cursor.after {
        if !is_stream_id(after) {
            return Err(AppError::BadRequest(format!(
                "after must be an entry id such as 1700000000000-0, got `{after}`"
            )));
        }
    }
    Ok((cursor.after.as_deref(), limit))
}

/// `<ms>-<seq>`, both decimal: what a stream's entry ids look like.
fn is_stream_id(text: &str) -> bool {
    let Some((ms, seq)) = text.split_once('-') else {
        return false;
    };
    // At most 19 digits a part: every such number fits the u64 Redis keeps an id's parts in
    // (20 digits may not, and Redis then refuses the id with an error, not an empty page).
    let digits = |s: &str| !s.is_empty() && s.len() <= 19 && s.bytes().all(|b| b.is_ascii_digit());
    digits(ms) && digits(seq)
}

#[cfg(test)]
mod tests {
    use super::is_stream_id;

    #[test]
    fn an_entry_id_is_two_parts_each_fitting_a_u64() {
        assert!(is_stream_id("1700000000000-0"));
        assert!(is_stream_id("9999999999999999999-9999999999999999999"));
        // The id schemathesis sent: its sequence overflows a u64, and Redis refused it (a 500).
        assert!(!is_stream_id("44732-62462154671860448751"));
        assert!(!is_stream_id("1700000000000"));
        assert!(!is_stream_id("-0"));
        assert!(!is_stream_id("17-x"));
    }
}
