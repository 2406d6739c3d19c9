//! The lab's grading over HTTP, through the fleet's line of gradings (`grading_queue`):
//!
//! - `POST /admin/lab/grade [{"only": "<attack>"}]` puts the room in line (once: pressing
//!   again keeps its place). When a slot is free the room is graded at once and the answer is
//!   its report card, as it always was; behind others, the answer is `202` at once, with the
//!   room's place and an estimate.
//! - `GET /admin/lab/grade` is the room's grading as it stands: `202` with its place (or how
//!   long it has run) while it waits or runs, then the answer its grading got: the card, or
//!   the error (`fleet_down` when the fleet itself could not be reached).
//!
//! The instance that put the room in line grades it, in a task of its own: a student who
//! closes the page does not cancel a grading that others wait behind.

use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use oversell_api::tier::LAB_LOCK;
use serde::Deserialize;
use serde_json::Value;
use workshop::lab::{self as grader, Outcome, ReportCard, Shape};

use crate::histories::KEPT_PER_ROOM;

use super::extract::{json_body, Body, Caller, RoomAdmin};
use super::lab::{lab_fits, shape, take_last_error};
use super::scenario::FleetRunner;
use crate::error::AppError;
use crate::grading_queue::{Position, Turn, POLL};
use crate::keys::Keys;
use crate::lab::LabLock;
use crate::lock_store::LockStoreKind;
use crate::redis_pool::StoreError;
use crate::scenario_guard::ScenarioGuard;
use crate::state::AppState;

/// Looks in a row at a grading under way that may fail before its press gives up.
const LOOKS_FAILED_AT_MOST: u32 = 20;

/// How long a room's last answer is kept for a student who comes back for it.
const ANSWER_KEPT: Duration = Duration::from_secs(24 * 3600);

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GradeBody {
    /// One attack only, to watch it again.
    only: Option<String>,
}

/// `POST /admin/lab/grade [{"only": "<attack>"}]`: the room in line, graded when its turn
/// comes; the card when it ran at once, its place (`202`) when it waits behind others.
#[utoipa::path(
    post,
    path = "/admin/lab/grade",
    tag = "lab",
    params(super::openapi::RoomParam),
    request_body(content = Option<GradeBody>, content_type = "application/json"),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The grader's report card: each attack and its verdict", body = Object),
        (status = 202, description = "In line behind other rooms: `{state, place, in_line, slots, estimate_s, job}`; look again with GET after `Retry-After`", body = Object,
            headers(("Retry-After" = u64, description = "Seconds before looking again"))),
        (status = 409, description = "A scenario already runs in the room", body = super::openapi::ErrorBody),
    )
)]
pub async fn grade(
    RoomAdmin { keys, caller }: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Response, AppError> {
    let GradeBody { only } = json_body(&body)?.unwrap_or_default();
    if let Some(id) = &only {
        if grader::find(id).is_none() {
            let ids: Vec<&str> = grader::ATTACKS.iter().map(|a| a.id()).collect();
            return Err(AppError::BadRequest(format!(
                "unknown attack `{id}`; valid: {}",
                ids.join(", ")
            )));
        }
    }
    lab_fits(&state)?;
    let _ = own_lock(&state, &keys).await?;
    let room = keys.room().to_owned();
    let (job, joined) = state.grading.join(&room).await?;
    if joined {
        // The first ask at once: with a slot free, the room is graded now, not a poll later.
        state.grading.turn(&room).await?;
        // Tracked: a stopping instance gives the grading the moment to say it was cut short.
        state
            .background
            .spawn(drive(state.clone(), keys.clone(), caller, only, job));
    }
    // A look that fails (a slow answer of the resource store on a busy machine) is tried
    // again: the grading goes on without this request, and only so many in a row end it.
    let mut failed = 0;
    let mut stopping = state.stopping.subscribe();
    loop {
        if *stopping.borrow_and_update() {
            // The press must not hold a stopping instance open for a whole grading: it
            // answers where the room stands, and the page looks again (on another instance).
            return Ok(match state.grading.position(&room).await? {
                Position::Idle => match answer_of(&state, &keys, Some(job)).await? {
                    Some(answer) => answer,
                    None => return Err(AppError::GradingLost),
                },
                waits => waiting(waits),
            });
        }
        match look(&state, &keys, job).await {
            Ok(Some(answer)) => return Ok(answer),
            Ok(None) => failed = 0,
            Err(err) if failed < LOOKS_FAILED_AT_MOST => {
                tracing::debug!(room, %err, "cannot look at the grading; again");
                failed += 1;
            }
            Err(err) => return Err(err),
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = stopping.changed() => {}
        }
    }
}

/// What the press can answer now: the job's answer, the room's place (`202`) while it waits,
/// `grading_lost` when it is nowhere; `None` while it is graded.
async fn look(state: &AppState, keys: &Keys, job: u64) -> Result<Option<Response>, AppError> {
    if let Some(answer) = answer_of(state, keys, Some(job)).await? {
        return Ok(Some(answer));
    }
    match state.grading.position(keys.room()).await? {
        Position::Running { .. } => Ok(None),
        queued @ Position::Queued { .. } => Ok(Some(waiting(queued))),
        // Neither in line, nor graded, nor answered: its instance died on the way.
        Position::Idle => Err(AppError::GradingLost),
    }
}

/// `GET /admin/lab/grade`: the room's grading as it stands.
#[utoipa::path(
    get,
    path = "/admin/lab/grade",
    tag = "lab",
    params(super::openapi::RoomParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The room's last report card, or `{\"state\": \"idle\"}` when it has none", body = Object),
        (status = 202, description = "Waiting or being graded: `{state, place, in_line, slots, estimate_s, job}`", body = Object,
            headers(("Retry-After" = u64, description = "Seconds before looking again"))),
    )
)]
pub async fn status(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
) -> Result<Response, AppError> {
    match state.grading.position(keys.room()).await? {
        Position::Idle => Ok(match answer_of(&state, &keys, None).await? {
            Some(answer) => answer,
            None => Json(Position::Idle).into_response(),
        }),
        waits => Ok(waiting(waits)),
    }
}

/// `202` and where the room is.
fn waiting(position: Position) -> Response {
    let mut response = (StatusCode::ACCEPTED, Json(position)).into_response();
    // When to look again: the line moves by whole gradings, which take seconds.
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
    response
}

/// The room's lock, or the 400 that says to submit one.
async fn own_lock(state: &AppState, keys: &Keys) -> Result<LabLock, AppError> {
    LabLock::load(&state.resource, keys).await?.ok_or_else(|| {
        AppError::BadRequest(format!(
            "room {} has no lock of its own to grade: submit one first (PUT /admin/lab)",
            keys.room()
        ))
    })
}

/// Waits for the room's turn, grades it, keeps the answer for whoever asks, and gives the
/// slot back. An instance that stops meanwhile (a restart) answers `grading_lost` at once and
/// takes the room out of the line: the student presses again, on an instance that stays.
async fn drive(state: AppState, keys: Keys, caller: Caller, only: Option<String>, job: u64) {
    let room = keys.room();
    let mut stopping = state.stopping.subscribe();
    let graded = tokio::select! {
        graded = wait_and_grade(&state, &keys, caller, only.as_deref()) => graded,
        _ = stopping.wait_for(|stop| *stop) => Some((Err(AppError::GradingLost), None)),
    };
    // The place lapsed (the resource store was away longer than its lease): the student
    // sees `grading_lost` and presses again.
    let Some((graded, took)) = graded else { return };
    let answer = match graded {
        Ok(card) => serde_json::to_value(&card)
            .map(|card| (StatusCode::OK, card))
            .unwrap_or_else(|e| {
                let e = AppError::Internal(e.to_string());
                (e.status(), e.body())
            }),
        Err(err) => {
            tracing::warn!(room, %err, "grading failed");
            (err.status(), err.body())
        }
    };
    // Kept before the slot goes back: a room neither graded nor answered is a lost one.
    for attempt in 1..=5 {
        match keep_answer(&state, &keys, job, answer.clone()).await {
            Ok(()) => break,
            Err(err) => tracing::warn!(room, attempt, %err, "cannot keep the grading's answer"),
        }
        tokio::time::sleep(POLL).await;
    }
    let given_back = match took {
        Some(took) => state.grading.finish(room, took).await,
        None => state.grading.leave(room).await,
    };
    if let Err(err) = given_back {
        tracing::warn!(room, %err, "cannot give the grading's slot back");
    }
}

/// The room's turn, then its grading while its slot is renewed; with how long the grading
/// took. `None` when the room's place lapsed before its turn.
async fn wait_and_grade(
    state: &AppState,
    keys: &Keys,
    caller: Caller,
    only: Option<&str>,
) -> Option<(Result<ReportCard, AppError>, Option<Duration>)> {
    let room = keys.room();
    loop {
        match state.grading.turn(room).await {
            Ok(Turn::Now) => break,
            Ok(Turn::Waiting(_)) => {}
            Ok(Turn::Gone) => return None,
            Err(err) => tracing::warn!(room, %err, "cannot ask for the grading's turn"),
        }
        tokio::time::sleep(POLL).await;
    }
    let started = Instant::now();
    // The slot is renewed by asking again, for as long as the grading runs.
    let renewals = async {
        loop {
            tokio::time::sleep(POLL * 4).await;
            if let Err(err) = state.grading.turn(room).await {
                tracing::warn!(room, %err, "cannot renew the grading's slot");
            }
        }
    };
    let graded = tokio::select! {
        graded = run(state, keys, caller, only) => graded,
        never = renewals => never,
    };
    Some((graded, Some(started.elapsed())))
}

/// The grader's suite (or one attack) against the room's lock, as it is now.
async fn run(
    state: &AppState,
    keys: &Keys,
    caller: Caller,
    only: Option<&str>,
) -> Result<ReportCard, AppError> {
    let lab = own_lock(state, keys).await?;
    let fleet = FleetRunner::new(state, keys).await?;
    let runner = fleet.runner(state);
    let holder = format!("{}:{}", state.instance, state.next_owner());
    let running = ScenarioGuard::try_take(&state.resource, keys, &holder)
        .await?
        .ok_or(AppError::Busy)?;
    take_last_error(&state.resource, keys).await?;
    let resource = &state.resource;
    // A failover strikes every room's locks: the admin token's to order, on a fleet that has one.
    let failover = state.lock_store.kind() == LockStoreKind::Sentinel && caller == Caller::Admin;
    let shape = Shape {
        failover,
        ..shape(&lab)
    };
    let card = grader::grade(&runner, shape, LAB_LOCK, only, || async move {
        Ok(take_last_error(resource, keys).await?)
    })
    .await;
    running.release().await;
    match card {
        Ok(card) => {
            tracing::info!(room = keys.room(), outcomes = ?card.outcomes(), "lab lock graded");
            // Where the lock broke is what a student looks into: those attacks' histories
            // are kept (a room keeps its last few runs), the held ones are not.
            let broke = card.attacks.iter().filter(|a| {
                matches!(
                    a.outcome,
                    Outcome::Overlap | Outcome::ForeignRelease | Outcome::Deadlock
                )
            });
            for run in broke.filter_map(|a| a.run.as_ref()).take(KEPT_PER_ROOM) {
                super::scenario::keep_history(state, keys, run).await;
            }
            Ok(card)
        }
        // Whether the fleet is there at all, asked once the grading failed: a fleet that is
        // down is said apart from one that answered wrong.
        Err(err) if !fleet.reachable().await => Err(AppError::FleetDown(format!("{err:#}"))),
        Err(err) => Err(AppError::Fleet(format!("{err:#}"))),
    }
}

/// Keeps the answer of the room's grading `job`.
async fn keep_answer(
    state: &AppState,
    keys: &Keys,
    job: u64,
    (status, body): (StatusCode, Value),
) -> Result<(), StoreError> {
    let mut conn = state.resource.conn().await?;
    let key = keys.lab_grading();
    redis::pipe()
        .atomic()
        .del(&key)
        .hset(&key, "job", job)
        .hset(&key, "status", status.as_u16())
        .hset(&key, "body", body.to_string())
        .expire(&key, ANSWER_KEPT.as_secs() as i64)
        .query_async::<()>(&mut conn)
        .await?;
    Ok(())
}

/// The room's last answer (of `job` only, when given), as it was answered.
async fn answer_of(
    state: &AppState,
    keys: &Keys,
    job: Option<u64>,
) -> Result<Option<Response>, AppError> {
    let mut conn = state.resource.conn().await?;
    let (kept, status, body): (Option<u64>, Option<u16>, Option<String>) = redis::cmd("HMGET")
        .arg(keys.lab_grading())
        .arg("job")
        .arg("status")
        .arg("body")
        .query_async(&mut conn)
        .await
        .map_err(StoreError::from)?;
    let (Some(kept), Some(status), Some(body)) = (kept, status, body) else {
        return Ok(None);
    };
    if job.is_some_and(|job| job != kept) {
        return Ok(None);
    }
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body: Value = serde_json::from_str(&body).map_err(|e| AppError::Internal(e.to_string()))?;
    let mut response = (status, Json(body)).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    Ok(Some(response))
}
