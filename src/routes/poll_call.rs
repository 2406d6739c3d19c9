//! `POST /admin/class/poll/call {"option": N}`: a room that voted option N in the latest
//! round, drawn at random, for the instructor to call on to explain its reasoning. Calling on
//! a random group rather than a volunteer is among what the peer-instruction research adds to
//! the vote (the LSE peer-instruction guide): every group must be ready to explain, so the discussion improves.
//!
//! Only once the round is closed: while it is open a room may still change its vote, and the
//! call would lead the votes still to come.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use workshop::scenario::question;

use super::extract::{required_json, Admin, Body};
use super::poll::no_poll;
use crate::error::AppError;
use crate::poll::ballot_box;
use crate::state::AppState;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CallBody {
    /// The option's index, from 0 (A): one of the polled question's own.
    #[schema(minimum = 0, maximum = 3)]
    option: usize,
}

/// The room called.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Called {
    /// A room that voted `option` in `round`, each such room as likely as any other.
    room: String,
    /// The latest round, the one the room voted in.
    round: u8,
    option: usize,
    /// How many rooms voted `option` in that round: the room was one of them.
    of: usize,
}

/// `POST /admin/class/poll/call {"option": N}`.
#[utoipa::path(post, path = "/admin/class/poll/call", operation_id = "poll_call", tag = "poll", request_body(content = CallBody, description = "`{\"option\": N}`: the option (from 0, A) whose voters one is called from"), security(("admin_token" = [])), responses((status = 200, description = "`{\"room\", \"round\", \"option\", \"of\"}`: a room that voted `option` in the latest round (`round`), drawn uniformly at random among the `of` rooms that did", body = Called), (status = 400, description = "No JSON body, or an option that is not one of the question's (`field`: `option`)", body = super::openapi::ErrorBody), (status = 409, description = "`no_poll`: no vote; `round_open`: the round is still open; `no_room_voted`: no room voted that option in the latest round", body = super::openapi::ErrorBody)))]
pub async fn call(
    _: Admin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Called>, AppError> {
    let CallBody { option } = required_json(&body, r#"{"option": 0}"#)?;
    let snapshot = ballot_box::snapshot(&state.resource).await?;
    let poll = snapshot.poll.ok_or_else(no_poll)?;
    let options = question(&poll.chapter).map_or(0, |q| q.options.len());
    if option >= options {
        return Err(AppError::BadField {
            field: "option",
            message: format!(
                "option {option} is not one of the question's: 0..={}",
                options.saturating_sub(1)
            ),
        });
    }
    if poll.open {
        return Err(AppError::Poll {
            code: "round_open",
            message: format!(
                "round {} is still open: close it first (POST /admin/class/poll/close), so no \
                 call leads the votes to come",
                poll.round
            ),
        });
    }
    let voters: Vec<&String> = snapshot
        .votes
        .last()
        .into_iter()
        .flatten()
        .filter(|(_, &voted)| voted == option)
        .map(|(room, _)| room)
        .collect();
    let Some(room) = pick(&voters) else {
        return Err(AppError::Poll {
            code: "no_room_voted",
            message: format!(
                "no room voted option {option} in round {}: call on another option",
                poll.round
            ),
        });
    };
    tracing::info!(room = %room, option, round = poll.round, "class vote: a room called");
    Ok(Json(Called {
        room: room.clone(),
        round: poll.round,
        option,
        of: voters.len(),
    }))
}

/// One of `rooms`, uniformly at random: the low 62 bits of a v4 UUID (the OS's generator;
/// those bits hold neither its version nor its variant) taken modulo the count, whose bias for
/// a class of a thousand rooms is below 2^-52. No generator crate for one draw per call.
fn pick<'a>(rooms: &[&'a String]) -> Option<&'a String> {
    if rooms.is_empty() {
        return None;
    }
    let bits = uuid::Uuid::new_v4().as_u128() & ((1 << 62) - 1);
    let at = usize::try_from(bits % rooms.len() as u128).expect("below the count");
    Some(rooms[at])
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn a_pick_is_one_of_the_rooms_and_reaches_each() {
        assert_eq!(pick(&[]), None);
        let rooms: Vec<String> = ["a", "b", "c"].map(String::from).into();
        let refs: Vec<&String> = rooms.iter().collect();
        let mut seen = [0; 3];
        for _ in 0..300 {
            let room = pick(&refs).unwrap();
            seen[rooms.iter().position(|r| r == room).unwrap()] += 1;
        }
        // Each room a third of the time: any below 50 of 300 is a chance of under 1e-9.
        assert!(seen.iter().all(|&n| n >= 50), "{seen:?}");
    }
}
