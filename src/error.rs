//! One error type for every route, mapped to a status code and a JSON body
//! `{"error": "<code>", "message": "<human text>"}`.
//!
//! Client mistakes keep their 4xx and are not logged as errors; internal failures return a
//! generic message while the detail goes to the log.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::redis_pool::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    BadRequest(String),
    /// A field of the body that is not as the API takes it: the body names the field.
    #[error("{message}")]
    BadField {
        field: &'static str,
        message: String,
    },
    #[error("missing or wrong token: send `Authorization: Bearer <admin or room token>`")]
    Unauthorized,
    /// A room token used outside its room, or on what acts on the whole fleet.
    #[error("{0}")]
    Forbidden(String),
    #[error("no route for {0}")]
    NotFound(String),
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("the request body is larger than the {} KiB the API accepts", limit / 1024)]
    PayloadTooLarge { limit: usize },
    #[error("sold out: {stock_left} left, {requested} requested")]
    SoldOut { stock_left: i64, requested: u32 },
    #[error(
        "this room has no stock: an admin puts items on sale with POST /admin/reset \
         {{\"stock\": N}} (a room idle for longer than its time to live is gone)"
    )]
    NotStocked,
    #[error(
        "this room's stock and orders were lost (the resource store restarted empty): the stock \
         is unknown, so nothing is sold until an admin resets the room"
    )]
    StateLost,
    #[error(
        "the fleet already holds {max} rooms (--max-rooms): use an existing room, or wait \
             until an idle one expires"
    )]
    RoomLimit { max: usize },
    #[error(
        "a class of {rooms} rooms does not fit: the fleet holds at most {max} rooms \
         (--max-rooms / MAX_ROOMS) and {others} others are in use; nothing was changed. Make a \
         smaller class, or start the fleet with a larger --max-rooms"
    )]
    ClassRoomLimit {
        rooms: usize,
        others: usize,
        max: usize,
    },
    #[error(
        "this instance already serves {max} event streams (--max-event-streams); retry \
             later or close a dashboard"
    )]
    TooManyStreams { max: usize },
    /// This instance's own per-client limit (`client_limit`), as nginx's in front says it.
    #[error(
        "this address sends more requests than its fair share of this instance (per-client \
         limits: --client-rate, --client-burst); retry after {retry_after_secs} s"
    )]
    TooManyRequests { retry_after_secs: u64 },
    /// Join codes tried past their limit (`room_tokens::join`), per address or for the fleet.
    #[error(
        "too many join codes tried from this address or on the whole fleet; wait \
         {retry_after_secs} s and type the code on your slip again"
    )]
    JoinLimited { retry_after_secs: u64 },
    /// A join code no room has.
    #[error(
        "no room has this code: check it against your slip (its room's token may have been \
         replaced: ask for a new slip)"
    )]
    UnknownCode,
    #[error("could not get the lock within {deadline_ms} ms")]
    LockTimeout { deadline_ms: u64 },
    /// `newer_wrote`: the stock refused this holder's fencing token (a newer holder wrote
    /// first); else the lock was found to be another's (an extend or a re-entry refused).
    #[error(
        "the lock was lost before the write ({}); nothing was sold",
        if *newer_wrote {
            "a newer holder wrote first"
        } else {
            "the lock store no longer counted it this holder's: its lease had run out"
        }
    )]
    LockLost { newer_wrote: bool },
    /// `read`: whether the sale had read the stock (then it cannot be retried: what it read
    /// is gone).
    #[error("an admin reset this room while the sale was under way; nothing was sold")]
    RoomReset { read: bool },
    #[error("the fleet did not answer as expected: {0}")]
    Fleet(String),
    /// The fleet could not be reached at all (nginx or every instance down): not the
    /// request's fault, nor the grader's; try again once the fleet is back.
    #[error("the fleet is down, nothing could be graded: {0}")]
    FleetDown(String),
    #[error(
        "the instance grading this room stopped before the card was ready (crashed or \
         restarting); press again"
    )]
    GradingLost,
    /// A grading that ran past its bound: a stall somewhere in the fleet, said with the step
    /// it was on rather than left running.
    #[error("the grading ran past {limit_s} s and was stopped at `{at}`; press again")]
    GradingTimedOut { limit_s: u64, at: String },
    #[error("the sale's holder died (a holder-dies or worker-dies fault): it wrote nothing and released nothing")]
    HolderDied,
    #[error("the buyer died waiting in line for the lock (a waiter-dies fault): it never came back for its place")]
    WaiterDied,
    #[error("the sale's unlock overtook its acquire (a renewal-outlives-release fault): it left without the lock it then took")]
    AcquireAbandoned,
    /// A lab lock's step failed; the message names the step and why, for the student.
    #[error("the room's own lock failed: {0}")]
    LabLock(String),
    #[error(
        "a scenario is already running in this room (on some instance); wait for it to finish"
    )]
    Busy,
    #[error(
        "this room is already in the grading line (a grading or a search of its own); wait \
         for its answer, then press again"
    )]
    InLine,
    /// The grading line did not reach the room in time: the class's gradings ahead of it.
    #[error("the grading line did not reach this room within {waited_s} s; press again")]
    LineBusy { waited_s: u64 },
    #[error(
        "bursts already running on this instance have the {max} buyers it runs at once; wait \
         for them to finish, or fire fewer buyers"
    )]
    BurstsBusy { max: usize },
    #[error(
        "a burst is already running in room {room} on this instance: one at a time per room; \
         fire the next when it has answered"
    )]
    BurstRunning { room: String },
    /// The class vote is not where this asks it to be (no class, no open round, …); `code`
    /// says which, e.g. `no_open_round`.
    #[error("{message}")]
    Poll { code: &'static str, message: String },
    #[error("redis is unavailable")]
    RedisUnavailable(String),
    #[error("the lock reached {acked} of {wanted} replicas within sync_timeout_ms; not acquired")]
    LockNotReplicated { acked: u32, wanted: u32 },
    #[error(
        "only {answered} of {nodes} lock nodes answered; Redlock needs a majority ({quorum}) \
         to grant the lock"
    )]
    LockNoQuorum {
        answered: usize,
        nodes: usize,
        quorum: usize,
    },
    #[error("ZooKeeper is unavailable (no session, or no quorum): {0}")]
    ZooKeeperUnavailable(String),
    #[error("PostgreSQL is unavailable: {0}")]
    PostgresUnavailable(String),
    #[error("the burst failed in the load generator, its figures are lost: {0}")]
    Burst(String),
    #[error(
        "no answer within {secs} s, the longest a request may take; a sale under way runs on \
         in its own task, so the ledger says whether it sold"
    )]
    RequestTimeout { secs: u64 },
    #[error("internal error")]
    Internal(String),
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) | AppError::BadField { .. } => StatusCode::BAD_REQUEST,
            AppError::Unauthorized => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::NotFound(_) | AppError::UnknownCode => StatusCode::NOT_FOUND,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::SoldOut { .. }
            | AppError::Busy
            | AppError::InLine
            | AppError::BurstsBusy { .. }
            | AppError::BurstRunning { .. }
            | AppError::RoomReset { .. }
            | AppError::NotStocked
            | AppError::Poll { .. }
            | AppError::RoomLimit { .. }
            | AppError::ClassRoomLimit { .. } => StatusCode::CONFLICT,
            AppError::TooManyRequests { .. } | AppError::JoinLimited { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            AppError::Fleet(_) => StatusCode::BAD_GATEWAY,
            AppError::LockTimeout { .. }
            | AppError::LockLost { .. }
            | AppError::RedisUnavailable(_)
            | AppError::LockNotReplicated { .. }
            | AppError::LockNoQuorum { .. }
            | AppError::ZooKeeperUnavailable(_)
            | AppError::PostgresUnavailable(_)
            | AppError::StateLost
            | AppError::TooManyStreams { .. }
            | AppError::HolderDied
            | AppError::WaiterDied
            | AppError::AcquireAbandoned
            | AppError::LabLock(_)
            | AppError::FleetDown(_)
            | AppError::GradingLost
            | AppError::GradingTimedOut { .. }
            | AppError::LineBusy { .. }
            | AppError::RequestTimeout { .. } => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Burst(_) | AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::BadRequest(_) | AppError::BadField { .. } => "bad_request",
            AppError::Unauthorized => "unauthorized",
            AppError::Forbidden(_) => "forbidden",
            AppError::NotFound(_) => "not_found",
            AppError::MethodNotAllowed => "method_not_allowed",
            AppError::PayloadTooLarge { .. } => "payload_too_large",
            AppError::SoldOut { .. } => "sold_out",
            AppError::NotStocked => "not_stocked",
            AppError::StateLost => "state_lost",
            AppError::RoomLimit { .. } | AppError::ClassRoomLimit { .. } => "room_limit",
            AppError::TooManyStreams { .. } => "too_many_streams",
            AppError::TooManyRequests { .. } | AppError::JoinLimited { .. } => "too_many_requests",
            AppError::UnknownCode => "unknown_code",
            AppError::LockTimeout { .. } => "lock_timeout",
            AppError::LockLost { .. } => "lock_lost",
            AppError::RoomReset { .. } => "room_reset",
            AppError::Fleet(_) => "fleet_error",
            AppError::FleetDown(_) => "fleet_down",
            AppError::GradingLost => "grading_lost",
            AppError::GradingTimedOut { .. } => "grading_timed_out",
            AppError::HolderDied => "holder_died",
            AppError::WaiterDied => "waiter_died",
            AppError::AcquireAbandoned => "acquire_abandoned",
            AppError::LabLock(_) => "lab_lock_failed",
            AppError::Busy => "busy",
            AppError::InLine => "in_line",
            AppError::LineBusy { .. } => "line_busy",
            AppError::BurstsBusy { .. } => "bursts_busy",
            AppError::BurstRunning { .. } => "burst_running",
            AppError::Poll { code, .. } => code,
            AppError::RedisUnavailable(_) => "redis_unavailable",
            AppError::LockNotReplicated { .. } => "lock_not_replicated",
            AppError::LockNoQuorum { .. } => "lock_no_quorum",
            AppError::ZooKeeperUnavailable(_) => "zookeeper_unavailable",
            AppError::PostgresUnavailable(_) => "postgres_unavailable",
            AppError::Burst(_) => "burst_failed",
            AppError::RequestTimeout { .. } => "request_timeout",
            AppError::Internal(_) => "internal",
        }
    }
}

/// The error code of the sale scripts when the room's stock key does not exist.
const NO_STOCK: &str = "NOSTOCK";
/// The error code of `sale/enter.lua` when the room was reset since the sale began.
const RESET: &str = "RESET";

impl From<StoreError> for AppError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Unavailable(detail) => AppError::RedisUnavailable(detail),
            StoreError::NotReplicated { acked, wanted } => {
                AppError::LockNotReplicated { acked, wanted }
            }
            StoreError::ZooKeeper(why) => AppError::ZooKeeperUnavailable(why),
            StoreError::Postgres(why) => AppError::PostgresUnavailable(why),
            StoreError::NoQuorum {
                answered,
                nodes,
                quorum,
            } => AppError::LockNoQuorum {
                answered,
                nodes,
                quorum,
            },
            // The sale scripts refuse to read a stock key that does not exist.
            StoreError::Failed(err) if err.code() == Some(NO_STOCK) => AppError::NotStocked,
            // Refused before its read: the sale may start again in the room as it is now.
            StoreError::Failed(err) if err.code() == Some(RESET) => {
                AppError::RoomReset { read: false }
            }
            StoreError::Failed(err) => AppError::Internal(err.to_string()),
            StoreError::Lab(why) => AppError::LabLock(why),
        }
    }
}

impl AppError {
    /// The answer's JSON body: `{"error": code, "message": text}`.
    pub fn body(&self) -> serde_json::Value {
        let mut body = json!({ "error": self.code(), "message": self.to_string() });
        if let AppError::SoldOut { stock_left, .. } = self {
            body["stock_left"] = json!(stock_left);
        }
        if let AppError::BadField { field, .. } = self {
            body["field"] = json!(field);
        }
        body
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match &self {
            AppError::Internal(detail) => tracing::error!(%detail, "internal error"),
            AppError::Burst(detail) => tracing::error!(%detail, "burst failed"),
            AppError::RedisUnavailable(detail) => tracing::warn!(%detail, "redis unavailable"),
            _ => {}
        }
        let mut response = (self.status(), Json(self.body())).into_response();
        let retry_after = match &self {
            AppError::TooManyRequests { retry_after_secs }
            | AppError::JoinLimited { retry_after_secs } => {
                Some(HeaderValue::from(*retry_after_secs))
            }
            _ if self.status() == StatusCode::SERVICE_UNAVAILABLE => {
                Some(HeaderValue::from_static("1"))
            }
            _ => None,
        };
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, seconds);
        }
        response
    }
}
