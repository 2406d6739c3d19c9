//! The class vote over HTTP (see [`crate::poll`]):
//!
//! - `POST /admin/class/poll {"chapter"}`: opens round 1 of the chapter's question, replacing
//!   any poll; `POST /admin/class/poll/round`: the next round (the last is 2);
//!   `POST /admin/class/poll/close`: closes the round; `GET /admin/class/poll`: the admin view;
//! - `POST /admin/class/poll/reveal {"run": true, "room"?}`: runs the chapter in the room (as
//!   `POST /admin/scenario` does), closes the vote and answers the reveal; `{"run": false}`
//!   reveals the run this poll made before;
//! - `GET /admin/class/results[?format=csv|md]`: every chapter polled in this class;
//! - `POST /poll?room= {"option"}` with the room's token: the room's vote;
//! - `GET /poll?room=`: the public view (with the room's token, also the room's own vote);
//! - `GET /poll/events?room=`: the public view as Server-Sent Events.
//!
//! The admin token opens, closes, runs and reveals, and alone reads the counts before the
//! reveal; it does not vote.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::Stream;
use loadtest::scenario::{self, question, CATALOG};
use serde::{Deserialize, Serialize};

use super::class::{room_names, valid_room};
use super::extract::{bearer_token, required_json, token_matches, Admin, Body, Query, Room};
use super::scenario::FleetRunner;
use crate::error::AppError;
use crate::keys::{Keys, DEFAULT_ROOM};
use crate::poll::results::{self, Results};
use crate::poll::store::{self, RevealRefused, RoundRefused, RunRecord, VoteRefused};
use crate::poll::view::{self, AdminView, PublicView, Reveal};
use crate::room_tokens;
use crate::scenario_guard::ScenarioGuard;
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenBody {
    chapter: String,
}

/// `POST /admin/class/poll {"chapter"}`.
pub async fn open(
    _: Admin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<AdminView>, AppError> {
    let OpenBody { chapter } = required_json(&body, r#"{"chapter": "none-race"}"#)?;
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
    if !store::open(&state.resource, &chapter, question.options.len()).await? {
        return Err(no_class());
    }
    tracing::info!(chapter, "class vote opened");
    admin_view_now(&state).await
}

/// `POST /admin/class/poll/round`: closes the round and opens the next.
pub async fn next_round(
    _: Admin,
    State(state): State<AppState>,
) -> Result<Json<AdminView>, AppError> {
    match store::next_round(&state.resource).await? {
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
                    store::LAST_ROUND
                ),
            })
        }
    }
    admin_view_now(&state).await
}

/// `POST /admin/class/poll/close`: closes the round, opens none.
pub async fn close(_: Admin, State(state): State<AppState>) -> Result<Json<AdminView>, AppError> {
    store::close(&state.resource).await?.ok_or_else(no_poll)?;
    admin_view_now(&state).await
}

/// `GET /admin/class/poll`: the admin view.
pub async fn admin_view(
    _: Admin,
    State(state): State<AppState>,
) -> Result<Json<AdminView>, AppError> {
    let snapshot = store::snapshot(&state.resource).await?;
    Ok(Json(view::admin(&snapshot)))
}

/// The admin view after a change this instance made; its streams are told at once.
async fn admin_view_now(state: &AppState) -> Result<Json<AdminView>, AppError> {
    state.poll.changed();
    let snapshot = store::snapshot(&state.resource).await?;
    Ok(Json(view::admin(&snapshot)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RevealBody {
    /// Whether to run the chapter now (else: reveal the run this poll made before).
    run: bool,
    /// Where to run it: the instructor's room unless named.
    room: Option<String>,
}

/// `POST /admin/class/poll/reveal {"run": true, "room"?: "default"}`.
pub async fn reveal(
    _: Admin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Reveal>, AppError> {
    let RevealBody { run, room } = required_json(&body, r#"{"run": true}"#)?;
    let snapshot = store::snapshot(&state.resource).await?;
    let chapter = snapshot.poll.ok_or_else(no_poll)?.chapter;
    let record = match (run, room) {
        (true, room) => {
            let room = room.unwrap_or_else(|| DEFAULT_ROOM.to_owned());
            valid_room(&room)?;
            Some(run_chapter(&state, &chapter, &room).await?)
        }
        (false, None) => None,
        (false, Some(_)) => {
            return Err(AppError::BadRequest(
                "a room goes with {\"run\": true}: without a run, the reveal shows the run \
                 this vote made before"
                    .into(),
            ))
        }
    };
    match store::reveal(&state.resource, &chapter, record.as_ref()).await? {
        Ok(()) => {}
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
    let snapshot = store::snapshot(&state.resource).await?;
    let reveal = view::public(&snapshot)
        .reveal
        .ok_or_else(|| moved(&chapter))?;
    tracing::info!(chapter, landed = ?reveal.landed, "class vote revealed");
    Ok(Json(reveal))
}

/// Runs `chapter` in `room` through the fleet, as `POST /admin/scenario` does, closing the
/// vote once the run is sure to start (nobody votes while the projector shows the figures).
async fn run_chapter(state: &AppState, chapter: &str, room: &str) -> Result<RunRecord, AppError> {
    let (Some(scenario), Some(question)) = (scenario::find(chapter), question(chapter)) else {
        return Err(AppError::BadRequest(format!(
            "chapter {chapter} is no longer in the catalog: it cannot run"
        )));
    };
    let keys = Keys::for_room(room);
    let fleet = FleetRunner::new(state, &keys).await?;
    let runner = fleet.runner(state);
    let misfit = runner
        .misfit(scenario)
        .await
        .map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    if let Some(why) = misfit {
        return Err(AppError::BadRequest(format!("chapter {chapter}: {why}")));
    }
    let holder = format!("{}:{}", state.instance, state.next_owner());
    let running = ScenarioGuard::try_take(&state.resource, &keys, &holder)
        .await?
        .ok_or(AppError::Busy)?;
    if store::close(&state.resource).await?.as_deref() != Some(chapter) {
        running.release().await;
        return Err(moved(chapter));
    }
    state.poll.changed();
    let run = runner.run(scenario).await;
    running.release().await;
    let run = run.map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    tracing::info!(
        chapter,
        room,
        passed = run.passed,
        "class vote: the chapter ran"
    );
    Ok(RunRecord {
        room: room.to_owned(),
        landed: question.landed(&run.figures),
        passed: run.passed,
        // JSON has no NaN; a figure the run did not measure reads the same to the rules.
        figures: run
            .figures
            .into_iter()
            .filter(|(_, value)| value.is_finite())
            .collect::<BTreeMap<_, _>>(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsQuery {
    format: Option<String>,
}

/// `GET /admin/class/results[?format=json|csv|md]`.
pub async fn class_results(
    _: Admin,
    State(state): State<AppState>,
    Query(query): Query<ResultsQuery>,
) -> Result<Response, AppError> {
    let (records, class) = store::records(&state.resource).await?;
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
    Ok(match query.format.as_deref() {
        None | Some("json") => Json(results).into_response(),
        Some("csv") => file(
            "text/csv; charset=utf-8",
            "class-results.csv",
            results::csv(&results),
        ),
        Some("md") => file(
            "text/markdown; charset=utf-8",
            "class-results.md",
            results::markdown(&results),
        ),
        Some(other) => {
            return Err(AppError::BadRequest(format!(
                "format must be json, csv or md; got `{other}`"
            )))
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VoteBody {
    option: usize,
}

/// The answer to a vote: the round it was counted in.
#[derive(Serialize)]
pub struct Voted {
    chapter: String,
    round: u8,
    option: usize,
}

/// `POST /poll?room= {"option": N}` with the room's token.
pub async fn vote(
    State(state): State<AppState>,
    headers: HeaderMap,
    Room(keys): Room,
    Body(body): Body,
) -> Result<Json<Voted>, AppError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .ok_or(AppError::Unauthorized)?;
    if token_matches(token, &state.admin_token) {
        return Err(AppError::Forbidden(
            "the admin token does not vote: each room votes with its own token".into(),
        ));
    }
    let VoteBody { option } = required_json(&body, r#"{"option": 0}"#)?;
    let room = keys.room();
    let counted = store::vote(
        &state.resource,
        &room_tokens::digest(token),
        room,
        option,
        state.poll.open_round(),
    )
    .await?;
    match counted {
        Ok(counted) => Ok(Json(Voted {
            chapter: counted.chapter,
            round: counted.round,
            option,
        })),
        Err(VoteRefused::UnknownToken) => Err(AppError::Forbidden(
            "this token opens no room (revoked, replaced, or never issued): ask the \
             instructor for a new join link"
                .into(),
        )),
        Err(VoteRefused::OtherRoom(own)) => Err(AppError::Forbidden(format!(
            "this is room {own}'s token: it votes for room {own} only, not for room {room}"
        ))),
        Err(VoteRefused::NotInClass) => Err(AppError::Forbidden(format!(
            "room {room} is not a room of the class: only the class's rooms vote"
        ))),
        Err(VoteRefused::NoOpenRound) => Err(AppError::Poll {
            code: "no_open_round",
            message: "no round of the vote is open now: wait for the presenter to open one".into(),
        }),
        Err(VoteRefused::OutOfRange(options)) => Err(AppError::BadRequest(format!(
            "option {option} is not one of the question's: 0..={}",
            options.saturating_sub(1)
        ))),
    }
}

/// The public view, and the room's own vote when its token came with the request.
#[derive(Serialize)]
pub struct PublicPoll {
    #[serde(flatten)]
    view: PublicView,
    /// The room's vote in the latest round, seen only with the room's own token.
    my_vote: Option<usize>,
}

/// `GET /poll?room=`: anyone; with the room's token, also `my_vote`.
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
    let snapshot = store::snapshot(&state.resource).await?;
    let my_vote = match mine {
        true => snapshot
            .votes
            .last()
            .and_then(|votes| votes.get(keys.room()).copied()),
        false => None,
    };
    Ok(Json(PublicPoll {
        view: view::public(&snapshot),
        my_vote,
    }))
}

/// `GET /poll/events?room=`: the public view as it changes.
pub async fn events(
    State(state): State<AppState>,
    Room(_): Room,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    let watching = state
        .poll
        .watch()
        .map_err(|max| AppError::TooManyStreams { max })?;
    let events = crate::poll::stream::events(watching, state.stopping.subscribe());
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(10))))
}

fn no_class() -> AppError {
    AppError::Poll {
        code: "no_class",
        message: "there is no class to vote: make one first (POST /admin/class)".into(),
    }
}

fn no_poll() -> AppError {
    AppError::Poll {
        code: "no_poll",
        message: "no vote is in progress: open one with POST /admin/class/poll {\"chapter\"}"
            .into(),
    }
}

fn moved(chapter: &str) -> AppError {
    AppError::Poll {
        code: "poll_moved",
        message: format!(
            "the vote moved on from {chapter} (another chapter was opened, or the class \
             closed) before this finished"
        ),
    }
}
