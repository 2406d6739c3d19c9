//! Admin endpoints, all behind `Authorization: Bearer <ADMIN_TOKEN>`.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::{required_json, Admin, Room};
use crate::error::AppError;
use crate::ground_truth;
use crate::settings::{Settings, SettingsPatch};
use crate::state::AppState;
use crate::tier::Tier;

pub const MAX_STOCK: i64 = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetBody {
    stock: i64,
}

/// `POST /admin/reset {"stock": N}`: clears ledger, locks and counters of the room.
pub async fn reset(
    _: Admin,
    State(state): State<AppState>,
    Room(keys): Room,
    body: Bytes,
) -> Result<Json<Value>, AppError> {
    let ResetBody { stock } = required_json(&body, r#"{"stock": 100}"#)?;
    if !(0..=MAX_STOCK).contains(&stock) {
        return Err(AppError::BadRequest(format!(
            "stock must be 0..={MAX_STOCK}"
        )));
    }
    ground_truth::reset(&state.redis, &keys, stock).await?;
    tracing::info!(room = keys.room(), stock, "room reset");
    Ok(Json(json!({ "room": keys.room(), "stock": stock })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TierBody {
    tier: String,
}

/// `PUT /admin/tier {"tier": "<id>"}`: switches the room's tier on every instance.
pub async fn tier(
    _: Admin,
    State(state): State<AppState>,
    Room(keys): Room,
    body: Bytes,
) -> Result<Json<Settings>, AppError> {
    let TierBody { tier } = required_json(&body, r#"{"tier": "lua-release"}"#)?;
    let tier: Tier = tier.parse().map_err(AppError::BadRequest)?;
    let patch = SettingsPatch {
        tier: Some(tier),
        ..Default::default()
    };
    apply(&state, &keys, &patch).await
}

/// `PUT /admin/config {"ttl_ms", "business_ms", "wait", "wait_deadline_ms", "tier"}`, any subset.
pub async fn config(
    _: Admin,
    State(state): State<AppState>,
    Room(keys): Room,
    body: Bytes,
) -> Result<Json<Settings>, AppError> {
    let patch: SettingsPatch = required_json(&body, r#"{"ttl_ms": 500, "business_ms": 50}"#)?;
    apply(&state, &keys, &patch).await
}

async fn apply(
    state: &AppState,
    keys: &crate::keys::Keys,
    patch: &SettingsPatch,
) -> Result<Json<Settings>, AppError> {
    let settings = state
        .fleet
        .update(keys, patch)
        .await?
        .map_err(AppError::BadRequest)?;
    tracing::info!(room = keys.room(), ?settings, "settings changed");
    Ok(Json(settings))
}
