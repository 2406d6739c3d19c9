//! The sold-out sign on the door: a buyer turned away before queueing for the lock.

use crate::error::AppError;
use crate::redis_pool::StoreError;

use super::{Order, SaleCx};

/// The sold-out sign on the door (`lock/sold_out.rs`): once a locked read here found nothing
/// left, a buyer reads the stock before queueing for the lock, and is turned away at once when
/// too little is left. Never for a tier without a lock (no queue to skip) or a lock with a hook
/// (what acts there, a fault, must meet a buyer who took the lock). `None`: go on to the lock.
pub(super) async fn at_the_door(cx: &SaleCx<'_>, hooked: bool, order: &Order) -> Option<AppError> {
    let room = cx.keys.room();
    if !cx.settings.tier.locks() || hooked || !cx.signals.sold_out.seen(room) {
        return None;
    }
    let read = async {
        let mut conn = cx.resource.conn().await?;
        let stock: Option<i64> = redis::cmd("GET")
            .arg(cx.keys.stock())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(stock)
    };
    // No stock key, or no answer: the usual way will say what it is.
    let Ok(Some(stock)) = read.await else {
        return None;
    };
    if stock > 0 {
        cx.signals.sold_out.forget(room);
    }
    (stock < i64::from(order.qty)).then_some(AppError::SoldOut {
        stock_left: stock,
        requested: order.qty,
    })
}
