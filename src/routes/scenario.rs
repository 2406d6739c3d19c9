//! The curriculum from the server side: `GET /scenarios` lists the catalog, and
//! `POST /admin/scenario {"id"}` runs one against the whole fleet (through `FLEET_URL`) and
//! answers with its verdicts — the dashboard's scenario picker.
//!
//! While the class votes on a chapter's question, the chapter is the answer: until the reveal,
//! anyone without the admin token gets no list at all (`withheld`), and a room token may not
//! run it. A list with the voted chapter left out, or put in under a number, would name it by
//! its place between its neighbours: the course's order is no secret.

use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::Json;
use oversell_client::{AdminClient, Targets};
use serde::Deserialize;
use serde_json::{json, Value};
use workshop::scenario::{self, FaultKind, Runner, Scenario, ScenarioRun, CATALOG};

use super::extract::{bearer_token, required_json, token_matches, Body, Caller, RoomAdmin};
use crate::error::AppError;
use crate::keys::Keys;
use crate::poll::{ballot_box, standings};
use crate::scenario_guard::ScenarioGuard;
use crate::state::AppState;

/// `GET /scenarios`: the catalog, in the order of the ladder.
#[utoipa::path(
    get,
    path = "/scenarios",
    tag = "scenarios",
    responses((status = 200, description = "`{\"scenarios\": [{\"id\", \"tier\", \"expectation\", \"timing_sensitive\", \"admin_only\", \"source\", \"en\", \"zh\"}]}`; while the class votes on a chapter's question, without the admin token `{\"scenarios\": [], \"withheld\": true}` until the reveal", body = Object))
)]
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, AppError> {
    let admin = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .is_some_and(|token| token_matches(token, &state.admin_token));
    if !admin && hidden_chapter(&state).await?.is_some() {
        return Ok(Json(json!({ "scenarios": [], "withheld": true })));
    }
    let scenarios: Vec<Value> = CATALOG
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "tier": s.tier,
                "expectation": s.expectation(),
                "timing_sensitive": s.timing_sensitive,
                // A room token may not run it (its fault reaches beyond the room): the
                // dashboard of a student's room greys it out instead of offering a 403.
                "admin_only": reaches_beyond_room(s).is_some(),
                "source": s.source,
                "en": s.en,
                "zh": s.zh,
            })
        })
        .collect();
    Ok(Json(json!({ "scenarios": scenarios })))
}

/// The chapter the class votes on, until its reveal.
async fn hidden_chapter(state: &AppState) -> Result<Option<String>, AppError> {
    let polled = ballot_box::unrevealed(&state.resource).await?;
    Ok(polled.map(|id| standings::chapter_of(&id).to_owned()))
}

/// The scenario's fault when it strikes more than the room (an instance, the lock store).
fn reaches_beyond_room(scenario: &Scenario) -> Option<FaultKind> {
    scenario
        .fault
        .as_ref()
        .map(|f| f.kind)
        .filter(|kind| !kind.strikes_room_only())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunBody {
    /// A scenario's id, as `GET /scenarios` lists them.
    id: String,
}

/// `POST /admin/scenario {"id"}`: runs one scenario in the room, against every instance.
/// A scenario whose fault strikes beyond the room takes the admin token.
#[utoipa::path(
    post,
    path = "/admin/scenario",
    tag = "scenarios",
    params(super::openapi::RoomParam),
    request_body = RunBody,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The run: its verdicts and figures", body = Object),
        (status = 409, description = "A scenario already runs in the room (`busy`)", body = super::openapi::ErrorBody),
        (status = 502, description = "The fleet did not answer the runner as expected (`fleet_error`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn run(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<ScenarioRun>, AppError> {
    let RunBody { id } = required_json(&body, r#"{"id": "none-race"}"#)?;
    let scenario = scenario::find(&id).ok_or_else(|| {
        let ids: Vec<&str> = CATALOG.iter().map(|s| s.id).collect();
        AppError::BadRequest(format!(
            "unknown scenario `{id}`; valid: {}",
            ids.join(", ")
        ))
    })?;
    if let Some(fault) = reaches_beyond_room(scenario) {
        caller.only_admin_may(&format!("scenario {} (its fault {fault})", scenario.id))?;
    }
    if matches!(caller.caller, Caller::Room(_))
        && hidden_chapter(&state)
            .await?
            .is_some_and(|id| id == scenario.id)
    {
        return Err(AppError::Poll {
            code: "polled",
            message: "the class votes on this chapter's question now: it runs for the \
                      reveal, then in any room"
                .into(),
        });
    }
    let keys = caller.keys;
    let fleet = FleetRunner::new(&state, &keys).await?;
    let runner = fleet.runner(&state);
    let misfit = runner
        .misfit(scenario)
        .await
        .map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    if let Some(why) = misfit {
        return Err(AppError::BadRequest(format!(
            "scenario {}: {why}",
            scenario.id
        )));
    }
    // Only a run changes the room; a misfit is refused above without the guard.
    let holder = format!("{}:{}", state.instance, state.next_owner());
    let running = ScenarioGuard::try_take(&state.resource, &keys, &holder)
        .await?
        .ok_or(AppError::Busy)?;
    let run = runner.run(scenario).await;
    // Given back before the answer leaves: whoever asks next finds the room free.
    running.release().await;
    let run = run.map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    keep_history(&state, &keys, &run).await;
    tracing::info!(scenario = run.id, passed = run.passed, "scenario ran");
    Ok(Json(run))
}

/// Keeps a run's history for `GET /admin/runs/{id}/history`; a history that cannot be kept
/// costs the run nothing but a warning.
/// Keeps the run's history under its run id; whether it was kept (a run without a history, or
/// a store that refused it, is logged and the run goes on).
pub(super) async fn keep_history(state: &AppState, keys: &Keys, run: &ScenarioRun) -> bool {
    let kept = match &run.history {
        Ok(lines) => crate::histories::keep(&state.resource, keys, &run.run_id, lines)
            .await
            .map_err(|e| e.to_string()),
        Err(why) => Err(why.clone()),
    };
    if let Err(why) = kept {
        tracing::warn!(run = run.run_id, scenario = run.id, %why, "history not kept");
        return false;
    }
    true
}

/// What a scenario run from the server side needs: the fleet through nginx, in the room, with
/// the admin token (a room token's caller was already checked).
pub(super) struct FleetRunner {
    targets: Targets,
    admin: AdminClient,
    instances: usize,
}

impl FleetRunner {
    pub(super) async fn new(state: &AppState, keys: &Keys) -> Result<FleetRunner, AppError> {
        let instances = state.fleet.live_instances().await?.len().max(1);
        let targets = Targets::parse(&[state.fleet_url.as_str()], Some(keys.room()))
            .map_err(|e| AppError::Fleet(format!("{}: {e:#}", state.fleet_url)))?;
        // On the instance's own connections to the fleet, kept open between calls.
        let admin = AdminClient::new(&targets, Some(state.admin_token.clone()))
            .with_pool(state.fleet_calls.pool());
        Ok(FleetRunner {
            targets,
            admin,
            instances,
        })
    }

    /// Whether the fleet answers at all (its `/state`, which reads the resource store), within
    /// a few seconds.
    pub(super) async fn reachable(&self) -> bool {
        let quick = self.admin.clone().with_timeout(Duration::from_secs(3));
        quick.state().await.is_ok()
    }

    pub(super) fn runner(&self, state: &AppState) -> Runner<'_> {
        Runner {
            targets: &self.targets,
            admin: &self.admin,
            instances: self.instances,
            // A crash must not take down the process answering this request.
            spare: Some(state.instance.clone()),
            step: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_fault_beyond_the_room_keeps_a_scenario_from_a_room_token() {
        let beyond = |id| reaches_beyond_room(scenario::find(id).unwrap());
        assert_eq!(beyond("none-race"), None);
        // The pause between GET and DEL strikes the room's own lock holder only.
        assert_eq!(beyond("uuid-owner-release-gap"), None);
        assert_eq!(beyond("setnx-crash"), Some(FaultKind::CrashHolding));
    }
}
