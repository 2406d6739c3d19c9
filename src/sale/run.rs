//! A sale as the HTTP API and the server-side burst run it: the room's current settings and
//! faults, whether it is on sale at all (`rooms.rs`), the room's lock, the sale in a task of
//! its own, and the metrics.

use std::time::Instant;

use super::{sell, Order, SaleCx, Sold};
use crate::error::AppError;
use crate::fleet_sync::RoomConfig;
use crate::keys::Keys;
use crate::metrics::Outcome;
use crate::rooms::sale_error;
use crate::state::AppState;

/// Runs one sale under the room's current tier and counts it in the metrics.
pub async fn run_sale(state: &AppState, keys: Keys, order: Order) -> Result<Sold, AppError> {
    let room = state.fleet.room(&keys).await?;
    let settings = room.settings;
    let started = Instant::now();
    let result = match state.rooms.not_on_sale(&keys, room.stored).await {
        Ok(None) => sell_in_task(state, &keys, room, order).await,
        Ok(Some(err)) => Err(err),
        Err(err) => Err(err.into()),
    };
    // Refused after its read for a reset: the next sale starts from the room as it is now
    // (this instance may have heard of the reset late, its reload message lost).
    if let Err(AppError::RoomReset { read: true }) = result {
        state.fleet.reload(&keys).await?;
    }
    // The scripts refuse a missing stock; whether it expired or was lost, the room knows.
    let result = match result {
        Err(AppError::NotStocked) => {
            let status = state.rooms.missing_stock(&keys).await?;
            Err(sale_error(status).unwrap_or(AppError::NotStocked))
        }
        other => other,
    };
    let outcome = match &result {
        Ok(_) => Outcome::Sold,
        Err(AppError::SoldOut { .. }) => Outcome::SoldOut,
        Err(AppError::LockTimeout { .. }) => Outcome::LockTimeout,
        Err(AppError::LockLost) => Outcome::LockLost,
        Err(AppError::RedisUnavailable(_) | AppError::StateLost) => Outcome::Unavailable,
        Err(_) => Outcome::Failed,
    };
    state
        .metrics
        .request(settings.tier, outcome, started.elapsed());
    result
}

async fn sell_in_task(
    state: &AppState,
    keys: &Keys,
    room: RoomConfig,
    order: Order,
) -> Result<Sold, AppError> {
    let keys = keys.clone();
    // The sale runs in its own task so that a buyer who hangs up mid-sale cannot cancel it
    // between acquire and release and leave the lock behind.
    let state = state.clone();
    tokio::spawn(async move {
        match sell_once(&state, &keys, room, &order).await {
            // Refused before its read because the room was reset since the sale began, by
            // this instance's reckoning: the reset may have come first and this instance heard
            // of it late (its reload message lost). Nothing was read or written, so the sale
            // starts once more from the room as it is now. Refused after its read, it cannot:
            // what it read is gone.
            Err(AppError::RoomReset { read: false }) => {
                let room = state.fleet.reload(&keys).await?;
                sell_once(&state, &keys, room, &order).await
            }
            other => other,
        }
    })
    .await
    .unwrap_or_else(|e| Err(AppError::Internal(format!("sale task failed: {e}"))))
}

async fn sell_once(
    state: &AppState,
    keys: &Keys,
    room: RoomConfig,
    order: &Order,
) -> Result<Sold, AppError> {
    let lock = state.locks.in_room(room.settings.tier, room.lab.as_deref());
    let cx = SaleCx {
        resource: &state.resource,
        store: &state.lock_store,
        keys,
        settings: room.settings,
        instance: &state.instance,
        owner: state.next_owner(),
        lock: lock.as_deref(),
        signals: &state.signals,
        metrics: &state.metrics,
        faults: room.faults,
        store_fault_pending: room.store_fault_pending,
        generation: room.generation,
        began: std::time::Instant::now(),
    };
    sell(&cx, order).await
}
