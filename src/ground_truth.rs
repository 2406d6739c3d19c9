//! Reading and resetting the ground truth of a room: what the resource store says really
//! happened. [`record`] writes what the lock operations saw.

pub mod record;
pub mod timeline;

use crate::keys::Keys;
use crate::lock_store::LockStore;
use crate::redis_pool::{RedisPool, StoreError};

pub use oversell_api::{GroundTruth, LockView};

/// The room's figures from the resource store, and its lock as the lock store has it now.
pub async fn read(
    redis: &RedisPool,
    store: &LockStore,
    keys: &Keys,
) -> Result<GroundTruth, StoreError> {
    let (figures, lock) = tokio::join!(read_figures(redis, keys), read_lock(store, keys));
    let mut truth = figures?;
    // A lock store that is down is no reason to hide the ground truth.
    truth.lock = lock.unwrap_or(LockView {
        held: false,
        ttl_ms: None,
    });
    Ok(truth)
}

async fn read_figures(redis: &RedisPool, keys: &Keys) -> Result<GroundTruth, StoreError> {
    let mut conn = redis.conn().await?;
    type Counters = (
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
    );
    let (counters, orders): (Counters, i64) = redis::pipe()
        .mget(&[
            keys.stock(),
            keys.initial_stock(),
            keys.items_sold(),
            keys.overlaps(),
            keys.foreign_releases(),
            keys.lost_releases(),
            keys.store_faults(),
            keys.validity_lapsed(),
            keys.stale_writes_rejected(),
            keys.lock_timeouts(),
        ])
        .llen(keys.ledger())
        .query_async(&mut conn)
        .await?;
    let (stock, initial, items, overlaps, foreign, lost, store_faults, lapsed, stale, timeouts) =
        counters;
    let stocked = stock.is_some();
    let (stock, initial_stock, items_sold) =
        (stock.unwrap_or(0), initial.unwrap_or(0), items.unwrap_or(0));
    Ok(GroundTruth {
        stocked,
        stock,
        initial_stock,
        orders,
        items_sold,
        oversold: (items_sold - initial_stock).max(0),
        lost_updates: items_sold - (initial_stock - stock),
        overlaps: overlaps.unwrap_or(0),
        foreign_releases: foreign.unwrap_or(0),
        lost_releases: lost.unwrap_or(0),
        store_faults: store_faults.unwrap_or(0),
        validity_lapsed: lapsed.unwrap_or(0),
        stale_writes_rejected: stale.unwrap_or(0),
        lock_timeouts: timeouts.unwrap_or(0),
        lock: LockView {
            held: false,
            ttl_ms: None,
        },
    })
}

async fn read_lock(store: &LockStore, keys: &Keys) -> Result<LockView, StoreError> {
    let mut conn = store.pool().conn().await?;
    let (lock_ttl, rlock_ttl): (i64, i64) = redis::pipe()
        .pttl(keys.lock())
        .pttl(keys.reentrant_lock())
        .query_async(&mut conn)
        .await?;
    // PTTL: -2 no key, -1 no expiry, else ms left. At most one of the two lock keys exists.
    let ttl = if lock_ttl != -2 { lock_ttl } else { rlock_ttl };
    Ok(LockView {
        held: ttl != -2,
        ttl_ms: (ttl != -2).then_some(ttl),
    })
}

/// Clears the room's ledger, locks and counters and sets the stock: one transaction in the
/// resource store, then the locks and fencing counter in the lock store.
pub async fn reset(
    redis: &RedisPool,
    store: &LockStore,
    keys: &Keys,
    stock: i64,
) -> Result<(), StoreError> {
    let mut conn = redis.conn().await?;
    let _: () = redis::pipe()
        .atomic()
        .del(keys.resettable())
        .ignore()
        .set(keys.stock(), stock)
        .ignore()
        .set(keys.initial_stock(), stock)
        .ignore()
        .set(keys.generation(), uuid::Uuid::new_v4().simple().to_string())
        .ignore()
        .query_async(&mut conn)
        .await?;
    // A lock store of its own may be failing over or restarting: try a few times.
    let mut tries = 0;
    loop {
        let cleared = async {
            let mut conn = store.pool().conn().await?;
            // Buyers waiting for a lock the reset deleted hear of it as of a release, instead
            // of waiting out its lease.
            redis::pipe()
                .del(keys.lock_store_keys())
                .ignore()
                .publish(keys.released_channel(), "reset")
                .ignore()
                .query_async::<()>(&mut conn)
                .await?;
            Ok::<_, StoreError>(())
        }
        .await;
        match cleared {
            Err(StoreError::Unavailable(_)) if tries < 20 && store.waits_out_outages() => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Ok(()) => break,
            other => return other,
        }
    }
    // The other Redlock masters too. One that is down keeps its lock until the lease ends,
    // like any lock a reset cannot reach.
    let lock_keys = keys.lock_store_keys();
    store
        .quorum()
        .each(|mut conn| {
            let lock_keys = lock_keys.clone();
            async move {
                redis::cmd("DEL")
                    .arg(lock_keys)
                    .query_async::<()>(&mut conn)
                    .await
            }
        })
        .await;
    clear_zookeeper_line(store, keys).await;
    Ok(())
}

/// How long a reset tries to clear the room's line in ZooKeeper.
const ZOOKEEPER_CLEAR_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

/// The room's line in ZooKeeper emptied, as its Redis lock key is deleted. ZooKeeper down (a
/// lost quorum) leaves it to the sessions that hold it: the reset itself still succeeds.
async fn clear_zookeeper_line(store: &LockStore, keys: &Keys) {
    let Some(zookeeper) = store.zookeeper() else {
        return;
    };
    let deadline = tokio::time::Instant::now() + ZOOKEEPER_CLEAR_WITHIN;
    let cleared = match zookeeper.session(deadline).await {
        Ok(session) => session.clear(keys.room(), deadline).await,
        Err(err) => Err(err),
    };
    match cleared {
        Ok(0) => {}
        Ok(deleted) => tracing::info!(room = keys.room(), deleted, "reset: ZooKeeper line cleared"),
        Err(err) => tracing::warn!(%err, room = keys.room(), "reset: ZooKeeper line not cleared"),
    }
}

/// A page of the ledger, oldest first, as the JSON entries the scripts wrote.
pub async fn ledger(
    redis: &RedisPool,
    keys: &Keys,
    offset: i64,
    limit: i64,
) -> Result<Vec<serde_json::Value>, StoreError> {
    let mut conn = redis.conn().await?;
    let raw: Vec<String> = redis::cmd("LRANGE")
        .arg(keys.ledger())
        .arg(offset)
        // Saturating: an offset near i64::MAX is a page past the end, not an overflow.
        .arg(offset.saturating_add(limit - 1))
        .query_async(&mut conn)
        .await?;
    Ok(raw
        .iter()
        .map(|entry| {
            serde_json::from_str(entry).unwrap_or(serde_json::Value::String(entry.clone()))
        })
        .collect())
}
