//! `POST /sale`: one buyer buys `qty` items under the room's current tier.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use super::extract::{json_body, Body, Room};
use crate::error::AppError;
use crate::sale::{run_sale, Order, Sold};
use crate::state::AppState;

/// A buyer's order; an empty body buys one item as `anonymous`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SaleBody {
    /// Who buys (1–64 bytes) [default: `anonymous`].
    #[schema(min_length = 1, max_length = 64)]
    buyer: Option<String>,
    /// Items in the order, 1–10 [default: 1].
    #[schema(minimum = 1, maximum = 10)]
    qty: Option<u32>,
}

fn parse_order(body: &[u8]) -> Result<Order, AppError> {
    let body: SaleBody = json_body(body)?.unwrap_or_default();
    let buyer = body.buyer.unwrap_or_else(|| "anonymous".to_owned());
    Order::new(buyer, body.qty.unwrap_or(1)).map_err(AppError::BadRequest)
}

/// One buyer buys `qty` items under the room's tier: the stock is read and written inside
/// the lock, and the order is recorded in the ledger.
#[utoipa::path(
    post,
    path = "/sale",
    tag = "sale",
    params(super::openapi::RoomParam),
    request_body(content = Option<SaleBody>, content_type = "application/json"),
    responses(
        (status = 200, description = "Sold: the order, and the stock the buyer's write left", body = Sold),
        (status = 409, description = "Sold out (`stock_left`), or the room has no stock, or it was reset during the sale", body = super::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(room = keys.room(), instance = %state.instance))]
pub async fn sale(
    State(state): State<AppState>,
    Room(keys): Room,
    Body(body): Body,
) -> Result<Json<Sold>, AppError> {
    let order = parse_order(&body)?;
    run_sale(&state, keys, order).await.map(Json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_body_buys_one_item() {
        let order = parse_order(b"").unwrap();
        assert_eq!(order, Order::new("anonymous".into(), 1).unwrap());
    }

    #[test]
    fn a_json_null_body_is_the_empty_body() {
        for body in [&b"null"[..], b" null\n", b"{}"] {
            let order = parse_order(body).unwrap();
            assert_eq!(order, Order::new("anonymous".into(), 1).unwrap());
        }
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
