//! Read-only endpoints: `GET /state`, `/ledger`, `/tiers`, `/health`, `/metrics`.

use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use oversell_api::Tier;
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::{Query, Room};
use crate::error::AppError;
use crate::ground_truth;
use crate::rooms::RoomStatus;
use crate::state::AppState;
use crate::view::StateView;

/// `GET /tiers`: every tier in the ladder's order, with its row of the tier table
/// (`oversell_api::tier::TABLE`: its rung, needs, lease, waits, lab preset, what the grader
/// grades it as) and what a client derives from it: whether its lock has a lease that runs
/// out by itself, whether it claims mutual exclusion across instances at all, and the
/// `oversell up` flags it needs beyond one Redis. The dashboard builds its tier picker and the
/// lab its presets from this, so the list is written once.
#[utoipa::path(
    get,
    path = "/tiers",
    tag = "observe",
    responses((status = 200, description = "`{\"tiers\": [{\"id\", the tier table's row, \"leased\", \"excludes_across_instances\", \"up_flags\"}]}`, in the ladder's order", body = Object))
)]
pub async fn tiers() -> Json<Value> {
    let tiers: Vec<Value> = Tier::ALL
        .into_iter()
        .map(|tier| {
            let mut row = json!(tier.facts());
            row["leased"] = json!(tier.leased());
            row["excludes_across_instances"] = json!(tier.excludes_across_instances());
            row["up_flags"] = json!(tier.up_flags());
            row["may_pass_in_cohort"] = json!(tier.may_pass_in_cohort());
            row
        })
        .collect();
    Json(json!({ "tiers": tiers }))
}

/// `GET /state`: the room's settings and ground truth; 503 `state_lost` when the store lost
/// the room. Reads only: a room nobody created is shown with this instance's settings.
#[utoipa::path(
    get,
    path = "/state",
    tag = "observe",
    params(super::openapi::RoomParam),
    responses((status = 200, description = "The room's settings, faults, lock and ground truth", body = StateView))
)]
pub async fn state(
    State(state): State<AppState>,
    Room(keys): Room,
) -> Result<Json<StateView>, AppError> {
    let room = state.fleet.room(&keys).await?;
    let (truth, place) = crate::view::read_room(&state, &keys).await?;
    let status = state.rooms.judge(&keys, truth.stocked).await?;
    if status == RoomStatus::Lost {
        return Err(AppError::StateLost);
    }
    Ok(Json(crate::view::state_view(
        &state.instance,
        &keys,
        &room,
        truth,
        status,
        place,
    )))
}

const MAX_PAGE: i64 = 10_000;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// The first order to show [default: 0].
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// How many orders, 1–10000 [default: 1000].
    #[param(minimum = 1, maximum = 10000)]
    limit: Option<i64>,
}

/// `GET /ledger?offset=&limit=`: a page of the room's orders, oldest first.
#[utoipa::path(
    get,
    path = "/ledger",
    tag = "observe",
    params(super::openapi::RoomParam, Page),
    responses((status = 200, description = "`{\"offset\", \"orders\": [...]}`: one entry per acknowledged sale", body = Object))
)]
pub async fn ledger(
    State(state): State<AppState>,
    Room(keys): Room,
    Query(page): Query<Page>,
) -> Result<Json<serde_json::Value>, AppError> {
    let offset = page.offset.unwrap_or(0);
    let limit = page.limit.unwrap_or(1000);
    if offset < 0 || !(1..=MAX_PAGE).contains(&limit) {
        return Err(AppError::BadRequest(format!(
            "offset must be >= 0 and limit 1..={MAX_PAGE}"
        )));
    }
    let orders = ground_truth::ledger(&state.resource, &keys, offset, limit).await?;
    // An empty page may be a ledger the store lost: say so rather than show nothing.
    if orders.is_empty() && state.rooms.status(&keys).await? == RoomStatus::Lost {
        return Err(AppError::StateLost);
    }
    Ok(Json(json!({ "offset": offset, "orders": orders })))
}

/// `GET /health`: whether this instance reaches its stores (200), or not (503).
#[utoipa::path(
    get,
    path = "/health",
    tag = "observe",
    responses(
        (status = 200, description = "`{\"status\": \"ok\", \"redis\", \"lock_store\", \"instance\"}`", body = Object),
        (status = 503, description = "A store does not answer: the same document, `status: unavailable`", body = Object),
    )
)]
pub async fn health(State(state): State<AppState>) -> impl IntoResponse {
    let ping = async {
        let mut conn = state.resource.conn().await.ok()?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .ok()
    };
    let lock_ping = async {
        let mut conn = state.lock_store.pool().conn().await.ok()?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .ok()
    };
    let (up, lock_up) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(1), ping),
        tokio::time::timeout(Duration::from_secs(1), lock_ping)
    );
    let up = up.ok().flatten().is_some();
    let lock_up = lock_up.ok().flatten().is_some();
    // The instance can sell only with both stores (a lock-free tier needs just the resource
    // store, but health speaks for the fleet's whole ladder).
    let (status, text) = match (up, lock_up) {
        (true, true) => (StatusCode::OK, "ok"),
        _ => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
    };
    let word = |up: bool| if up { "up" } else { "down" };
    let body = json!({
        "status": text,
        "redis": word(up),
        "lock_store": { "kind": state.lock_store.kind(), "primary": word(lock_up) },
        "instance": state.instance,
    });
    (status, Json(body))
}

/// `GET /instances`: the instances with a recent heartbeat.
#[utoipa::path(
    get,
    path = "/instances",
    tag = "observe",
    responses((status = 200, description = "`{\"instances\": [{\"instance\", \"last_seen_ms\"}]}`", body = Object))
)]
pub async fn instances(State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    let live = state.fleet.live_instances().await?;
    let list: Vec<Value> = live
        .into_iter()
        .map(|(id, ago)| json!({ "instance": id, "last_seen_ms": ago }))
        .collect();
    Ok(Json(json!({ "instances": list })))
}

/// `GET /metrics`: this instance's counters, for Prometheus.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "observe",
    responses((status = 200, description = "Prometheus' text exposition format", body = String, content_type = "text/plain"))
)]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let viewers = state.feeds.viewers().iter().map(|(_, n)| n).sum();
    state.metrics.set_viewers(viewers);
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
