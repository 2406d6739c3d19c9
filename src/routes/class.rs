//! The class: a room and a room token per student, made, watched and closed by the instructor.
//!
//! - `POST /admin/class {"students", "prefix"?, "stock"?}` makes rooms `student-01…`, stocks
//!   them and issues each a token and a short join code (shown this once: only digests are
//!   stored, see `room_tokens`), with its join link and that link as a QR code: a slip each,
//!   printed, never projected; the projector shows the join page's address (`join_page`),
//!   where a student who lost the tab types the slip's code (`routes::join`);
//! - `GET /admin/class`: every room at a glance, for the class page (`/class`);
//! - `DELETE /admin/class`: every room token of the class stops working at once, and the
//!   class's votes (`poll`) are deleted;
//! - `POST /admin/rooms/{room}/token`: a new token for one room (the old one stops);
//!   `DELETE …/token`: takes it away;
//! - `GET /admin/whoami`: whose token this is (the dashboard asks, to know what to offer).
//!
//! A join link carries its token in the URL fragment (`/?room=student-01#token=…`): browsers
//! never send the fragment, so it reaches no access log, nginx's or the instances'.

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::Json;
use qrcode::render::svg;
use qrcode::QrCode;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::admin::{reset_room, MAX_STOCK};
use super::extract::{required_json, Admin, Body, Caller, Path};
use crate::error::AppError;
use crate::keys::{Keys, CLASS};
use crate::state::AppState;
use crate::{ground_truth, room_tokens, viewers};

/// The most students one class has: a conference workshop's 300 with room to spare (README,
/// "A class of 300"); the page shows them all in one scrolling list.
pub const MAX_STUDENTS: usize = 400;
const DEFAULT_PREFIX: &str = "student";
const DEFAULT_STOCK: i64 = 100;

/// `GET /admin/whoami`: `{"scope": "admin"}` or `{"scope": "room", "room": …}`.
#[utoipa::path(
    get,
    path = "/admin/whoami",
    tag = "class",
    security(("admin_token" = []), ("room_token" = [])),
    responses((status = 200, description = "`{\"scope\": \"admin\"}` or `{\"scope\": \"room\", \"room\"}`: what the token may do", body = Object))
)]
pub async fn whoami(caller: Caller) -> Json<Value> {
    Json(match caller {
        Caller::Admin => json!({ "scope": "admin" }),
        Caller::Room(room) => json!({ "scope": "room", "room": room }),
    })
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ClassBody {
    /// One room and token per student, 1–200.
    #[schema(minimum = 1, maximum = 200)]
    students: usize,
    /// The rooms' names: `<prefix>-1` … [default: `student`]; 28 characters leave room for
    /// `-200` in a room name's 32.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,28}$")]
    prefix: Option<String>,
    /// Each room's stock, 0–1000000 [default: 100].
    #[schema(minimum = 0, maximum = 1000000)]
    stock: Option<i64>,
}

/// One room's key as handed to its student, on a printed slip: shown once.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Ticket {
    room: String,
    token: String,
    join_url: String,
    /// The join link as a QR code, to scan from the slip.
    qr_svg: String,
    /// The short code that gets a student back in at `/join` (`POST /join/session`).
    code: String,
}

/// `POST /admin/class {"students": 30, "prefix"?: "student", "stock"?: 100}`.
#[utoipa::path(
    post,
    path = "/admin/class",
    tag = "class",
    request_body = ClassBody,
    security(("admin_token" = [])),
    responses(
        (status = 200, description = "`{\"rooms\": [Ticket], \"watch_url\", \"join_page\", \"join_qr_svg\"}`: each room's token and code, shown once (for its slip), and the one address the projector shows", body = Object),
        (status = 409, description = "The fleet cannot hold that many more rooms (`room_limit`): refused before anything is written", body = super::openapi::ErrorBody),
    )
)]
pub async fn create(
    _: Admin,
    State(state): State<AppState>,
    headers: HeaderMap,
    Body(body): Body,
) -> Result<Json<Value>, AppError> {
    let ClassBody {
        students,
        prefix,
        stock,
    } = required_json(&body, r#"{"students": 30}"#)?;
    if !(1..=MAX_STUDENTS).contains(&students) {
        return Err(AppError::BadRequest(format!(
            "students must be 1..={MAX_STUDENTS}"
        )));
    }
    let prefix = prefix.unwrap_or_else(|| DEFAULT_PREFIX.to_owned());
    let rooms = room_names(&prefix, students)?;
    let stock = stock.unwrap_or(DEFAULT_STOCK);
    if !(0..=MAX_STOCK).contains(&stock) {
        return Err(AppError::BadRequest(format!(
            "stock must be 0..={MAX_STOCK}"
        )));
    }
    // Checked before anything is written: a class that cannot be made whole is not begun.
    state.rooms.fit(&rooms).await?;
    // An older class's tokens stop working: one class at a time.
    revoke_all(&state).await?;
    let base = public_url(&state, &headers);
    let mut tickets = Vec::with_capacity(rooms.len());
    for room in &rooms {
        reset_room(&state, &Keys::for_room(room), stock).await?;
        let issued = room_tokens::issue(&state.resource, room).await?;
        tickets.push(ticket(&base, room, issued)?);
    }
    let mut conn = state.resource.conn().await?;
    let () = redis::pipe()
        .atomic()
        .del(CLASS)
        .hset(CLASS, "prefix", &prefix)
        .hset(CLASS, "students", students)
        .query_async(&mut conn)
        .await
        .map_err(crate::redis_pool::StoreError::from)?;
    // An older class's votes go too; every instance hears of it, and of the new class's size.
    crate::poll::ballot_box::delete_all(&state.resource).await?;
    tracing::info!(students, prefix, "class created");
    Ok(Json(json!({
        "rooms": tickets,
        "watch_url": format!("{base}/"),
        "join_page": join_page(&base),
        "join_qr_svg": qr_svg(&join_page(&base))?,
    })))
}

/// One room of the class as the class page shows it.
#[derive(Serialize)]
struct RoomRow {
    room: String,
    tier: oversell_api::Tier,
    status: crate::rooms::RoomStatus,
    stock: i64,
    initial_stock: i64,
    orders: i64,
    oversold: i64,
    lost_updates: i64,
    overlaps: i64,
    /// Open dashboards of the room, over every live instance.
    viewers: u64,
    has_token: bool,
}

/// `GET /admin/class`: every room of the class at a glance.
#[utoipa::path(
    get,
    path = "/admin/class",
    tag = "class",
    security(("admin_token" = [])),
    responses((status = 200, description = "`{\"prefix\", \"join_page\", \"rooms\": [{\"room\", \"tier\", \"status\", \"stock\", \"orders\", \"oversold\", \"viewers\", \"has_token\", …}]}`: `join_page` (and `join_qr_svg`), the one address the projector shows", body = Object))
)]
pub async fn overview(
    _: Admin,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, AppError> {
    let join = join_page(&public_url(&state, &headers));
    let join_qr = qr_svg(&join)?;
    let Some((prefix, students)) = class(&state).await? else {
        return Ok(Json(
            json!({ "prefix": null, "join_page": join, "join_qr_svg": join_qr, "rooms": [] }),
        ));
    };
    let rooms = room_names(&prefix, students)?;
    let (with_tokens, viewers) = tokio::join!(
        room_tokens::rooms_with_tokens(&state.resource),
        viewers::per_room(&state.resource, &state.fleet)
    );
    let (with_tokens, viewers) = (with_tokens?, viewers?);
    let rows = futures_util::future::try_join_all(rooms.iter().map(|room| async {
        let keys = Keys::for_room(room);
        let settings = state.fleet.settings(&keys).await?;
        let truth = ground_truth::read(&state.resource, &state.lock_store, &keys).await?;
        let status = state.rooms.judge(&keys, truth.stocked).await?;
        Ok::<_, AppError>(RoomRow {
            room: room.clone(),
            tier: settings.tier,
            status,
            stock: truth.stock,
            initial_stock: truth.initial_stock,
            orders: truth.orders,
            oversold: truth.oversold,
            lost_updates: truth.lost_updates,
            overlaps: truth.overlaps,
            viewers: viewers.get(room).copied().unwrap_or(0),
            has_token: with_tokens.contains(room),
        })
    }))
    .await?;
    Ok(Json(
        json!({ "prefix": prefix, "join_page": join, "join_qr_svg": join_qr, "rooms": rows }),
    ))
}

/// `DELETE /admin/class`: every room token stops working and the class's votes go; the rooms
/// stay until idle.
#[utoipa::path(
    delete,
    path = "/admin/class",
    tag = "class",
    security(("admin_token" = [])),
    responses((status = 200, description = "`{\"revoked\": N}`: how many tokens stopped working", body = Object))
)]
pub async fn close(_: Admin, State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    let revoked = revoke_all(&state).await?;
    crate::poll::ballot_box::delete_all(&state.resource).await?;
    tracing::info!(revoked, "class tokens revoked");
    Ok(Json(json!({ "revoked": revoked })))
}

/// `POST /admin/rooms/{room}/token`: a new token for the room; the old one stops at once.
#[utoipa::path(
    post,
    path = "/admin/rooms/{room}/token",
    tag = "class",
    params(("room" = String, Path, pattern = "^[A-Za-z0-9_-]{1,32}$", description = "The room")),
    security(("admin_token" = [])),
    responses((status = 200, description = "The room's new token and code, shown once (for a new slip); the old token, code and sessions stop", body = Ticket))
)]
pub async fn rotate(
    _: Admin,
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(room): Path<String>,
) -> Result<Json<Ticket>, AppError> {
    valid_room(&room)?;
    let issued = room_tokens::issue(&state.resource, &room).await?;
    tracing::info!(room, "room token issued");
    Ok(Json(ticket(&public_url(&state, &headers), &room, issued)?))
}

/// `DELETE /admin/rooms/{room}/token`: the room's token stops working.
#[utoipa::path(
    delete,
    path = "/admin/rooms/{room}/token",
    tag = "class",
    params(("room" = String, Path, pattern = "^[A-Za-z0-9_-]{1,32}$", description = "The room")),
    security(("admin_token" = [])),
    responses((status = 200, description = "`{\"room\", \"revoked\": bool}`", body = Object))
)]
pub async fn revoke(
    _: Admin,
    State(state): State<AppState>,
    Path(room): Path<String>,
) -> Result<Json<Value>, AppError> {
    valid_room(&room)?;
    let revoked = room_tokens::revoke(&state.resource, &room).await?;
    tracing::info!(room, revoked, "room token revoked");
    Ok(Json(json!({ "room": room, "revoked": revoked })))
}

/// Every room token there is, class or not, taken away; how many.
async fn revoke_all(state: &AppState) -> Result<usize, AppError> {
    let rooms = room_tokens::rooms_with_tokens(&state.resource).await?;
    for room in &rooms {
        room_tokens::revoke(&state.resource, room).await?;
    }
    Ok(rooms.len())
}

async fn class(state: &AppState) -> Result<Option<(String, usize)>, AppError> {
    let mut conn = state.resource.conn().await?;
    let (prefix, students): (Option<String>, Option<usize>) = redis::cmd("HMGET")
        .arg(CLASS)
        .arg("prefix")
        .arg("students")
        .query_async(&mut conn)
        .await
        .map_err(crate::redis_pool::StoreError::from)?;
    Ok(prefix.zip(students))
}

/// `student-01` … `student-30`: numbered with as many digits as the largest number needs (at
/// least two), so the rooms sort in order.
pub(super) fn room_names(prefix: &str, students: usize) -> Result<Vec<String>, AppError> {
    let width = students.to_string().len().max(2);
    let names: Vec<String> = (1..=students)
        .map(|n| format!("{prefix}-{n:0width$}"))
        .collect();
    let valid_prefix = !prefix.is_empty()
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid_prefix || names.last().is_some_and(|n| n.len() > 32) {
        return Err(AppError::BadRequest(format!(
            "invalid prefix `{prefix}`: a-z, A-Z, 0-9, - and _, short enough that \
             `{prefix}-{students:0width$}` fits a room name's 32 characters"
        )));
    }
    Ok(names)
}

pub(super) fn valid_room(room: &str) -> Result<(), AppError> {
    let valid = !room.is_empty()
        && room.len() <= 32
        && room
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match valid {
        true => Ok(()),
        false => Err(AppError::BadRequest(format!(
            "invalid room `{room}`: 1-32 characters of a-z, A-Z, 0-9, - and _"
        ))),
    }
}

/// Where students reach the fleet: `--public-url`, else the address this request came to.
fn public_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            h.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c))
        })
        .unwrap_or("localhost");
    format!("http://{host}")
}

fn ticket(base: &str, room: &str, issued: room_tokens::Issued) -> Result<Ticket, AppError> {
    let join_url = join_url(base, room, &issued.token);
    Ok(Ticket {
        room: room.to_owned(),
        qr_svg: qr_svg(&join_url)?,
        join_url,
        token: issued.token,
        code: issued.code,
    })
}

/// The one address the projector shows: the join page, where a slip's code is typed.
pub fn join_page(base: &str) -> String {
    format!("{base}/join")
}

/// The dashboard of `room`, unlocked by `token`, which rides in the fragment.
pub fn join_url(base: &str, room: &str, token: &str) -> String {
    format!("{base}/?room={room}#token={token}")
}

/// `text` as a QR code in SVG, large enough to scan from the back of a room.
pub fn qr_svg(text: &str) -> Result<String, AppError> {
    let code = QrCode::new(text.as_bytes())
        .map_err(|e| AppError::Internal(format!("QR code of a join link: {e}")))?;
    Ok(code
        .render::<svg::Color>()
        .min_dimensions(240, 240)
        .quiet_zone(true)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rooms_are_numbered_so_they_sort_in_order() {
        let names = room_names("student", 3).unwrap();
        assert_eq!(names, ["student-01", "student-02", "student-03"]);
        let names = room_names("s", 120).unwrap();
        assert_eq!((names[0].as_str(), names[119].as_str()), ("s-001", "s-120"));
    }

    #[test]
    fn a_prefix_that_makes_a_bad_room_name_is_refused() {
        assert!(room_names("a b", 3).is_err());
        assert!(room_names("", 3).is_err());
        assert!(room_names(&"x".repeat(30), 3).is_err());
    }

    #[test]
    fn the_token_rides_in_the_fragment() {
        let url = join_url("http://10.0.0.5:8080", "student-01", "room-abc");
        assert_eq!(url, "http://10.0.0.5:8080/?room=student-01#token=room-abc");
    }
}
