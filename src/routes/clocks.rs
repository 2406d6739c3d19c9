//! `GET /admin/clocks`: each store's clock beside the instance's own, read now, for the bound a
//! run's history states between its clocks (`run.clocks.bound_us`). The recorder calls it at a
//! run's start and end, on its own clock around the call: the store's `TIME` lies between the
//! call and its answer, so the client's clock and the store's are apart by at most the offset
//! seen plus half that round trip. The instance's clock is read just before and just after each
//! store's `TIME`, so the same bound is known between the instance and each store.
//!
//! Read-only and cheap (one `TIME` per store), so a room's own token may ask it.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use super::extract::RoomAdmin;
use crate::error::AppError;
use crate::lock_store::LockStoreKind;
use crate::redis_pool::RedisPool;
use crate::state::AppState;

/// One store's clock, read between two readings of the instance's.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StoreClock {
    /// `resource` (the stock, sections, the lock timeline) or `lock` (a lock store of its own).
    store: &'static str,
    /// The instance's clock just before the `TIME` call (µs since the Unix epoch).
    instance_before_us: i64,
    /// The store's `TIME` (µs since the Unix epoch, on the store's clock).
    store_us: i64,
    /// The instance's clock just after the answer.
    instance_after_us: i64,
}

/// Every Redis store's clock this instance reaches, beside its own.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClocksView {
    instance: String,
    /// The resource store first; a lock store of its own (`single`, `sentinel`, the first
    /// Redlock master) after it. A shared lock store is the resource store: listed once.
    stores: Vec<StoreClock>,
}

/// `GET /admin/clocks`: each store's `TIME`, between two readings of the instance's clock.
#[utoipa::path(
    get,
    path = "/admin/clocks",
    tag = "observe",
    params(super::openapi::RoomParam),
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "`{\"instance\", \"stores\": [{\"store\", \"instance_before_us\", \"store_us\", \"instance_after_us\"}]}`: each store's clock between two readings of the instance's, µs since the Unix epoch", body = ClocksView),
        (status = 503, description = "A store did not answer", body = super::openapi::ErrorBody),
    )
)]
pub async fn clocks(
    _room: RoomAdmin,
    State(state): State<AppState>,
) -> Result<Json<ClocksView>, AppError> {
    let mut stores = vec![read(&state.resource, "resource").await?];
    let own_redis = matches!(
        state.lock_store.kind(),
        LockStoreKind::Single | LockStoreKind::Sentinel | LockStoreKind::Redlock
    );
    if own_redis {
        stores.push(read(state.lock_store.pool(), "lock").await?);
    }
    Ok(Json(ClocksView {
        instance: state.instance.clone(),
        stores,
    }))
}

async fn read(pool: &RedisPool, store: &'static str) -> Result<StoreClock, AppError> {
    let mut conn = pool.conn().await?;
    let instance_before_us = now_us();
    let (secs, micros): (i64, i64) = redis::cmd("TIME")
        .query_async(&mut conn)
        .await
        .map_err(|e| AppError::RedisUnavailable(format!("the {store} store's TIME: {e}")))?;
    let instance_after_us = now_us();
    Ok(StoreClock {
        store,
        instance_before_us,
        store_us: secs * 1_000_000 + micros,
        instance_after_us,
    })
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}
