//! Finding one's way in a Redis Cluster: a node that answers, and the master owning a slot.

use redis::aio::MultiplexedConnection;
use redis::{IntoConnectionInfo, RedisResult, Value};

use super::answer_limits::{connection_config, tcp_settings};
use super::sentinel::{timed_out, SENTINEL_STEP};

/// The first of a cluster's `seeds` that answers `PING` in time, with a connection to it. A
/// `PUBLISH` on any node reaches every node's subscribers, so any one serves for pub/sub.
pub(super) async fn answering_node(
    seeds: &[String],
) -> RedisResult<(redis::Client, MultiplexedConnection)> {
    let mut last = None;
    for seed in seeds {
        let tried = async {
            let info = format!("redis://{seed}")
                .into_connection_info()?
                .set_tcp_settings(tcp_settings());
            let client = redis::Client::open(info)?;
            let mut conn = client
                .get_multiplexed_async_connection_with_config(&connection_config())
                .await?;
            redis::cmd("PING").query_async::<()>(&mut conn).await?;
            Ok((client, conn))
        };
        match tokio::time::timeout(SENTINEL_STEP, tried).await {
            Ok(Ok(found)) => return Ok(found),
            Ok(Err(err)) => last = Some(err),
            Err(_) => last = Some(timed_out(seed)),
        }
    }
    Err(last.unwrap_or_else(|| timed_out("any cluster node")))
}

/// `host:port` of the master in one `CLUSTER SLOTS` entry (`[start, end, [ip, port, id], …]`)
/// when its range holds `slot`.
pub(super) fn slot_owner(range: &Value, slot: u16) -> Option<String> {
    let Value::Array(parts) = range else {
        return None;
    };
    let bound = |i: usize| redis::from_redis_value::<i64>(parts.get(i)?.clone()).ok();
    let (start, end) = (bound(0)?, bound(1)?);
    if !(start..=end).contains(&i64::from(slot)) {
        return None;
    }
    let Value::Array(master) = parts.get(2)? else {
        return None;
    };
    let ip: String = redis::from_redis_value(master.first()?.clone()).ok()?;
    let port: i64 = redis::from_redis_value(master.get(1)?.clone()).ok()?;
    Some(format!("{ip}:{port}"))
}
