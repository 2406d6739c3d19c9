//! Admin endpoints. Those on a room take the admin token or that room's token
//! ([`RoomAdmin`]); those on the whole fleet (an instance's crash or freeze) the admin token
//! only ([`Admin`]).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use oversell_api::settings::{Settings, SettingsPatch};
use oversell_api::tier::Tier;
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::{required_json, Admin, Body, Path, RoomAdmin};
use crate::control::Control;
use crate::error::AppError;
use crate::faults::{self, Fault, FaultKind};
use crate::ground_truth;
use crate::keys::Keys;
use crate::state::AppState;

pub const MAX_STOCK: i64 = 1_000_000;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ResetBody {
    /// Items on sale, 0–1000000.
    #[schema(minimum = 0, maximum = 1000000)]
    stock: i64,
}

/// `POST /admin/reset {"stock": N}`: clears ledger, locks and counters of the room.
#[utoipa::path(
    post,
    path = "/admin/reset",
    tag = "admin",
    params(super::openapi::RoomParam),
    request_body = ResetBody,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "`{\"room\", \"stock\"}`: the room is on sale with this stock", body = Object),
        (status = 409, description = "The fleet already holds its most rooms (`room_limit`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn reset(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Value>, AppError> {
    let ResetBody { stock } = required_json(&body, r#"{"stock": 100}"#)?;
    if !(0..=MAX_STOCK).contains(&stock) {
        return Err(AppError::BadRequest(format!(
            "stock must be 0..={MAX_STOCK}"
        )));
    }
    reset_room(&state, &keys, stock).await?;
    Ok(Json(json!({ "room": keys.room(), "stock": stock })))
}

/// Creates the room if needed (within --max-rooms) and puts `stock` on sale in it: ledger,
/// locks and counters cleared, on every instance.
pub(super) async fn reset_room(state: &AppState, keys: &Keys, stock: i64) -> Result<(), AppError> {
    // The room is created with its stock and the settings every instance will read, and given
    // its time to live.
    state.rooms.create(keys).await?;
    ground_truth::reset(&state.resource, &state.lock_store, keys, stock).await?;
    state.fleet.seed(keys).await?;
    // Every instance reloads the room, with its new reset generation: a sale that began
    // before the reset cannot write after it.
    state.fleet.broadcast(&Control::reload(keys.room())).await?;
    state.rooms.touch(keys).await?;
    tracing::info!(room = keys.room(), stock, "room reset");
    Ok(())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TierBody {
    /// A tier's id, as `GET /tiers` lists them.
    #[schema(value_type = Tier)]
    tier: String,
}

/// `PUT /admin/tier {"tier": "<id>"}`: switches the room's tier on every instance.
#[utoipa::path(
    put,
    path = "/admin/tier",
    tag = "admin",
    params(super::openapi::RoomParam),
    request_body = TierBody,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The room's settings now", body = Settings),
        (status = 409, description = "The fleet already holds its most rooms (`room_limit`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn tier(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Settings>, AppError> {
    let TierBody { tier } = required_json(&body, r#"{"tier": "lua-release"}"#)?;
    let tier: Tier = tier.parse().map_err(AppError::BadRequest)?;
    let patch = SettingsPatch {
        tier: Some(tier),
        ..Default::default()
    };
    apply(&state, &keys, &patch).await
}

/// `PUT /admin/config {"ttl_ms", "business_ms", "wait", "wait_deadline_ms", "tier"}`, any subset.
#[utoipa::path(
    put,
    path = "/admin/config",
    tag = "admin",
    params(super::openapi::RoomParam),
    request_body = SettingsPatch,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "The room's settings now", body = Settings),
        (status = 409, description = "The fleet already holds its most rooms (`room_limit`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn config(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Settings>, AppError> {
    let patch: SettingsPatch = required_json(&body, r#"{"ttl_ms": 500, "business_ms": 50}"#)?;
    apply(&state, &keys, &patch).await
}

/// Patches the room's settings on every instance (the lab's submission switches its tier here).
pub(super) async fn apply(
    state: &AppState,
    keys: &Keys,
    patch: &SettingsPatch,
) -> Result<Json<Settings>, AppError> {
    // Validated before the room is created: a bad patch must not take a room slot.
    let room = state.fleet.room(keys).await?;
    let settings = room.settings.patched(patch).map_err(AppError::BadRequest)?;
    if let Some(why) = settings
        .tier
        .misfit(state.lock_store.kind(), state.lock_store.beside())
    {
        return Err(AppError::BadRequest(why));
    }
    state.rooms.create(keys).await?;
    let settings = state
        .fleet
        .update(keys, patch)
        .await?
        .map_err(AppError::BadRequest)?;
    state.rooms.touch(keys).await?;
    tracing::info!(room = keys.room(), ?settings, "settings changed");
    Ok(Json(settings))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct FaultBody {
    /// The fault, as the README's fault table names it.
    #[schema(value_type = FaultKind)]
    kind: String,
    /// Its duration, 1–120000 ms, for the faults that last.
    ms: Option<u64>,
    /// The instance it strikes [default: the next holder anywhere].
    instance: Option<String>,
    /// How many Redlock masters `node-down` / `clock-jump` / `node-slow` strike.
    nodes: Option<u32>,
    /// The members `partition` cuts off.
    isolate: Option<Vec<String>>,
}

pub const MAX_FAULT_MS: u64 = 120_000;

/// `POST /admin/faults {"kind", "ms"?, "instance"?, "nodes"?}`: arms a one-shot fault for the
/// room (`token-per-instance`, a lock variant, stays armed until cleared or reset). A fault
/// that strikes beyond the room (an instance, the lock store) takes the admin token.
#[utoipa::path(
    post,
    path = "/admin/faults",
    tag = "admin",
    params(super::openapi::RoomParam),
    request_body = FaultBody,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "`{\"room\", \"armed\": Fault}`", body = Object),
        (status = 404, description = "No live instance of that id", body = super::openapi::ErrorBody),
        (status = 409, description = "The fleet already holds its most rooms (`room_limit`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn arm_fault(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Value>, AppError> {
    let keys = &caller.keys;
    let body: FaultBody = required_json(&body, r#"{"kind": "freeze", "ms": 2000}"#)?;
    let kind: FaultKind = body.kind.parse().map_err(AppError::BadRequest)?;
    if !kind.strikes_room_only() {
        caller.only_admin_may(&format!("the fault {kind}"))?;
    }
    let ms = body.ms.unwrap_or(0);
    if kind.takes_ms() && !(1..=MAX_FAULT_MS).contains(&ms) {
        return Err(AppError::BadRequest(format!(
            "{kind} needs \"ms\" in 1..={MAX_FAULT_MS}"
        )));
    }
    if let Some(needed) = kind.needs_lock_store() {
        let here = state.lock_store.kind();
        if !kind.fits_lock_store(here) {
            return Err(AppError::BadRequest(format!(
                "{kind} strikes the lock store and needs `--lock-store {needed}`; this fleet's \
                 lock store is `{here}` (start it with: oversell up --lock-store {needed})"
            )));
        }
    }
    let zookeeper = state.lock_store.zookeeper();
    if kind.needs_zookeeper() && zookeeper.is_none() {
        return Err(AppError::BadRequest(format!(
            "{kind} strikes ZooKeeper, and this fleet has none (start it with: oversell up \
             --zookeeper --zookeeper-nodes 3)"
        )));
    }
    let (servers, what) = match zookeeper.filter(|_| kind.needs_zookeeper()) {
        Some(zk) => (zk.connect_string().split(',').count(), "ZooKeeper servers"),
        None => (state.lock_store.quorum().len(), "masters"),
    };
    let nodes = match (body.nodes, kind.takes_nodes()) {
        (None, _) => 0,
        (Some(n), true) if (1..=servers as u32).contains(&n) => n,
        (Some(n), true) => {
            return Err(AppError::BadRequest(format!(
                "{kind} strikes \"nodes\" in 1..={servers} (this fleet has {servers} \
                 {what}); got {n}"
            )))
        }
        (Some(_), false) => {
            return Err(AppError::BadRequest(format!(
                "{kind} takes no \"nodes\"; only node-down, clock-jump, node-slow, \
                 validity-unchecked and zk-node-down do"
            )))
        }
    };
    if let Some(instance) = &body.instance {
        known_instance(&state, instance).await?;
    }
    let isolate = match (body.isolate, kind) {
        (Some(isolate), FaultKind::Partition) => isolate,
        (None, FaultKind::Partition) => {
            return Err(AppError::BadRequest(
                "partition needs \"isolate\": the members to cut off, e.g. [\"lock-primary\", \
                 \"app1\"] or [\"holder\"]"
                    .into(),
            ))
        }
        (Some(_), _) => {
            return Err(AppError::BadRequest(format!(
                "{kind} takes no \"isolate\"; only partition does"
            )))
        }
        (None, _) => vec![],
    };
    if kind == FaultKind::Partition {
        crate::routes::partition::check_armed(&isolate, ms)?;
    }
    let fault = Fault {
        kind,
        ms: if kind.takes_ms() { ms } else { 0 },
        instance: body.instance,
        nodes,
        isolate: isolate
            .into_iter()
            .map(Into::into)
            .collect::<Vec<_>>()
            .into(),
    };
    state.rooms.create(keys).await?;
    faults::arm(&state.resource, keys, &fault).await?;
    state.rooms.touch(keys).await?;
    state.fleet.broadcast(&Control::reload(keys.room())).await?;
    tracing::info!(room = keys.room(), ?fault, "fault armed");
    Ok(Json(json!({ "room": keys.room(), "armed": fault })))
}

/// `DELETE /admin/faults`: disarms every fault of the room.
#[utoipa::path(
    delete,
    path = "/admin/faults",
    tag = "admin",
    params(super::openapi::RoomParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses((status = 200, description = "`{\"room\", \"armed\": []}`", body = Object))
)]
pub async fn clear_faults(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
) -> Result<Json<Value>, AppError> {
    faults::clear(&state.resource, &keys).await?;
    state.fleet.broadcast(&Control::reload(keys.room())).await?;
    Ok(Json(json!({ "room": keys.room(), "armed": [] })))
}

async fn known_instance(state: &AppState, id: &str) -> Result<(), AppError> {
    let live = state.fleet.live_instances().await?;
    if live.iter().any(|(i, _)| i == id) {
        return Ok(());
    }
    let ids: Vec<&str> = live.iter().map(|(i, _)| i.as_str()).collect();
    Err(AppError::NotFound(format!(
        "instance `{id}` (live instances: {})",
        ids.join(", ")
    )))
}

/// `POST /admin/instances/{id}/crash`: the instance aborts (its supervisor restarts it).
#[utoipa::path(
    post,
    path = "/admin/instances/{id}/crash",
    tag = "admin",
    params(("id" = String, Path, description = "A live instance's id, as `GET /instances` lists them")),
    security(("admin_token" = [])),
    responses(
        (status = 202, description = "`{\"instance\", \"action\": \"crash\"}`: the instance is told", body = Object),
        (status = 404, description = "No live instance of that id", body = super::openapi::ErrorBody),
    )
)]
pub async fn crash(
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    known_instance(&state, &id).await?;
    let message = Control::Crash {
        instance: id.clone(),
    };
    state.fleet.broadcast(&message).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "instance": id, "action": "crash" })),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct FreezeBody {
    /// How long the process stops, 1–120000 ms.
    #[schema(minimum = 1, maximum = 120000)]
    ms: u64,
}

/// `POST /admin/instances/{id}/freeze {"ms": N}`: the whole process stops for N ms.
#[utoipa::path(
    post,
    path = "/admin/instances/{id}/freeze",
    tag = "admin",
    params(("id" = String, Path, description = "A live instance's id, as `GET /instances` lists them")),
    request_body = FreezeBody,
    security(("admin_token" = [])),
    responses(
        (status = 202, description = "`{\"instance\", \"action\": \"freeze\", \"ms\"}`: the instance is told", body = Object),
        (status = 404, description = "No live instance of that id", body = super::openapi::ErrorBody),
    )
)]
pub async fn freeze(
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Body(body): Body,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let FreezeBody { ms } = required_json(&body, r#"{"ms": 2000}"#)?;
    if !(1..=MAX_FAULT_MS).contains(&ms) {
        return Err(AppError::BadRequest(format!(
            "ms must be 1..={MAX_FAULT_MS}"
        )));
    }
    known_instance(&state, &id).await?;
    state
        .fleet
        .broadcast(&Control::Freeze {
            instance: id.clone(),
            ms,
        })
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "instance": id, "action": "freeze", "ms": ms })),
    ))
}
