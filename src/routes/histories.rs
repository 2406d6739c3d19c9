//! `GET /admin/runs` and `GET /admin/runs/{id}/history`: the histories of the last runs the
//! fleet made in a room (a chapter run from the dashboard or the reveal, a lab attack), as
//! JSON Lines (`loadtest check` reads them). The admin token, or the room's own token for its
//! own room's runs.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;

use super::extract::RoomAdmin;
use crate::error::AppError;
use crate::histories;
use crate::state::AppState;

/// `GET /admin/runs?room=`: the runs the room keeps the history of, newest first.
#[utoipa::path(
    get,
    path = "/admin/runs",
    tag = "admin",
    params(super::openapi::RoomParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "`{\"room\", \"runs\": [{\"id\", \"chapter\", \"tier\", \"bytes\"}]}`, newest first (a room keeps its last 3)", body = Object),
        (status = 401, description = "No token", body = super::openapi::ErrorBody),
        (status = 403, description = "Another room's token", body = super::openapi::ErrorBody),
    )
)]
pub async fn list(
    caller: RoomAdmin,
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, AppError> {
    let runs = histories::list(&state.resource, &caller.keys).await?;
    Ok(Json(json!({ "room": caller.keys.room(), "runs": runs })))
}

/// `GET /admin/runs/{id}/history?room=`: one run's whole history, JSON Lines.
#[utoipa::path(
    get,
    path = "/admin/runs/{id}/history",
    tag = "admin",
    params(("id" = String, Path, description = "The run id (a chapter run's `run_id`)"), super::openapi::RoomParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The history, one JSON object a line (`application/x-ndjson`): run, request, section, lease, fault, cut, end", content_type = "application/x-ndjson", body = String),
        (status = 401, description = "No token", body = super::openapi::ErrorBody),
        (status = 403, description = "Another room's token", body = super::openapi::ErrorBody),
        (status = 404, description = "The room keeps no run of that id (`not_found`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn history(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, AppError> {
    let text = histories::read(&state.resource, &caller.keys, &id)
        .await?
        .ok_or_else(|| {
            AppError::NotFound(format!(
                "room {} keeps no run `{id}` (it keeps its last {}: GET /admin/runs)",
                caller.keys.room(),
                histories::KEPT_PER_ROOM
            ))
        })?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], text))
}
