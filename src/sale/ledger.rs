//! The ledger entry a sale's write appends.

use oversell_api::tier::Tier;
use serde::Serialize;

use crate::error::AppError;

use super::{Order, SaleCx};

/// The ledger entry, as JSON; the scripts append Redis' clock times to it.
#[derive(Serialize)]
struct LedgerEntry<'a> {
    order_id: &'a str,
    buyer: &'a str,
    qty: u32,
    instance: &'a str,
    tier: Tier,
    fence: Option<u64>,
    /// How many holds the owner had at the write: 2 proves the nested re-entry happened.
    depth: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    enter_us: Option<i64>,
}

/// The order as the JSON the ledger stores.
pub(super) fn ledger_entry(
    cx: &SaleCx<'_>,
    order: &Order,
    order_id: &str,
    fence: Option<u64>,
    depth: u32,
    enter_us: Option<i64>,
) -> Result<String, AppError> {
    let entry = LedgerEntry {
        order_id,
        buyer: &order.buyer,
        qty: order.qty,
        instance: cx.instance,
        tier: cx.settings.tier,
        fence,
        depth,
        enter_us,
    };
    serde_json::to_string(&entry).map_err(|e| AppError::Internal(e.to_string()))
}
