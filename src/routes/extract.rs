//! Extractors whose rejections use the API's error shape.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::AppError;
use crate::keys::{Keys, DEFAULT_ROOM};
use crate::state::AppState;

/// The largest request body accepted (`DefaultBodyLimit` in `routes/mod.rs`): the API's bodies
/// are small JSON objects. nginx refuses the same (`client_max_body_size` in the template).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The request body, refused in the API's error shape: axum's own `Bytes` answers a body over
/// the limit with a plain-text 413.
pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        match Bytes::from_request(req, state).await {
            Ok(bytes) => Ok(Body(bytes)),
            Err(err) if err.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(AppError::PayloadTooLarge {
                    limit: MAX_BODY_BYTES,
                })
            }
            Err(err) => Err(AppError::BadRequest(format!(
                "could not read the request body: {}",
                err.body_text()
            ))),
        }
    }
}

/// Parses a JSON body; `None` when the body is empty or JSON `null`, both saying "no body" (a
/// client that serializes an absent value sends `null`; the document allows it where a body
/// is optional). Any content type is accepted, so a bare `curl -d` works.
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> Result<Option<T>, AppError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let invalid = |e: serde_json::Error| AppError::BadRequest(format!("invalid JSON body: {e}"));
    let mut value: serde_json::Value = serde_json::from_slice(body).map_err(invalid)?;
    whole_numbers_as_integers(&mut value);
    serde_json::from_value::<Option<T>>(value).map_err(invalid)
}

/// JSON Schema counts `3.0` as an integer (a number with no fraction), and the document says
/// `integer`: a client may send one, and it must read as `3`, not be refused as a float.
fn whole_numbers_as_integers(value: &mut serde_json::Value) {
    use serde_json::{Number, Value};
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            let whole = n.as_f64().filter(|f| f.fract() == 0.0);
            // Within i64's range; a number past it is no count the API takes anyway.
            if let Some(f) = whole.filter(|f| f.abs() < 9.2e18) {
                *n = Number::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers_as_integers),
        _ => {}
    }
}

/// Like [`json_body`], for endpoints that need a body.
pub fn required_json<T: DeserializeOwned>(body: &[u8], example: &str) -> Result<T, AppError> {
    json_body(body)?
        .ok_or_else(|| AppError::BadRequest(format!("a JSON body is required, e.g. {example}")))
}

/// axum's `Query`, refusing a bad query string in the API's error shape (axum's own answers
/// in plain text).
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> Query<T> {
    fn from_uri(uri: &axum::http::Uri) -> Result<Self, AppError> {
        axum::extract::Query::<T>::try_from_uri(uri)
            .map(|q| Query(q.0))
            .map_err(|e| AppError::BadRequest(format!("invalid query: {}", e.body_text())))
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AppError> {
        Query::from_uri(&parts.uri)
    }
}

/// axum's `Path`, refusing a bad segment (e.g. percent-encoded bytes that are not UTF-8) in
/// the API's error shape.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Path(p.0))
            .map_err(|e| AppError::BadRequest(format!("invalid path: {}", e.body_text())))
    }
}

/// `?room=<name>`: whose stock, tier and ledger a request works on.
pub struct Room(pub Keys);

#[derive(Deserialize)]
struct RoomQuery {
    room: Option<String>,
}

impl FromRequestParts<AppState> for Room {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, AppError> {
        let Query(q) = Query::<RoomQuery>::from_uri(&parts.uri)?;
        let room = q.room.unwrap_or_else(|| DEFAULT_ROOM.to_owned());
        let valid = !room.is_empty()
            && room.len() <= 32
            && room
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(AppError::BadRequest(format!(
                "invalid room `{room}`: 1-32 characters of a-z, A-Z, 0-9, - and _"
            )));
        }
        Ok(Room(Keys::for_room(&room)))
    }
}

/// Who sent an admin request: the instructor (the admin token, good everywhere) or the
/// holder of one room's token (good in that room only, see `room_tokens`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Admin,
    Room(String),
}

/// The caller named by the request's `Authorization: Bearer` token, whatever the room; 401
/// when it names nobody. A token that is not the admin token costs one look-up in the
/// resource store.
impl FromRequestParts<AppState> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let Some(token) = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token)
        else {
            return Err(AppError::Unauthorized);
        };
        if token_matches(token, &state.admin_token) {
            return Ok(Caller::Admin);
        }
        match crate::room_tokens::room_of(&state.resource, token).await? {
            Some(room) => Ok(Caller::Room(room)),
            None => Err(AppError::Unauthorized),
        }
    }
}

/// Proof of the admin token, for what acts on the whole fleet (instances, the class, tokens).
/// A room token gets a 403 that says why.
pub struct Admin;

impl FromRequestParts<AppState> for Admin {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        match Caller::from_request_parts(parts, state).await? {
            Caller::Admin => Ok(Admin),
            Caller::Room(room) => Err(AppError::Forbidden(format!(
                "this is room {room}'s token: it acts in room {room} only, and this acts on \
                 the whole fleet (the instructor's admin token does)"
            ))),
        }
    }
}

/// An admin request on one room (`?room=`), by the admin token or by that room's token.
pub struct RoomAdmin {
    pub keys: Keys,
    pub caller: Caller,
}

impl FromRequestParts<AppState> for RoomAdmin {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let Room(keys) = Room::from_request_parts(parts, state).await?;
        let caller = Caller::from_request_parts(parts, state).await?;
        if let Caller::Room(own) = &caller {
            if own != keys.room() {
                return Err(AppError::Forbidden(format!(
                    "this is room {own}'s token: it acts in room {own} only, not in room {}",
                    keys.room()
                )));
            }
        }
        Ok(RoomAdmin { keys, caller })
    }
}

impl RoomAdmin {
    /// Refuses what reaches past the room (a process fault stops every room's sales on an
    /// instance; a lock-store fault, every room's locks) unless the admin token asked.
    pub fn only_admin_may(&self, what: &str) -> Result<(), AppError> {
        match &self.caller {
            Caller::Admin => Ok(()),
            Caller::Room(room) => Err(AppError::Forbidden(format!(
                "{what} reaches beyond room {room} (every room on the instance or lock store \
                 shares it): only the instructor's admin token may do it"
            ))),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` value. The scheme is case-insensitive
/// (RFC 9110, 11.1), so `bearer` and `BEARER` work as well.
pub(super) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim_start();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Compares in time that does not depend on where the first wrong byte is, so the token
/// cannot be guessed byte by byte from response times (only its length may show).
pub(super) fn token_matches(given: &str, expected: &str) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER t0k", "  bearer   t0k"] {
            assert_eq!(bearer_token(value), Some("t0k"), "{value}");
        }
        for value in ["Basic t0k", "Bearer", "Bearer ", "Bearert0k", "t0k"] {
            assert_eq!(bearer_token(value), None, "{value}");
        }
    }

    #[test]
    fn only_the_exact_token_matches() {
        assert!(token_matches("secret", "secret"));
        assert!(!token_matches("secreT", "secret"));
        assert!(!token_matches("secret2", "secret"));
        assert!(!token_matches("", "secret"));
    }

    #[derive(Debug, Deserialize)]
    struct Needs {
        #[allow(dead_code)] // read by serde only
        n: u8,
    }

    #[test]
    fn a_required_body_refuses_null_as_it_refuses_none() {
        for body in [&b""[..], b"null"] {
            let err = required_json::<Needs>(body, r#"{"n": 1}"#).unwrap_err();
            assert!(
                matches!(&err, AppError::BadRequest(m) if m.contains("a JSON body is required")),
                "{err:?}"
            );
        }
        assert!(required_json::<Needs>(br#"{"n": 1}"#, "").is_ok());
    }

    #[test]
    fn a_whole_number_written_as_a_float_is_an_integer() {
        let n = |body: &[u8]| required_json::<Needs>(body, "").map(|b| b.n);
        assert_eq!(n(br#"{"n": 3.0}"#).unwrap(), 3);
        assert_eq!(n(br#"{"n": 3e0}"#).unwrap(), 3);
        assert!(n(br#"{"n": 3.5}"#).is_err());
        assert!(n(br#"{"n": 1e300}"#).is_err());
        assert!(n(br#"{"n": -1.0}"#).is_err());
    }
}
