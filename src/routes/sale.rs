//! `POST /sale`: one buyer buys `qty` items under the room's current tier.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use super::extract::{json_body, Body, Room};
use crate::error::AppError;
use crate::sale::{run_sale, Order, Sold};
use crate::state::AppState;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaleBody {
    buyer: Option<String>,
    qty: Option<u32>,
}

fn parse_order(body: &[u8]) -> Result<Order, AppError> {
    let body: SaleBody = json_body(body)?.unwrap_or_default();
    let buyer = body.buyer.unwrap_or_else(|| "anonymous".to_owned());
    Order::new(buyer, body.qty.unwrap_or(1)).map_err(AppError::BadRequest)
}

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
