//! `GET /openapi.json`: the API as an OpenAPI 3.1 document, generated from the handlers.
//!
//! Each handler states its own operation (`#[utoipa::path]`: its bodies, its answers, who may
//! call it) and `routes/mod.rs` registers every handler through utoipa-axum's `routes!`, which
//! adds the route and its entry in one call: no route exists without its entry.
//!
//! What holds for many operations at once is added here, by [`Contract`], from what each
//! operation declares: the error answers every request may meet (the per-client 429, nginx's
//! or the instance's own, and the stores' 503, both with `Retry-After`), those a body or a parameter may meet (400, 413), and those a
//! token may meet (401, 403). A handler lists only the answers that are its own (a 404 for an
//! unknown instance, a 409 for a sold-out room).

use axum::http::header;
use axum::response::IntoResponse;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi, ToSchema};

/// The body of every error answer, the service's (`AppError`) and the front's (nginx's own
/// answers use the same shape).
#[derive(ToSchema)]
#[allow(dead_code)] // a schema only: `AppError::into_response` writes this shape.
pub struct ErrorBody {
    /// A stable machine-readable code: `bad_request`, `unauthorized`, `forbidden`,
    /// `not_found`, `payload_too_large`, `sold_out`, `not_stocked`, `room_limit`,
    /// `lock_timeout`, `redis_unavailable`, `too_many_requests`, …
    error: String,
    /// What went wrong and what to do, for a person.
    message: String,
    /// On `sold_out`: the stock left.
    stock_left: Option<i64>,
}

/// `?room=`: the room a request works on. Absent: the room `default`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a parameter's description only: `extract::Room` parses it.
pub struct RoomParam {
    /// 1–32 characters of a-z, A-Z, 0-9, `-` and `_`; a room token may name its own room only.
    #[param(pattern = "^[A-Za-z0-9_-]{1,32}$", example = "student-1")]
    room: Option<String>,
}

/// The security scheme of the instructor's admin token: good for every route and room.
pub const ADMIN_TOKEN: &str = "admin_token";
/// The security scheme of a room token (`POST /admin/class` hands them out): good for the
/// routes on one room (`?room=`), in that room only.
pub const ROOM_TOKEN: &str = "room_token";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "oversell",
        description = "An inventory sale under a choice of distributed locks, and the ground \
                       truth of what each lock let through. Errors share one JSON shape \
                       (`Error`); a 503 or 429 carries `Retry-After`. Routes on a room take \
                       `?room=` and either token; routes on the whole fleet take the admin \
                       token only."
    ),
    components(schemas(ErrorBody))
)]
pub struct ApiDoc;

/// `GET /openapi.json`: this document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "observe",
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", body = Object))
)]
pub async fn document() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        super::document_json(),
    )
}

/// Adds what many operations share, once every route is in; see the module's documentation.
pub struct Contract;

impl Modify for Contract {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            ADMIN_TOKEN,
            bearer(
                "The instructor's admin token (`oversell up` prints it): every route, every room.",
            ),
        );
        components.add_security_scheme(
            ROOM_TOKEN,
            bearer(
                "One room's token, from `POST /admin/class` or `POST /admin/rooms/{room}/token`: \
                 the routes on a room, in that room only (`?room=` must name it); a 403 elsewhere.",
            ),
        );
        for item in openapi.paths.paths.values_mut() {
            for operation in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
            ]
            .into_iter()
            .flatten()
            {
                add_shared_answers(operation);
            }
        }
    }
}

/// The flow a room goes through, as links a client (and schemathesis' stateful phase) can
/// follow: a reset puts stock on sale in a room, a sale sells in that room, and its state
/// shows the sale. Written into the JSON: utoipa 5's `Link` serializes its operation's id as
/// `operation_id`, which OpenAPI (`operationId`) does not know.
pub fn add_links(document: &mut serde_json::Value) {
    let steps = [
        ("/admin/reset", "sale", "Buy in the room just stocked"),
        ("/sale", "state", "The room's ground truth after the sale"),
    ];
    for (path, to, description) in steps {
        if let Some(ok) = document.pointer_mut(&format!(
            "/paths/{}/post/responses/200",
            path.replace('/', "~1")
        )) {
            ok["links"] = serde_json::json!({
                to: {
                    "operationId": to,
                    "parameters": { "room": "$request.query.room" },
                    "description": description,
                }
            });
        }
    }
}

fn bearer(description: &str) -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(description))
            .build(),
    )
}

fn add_shared_answers(operation: &mut Operation) {
    let takes_input = operation.request_body.is_some()
        || operation.parameters.as_ref().is_some_and(|p| !p.is_empty());
    let secured = operation.security.as_ref().is_some_and(|s| !s.is_empty());
    let mut answers = vec![
        (
            "429",
            error(
                "`too_many_requests`: this client address is over its fair share for now, of \
                 the fleet (nginx in front: requests or connections) or of this instance \
                 (requests; `--client-rate`, `--client-burst`)",
                true,
            ),
        ),
        (
            "503",
            error(
                "Unavailable for now: a store does not answer, the lock was not had within its \
                 deadline, the room's state was lost; the `error` code says which",
                true,
            ),
        ),
    ];
    if takes_input {
        answers.push((
            "400",
            error("The request is malformed; `message` says how", false),
        ));
    }
    if operation.request_body.is_some() {
        answers.push((
            "413",
            error("The body is over the 64 KiB the API accepts", false),
        ));
    }
    if secured {
        answers.push(("401", error("No token, or one that names nobody", false)));
        answers.push((
            "403",
            error(
                "A room token used outside its room, or on what acts beyond one room",
                false,
            ),
        ));
    }
    for (status, answer) in answers {
        operation
            .responses
            .responses
            .entry(status.to_owned())
            .or_insert_with(|| RefOr::T(answer));
    }
}

/// An error answer in the API's shape; `retry` adds `Retry-After` (seconds).
fn error(description: &str, retry: bool) -> Response {
    let mut response = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build(),
    );
    if retry {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(<u32 as utoipa::PartialSchema>::schema())
                .description(Some("Seconds to wait before trying again"))
                .build(),
        );
    }
    response.build()
}
