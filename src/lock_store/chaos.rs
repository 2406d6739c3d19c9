//! The lock store's faults, done for real on real processes: a primary's replicas held off
//! for the moment of one write, and a primary killed.
//!
//! Why hold the replicas, not just cut their link: a replica whose link is cut reconnects
//! within milliseconds and catches up from the primary's backlog, so a lock written in that
//! window would usually still reach it. Stopping the replica process (SIGSTOP) for those few
//! milliseconds, with its link cut, makes the lost write certain: it is what asynchronous
//! replication allows whenever a primary dies within its replication lag, forced rather than
//! hoped for. The replicas are resumed (SIGCONT) right after, long before Sentinel could
//! notice (`down-after-milliseconds`).
//!
//! A primary on this machine (loopback: `oversell up`, the tests) is killed with SIGKILL,
//! found by the `process_id` it reports: exactly a crash. One elsewhere (docker-compose) is
//! told `SHUTDOWN NOSAVE NOW`: it exits at once without saving a snapshot, though it still
//! flushes an append-only file it has; its container's restart policy brings it back.

use std::net::IpAddr;

use crate::redis_pool::{RedisPool, StoreError};

/// Replicas stopped by [`hold_replicas`]; resumed when this is dropped, whatever happens.
#[must_use = "dropping it resumes the replicas at once"]
pub struct HeldReplicas {
    pids: Vec<i32>,
}

impl HeldReplicas {
    /// How many replica processes are stopped.
    pub fn len(&self) -> usize {
        self.pids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pids.is_empty()
    }
}

impl Drop for HeldReplicas {
    fn drop(&mut self) {
        for pid in &self.pids {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(*pid, libc::SIGCONT);
            }
        }
    }
}

/// Stops the primary's replicas on this machine (SIGSTOP) and drops every replica's link
/// (`CLIENT KILL TYPE replica`), so the next write stays on the primary alone.
pub async fn hold_replicas(pool: &RedisPool) -> Result<HeldReplicas, StoreError> {
    let mut conn = pool.conn().await?;
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query_async(&mut conn)
        .await?;
    let mut held = HeldReplicas { pids: Vec::new() };
    for addr in replica_addrs(&info).filter(|a| is_loopback(a)) {
        if let Some(pid) = pid_of(&addr).await {
            // SAFETY: kill has no memory-safety preconditions.
            if unsafe { libc::kill(pid, libc::SIGSTOP) } == 0 {
                held.pids.push(pid);
            }
        }
    }
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query_async(&mut conn)
        .await?;
    Ok(held)
}

/// `host:port` of each `slaveN:ip=…,port=…` line of `INFO replication`.
fn replica_addrs(info: &str) -> impl Iterator<Item = String> + '_ {
    info.lines()
        .filter(|line| line.starts_with("slave") && line.contains("ip="))
        .filter_map(|line| {
            let field = |name: &str| {
                line.split([':', ','])
                    .find_map(|kv| kv.strip_prefix(name))
                    .map(str::to_owned)
            };
            Some(format!("{}:{}", field("ip=")?, field("port=")?))
        })
}

/// The `process_id` a Redis at `addr` reports.
async fn pid_of(addr: &str) -> Option<i32> {
    let asked = async {
        let client = redis::Client::open(format!("redis://{addr}")).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut conn)
            .await
            .ok()?;
        process_id(&info)
    };
    tokio::time::timeout(std::time::Duration::from_millis(500), asked)
        .await
        .ok()
        .flatten()
}

fn process_id(info: &str) -> Option<i32> {
    info.lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
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
    match process_id(&info) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_addresses_come_from_info_replication() {
        let info = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n\
                    slave0:ip=127.0.0.1,port=6381,state=online,offset=42,lag=0\r\n\
                    master_replid:abc\r\n";
        let addrs: Vec<String> = replica_addrs(info).collect();
        assert_eq!(addrs, ["127.0.0.1:6381"]);
        assert!(is_loopback("127.0.0.1:6381") && !is_loopback("redis-lock1:6379"));
    }
}
