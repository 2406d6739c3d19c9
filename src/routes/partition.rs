//! `POST /admin/partition {"isolate": [...], "ms": N}` and `DELETE /admin/partition`: the
//! network partition of a fleet started with `oversell up --network netns` (see
//! `crate::member::cut`). Admin only: a partition cuts every room's lock store.

use axum::extract::State;
use axum::Json;
use oversell_api::fault::{HOLDER, LOCK_PRIMARY};
use oversell_api::PartitionRequest;
use serde_json::{json, Value};

use super::extract::{required_json, Body, RoomAdmin};
use crate::error::AppError;
use crate::ground_truth::record;
use crate::lock_store::node_faults::primary_ip;
use crate::member::cut::{self, CutError};
use crate::member::network::Network;
use crate::state::AppState;

const EXAMPLE: &str = r#"{"isolate": ["lock1", "app1"], "ms": 8000}"#;

/// Cuts the named members off from the rest of the network, both ways, for `ms`.
#[utoipa::path(
    post,
    path = "/admin/partition",
    tag = "faults",
    params(super::openapi::RoomParam),
    request_body = PartitionRequest,
    security(("admin_token" = [])),
    responses((status = 200, description = "`{\"partition\": PartitionView}`: the cut in force", body = Object))
)]
pub async fn cut(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Value>, AppError> {
    caller.only_admin_may("a network partition")?;
    let mut request: PartitionRequest = required_json(&body, EXAMPLE)?;
    let (network, links) = network()?;
    if request.isolate.iter().any(|id| id == HOLDER) {
        return Err(AppError::BadRequest(format!(
            "`{HOLDER}` names the instance of the holder a partition fault strikes: arm it with \
             POST /admin/faults {{\"kind\": \"partition\", \"isolate\": [\"{HOLDER}\"], \
             \"ms\": 5000}}"
        )));
    }
    // `lock-primary`: the lock store's primary as this instance reaches it now.
    let primary = match request.isolate.iter().any(|id| id == LOCK_PRIMARY) {
        true => primary_ip(state.lock_store.pool()).await,
        false => None,
    };
    request.isolate =
        cut::resolve(&network, &request.isolate, &state.instance, primary).map_err(refused)?;
    let view = cut::partition(&network, links.as_ref(), &state.resource, &request)
        .await
        .map_err(refused)?;
    let (isolate, ms) = (view.isolate.join(","), view.ms.to_string());
    let fields = [("isolate", isolate.as_str()), ("ms", ms.as_str())];
    mark(&state, &caller, "partition", &fields).await;
    tracing::info!(?view, "network partition");
    Ok(Json(json!({ "partition": view })))
}

/// Heals the partition in force (a no-op without one).
#[utoipa::path(
    delete,
    path = "/admin/partition",
    tag = "faults",
    params(super::openapi::RoomParam),
    security(("admin_token" = [])),
    responses((status = 200, description = "`{\"healed\": true}`", body = Object))
)]
pub async fn heal(
    caller: RoomAdmin,
    State(state): State<AppState>,
) -> Result<Json<Value>, AppError> {
    caller.only_admin_may("healing a network partition")?;
    let (network, links) = network()?;
    cut::heal(&network, links.as_ref(), &state.resource)
        .await
        .map_err(refused)?;
    mark(&state, &caller, "heal", &[]).await;
    Ok(Json(json!({ "healed": true })))
}

/// Checks a `partition` fault as `POST /admin/faults` arms it.
pub fn check_armed(isolate: &[String], ms: u64) -> Result<(), AppError> {
    cut::check_armed(&network()?.0, isolate, ms).map_err(refused)
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// Replicas a primary must reach to accept writes: 0 or 1.
    #[schema(maximum = 1)]
    min_replicas: u32,
}

/// `PUT /admin/lock-store {"min_replicas": N}`: Redis' answer to split brain on a Sentinel
/// store: a primary that cannot reach `N` replicas refuses writes (`min-replicas-to-write`).
#[utoipa::path(
    put,
    path = "/admin/lock-store",
    tag = "faults",
    params(super::openapi::RoomParam),
    request_body = StoreConfig,
    security(("admin_token" = [])),
    responses((status = 200, description = "`{\"min_replicas\", \"max_lag_s\", \"nodes\"}`", body = Object))
)]
pub async fn configure_store(
    caller: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<Value>, AppError> {
    caller.only_admin_may("configuring the lock store")?;
    let config: StoreConfig = required_json(&body, r#"{"min_replicas": 1}"#)?;
    let kind = state.lock_store.kind();
    if kind != crate::lock_store::LockStoreKind::Sentinel {
        return Err(AppError::BadRequest(format!(
            "min_replicas is a setting of a primary with replicas: it needs `--lock-store \
             sentinel` (this fleet's lock store is `{kind}`)"
        )));
    }
    if config.min_replicas > 1 {
        return Err(AppError::BadRequest(format!(
            "min_replicas must be 0 or 1 (the Sentinel store has one replica); got {}",
            config.min_replicas
        )));
    }
    let nodes = state
        .lock_store
        .set_min_replicas(config.min_replicas)
        .await?;
    Ok(Json(json!({
        "min_replicas": config.min_replicas,
        "max_lag_s": crate::lock_store::MIN_REPLICAS_MAX_LAG_S,
        "nodes": nodes,
    })))
}

/// The fleet's own network (namespaces, or compose's containers) and where its drops go.
fn network() -> Result<(Network, Box<dyn cut::Links>), AppError> {
    crate::member::fleet_network().ok_or_else(|| refused(CutError::NoNetwork))
}

fn refused(err: CutError) -> AppError {
    match err {
        CutError::NoNetwork | CutError::Invalid(_) => AppError::BadRequest(err.to_string()),
        CutError::Nft(_) => AppError::Internal(err.to_string()),
    }
}

/// Marks the cut or the heal on the room's timeline (the room the request named).
async fn mark(state: &AppState, caller: &RoomAdmin, kind: &str, fields: &[(&str, &str)]) {
    let mut all = vec![("instance", state.instance.as_str())];
    all.extend_from_slice(fields);
    if let Err(err) = record::network(&state.resource, &caller.keys, kind, &all).await {
        tracing::warn!(%err, "{kind} not marked on the timeline");
    }
}
