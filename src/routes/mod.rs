//! The HTTP API. `app(state)` builds the router apart from serving it, so tests can drive it.

mod admin;
mod assets;
mod burst;
pub(crate) mod class;
mod events;
mod extract;
mod grading;
mod lab;
mod observe;
pub(crate) mod partition;
mod poll;
mod sale;
mod scenario;

use std::path::Path;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::HeaderName;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::Router;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnFailure, TraceLayer};

use crate::error::AppError;
use crate::state::AppState;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// See [`last_resort_timeout`]; nginx's read timeout (310 s) is above it.
const LAST_RESORT: Duration = Duration::from_secs(300);

/// The API, with the dashboard at `/`: from `static_dir` when given, else embedded.
pub fn app(state: AppState, static_dir: Option<&Path>) -> Router {
    Router::new()
        .route("/sale", post(sale::sale))
        .route("/state", get(observe::state))
        .route("/ledger", get(observe::ledger))
        .route("/tiers", get(observe::tiers))
        .route("/health", get(observe::health))
        .route("/metrics", get(observe::metrics))
        .route("/instances", get(observe::instances))
        .route("/events", get(events::events))
        .route("/admin/reset", post(admin::reset))
        .route("/admin/tier", put(admin::tier))
        .route("/admin/config", put(admin::config))
        .route("/admin/burst", post(burst::burst))
        .route("/scenarios", get(scenario::list))
        .route("/admin/scenario", post(scenario::run))
        .route("/admin/faults", post(admin::arm_fault).delete(admin::clear_faults))
        .route("/admin/lock-store", put(partition::configure_store))
        .route(
            "/admin/partition",
            post(partition::cut).delete(partition::heal),
        )
        .route("/admin/instances/{id}/crash", post(admin::crash))
        .route("/admin/instances/{id}/freeze", post(admin::freeze))
        .route("/admin/whoami", get(class::whoami))
        .route("/lab", get(lab::show))
        .route("/admin/lab", put(lab::submit))
        .route(
            "/admin/lab/grade",
            post(grading::grade).get(grading::status),
        )
        .route(
            "/admin/class",
            post(class::create).get(class::overview).delete(class::close),
        )
        .route(
            "/admin/class/poll",
            post(poll::open).get(poll::admin_view),
        )
        .route("/admin/class/poll/round", post(poll::next_round))
        .route("/admin/class/poll/close", post(poll::close))
        .route("/admin/class/poll/reveal", post(poll::reveal))
        .route("/admin/class/results", get(poll::class_results))
        .route("/poll", post(poll::vote).get(poll::public_view))
        .route("/poll/events", get(poll::events))
        .route(
            "/admin/rooms/{room}/token",
            post(class::rotate).delete(class::revoke),
        )
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
