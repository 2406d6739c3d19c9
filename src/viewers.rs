//! How many dashboards watch each room, over the whole fleet, for the class page.
//!
//! Each instance knows only its own `/events` streams ([`crate::feed::Feeds`]). Every second
//! it writes them to a hash of its own in the resource store (room → streams), which expires
//! a few seconds later: an instance that stopped, crashed or froze drops out of the count by
//! itself, with nothing to clean up.

use std::collections::HashMap;
use std::time::Duration;

use crate::fleet_sync::FleetSync;
use crate::keys;
use crate::redis_pool::{RedisPool, StoreError};
use crate::state::AppState;

const EVERY: Duration = Duration::from_secs(1);
/// Three missed writes and an instance's streams no longer count.
const KEEP_MS: u64 = 3_000;

/// Writes this instance's streams per room every second, until aborted.
pub fn spawn_publisher(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let counts = state.feeds.viewers();
            if let Err(err) = publish(&state.resource, &state.instance, &counts).await {
                tracing::debug!(%err, "viewer counts not written");
            }
        }
    })
}

async fn publish(
    redis: &RedisPool,
    instance: &str,
    counts: &[(String, usize)],
) -> Result<(), StoreError> {
    let key = keys::viewers(instance);
    let mut conn = redis.conn().await?;
    let mut pipe = redis::pipe();
    pipe.atomic().del(&key).ignore();
    if !counts.is_empty() {
        pipe.hset_multiple(&key, counts)
            .ignore()
            .pexpire(&key, KEEP_MS as i64)
            .ignore();
    }
    let () = pipe.query_async(&mut conn).await?;
    Ok(())
}

/// Streams per room, summed over the live instances.
pub async fn per_room(
    redis: &RedisPool,
    fleet: &FleetSync,
) -> Result<HashMap<String, u64>, StoreError> {
    let instances = fleet.live_instances().await?;
    let mut conn = redis.conn().await?;
    let mut pipe = redis::pipe();
    for (instance, _) in &instances {
        pipe.hgetall(keys::viewers(instance));
    }
    let each: Vec<HashMap<String, u64>> = pipe.query_async(&mut conn).await?;
    let mut total = HashMap::new();
    for (room, n) in each.into_iter().flatten() {
        *total.entry(room).or_default() += n;
    }
    Ok(total)
}
