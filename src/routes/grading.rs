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
use workshop::scenario::{Runner, Step};

use crate::histories::KEPT_PER_ROOM;

use super::extract::{json_body, Body, Caller, Query, RoomAdmin};
use super::lab::{lab_fits, shape, take_last_error};
use super::scenario::FleetRunner;
use crate::error::AppError;
use crate::grading_queue::{Position, Turn, POLL};
use crate::keys::Keys;
use crate::lab::LabLock;
use crate::lock_store::LockStoreKind;
use crate::redis_pool::StoreError;
use crate::scenario_guard::{self, ScenarioGuard};
use crate::state::AppState;

/// Looks in a row at a grading under way that may fail before its press gives up.
const LOOKS_FAILED_AT_MOST: u32 = 20;

/// The longest a grading runs before it is stopped and answered `grading_timed_out`: a
/// grading takes 8–9 s on a quiet fleet (BENCHMARKS §14) and well under a minute on a busy
/// one, so this is a stall, which the student hears of (with the step it stalled at) before
/// a lab page's patience runs out, instead of a card that never comes.
const GRADING_LIMIT: Duration = Duration::from_secs(150);

/// How long a grading's end (its answer kept, its slot given back) is tried while the
/// resource store is away: longer than the store's restart, shorter than the slot's lease.
const KEEP_TRYING: Duration = Duration::from_secs(10);
const _: () = assert!(KEEP_TRYING.as_secs() < crate::grading_queue::LEASE.as_secs());

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
    // Kept before the job is told, so any job a room was ever answered is one it can ask of.
    note_issued(&state, &keys, job).await?;
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

/// `GET /admin/lab/grade[?job=N]`'s query.
#[derive(Deserialize)]
pub(super) struct StatusQuery {
    /// The job a press was answered with: its own answer, or `grading_lost`, never the card
    /// of an earlier grading.
    job: Option<u64>,
}

/// `GET /admin/lab/grade[?job=N]`: the room's grading as it stands.
#[utoipa::path(
    get,
    path = "/admin/lab/grade",
    tag = "lab",
    params(
        super::openapi::RoomParam,
        ("job" = Option<u64>, Query, description = "The job a press answered (`202`'s `job`): once it is neither in line nor graded, its own answer or `grading_lost`, not an earlier card"),
    ),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The room's last report card (of `job`, when given), or `{\"state\": \"idle\"}` when it has none", body = Object),
        (status = 202, description = "Waiting or being graded: `{state, place, in_line, slots, estimate_s, job}`", body = Object,
            headers(("Retry-After" = u64, description = "Seconds before looking again"))),
        (status = 404, description = "`not_found`: the room has no record of the job asked for (never given it, or wiped since)", body = super::openapi::ErrorBody),
        (status = 503, description = "`grading_lost`: the job asked for was neither graded nor answered (its instance died); press again", body = super::openapi::ErrorBody),
    )
)]
pub async fn status(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
    Query(StatusQuery { job }): Query<StatusQuery>,
) -> Result<Response, AppError> {
    if let Some(job) = job {
        if !was_issued(&state, &keys, job).await? {
            return Err(AppError::NotFound(format!(
                "room {} has no grading job {job}: ask for the `job` a press answered \
                 (POST /admin/lab/grade), or leave it out",
                keys.room()
            )));
        }
    }
    match state.grading.position(keys.room()).await? {
        Position::Idle => match answer_of(&state, &keys, job).await? {
            Some(answer) => Ok(answer),
            // The job's grading went with its instance: said, not covered by an older card.
            None if job.is_some() => Err(AppError::GradingLost),
            None => Ok(Json(Position::Idle).into_response()),
        },
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
pub(super) async fn own_lock(state: &AppState, keys: &Keys) -> Result<LabLock, AppError> {
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
    let holder = format!("{}:{}", state.instance, state.next_owner());
    let mut stopping = state.stopping.subscribe();
    let graded = tokio::select! {
        graded = wait_and_grade(&state, &keys, caller, only.as_deref(), &holder) => graded,
        _ = stopping.wait_for(|stop| *stop) => Some((Err(AppError::GradingLost), None)),
    };
    // The place lapsed (the resource store was away longer than its lease): the student
    // sees `grading_lost` and presses again.
    let Some((graded, took)) = graded else { return };
    if graded.is_err() {
        // A grading cut short (a restart, its bound) leaves the room's scenario guard to a
        // release of its own: given back here, before the answer, so that a press again
        // after `grading_lost` grades rather than finds the room `busy`.
        scenario_guard::give_back_cut(&state.resource, &keys, &holder).await;
    }
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
    // Both are tried for as long as a restart of the resource store takes (its file read
    // back: seconds), well inside the slot's lease; past that, the slot lapses and the room's
    // next look hears `grading_lost`.
    let until = Instant::now() + KEEP_TRYING;
    let keep = || keep_answer(&state, &keys, job, answer.clone());
    tried_until(until, room, "keep the grading's answer", keep).await;
    let give_back = || async {
        match took {
            Some(took) => state.grading.finish(room, took).await,
            None => state.grading.leave(room).await,
        }
    };
    tried_until(until, room, "give the grading's slot back", give_back).await;
}

/// Tries `step` until it succeeds or `until` has passed, saying each failure.
async fn tried_until<F, Fut>(until: Instant, room: &str, what: &str, mut step: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    let mut attempt = 0;
    while let Err(err) = step().await {
        attempt += 1;
        tracing::warn!(room, attempt, %err, "cannot {what}");
        if Instant::now() > until {
            return;
        }
        tokio::time::sleep(POLL * 2).await;
    }
}

/// The room's turn, then its grading while its slot is renewed; with how long the grading
/// took. `None` when the room's place lapsed before its turn.
async fn wait_and_grade(
    state: &AppState,
    keys: &Keys,
    caller: Caller,
    only: Option<&str>,
    holder: &str,
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
    let step = Step::default();
    let graded = run(state, keys, caller, only, &step, holder);
    let bounded = within(GRADING_LIMIT, &step, graded);
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
        graded = bounded => graded,
        never = renewals => never,
    };
    Some((graded, Some(started.elapsed())))
}

/// `grading` ended by its bound `limit` when it runs past it: `grading_timed_out`, with the
/// step it was on (`step`, kept by its runner).
async fn within(
    limit: Duration,
    step: &Step,
    grading: impl std::future::Future<Output = Result<ReportCard, AppError>>,
) -> Result<ReportCard, AppError> {
    match tokio::time::timeout(limit, grading).await {
        Ok(graded) => graded,
        Err(_) => {
            let at = step.now();
            tracing::warn!(at, "grading stopped at its bound");
            Err(AppError::GradingTimedOut {
                limit_s: limit.as_secs(),
                at,
            })
        }
    }
}

/// The grader's suite (or one attack) against the room's lock, as it is now.
async fn run(
    state: &AppState,
    keys: &Keys,
    caller: Caller,
    only: Option<&str>,
    step: &Step,
    holder: &str,
) -> Result<ReportCard, AppError> {
    let lab = own_lock(state, keys).await?;
    let fleet = FleetRunner::new(state, keys).await?;
    let runner = Runner {
        step: step.clone(),
        ..fleet.runner(state)
    };
    let running = ScenarioGuard::try_take(&state.resource, keys, holder)
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

/// Notes `job` as the room's newest: the jobs it may ask of run from 1 to that.
async fn note_issued(state: &AppState, keys: &Keys, job: u64) -> Result<(), AppError> {
    let mut conn = state.resource.conn().await?;
    let () = redis::cmd("HSET")
        .arg(keys.lab_grading())
        .arg("issued")
        .arg(job)
        .query_async(&mut conn)
        .await
        .map_err(StoreError::from)?;
    Ok(())
}

/// Whether the room was ever answered `job` (job numbers are the fleet's, rising: a room's
/// newest is the highest it was given).
async fn was_issued(state: &AppState, keys: &Keys, job: u64) -> Result<bool, AppError> {
    let mut conn = state.resource.conn().await?;
    let newest: Option<u64> = redis::cmd("HGET")
        .arg(keys.lab_grading())
        .arg("issued")
        .query_async(&mut conn)
        .await
        .map_err(StoreError::from)?;
    Ok(job >= 1 && newest.is_some_and(|newest| job <= newest))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_grading_past_its_bound_says_the_step_it_stalled_at() {
        let step = Step::default();
        let stalled = async {
            step.set("setnx-crash", "firing the buyers");
            std::future::pending::<()>().await;
            Err(AppError::Internal("never".into()))
        };
        let graded = within(Duration::from_millis(50), &step, stalled).await;
        let Err(err) = graded else {
            panic!("a grading that never ends was not stopped")
        };
        assert_eq!(err.code(), "grading_timed_out");
        assert_eq!(err.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            err.to_string()
                .contains("stopped at `setnx-crash: firing the buyers`"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_grading_within_its_bound_keeps_its_own_answer() {
        let step = Step::default();
        let failed = async { Err(AppError::Busy) };
        let graded = within(Duration::from_secs(5), &step, failed).await;
        assert!(matches!(graded, Err(AppError::Busy)), "{graded:?}");
    }
}
