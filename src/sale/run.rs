//! A sale as the HTTP API and the server-side burst run it: the room as this instance knows it,
//! whether it is on sale at all (`rooms.rs`), the room's lock, the sale in a task of its own,
//! and one metrics record as it ends.

use std::time::Instant;

use super::{sell, Order, SaleCx, Sold};
use crate::error::AppError;
use crate::keys::Keys;
use crate::metrics::{Outcome, SaleRecord};
use crate::rooms::sale_error;
use crate::state::AppState;

/// Runs one sale under the room's current tier and counts it in the metrics.
pub async fn run_sale(state: &AppState, keys: Keys, order: Order) -> Result<Sold, AppError> {
    let started = Instant::now();
    let (result, met) = sell_in_task(state, &keys, order).await;
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
        Err(AppError::LockLost { .. }) => Outcome::LockLost,
        Err(AppError::RedisUnavailable(_) | AppError::StateLost) => Outcome::Unavailable,
        Err(_) => Outcome::Failed,
    };
    // No tier: the room could not be read, and the sale never began.
    if let Some(tier) = met.tier {
        state.metrics.sale(tier, outcome, started.elapsed(), &met);
    }
    result
}

/// The sale in a task of its own, so that a buyer who hangs up mid-sale cannot cancel it
/// between acquire and release and leave the lock behind: its answer, and what it met.
async fn sell_in_task(
    state: &AppState,
    keys: &Keys,
    order: Order,
) -> (Result<Sold, AppError>, SaleRecord) {
    let (state, keys) = (state.clone(), keys.clone());
    let task = tokio::spawn(async move {
        let mut met = SaleRecord::default();
        let result = match sell_once(&state, &keys, &order, &mut met).await {
            // Refused before its read because the room was reset since the sale began, by
            // this instance's reckoning: the reset may have come first and this instance heard
            // of it late (its reload message lost). Nothing was read or written, so the sale
            // starts once more from the room as it is now. Refused after its read, it cannot:
            // what it read is gone.
            Err(AppError::RoomReset { read: false }) => match state.fleet.reload(&keys).await {
                Ok(_) => sell_once(&state, &keys, &order, &mut met).await,
                Err(err) => Err(err.into()),
            },
            other => other,
        };
        (result, met)
    });
    task.await.unwrap_or_else(|e| {
        let failed = AppError::Internal(format!("sale task failed: {e}"));
        (Err(failed), SaleRecord::default())
    })
}

/// One sale in the room as this instance knows it: on sale, under
/// its tier's lock (or the lab's own).
async fn sell_once(
    state: &AppState,
    keys: &Keys,
    order: &Order,
    met: &mut SaleRecord,
) -> Result<Sold, AppError> {
    let room = state.fleet.room(keys).await?;
    met.tier = Some(room.settings.tier);
    if let Some(refused) = state.rooms.not_on_sale(keys, room.stored).await? {
        return Err(refused);
    }
    let lock = state.locks.in_room(&room, &state.lock_store);
    let cx = SaleCx {
        resource: &state.resource,
        keys,
        settings: room.settings,
        instance: &state.instance,
        owner: state.next_owner(),
        lock: lock.as_ref(),
        signals: &state.signals,
        metrics: &state.metrics,
        generation: &room.generation,
        began: Instant::now(),
    };
    sell(&cx, order, met).await
}
