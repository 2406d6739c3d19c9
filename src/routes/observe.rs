//! Read-only endpoints: `GET /state`, `/ledger`, `/health`, `/metrics`.

use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::extract::Room;
use crate::error::AppError;
use crate::faults::Fault;
use crate::ground_truth::{self, GroundTruth};
use crate::lock_store::nodes::LockStoreView;
use crate::settings::Settings;
use crate::state::AppState;

#[derive(Serialize)]
pub struct StateView {
    instance: String,
    room: String,
    tier: crate::tier::Tier,
    settings: Settings,
    /// Faults armed and not yet fired.
    faults: Vec<Fault>,
    #[serde(flatten)]
    truth: GroundTruth,
    /// Where the lock lives: each node, its role, up or down, and which one holds the lock.
    lock_store: LockStoreView,
}

pub async fn state(
    State(state): State<AppState>,
    Room(keys): Room,
) -> Result<Json<StateView>, AppError> {
    let room = state.fleet.room(&keys).await?;
    let (truth, lock_store) = tokio::join!(
        ground_truth::read(&state.redis, &state.lock_store, &keys),
        state.lock_store.describe(&keys)
    );
    let truth = truth?;
    Ok(Json(StateView {
        lock_store,
        instance: state.instance.clone(),
        room: keys.room().to_owned(),
        tier: room.settings.tier,
        settings: room.settings,
        faults: room.faults.to_vec(),
        truth,
    }))
}

const MAX_PAGE: i64 = 10_000;

#[derive(Deserialize)]
pub struct Page {
    offset: Option<i64>,
    limit: Option<i64>,
}

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
    let orders = ground_truth::ledger(&state.redis, &keys, offset, limit).await?;
    Ok(Json(json!({ "offset": offset, "orders": orders })))
}

pub async fn health(State(state): State<AppState>) -> impl IntoResponse {
    let ping = async {
        let mut conn = state.redis.conn().await.ok()?;
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
pub async fn instances(State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    let live = state.fleet.live_instances().await?;
    let list: Vec<Value> = live
        .into_iter()
        .map(|(id, ago)| json!({ "instance": id, "last_seen_ms": ago }))
        .collect();
    Ok(Json(json!({ "instances": list })))
}

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
