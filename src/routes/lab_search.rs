//! `POST /admin/lab/search`: the lab's "Search every schedule": the room's own lock searched on
//! the model (`explore`), each of the grader's attacks as a fault budget and then every
//! schedule, through the fleet's line of gradings, so a class pressing it at once takes the
//! line's slots as gradings do and never more.
//!
//! # Why in-process
//! A search at the lab's bounds is a fraction of a second of one core (BENCHMARKS §20: tens of
//! thousands of states a second, a lab lock a few hundred to a few thousand states), against a
//! grading's seconds of the whole fleet; another process or a job runner would cost more to
//! start than the search. What keeps it from stalling an instance: the line's slots bound how
//! many run at once across the fleet; each runs on tokio's blocking pool, never on a worker of
//! the async runtime; a state cap bounds its memory and a time budget each search's time,
//! whatever the student's Lua does (the model's own instruction and memory limits stop a
//! runaway step). A room in line waits at most [`WAIT_FOR_TURN`], then is told to press again.

use std::time::{Duration, Instant};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use explore::answer::Answer;
use explore::attacks::{self, Graded};
use explore::bounds::Bounds;
use explore::said::Lang;
use serde_json::{json, Value};

use super::extract::RoomAdmin;
use crate::error::AppError;
use crate::grading_queue::{Turn, POLL};
use crate::lab::LabLock;
use crate::state::AppState;

/// The most states one search keeps: its memory, a few tens of MB at most.
const MAX_STATES: usize = 200_000;
/// The longest one search runs (the attacks' six and the whole one: at most seven of these).
const TIME_BUDGET_MS: u64 = 1_000;
/// How long a press waits for its turn in the line before it is told to press again.
const WAIT_FOR_TURN: Duration = Duration::from_secs(30);

/// `POST /admin/lab/search`: the room's lock searched, the shortest break in words beside each
/// attack's outcome on the model.
#[utoipa::path(
    post,
    path = "/admin/lab/search",
    tag = "lab",
    params(super::openapi::RoomParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "`{room, attacks: [{attack, outcome}], search: {verdict, states, ended, shortest}, beyond}`: each attack searched on the model, then every schedule; `shortest` the shortest break (`property`, `outcome`, `depth`, `en`, `zh`, `steps`), `beyond` the sentence when every attack held but the search breaks the lock", body = Object),
        (status = 400, description = "`bad_request`: the room has no lock of its own, or a step the model cannot run (a command it does not know, named)", body = super::openapi::ErrorBody),
        (status = 409, description = "`in_line`: the room is already in the grading line (a grading or a search of its own)", body = super::openapi::ErrorBody),
        (status = 503, description = "`line_busy`: the line did not reach the room within 30 s; press again (`Retry-After`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn search(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
) -> Result<Response, AppError> {
    let lab = super::grading::own_lock(&state, &keys).await?;
    let lock = model_of(&lab)?;
    let room = keys.room().to_owned();
    let (_, joined) = state.grading.join(&room).await?;
    if !joined {
        return Err(AppError::InLine);
    }
    let searched = async {
        wait_for_turn(&state, &room).await?;
        tokio::task::spawn_blocking(move || searched(&lock))
            .await
            .map_err(|e| AppError::Internal(format!("the search stopped: {e}")))?
    }
    .await;
    // Untimed: a search's second must not shorten the estimate a grading's wait is told.
    state.grading.leave(&room).await?;
    let (graded, answer) = searched?;
    tracing::info!(room, verdict = ?answer.verdict, states = answer.states, "lab lock searched");
    Ok(Json(card(&room, &graded, &answer)).into_response())
}

/// The room's lock as the model runs it.
fn model_of(lab: &LabLock) -> Result<explore::lock::LockSource, AppError> {
    let source = &lab.source;
    explore::lock::lab(&source.acquire, &source.release, source.renew.as_deref())
        .map_err(|e| AppError::BadRequest(format!("the search cannot run this lock: {e}")))
}

/// Waits for the room's slot, asking as the grading line is asked; `line_busy` (and out of
/// the line) past [`WAIT_FOR_TURN`].
async fn wait_for_turn(state: &AppState, room: &str) -> Result<(), AppError> {
    let until = Instant::now() + WAIT_FOR_TURN;
    loop {
        match state.grading.turn(room).await? {
            Turn::Now => return Ok(()),
            Turn::Gone => return Err(AppError::GradingLost),
            Turn::Waiting(_) if Instant::now() > until => {
                return Err(AppError::LineBusy {
                    waited_s: WAIT_FOR_TURN.as_secs(),
                })
            }
            Turn::Waiting(_) => tokio::time::sleep(POLL).await,
        }
    }
}

/// Every attack on the model, then every schedule: CPU-bound, on the blocking pool.
fn searched(lock: &explore::lock::LockSource) -> Result<(Vec<Graded>, Answer), AppError> {
    let bounds = Bounds {
        max_states: MAX_STATES,
        time_budget_ms: Some(TIME_BUDGET_MS),
        ..Bounds::default()
    };
    let refused =
        |e: explore::Refused| AppError::BadRequest(format!("the search cannot run this lock: {e}"));
    let graded = attacks::grade(lock, &bounds).map_err(refused)?;
    let answer = explore::explore(lock, bounds).map_err(refused)?;
    Ok((graded, answer))
}

/// The card: the attacks' outcomes, the search's shortest break in words, the sentence
/// when only the search breaks the lock.
fn card(room: &str, graded: &[Graded], answer: &Answer) -> Value {
    let found = explore::ladder::shortest(answer);
    let shortest = found.map(|f| {
        json!({
            "property": f.property.id(),
            "outcome": f.property.outcome(),
            "depth": f.depth,
            "en": f.property.words(Lang::En),
            "zh": f.property.words(Lang::Zh),
            "steps": f.schedule.iter().map(|s| json!({"note": s.note, "note_zh": s.note_zh})).collect::<Vec<_>>(),
        })
    });
    let beyond = attacks::beyond(graded, answer).map(|f| {
        json!({
            "en": attacks::beyond_words(f, Lang::En),
            "zh": attacks::beyond_words(f, Lang::Zh),
        })
    });
    json!({
        "room": room,
        "attacks": graded.iter().map(|g| json!({"attack": g.attack, "outcome": g.outcome})).collect::<Vec<_>>(),
        "search": {
            "verdict": answer.verdict,
            "states": answer.states,
            "ended": answer.ended,
            "bounds": answer.bounds.words(Lang::En),
            "shortest": shortest,
        },
        "beyond": beyond,
    })
}
