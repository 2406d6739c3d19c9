//! `atomic-deduct` — no lock at all: one Lua script checks the stock, decrements it and records
//! the order, atomically inside Redis.
//!
//! # Guarantee
//! Never oversells and loses no update, with one round trip per sale: the fastest tier, because
//! nothing waits for anything. The right tool when the protected state is a counter in Redis.
//!
//! # Known defect
//! None for a counter. It does not generalise: work that must happen *outside* Redis (a payment
//! call, a database row) cannot run inside the script, and that is what locks are for.

use std::sync::LazyLock;

use redis::Script;

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

static DEDUCT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("atomic_deduct.lua")));

/// Sells `qty` if the stock allows; `Ok(Err(stock))` when sold out.
pub async fn sell(
    redis: &RedisPool,
    keys: &Keys,
    qty: u32,
    entry_json: &str,
    instance: &str,
) -> Result<Result<i64, i64>, StoreError> {
    let mut conn = redis.conn().await?;
    let (sold, stock): (bool, i64) = DEDUCT
        .key(keys.stock())
        .key(keys.ledger())
        .key(keys.items_sold())
        .key(keys.timeline())
        .arg(qty)
        .arg(entry_json)
        .arg(instance)
        .invoke_async(&mut conn)
        .await?;
    Ok(if sold { Ok(stock) } else { Err(stock) })
}
