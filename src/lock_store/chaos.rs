//! The lock store's faults, done for real on real processes: a primary's replica link cut,
//! and a primary killed.
//!
//! A primary on this machine (loopback: `oversell up`, the tests) is killed with SIGKILL,
//! found by the `process_id` it reports: exactly a crash. One elsewhere (docker-compose) is
//! told `SHUTDOWN NOSAVE NOW`: it exits at once without saving a snapshot, though it still
//! flushes an append-only file it has; its container's restart policy brings it back.

use std::net::IpAddr;

use crate::redis_pool::{RedisPool, StoreError};

/// Drops every replica's connection to the primary (`CLIENT KILL TYPE replica`). Returns how
/// many were dropped.
pub async fn detach_replicas(pool: &RedisPool) -> Result<i64, StoreError> {
    let mut conn = pool.conn().await?;
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query_async(&mut conn)
        .await?;
    Ok(killed)
}

/// Kills the primary the pool talks to; returns `host:port pid=N`.
pub async fn kill_primary(pool: &RedisPool) -> Result<String, StoreError> {
    let client = pool.client().await?;
    let addr = client.get_connection_info().addr().to_string();
    let mut conn = pool.conn().await?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut conn)
        .await?;
    let pid = info
        .lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse::<i32>().ok());
    match pid {
        Some(pid) if is_loopback(&addr) => {
            // SAFETY: kill has no memory-safety preconditions.
            let rc = unsafe { libc::kill(pid, libc::SIGKILL) };
            if rc != 0 {
                let err = std::io::Error::last_os_error();
                return Err(StoreError::Unavailable(format!("kill {pid}: {err}")));
            }
            Ok(format!("{addr} pid={pid}"))
        }
        _ => {
            // The connection drops as the server exits: that error is the expected answer.
            let _ = redis::cmd("SHUTDOWN")
                .arg("NOSAVE")
                .arg("NOW")
                .query_async::<()>(&mut conn)
                .await;
            Ok(format!("{addr} (shut down)"))
        }
    }
}

fn is_loopback(addr: &str) -> bool {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
