//! `POST /join/session {"code"}`: a student who lost the tab types the short code on the room's
//! slip into the join page (`/join`) and gets a session of the room back: a token of its own,
//! which the page takes to the room's dashboard. The projector shows the join page's address
//! only, never a room's token. Attempts are counted per client address and for the whole fleet
//! before the code is looked up (`room_tokens::join`): over either limit, a 429 with
//! `Retry-After`.

use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};

use super::extract::{required_json, Body};
use crate::client_limit::ClientAddress;
use crate::error::AppError;
use crate::room_tokens::{self, Joined};
use crate::state::AppState;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JoinBody {
    /// The code on the room's slip, `7KQ2-M9XD`: 8 of Crockford's base32 (no `U`; `O`, `I`
    /// and `L` read as `0`, `1`, `1`), any case, dashes and spaces anywhere.
    #[schema(
        pattern = "^[ -]{0,4}(?:[0-9A-TV-Za-tv-z][ -]{0,4}){8}$",
        max_length = 44,
        example = "7KQ2-M9XD"
    )]
    code: String,
}

/// A session of the room the code opens: shown once.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct Session {
    room: String,
    /// A token of the room (as a room token: the routes on that room, in that room only).
    token: String,
    /// The room's dashboard, the token in the fragment (never sent to a server).
    dashboard: String,
}

#[utoipa::path(
    post,
    path = "/join/session",
    tag = "class",
    request_body = JoinBody,
    responses(
        (status = 200, description = "A session of the code's room: `{\"room\", \"token\", \"dashboard\"}`", body = Session),
        (status = 404, description = "No room has this code (`unknown_code`): mistyped, or the room's token was replaced or revoked", body = super::openapi::ErrorBody),
        (status = 429, description = "More attempts than this address (20 a minute) or the whole fleet (120 a minute) may make (`too_many_requests`), with `Retry-After`", body = super::openapi::ErrorBody),
    )
)]
pub async fn session(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddress>>,
    Body(body): Body,
) -> Result<Json<Session>, AppError> {
    let JoinBody { code } = required_json(&body, r#"{"code": "7KQ2-M9XD"}"#)?;
    if !room_tokens::looks_like_code(&code) {
        return Err(AppError::BadField {
            field: "code",
            message: "a code is 8 letters and digits, as on the slip: `7KQ2-M9XD`".into(),
        });
    }
    // The fleet's own callers (no address named) share one count.
    let address = client
        .and_then(|Extension(ClientAddress(ip))| ip)
        .map_or_else(|| "fleet".to_owned(), |ip| ip.to_string());
    match room_tokens::join(&state.resource, &code, &address).await? {
        Joined::Session { room, token } => {
            tracing::info!(room, "a join code was exchanged for a session");
            let dashboard = format!("/?room={room}#token={token}");
            Ok(Json(Session {
                room,
                token,
                dashboard,
            }))
        }
        Joined::Unknown => Err(AppError::UnknownCode),
        Joined::Limited { retry_after_secs } => Err(AppError::JoinLimited { retry_after_secs }),
    }
}
