//! The HTTP API. `app(state)` builds the router apart from serving it, so tests can drive it.

mod admin;
mod assets;
mod burst;
pub(crate) mod class;
mod clocks;
mod events;
mod extract;
mod grading;
mod histories;
mod join;
mod lab;
mod lab_search;
mod observe;
mod openapi;
pub(crate) mod partition;
mod poll;
mod poll_call;
mod poll_runs;
mod sale;
mod scenario;
mod timeline;

pub use poll_runs::spawn_room_run_watch;

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::HeaderName;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnFailure, TraceLayer};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::AppError;
use crate::state::AppState;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// See [`last_resort_timeout`]; nginx's read timeout (310 s) is above it.
const LAST_RESORT: Duration = Duration::from_secs(300);

/// Every route of the API with its OpenAPI entry: utoipa-axum's `routes!` registers a
/// handler and its `#[utoipa::path]` together (handlers on one path in one call), so a route
/// cannot be added without its entry. The dashboard's files are the fallback, not routes.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(sale::sale))
        .routes(routes!(observe::state))
        .routes(routes!(observe::ledger))
        .routes(routes!(timeline::timeline))
        .routes(routes!(timeline::leases))
        .routes(routes!(clocks::clocks))
        .routes(routes!(histories::list_runs))
        .routes(routes!(histories::run_history))
        .routes(routes!(histories::run_violation))
        .routes(routes!(histories::run_view))
        .routes(routes!(observe::tiers))
        .routes(routes!(observe::health))
        .routes(routes!(observe::metrics))
        .routes(routes!(observe::instances))
        .routes(routes!(events::events))
        .routes(routes!(openapi::document))
        .routes(routes!(admin::reset))
        .routes(routes!(admin::tier))
        .routes(routes!(admin::config))
        .routes(routes!(burst::burst))
        .routes(routes!(scenario::list))
        .routes(routes!(scenario::run))
        .routes(routes!(admin::arm_fault, admin::clear_faults))
        .routes(routes!(partition::configure_store))
        .routes(routes!(partition::cut, partition::heal))
        .routes(routes!(admin::crash))
        .routes(routes!(admin::freeze))
        .routes(routes!(class::whoami))
        .routes(routes!(lab::show))
        .routes(routes!(lab::submit))
        .routes(routes!(grading::grade, grading::status))
        .routes(routes!(lab_search::search))
        .routes(routes!(class::create, class::overview, class::close))
        .routes(routes!(class::rotate, class::revoke))
        .routes(routes!(join::session))
        .routes(routes!(poll::open, poll::admin_view))
        .routes(routes!(poll::deck))
        .routes(routes!(poll::next_round))
        .routes(routes!(poll::close))
        .routes(routes!(poll_call::call))
        .routes(routes!(poll::reveal))
        .routes(routes!(poll::class_results))
        .routes(routes!(poll::vote, poll::public_view))
        .routes(routes!(poll::events))
}

/// The API's OpenAPI document, as `GET /openapi.json` serves it.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut document = routes().split_for_parts().1;
    openapi::Contract.modify(&mut document);
    document
}

/// [`document`] as JSON, made once per process.
fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let mut document =
            serde_json::to_value(document()).expect("the OpenAPI document is plain data");
        openapi::add_links(&mut document);
        document.to_string()
    })
}

/// The API, with the dashboard at `/`: from `static_dir` when given, else embedded.
pub fn app(state: AppState, static_dir: Option<&Path>) -> Router {
    let (api, _) = routes().split_for_parts();
    api
        .method_not_allowed_fallback(method_not_allowed)
        .fallback_service(assets::service(static_dir).with_state(state.clone()))
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
                .layer(
                    TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                        let id = req
                            .headers()
                            .get(&REQUEST_ID)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("-");
                        tracing::info_span!("request", method = %req.method(), uri = %req.uri(), request_id = id)
                    })
                    // A 503 for a lock deadline is an answer, not a server failure: AppError
                    // already logs what deserves a warning.
                    .on_failure(DefaultOnFailure::new().level(tracing::Level::DEBUG)),
                )
                .layer(PropagateRequestIdLayer::new(REQUEST_ID))
                .layer(axum::middleware::from_fn(last_resort_timeout))
                .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES)),
        )
}

/// No request may hang longer than the longest legal wait (a lock deadline plus business
/// time). The answer keeps the API's error shape (tower-http's timeout answers an empty 503).
async fn last_resort_timeout(request: Request, next: Next) -> Response {
    match tokio::time::timeout(LAST_RESORT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => AppError::RequestTimeout {
            secs: LAST_RESORT.as_secs(),
        }
        .into_response(),
    }
}

async fn method_not_allowed() -> AppError {
    AppError::MethodNotAllowed
}
