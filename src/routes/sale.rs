//! `POST /sale`: one buyer buys `qty` items under the room's current tier.

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use super::extract::{json_body, Room};
use crate::error::AppError;
use crate::keys::Keys;
use crate::metrics::Outcome;
use crate::sale::{self, Order, SaleCx, Sold};
use crate::state::AppState;

pub const MAX_QTY: u32 = 10;
const MAX_BUYER_LEN: usize = 64;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaleBody {
    buyer: Option<String>,
    qty: Option<u32>,
}

fn parse_order(body: &[u8]) -> Result<Order, AppError> {
    let body: SaleBody = json_body(body)?.unwrap_or_default();
    let qty = body.qty.unwrap_or(1);
    if !(1..=MAX_QTY).contains(&qty) {
        return Err(AppError::BadRequest(format!(
            "qty must be 1..={MAX_QTY}, got {qty}"
        )));
    }
    let buyer = body.buyer.unwrap_or_else(|| "anonymous".to_owned());
    if buyer.is_empty() || buyer.len() > MAX_BUYER_LEN {
        return Err(AppError::BadRequest(format!(
            "buyer must be 1..={MAX_BUYER_LEN} bytes"
        )));
    }
    Ok(Order { buyer, qty })
}

#[tracing::instrument(skip_all, fields(room = keys.room(), instance = %state.instance))]
pub async fn sale(
    State(state): State<AppState>,
    Room(keys): Room,
    body: Bytes,
) -> Result<Json<Sold>, AppError> {
    let order = parse_order(&body)?;
    run_sale(&state, keys, order).await.map(Json)
}

/// Runs one sale under the room's current tier and counts it in the metrics.
pub async fn run_sale(state: &AppState, keys: Keys, order: Order) -> Result<Sold, AppError> {
    let room = state.fleet.room(&keys).await?;
    let settings = room.settings;
    let started = Instant::now();
    let result = match not_on_sale(state, &keys, room.stored).await {
        Ok(None) => sell(state, &keys, room, order).await,
        Ok(Some(err)) | Err(err) => Err(err),
    };
    // The scripts refuse a missing stock; whether it expired or was lost, the room knows.
    let result = match result {
        Err(AppError::NotStocked) => Err(state
            .rooms
            .missing_stock(&keys)
            .await?
            .sale_error()
            .unwrap_or(AppError::NotStocked)),
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

/// Why a sale cannot happen in a room nobody created (or that expired), before any lock is
/// taken for it; `None` when the room is on sale. A created room costs nothing here: its
/// missing stock, if it goes missing, is found by the sale scripts.
async fn not_on_sale(
    state: &AppState,
    keys: &Keys,
    stored: bool,
) -> Result<Option<AppError>, AppError> {
    if !stored {
        if let Some(err) = state.rooms.status(keys).await?.sale_error() {
            return Ok(Some(err));
        }
    }
    state.rooms.touch_if_due(keys);
    Ok(None)
}

async fn sell(
    state: &AppState,
    keys: &Keys,
    room: crate::fleet::RoomConfig,
    order: Order,
) -> Result<Sold, AppError> {
    let settings = room.settings;
    let keys = keys.clone();
    // The sale runs in its own task so that a buyer who hangs up mid-sale cannot cancel it
    // between acquire and release and leave the lock behind.
    let task_state = state.clone();
    tokio::spawn(async move {
        let cx = SaleCx {
            redis: &task_state.redis,
            store: &task_state.lock_store,
            keys: &keys,
            settings,
            instance: &task_state.instance,
            owner: task_state.next_owner(),
            locks: &task_state.locks,
            signals: &task_state.signals,
            metrics: &task_state.metrics,
            faults: room.faults,
            store_fault_pending: room.store_fault_pending,
        };
        sale::sell(&cx, &order).await
    })
    .await
    .unwrap_or_else(|e| Err(AppError::Internal(format!("sale task failed: {e}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_body_buys_one_item() {
        let order = parse_order(b"").unwrap();
        assert_eq!((order.qty, order.buyer.as_str()), (1, "anonymous"));
    }

    #[test]
    fn qty_outside_the_range_is_refused() {
        for body in [
            &br#"{"qty":0}"#[..],
            br#"{"qty":11}"#,
            br#"{"qty":-1}"#,
            br#"{"qty":"2"}"#,
        ] {
            assert!(matches!(parse_order(body), Err(AppError::BadRequest(_))));
        }
    }
}
