//! The lab over HTTP: `GET /lab` shows the room's own lock (its steps and the last error its
//! scripts met), `PUT /admin/lab` submits one and switches the room to tier `custom`; the
//! grading (`POST /admin/lab/grade`) is `grading.rs`'s. A room token does them all in its room.

use axum::extract::State;
use axum::Json;
use oversell_api::settings::SettingsPatch;
use oversell_api::tier::LAB_LOCK;
use serde_json::{json, Value};
use workshop::lab::Shape;

use super::extract::{required_json, Body, Room, RoomAdmin};
use crate::error::AppError;
use crate::keys::Keys;
use crate::lab::{acl, LabLock, LabSource, LabUser, STEP_LIMIT};
use crate::redis_pool::{RedisPool, StoreError};
use crate::state::AppState;

const EXAMPLE: &str = r#"{"acquire": ["return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])"], "release": ["if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"]}"#;

/// `GET /lab`: the room's lock as submitted, and the last error its scripts met.
#[utoipa::path(
    get,
    path = "/lab",
    tag = "lab",
    params(super::openapi::RoomParam),
    responses((status = 200, description = "`{\"room\", \"lock\": LabSource | null, \"last_error\", \"contract\"}`", body = Object))
)]
pub async fn show(
    Room(keys): Room,
    State(state): State<AppState>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.resource.conn().await?;
    let (source, last_error): (Option<String>, Option<String>) = redis::cmd("HMGET")
        .arg(keys.lab())
        .arg("lock")
        .arg("last_error")
        .query_async(&mut conn)
        .await
        .map_err(StoreError::from)?;
    let lock: Option<LabSource> = source.and_then(|s| serde_json::from_str(&s).ok());
    Ok(Json(json!({
        "room": keys.room(),
        "lock": lock,
        "last_error": last_error,
        "contract": "each step is one Lua script run as its own round trip: KEYS[1] the lock, \
                     KEYS[2] the fencing-token counter, ARGV[1] the holder's unique value, \
                     ARGV[2] the lease in ms, ARGV[3] the release channel; an acquire step \
                     answers 1 to go on, 0 or {0, lease_left_ms} when busy, {depth, token} when \
                     held (a token above 0 fences the stock); a release step 1 to go on, 0 to \
                     stop; renew 1 while still ours",
    })))
}

/// `PUT /admin/lab {"acquire": [...], "release": [...], "renew"?}`: the room's own lock,
/// compiled as the room's lock-store user before it is stored, and the room switched to tier
/// `custom`, so every instance sells under it from the reload on.
///
/// The switch is made here, not left to each client: a lock submitted but not sold under is a
/// lock the student never sees at work, and the command line, the dashboard and the lab page
/// each making a second call (`PUT /admin/tier`) could disagree, or stop half-way between the
/// two. One request, one reload: every instance reads the new lock and the tier together.
#[utoipa::path(
    put,
    path = "/admin/lab",
    tag = "lab",
    params(super::openapi::RoomParam),
    request_body = LabSource,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "`{\"room\", \"shape\", \"tier\": \"custom\"}`: the room sells under its own lock", body = Object),
        (status = 409, description = "The fleet already holds its most rooms (`room_limit`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn submit(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Value>, AppError> {
    let source: LabSource = required_json(&body, EXAMPLE)?;
    source.validate().map_err(AppError::BadRequest)?;
    lab_fits(&state)?;
    state.rooms.create(&keys).await?;
    let password = password_of(&state.resource, &keys).await?;
    let user = LabUser::of(&keys, &password);
    acl::prepare(state.lock_store.pool(), &keys, &user).await?;
    let lab = LabLock::new(source, user);
    compile(&state, &lab).await?;
    let stored =
        serde_json::to_string(&lab.source).map_err(|e| AppError::Internal(e.to_string()))?;
    let mut conn = state.resource.conn().await?;
    redis::pipe()
        .atomic()
        .hset(keys.lab(), "lock", stored)
        .hset(keys.lab(), "password", &password)
        .hdel(keys.lab(), "last_error")
        .query_async::<()>(&mut conn)
        .await
        .map_err(StoreError::from)?;
    // The settings' swap tells the fleet to reload the room, the lock stored above included.
    let custom = SettingsPatch {
        tier: Some(LAB_LOCK),
        ..Default::default()
    };
    let Json(settings) = super::admin::apply(&state, &keys, &custom).await?;
    tracing::info!(room = keys.room(), "lab lock submitted");
    Ok(Json(json!({
        "room": keys.room(),
        "shape": shape(&lab),
        "tier": settings.tier,
    })))
}

pub(super) fn shape(lab: &LabLock) -> Shape {
    Shape {
        acquire_steps: lab.acquire.len(),
        release_steps: lab.release.len(),
        renew: lab.renew.is_some(),
        failover: false,
    }
}

/// A lab lock needs a lock store apart from the stock.
pub(super) fn lab_fits(state: &AppState) -> Result<(), AppError> {
    match LAB_LOCK.misfit(state.lock_store.kind(), state.lock_store.beside()) {
        Some(why) => Err(AppError::BadRequest(why)),
        None => Ok(()),
    }
}

/// The room user's password: the one it has, or a new one.
async fn password_of(resource: &RedisPool, keys: &Keys) -> Result<String, AppError> {
    let mut conn = resource.conn().await?;
    let known: Option<String> = redis::cmd("HGET")
        .arg(keys.lab())
        .arg("password")
        .query_async(&mut conn)
        .await
        .map_err(StoreError::from)?;
    Ok(known.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string()))
}

/// Loads every step into the lock store as the room's user: a step that does not compile is
/// refused with Redis's own message, which names the line.
async fn compile(state: &AppState, lab: &LabLock) -> Result<(), AppError> {
    let user = &lab.user;
    let mut conn = state
        .lock_store
        .pool()
        .dedicated_as(&user.name, &user.password, STEP_LIMIT)
        .await?;
    for step in lab.steps() {
        let loaded: redis::RedisResult<String> = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(&step.code)
            .query_async(&mut conn)
            .await;
        match loaded.map_err(StoreError::from) {
            Ok(_) => {}
            Err(StoreError::Failed(err)) => {
                let said = step.said(&err);
                return Err(AppError::BadRequest(format!("{}: {said}", step.name)));
            }
            Err(other) => return Err(other.into()),
        }
    }
    Ok(())
}

/// The error the room's scripts last met, taken (so the next attack sees only its own).
pub(super) async fn take_last_error(
    resource: &RedisPool,
    keys: &Keys,
) -> Result<Option<String>, StoreError> {
    let mut conn = resource.conn().await?;
    let (error, _): (Option<String>, i64) = redis::pipe()
        .atomic()
        .hget(keys.lab(), "last_error")
        .hdel(keys.lab(), "last_error")
        .query_async(&mut conn)
        .await?;
    Ok(error)
}
