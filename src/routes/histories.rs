//! `GET /admin/runs` and `GET /admin/runs/{id}/history`: the histories of the last runs the
//! fleet made in a room (a chapter run from the dashboard or the reveal, a lab attack), as
//! JSON Lines (`loadtest check` reads them), their first violation drawn (`violation.svg`) and
//! the viewer that steps through them (`view`). The admin token, or the room's own token for its
//! own room's runs.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;

use super::extract::{Query, RoomAdmin};
use crate::error::AppError;
use crate::histories;
use crate::state::AppState;
use workshop::history::Lang;

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
pub async fn list_runs(
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
pub async fn run_history(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, AppError> {
    let text = histories::read(&state.resource, &caller.keys, &id)
        .await?
        .ok_or_else(|| not_kept(caller.keys.room(), &id))?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], text))
}

/// The language of a picture's words.
#[derive(serde::Deserialize, utoipa::ToSchema, Clone, Copy, Default)]
#[serde(rename_all = "lowercase")]
pub enum PictureLang {
    #[default]
    En,
    Zh,
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LangParam {
    /// The language of the picture's words [default: en].
    #[param(inline)]
    lang: Option<PictureLang>,
}

/// `GET /admin/runs/{id}/violation.svg?room=&lang=`: the run's first violation drawn (the
/// history checker's picture), or its first sections when every verdict held.
#[utoipa::path(
    get,
    path = "/admin/runs/{id}/violation.svg",
    tag = "admin",
    params(("id" = String, Path, description = "The run id"), super::openapi::RoomParam, LangParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "A self-contained SVG (no script, no network)", content_type = "image/svg+xml", body = String),
        (status = 400, description = "A language other than en or zh (`bad_request`)", body = super::openapi::ErrorBody),
        (status = 401, description = "No token", body = super::openapi::ErrorBody),
        (status = 403, description = "Another room's token", body = super::openapi::ErrorBody),
        (status = 404, description = "The room keeps no run of that id (`not_found`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn run_violation(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(lang): Query<LangParam>,
) -> Result<impl IntoResponse, AppError> {
    let lang = match lang.lang.unwrap_or_default() {
        PictureLang::En => Lang::En,
        PictureLang::Zh => Lang::Zh,
    };
    let text = histories::read(&state.resource, &caller.keys, &id)
        .await?
        .ok_or_else(|| not_kept(caller.keys.room(), &id))?;
    let history = workshop::history::parse(&text)
        .map_err(|e| AppError::Internal(format!("run {id}'s kept history: {e}")))?;
    let report = workshop::history::check(&history);
    let svg = workshop::history::draw::svg(&history, &report, lang);
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            // The picture is drawn here, but a picture is still a document a browser may
            // open on its own: it gets to do nothing but show itself.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'",
            ),
        ],
        svg,
    ))
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ViewParams {
    /// The language the page opens in (it has a toggle) [default: en].
    #[param(inline)]
    lang: Option<PictureLang>,
    /// Another run the room keeps, shown beside this one (its verdicts change nothing here).
    beside: Option<String>,
}

/// `GET /admin/runs/{id}/view?room=&lang=&beside=`: the run viewer (what `loadtest check
/// --html` writes) for a run the fleet kept, under the pages' policy: the script is the
/// fleet's own `/viewer.js`, the run is data in a `<script type="application/json">` block
/// of the page, which a browser never runs.
#[utoipa::path(
    get,
    path = "/admin/runs/{id}/view",
    tag = "admin",
    params(("id" = String, Path, description = "The run id"), super::openapi::RoomParam, ViewParams),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "An HTML page: every operation of the run on one time axis, the stores' state before and after each, the first violation a button away (script: /viewer.js; data: the `viewer-data` JSON block)", content_type = "text/html", body = String),
        (status = 400, description = "A language other than en or zh (`bad_request`)", body = super::openapi::ErrorBody),
        (status = 401, description = "No token", body = super::openapi::ErrorBody),
        (status = 403, description = "Another room's token", body = super::openapi::ErrorBody),
        (status = 404, description = "The room keeps no run of that id, or of the `beside` id (`not_found`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn run_view(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(params): Query<ViewParams>,
) -> Result<impl IntoResponse, AppError> {
    use workshop::history::view::{page, Assets, View};
    let lang = match params.lang.unwrap_or_default() {
        PictureLang::En => Lang::En,
        PictureLang::Zh => Lang::Zh,
    };
    let mut views = Vec::with_capacity(2);
    for id in std::iter::once(&id).chain(params.beside.as_ref()) {
        let text = histories::read(&state.resource, &caller.keys, id)
            .await?
            .ok_or_else(|| not_kept(caller.keys.room(), id))?;
        let history = workshop::history::parse(&text)
            .map_err(|e| AppError::Internal(format!("run {id}'s kept history: {e}")))?;
        views.push(View::of(&history, &workshop::history::check(&history)));
    }
    Ok((
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                super::assets::CONTENT_SECURITY_POLICY,
            ),
        ],
        page(&views, Assets::Served, lang),
    ))
}

fn not_kept(room: &str, id: &str) -> AppError {
    AppError::NotFound(format!(
        "room {room} keeps no run `{id}` (it keeps its last {}: GET /admin/runs)",
        histories::KEPT_PER_ROOM
    ))
}
