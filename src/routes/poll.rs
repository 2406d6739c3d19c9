//! The class vote over HTTP (see [`crate::poll`]):
//!
//! - `POST /admin/class/poll {"question"}`: opens round 1 of the question (`chapter` names it
//!   too), replacing any poll; `POST /admin/class/poll/round`: the next round (the last is 2);
//!   `POST /admin/class/poll/close`: closes the round; `GET /admin/class/poll`: the admin view;
//! - `POST /admin/class/poll/call {"option"}`: a random room that voted the option in the closed
//!   round, to call on to explain (`poll_call`);
//! - `POST /admin/class/poll/reveal {"run": true, "room"?, "every_room"?}`: runs the chapter in
//!   the room (as `POST /admin/scenario` does), closes the vote and answers the reveal; with
//!   `every_room`, the class's rooms run it too, after the answer (`poll_runs`);
//!   `{"run": false}` reveals the run this poll made before;
//! - `GET /admin/class/results[?format=csv|md|reasons]`: every chapter polled in this class;
//! - `POST /poll?room= {"option", "sure"?, "why"?}` with the room's token: the room's vote,
//!   how sure it is and one line of why;
//! - `GET /poll?room=`: the public view (with the room's token, also the room's own vote);
//! - `GET /poll/events?room=`: the public view as Server-Sent Events.
//!
//! The admin token opens, closes, runs and reveals, and alone reads the counts, the reasons
//! and which chapter is asked before the reveal; it does not vote. Everyone else sees the
//! question under a neutral number until the reveal: a chapter's id may name its outcome.
//!
//! Every view, and the answers of a vote and a reveal, carry the poll's `version` (see
//! `poll/version.lua`): it grows with every change, so a page that draws both the answers and
//! the stream drops whichever arrives after a newer one.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use workshop::scenario::{question, CATALOG};

use super::class::{room_names, valid_room};
use super::extract::{bearer_token, required_json, token_matches, Admin, Body, Query, Room};
use super::poll_runs::{moved, run_chapter, spawn_every_room, BeforeTheRun};
use crate::error::AppError;
use crate::keys::DEFAULT_ROOM;
use crate::poll::ballot_box::{self, Note, RevealRefused, RoundRefused, VoteRefused};
use crate::poll::results::{self, Results};
use crate::poll::standings::{self, AdminView, PublicView, Reveal};
use crate::room_tokens;
use crate::state::AppState;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct OpenBody {
    /// The question's id (a chapter's question has the chapter's id).
    #[serde(alias = "chapter")]
    question: String,
}

/// `POST /admin/class/poll {"chapter"}`.
#[utoipa::path(post, path = "/admin/class/poll", operation_id = "poll_open", tag = "poll", request_body(content = OpenBody, description = "`{\"chapter\": \"<a chapter with a question>\"}`"), security(("admin_token" = [])), responses((status = 200, description = "The admin view: the question, rounds, counts, and `version`, the poll's version (it grows with every change of the poll: a view with a smaller one is older)", body = Object), (status = 409, description = "No class, no poll, or no open round; the `error` code says which", body = super::openapi::ErrorBody)))]
pub async fn open(
    _: Admin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<AdminView>, AppError> {
    let OpenBody { question: chapter } = required_json(&body, r#"{"question": "none-race"}"#)?;
    let Some(question) = question(&chapter) else {
        let ids: Vec<&str> = CATALOG
            .iter()
            .map(|s| s.id)
            .filter(|id| question(id).is_some())
            .collect();
        return Err(AppError::BadRequest(format!(
            "unknown chapter `{chapter}`; valid: {}",
            ids.join(", ")
        )));
    };
    if !ballot_box::open(&state.resource, &chapter, question.options.len()).await? {
        return Err(no_class());
    }
    tracing::info!(chapter, "class vote opened");
    admin_view_now(&state).await
}

/// `POST /admin/class/poll/round`: closes the round and opens the next.
#[utoipa::path(post, path = "/admin/class/poll/round", operation_id = "poll_next_round", tag = "poll", security(("admin_token" = [])), responses((status = 200, description = "The admin view, the next round open, with the poll's `version`", body = Object), (status = 409, description = "No class, no poll, or no open round; the `error` code says which", body = super::openapi::ErrorBody)))]
pub async fn next_round(
    _: Admin,
    State(state): State<AppState>,
) -> Result<Json<AdminView>, AppError> {
    match ballot_box::next_round(&state.resource).await? {
        Ok(round) => tracing::info!(round, "class vote: next round"),
        Err(RoundRefused::NoPoll) => return Err(no_poll()),
        Err(RoundRefused::Revealed) => {
            return Err(AppError::Poll {
                code: "revealed",
                message: "this vote was revealed: open the chapter again for a new vote".into(),
            })
        }
        Err(RoundRefused::LastRound) => {
            return Err(AppError::Poll {
                code: "last_round",
                message: format!(
                    "round {} is the last of a vote: close it, or reveal",
                    ballot_box::LAST_ROUND
                ),
            })
        }
    }
    admin_view_now(&state).await
}

/// `POST /admin/class/poll/close`: closes the round, opens none.
#[utoipa::path(post, path = "/admin/class/poll/close", operation_id = "poll_close", tag = "poll", security(("admin_token" = [])), responses((status = 200, description = "The admin view, no round open, with the poll's `version`", body = Object), (status = 409, description = "No class, no poll, or no open round; the `error` code says which", body = super::openapi::ErrorBody)))]
pub async fn close(_: Admin, State(state): State<AppState>) -> Result<Json<AdminView>, AppError> {
    ballot_box::close(&state.resource)
        .await?
        .ok_or_else(no_poll)?;
    admin_view_now(&state).await
}

/// `GET /admin/class/poll`: the admin view.
#[utoipa::path(get, path = "/admin/class/poll", operation_id = "poll_admin_view", tag = "poll", security(("admin_token" = [])), responses((status = 200, description = "The admin view: counts per option per round, and the poll's `version` it was read at", body = Object)))]
pub async fn admin_view(
    _: Admin,
    State(state): State<AppState>,
) -> Result<Json<AdminView>, AppError> {
    let snapshot = ballot_box::snapshot(&state.resource).await?;
    Ok(Json(standings::admin(&snapshot)))
}

/// `GET /admin/class/deck`: every question the presenter may open, in the deck's order, each
/// with the neutral number the class votes under and the chapter whose run answers it. An
/// article's claim is answered by the run of a chapter that has its own question, so the two
/// are alternatives, asked one or the other on a run (the claim when the class has read the
/// article, the chapter's question otherwise): the claim names the question it replaces
/// (`alternative_to`), the chapter's question the claims that may replace it
/// (`alternatives`), and the deck lists the claims before the question they replace.
#[utoipa::path(get, path = "/admin/class/deck", operation_id = "poll_deck", tag = "poll", security(("admin_token" = [])), responses((status = 200, description = "`{\"questions\": [{\"number\", \"id\", \"chapter\", \"claim\", \"alternative_to\", \"alternatives\"}]}`: `id` is what `POST /admin/class/poll` takes; `claim`, the article line a question puts on trial (`null` for a chapter's own question). A claim and its chapter's own question are answered by the same run, so they are alternatives: ask one of them on a run, the claim when the class has read the article, the chapter's question otherwise. `alternative_to`, for a claim, is the `id` of the chapter question it is asked instead of (`null` for a chapter's own question); `alternatives`, for a chapter's own question, the `id`s of the claims that may be asked instead of it (`[]` for a claim, and for a chapter no claim replaces). The deck lists a chapter's claims before its own question, never after it", body = Object)))]
pub async fn deck(_: Admin) -> Json<Value> {
    let questions: Vec<Value> = workshop::scenario::deck()
        .map(|q| {
            let alternatives: Vec<&str> = workshop::scenario::deck()
                .filter(|other| other.alternative_to == Some(q.id))
                .map(|other| other.id)
                .collect();
            json!({
                "number": standings::number(q.id),
                "id": q.id,
                "chapter": q.chapter,
                "claim": q.claim,
                "alternative_to": q.alternative_to,
                "alternatives": alternatives,
            })
        })
        .collect();
    Json(json!({ "questions": questions }))
}

/// The admin view after a change this instance made; its streams are told at once.
async fn admin_view_now(state: &AppState) -> Result<Json<AdminView>, AppError> {
    state.poll.changed();
    let snapshot = ballot_box::snapshot(&state.resource).await?;
    Ok(Json(standings::admin(&snapshot)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RevealBody {
    /// Whether to run the chapter now (else: reveal the run this poll made before).
    run: bool,
    /// Where to run it for the figures: the instructor's room unless named.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    room: Option<String>,
    /// Whether to run it in every room of the class as well, after the reveal.
    #[serde(default)]
    every_room: bool,
}

/// `POST /admin/class/poll/reveal {"run": true, "room"?: "default", "every_room"?: false}`.
#[utoipa::path(post, path = "/admin/class/poll/reveal", operation_id = "poll_reveal", tag = "poll", request_body(content = RevealBody, description = "`{\"run\": bool, \"room\"?: \"<room>\", \"every_room\"?: bool}`: `run` runs the chapter in `room` (the instructor's, `default`, unless named) and reveals its figures; `false` reveals the run this vote made before. `every_room` (with `run`) also runs it in each of the class's rooms after the reveal answered, two rooms at a time (one when its fault strikes beyond the room), in the background: the reveal's `every_room` counts the rooms per option their run landed in, those whose run did not show what the chapter expects, those whose run failed (and why) and those not run yet, and fills in over `GET /poll/events` as the rooms finish"), security(("admin_token" = [])), responses((status = 200, description = "The run's figures beside the votes (the view's `reveal`); `history`: the run's history id in `room`, for `GET /admin/runs/{id}/view`; `shortest_break`: on a rung of the ladder, the search's shortest break of the rung at the default bounds (`verdict`, `outcomes`, `outcome`, `depth`, `en`, `zh`, `states`; `fenced`: `no-break`), `null` off it; `every_room`: where the class's rooms' runs landed; `version`: the poll's version, revealed", body = Object), (status = 400, description = "A bad room, `room` or `every_room` without `run`, or a chapter this fleet cannot run", body = super::openapi::ErrorBody), (status = 409, description = "No class, no poll, the vote moved on, no run to reveal, or a scenario already runs in the room; the `error` code says which", body = super::openapi::ErrorBody), (status = 502, description = "The fleet did not answer the run as expected", body = super::openapi::ErrorBody)))]
pub async fn reveal(
    _: Admin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Revealed>, AppError> {
    let RevealBody {
        run,
        room,
        every_room,
    } = required_json(&body, r#"{"run": true}"#)?;
    let snapshot = ballot_box::snapshot(&state.resource).await?;
    let chapter = snapshot.poll.ok_or_else(no_poll)?.chapter;
    if !run && (room.is_some() || every_room) {
        return Err(AppError::BadRequest(
            "a room and every_room go with {\"run\": true}: without a run, the reveal shows \
             the run this vote made before"
                .into(),
        ));
    }
    // The class's rooms, but the one the figures come from: it ran already.
    let main_room = room.unwrap_or_else(|| DEFAULT_ROOM.to_owned());
    let others = match (every_room, snapshot.class) {
        (false, _) => Vec::new(),
        (true, None) => return Err(no_class()),
        (true, Some(class)) => room_names(&class.prefix, class.students)?
            .into_iter()
            .filter(|r| *r != main_room)
            .collect(),
    };
    let record = match run {
        true => {
            valid_room(&main_room)?;
            let mut record =
                run_chapter(&state, &chapter, &main_room, BeforeTheRun::CloseTheVote).await?;
            record.every_room = others;
            Some(record)
        }
        false => None,
    };
    match ballot_box::reveal(&state.resource, &chapter, record.as_ref()).await? {
        Ok(()) => {
            if let Some(record) = record.as_ref().filter(|r| !r.every_room.is_empty()) {
                spawn_every_room(state.clone(), chapter.clone(), record);
            }
        }
        Err(RevealRefused::Moved) => return Err(moved(&chapter)),
        Err(RevealRefused::NoRun) => {
            return Err(AppError::Poll {
                code: "no_run",
                message: format!(
                    "this vote has not run {chapter} yet: reveal with {{\"run\": true}}"
                ),
            })
        }
    }
    state.poll.changed();
    let snapshot = ballot_box::snapshot(&state.resource).await?;
    let view = standings::public(&snapshot);
    let reveal = view.reveal.ok_or_else(|| moved(&chapter))?;
    tracing::info!(chapter, landed = ?reveal.landed, "class vote revealed");
    Ok(Json(Revealed {
        reveal,
        version: view.version,
    }))
}

/// The answer of a reveal: the view's `reveal`, and the poll's version it was read at.
#[derive(Serialize)]
pub struct Revealed {
    #[serde(flatten)]
    reveal: Reveal,
    version: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsQuery {
    #[serde(default)]
    format: ResultsFormat,
}

/// What `GET /admin/class/results` answers with.
#[derive(Deserialize, Default, Clone, Copy, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResultsFormat {
    /// The results as JSON.
    #[default]
    Json,
    /// A row per chapter and round, a column per room.
    Csv,
    /// A section per chapter, for a report or a handout.
    Md,
    /// Every reason given, as CSV.
    Reasons,
}

/// `GET /admin/class/results[?format=json|csv|md|reasons]`.
#[utoipa::path(get, path = "/admin/class/results", operation_id = "poll_class_results", tag = "poll", params(("format" = inline(Option<ResultsFormat>), Query, description = "`json` (default), `csv`, `md`, or `reasons` (every reason given, as CSV)")), security(("admin_token" = [])), responses((status = 200, description = "Every chapter's votes and run: JSON, or a CSV or Markdown file. A chapter polled after its isomorphic pair has `transfer` (the rooms' answers carried over, with `potential_learners`, `learned`, `knew`, `knew_right`) and `weighted_learning_gain` (Porter et al., ICER 2011: learned / potential_learners over knew_right / knew; `null` when undefined)", content((Object = "application/json"), (String = "text/csv"), (String = "text/markdown")))))]
pub async fn class_results(
    _: Admin,
    State(state): State<AppState>,
    Query(query): Query<ResultsQuery>,
) -> Result<Response, AppError> {
    let (records, class) = ballot_box::records(&state.resource).await?;
    let rooms = match class {
        Some(class) => room_names(&class.prefix, class.students)?,
        None => Vec::new(),
    };
    let results: Results = results::results(&records, &rooms);
    let file = |kind: &'static str, name: &'static str, body: String| {
        let disposition = format!("attachment; filename=\"{name}\"");
        (
            [
                (header::CONTENT_TYPE, kind.to_owned()),
                (header::CONTENT_DISPOSITION, disposition),
            ],
            body,
        )
            .into_response()
    };
    Ok(match query.format {
        ResultsFormat::Json => Json(results).into_response(),
        ResultsFormat::Csv => file(
            "text/csv; charset=utf-8",
            "class-results.csv",
            results::csv(&results),
        ),
        ResultsFormat::Md => file(
            "text/markdown; charset=utf-8",
            "class-results.md",
            results::markdown(&results),
        ),
        ResultsFormat::Reasons => file(
            "text/csv; charset=utf-8",
            "class-reasons.csv",
            results::reasons_csv(&results),
        ),
    })
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct VoteBody {
    /// The option's index, from 0 (A) to 3 (D): one of the open question's own (each has three
    /// or four, so 3 is refused with a 400 on a question of three).
    #[schema(minimum = 0, maximum = 3)]
    option: usize,
    /// Whether the student is sure of the option.
    sure: Option<bool>,
    /// One line of why, at most [`WHY_CHARS`] characters.
    #[schema(max_length = 140, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*$")]
    why: Option<String>,
}

/// The longest reason, in characters (a phone's line; not bytes: 140 Chinese characters are
/// as welcome as 140 Latin ones).
pub const WHY_CHARS: usize = 140;

impl VoteBody {
    /// The note the vote carries: the reason trimmed (an empty one is none), one line, not too
    /// long.
    fn note(self) -> Result<Note, AppError> {
        let why = self.why.map(|why| why.trim().to_owned());
        if let Some(why) = &why {
            let chars = why.chars().count();
            if chars > WHY_CHARS {
                return Err(AppError::BadField {
                    field: "why",
                    message: format!(
                        "why is at most {WHY_CHARS} characters (one line on a phone); got {chars}"
                    ),
                });
            }
            if why.chars().any(char::is_control) {
                return Err(AppError::BadField {
                    field: "why",
                    message: "why is one line: no line breaks or control characters".into(),
                });
            }
        }
        Ok(Note {
            sure: self.sure,
            why: why.filter(|w| !w.is_empty()),
        })
    }
}

/// The answer to a vote: the round it was counted in, and the poll's version with it.
#[derive(Serialize)]
pub struct Voted {
    /// The question's neutral number (its id may name the outcome).
    number: Option<usize>,
    round: u8,
    option: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    sure: Option<bool>,
    version: u64,
}

/// `POST /poll?room= {"option": N}` with the room's token.
#[utoipa::path(post, path = "/poll", operation_id = "poll_vote", tag = "poll", params(super::openapi::RoomParam), request_body(content = VoteBody, description = "`{\"option\": N, \"sure\"?: bool, \"why\"?: \"one line, at most 140 characters\"}`"), security(("room_token" = [])), responses((status = 200, description = "`{\"number\", \"round\", \"option\", \"sure\", \"version\"}`: counted in this round (`number`: the question's neutral number); `version`, the poll's version with this vote (a view with a smaller one was read before it)", body = Object), (status = 409, description = "No class, no poll, or no open round; the `error` code says which", body = super::openapi::ErrorBody)))]
pub async fn vote(
    State(state): State<AppState>,
    headers: HeaderMap,
    Room(keys): Room,
    Body(body): Body,
) -> Result<Json<Voted>, AppError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let Some(token) = token else {
        state.metrics.vote_refused("no_token");
        return Err(AppError::Unauthorized);
    };
    if token_matches(token, &state.admin_token) {
        state.metrics.vote_refused("admin_token");
        return Err(AppError::Forbidden(
            "the admin token does not vote: each room votes with its own token".into(),
        ));
    }
    let body: VoteBody = required_json(&body, r#"{"option": 0, "sure": true, "why": "one line"}"#)?;
    let option = body.option;
    let note = body.note()?;
    let room = keys.room();
    let counted = ballot_box::vote(
        &state.resource,
        &room_tokens::digest(token),
        room,
        option,
        &note,
        state.poll.open_round(),
    )
    .await?;
    let refused = match counted {
        Ok(counted) => {
            state.metrics.vote_counted(counted.round);
            return Ok(Json(Voted {
                number: standings::number(&counted.chapter),
                round: counted.round,
                option,
                sure: note.sure,
                version: counted.version,
            }));
        }
        Err(refused) => refused,
    };
    let (reason, error) = match refused {
        VoteRefused::UnknownToken => (
            "unknown_token",
            AppError::Forbidden(
                "this token opens no room (revoked, replaced, or never issued): ask the \
                 instructor for a new join link"
                    .into(),
            ),
        ),
        VoteRefused::OtherRoom(own) => (
            "other_room",
            AppError::Forbidden(format!(
                "this is room {own}'s token: it votes for room {own} only, not for room {room}"
            )),
        ),
        VoteRefused::NotInClass => (
            "not_in_class",
            AppError::Forbidden(format!(
                "room {room} is not a room of the class: only the class's rooms vote"
            )),
        ),
        VoteRefused::NoOpenRound => (
            "no_open_round",
            AppError::Poll {
                code: "no_open_round",
                message: "no round of the vote is open now: wait for the presenter to open one"
                    .into(),
            },
        ),
        VoteRefused::OutOfRange(options) => (
            "out_of_range",
            AppError::BadRequest(format!(
                "option {option} is not one of the question's: 0..={}",
                options.saturating_sub(1)
            )),
        ),
    };
    state.metrics.vote_refused(reason);
    Err(error)
}

/// The public view, and the room's own vote when its token came with the request.
#[derive(Serialize)]
pub struct PublicPoll {
    #[serde(flatten)]
    view: PublicView,
    /// The room's vote in the latest round, seen only with the room's own token.
    my_vote: Option<usize>,
    /// How sure it said it was, and why, with that vote.
    #[serde(skip_serializing_if = "Option::is_none")]
    my_note: Option<Note>,
}

/// `GET /poll?room=`: anyone; with the room's token, also `my_vote`.
#[utoipa::path(get, path = "/poll", operation_id = "poll_public_view", tag = "poll", params(super::openapi::RoomParam), security(()), responses((status = 200, description = "How many voted (not what); `my_vote` with the room's own token; `version`, the poll's version it was read at", body = Object)))]
pub async fn public_view(
    State(state): State<AppState>,
    headers: HeaderMap,
    Room(keys): Room,
) -> Result<Json<PublicPoll>, AppError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let mine = match token {
        Some(token) if !token_matches(token, &state.admin_token) => {
            match room_tokens::room_of(&state.resource, token).await? {
                Some(own) if own == keys.room() => true,
                Some(own) => {
                    return Err(AppError::Forbidden(format!(
                        "this is room {own}'s token: it reads room {own}'s vote only"
                    )))
                }
                None => {
                    return Err(AppError::Forbidden(
                        "this token opens no room (revoked, replaced, or never issued)".into(),
                    ))
                }
            }
        }
        // The presenter and everyone without a token see the view, and no room's vote.
        _ => false,
    };
    let snapshot = ballot_box::snapshot(&state.resource).await?;
    let (my_vote, my_note) = match mine {
        true => (
            snapshot
                .votes
                .last()
                .and_then(|votes| votes.get(keys.room()).copied()),
            snapshot
                .notes
                .last()
                .and_then(|notes| notes.get(keys.room()).cloned()),
        ),
        false => (None, None),
    };
    Ok(Json(PublicPoll {
        view: standings::public(&snapshot),
        my_vote,
        my_note,
    }))
}

/// `GET /poll/events?room=`: the public view as it changes.
#[utoipa::path(get, path = "/poll/events", operation_id = "poll_events", tag = "poll", params(super::openapi::RoomParam), responses((status = 200, description = "An endless stream of Server-Sent Events: `event: poll`, the public view (as `GET /poll`, with its `version`), on connect and each change", content_type = "text/event-stream", body = String), (status = 503, description = "This instance serves its most streams", body = super::openapi::ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    Room(_): Room,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    let watching = state
        .poll
        .watch()
        .map_err(|max| AppError::TooManyStreams { max })?;
    let events = crate::poll::poll_events::events(watching, state.stopping.subscribe());
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(10))))
}

fn no_class() -> AppError {
    AppError::Poll {
        code: "no_class",
        message: "there is no class to vote: make one first (POST /admin/class)".into(),
    }
}

pub(super) fn no_poll() -> AppError {
    AppError::Poll {
        code: "no_poll",
        message: "no vote is in progress: open one with POST /admin/class/poll {\"question\"}"
            .into(),
    }
}
