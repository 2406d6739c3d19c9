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
//!
//! A single store's Redis killed for a while (`lock-store-down`) is found the same way and
//! kept down by the same hold-down file as a Redlock master.
//!
//! The Redlock masters are struck the same way, one [`QuorumNode`] at a time: killed (and,
//! for `node-down`, kept down by a hold-down file its supervisor honours), or their wall clock
//! moved forward through the clock-offset file their `LD_PRELOAD` shim reads (see
//! `crate::clock_offset`). Both need the node's data dir, so both work on this machine only.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::quorum::QuorumNode;
use crate::redis_pool::{RedisPool, StoreError};

/// The file in a Redis node's data dir that keeps it down after `node-down`: a unix time in
/// ms before which `oversell up` does not restart it.
pub const HOLD_DOWN_FILE: &str = "down-until";

/// Replicas stopped by [`hold_replicas`]; resumed when this is dropped, whatever happens.
#[must_use = "dropping it resumes the replicas at once"]
pub struct HeldReplicas {
    pids: Vec<i32>,
}

impl HeldReplicas {
    /// How many replica processes are stopped.
    pub fn count(&self) -> usize {
        self.pids.len()
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

/// The address of the primary the pool talks to now, if it is an IPv4 one.
pub async fn primary_ip(pool: &RedisPool) -> Option<std::net::Ipv4Addr> {
    let client = pool.client().await.ok()?;
    let addr = client.get_connection_info().addr().to_string();
    let host = addr
        .rsplit_once(':')
        .map_or(addr.as_str(), |(host, _)| host);
    host.parse().ok()
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

/// Kills the single store's Redis (SIGKILL) and keeps it down for `down_for`: its supervisor
/// brings it back only then, as a crashed server would be, instead of within 100 ms. Only on
/// this machine: the hold-down is a file in the node's data dir. Returns `host:port pid=N`.
pub async fn kill_store_for(pool: &RedisPool, down_for: Duration) -> Result<String, StoreError> {
    let client = pool.client().await?;
    let addr = client.get_connection_info().addr().to_string();
    if !is_loopback(&addr) {
        return Err(StoreError::Unavailable(format!(
            "{addr} is not on this machine: its process is out of reach (use `oversell up`)"
        )));
    }
    let mut conn = pool.conn().await?;
    let (info, dir): (String, Vec<String>) = process_and_dir().query_async(&mut conn).await?;
    let unavailable = |why: &str| StoreError::Unavailable(format!("{addr}: {why}"));
    let pid = process_id(&info).ok_or_else(|| unavailable("no process_id"))?;
    let dir = dir.get(1).ok_or_else(|| unavailable("no dir"))?;
    hold_down(&PathBuf::from(dir), down_for)?;
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(pid, libc::SIGKILL) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(unavailable(&format!("kill {pid}: {err}")));
    }
    Ok(format!("{addr} pid={pid}"))
}

/// Writes the hold-down file its supervisor honours (see [`HOLD_DOWN_FILE`]) in `dir`.
fn hold_down(dir: &std::path::Path, down_for: Duration) -> Result<(), StoreError> {
    let until = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        + down_for;
    let file = dir.join(HOLD_DOWN_FILE);
    std::fs::write(&file, until.as_millis().to_string())
        .map_err(|err| StoreError::Unavailable(format!("{}: {err}", file.display())))
}

/// `INFO server` and `CONFIG GET dir`: how a node names its own process and data dir.
fn process_and_dir() -> redis::Pipeline {
    let mut asked = redis::pipe();
    asked
        .cmd("INFO")
        .arg("server")
        .cmd("CONFIG")
        .arg("GET")
        .arg("dir");
    asked
}

/// A Redlock master's process, as the node itself reports it.
struct NodeProcess {
    pid: i32,
    /// Its data dir (`CONFIG GET dir`).
    dir: PathBuf,
}

async fn process_of(node: &QuorumNode) -> Result<NodeProcess, StoreError> {
    let (info, dir): (String, Vec<String>) = node
        .run(|mut conn| async move { process_and_dir().query_async(&mut conn).await })
        .await?;
    let pid = process_id(&info).ok_or_else(|| no_process(node, "no process_id"))?;
    let dir = dir.get(1).ok_or_else(|| no_process(node, "no dir"))?;
    Ok(NodeProcess {
        pid,
        dir: PathBuf::from(dir),
    })
}

fn no_process(node: &QuorumNode, why: &str) -> StoreError {
    StoreError::Unavailable(format!("{}: {why}", node.addr()))
}

fn on_this_machine(node: &QuorumNode) -> Result<(), StoreError> {
    match is_loopback(node.addr()) {
        true => Ok(()),
        false => Err(StoreError::Unavailable(format!(
            "{} is not on this machine: its process and clock are out of reach (use `oversell \
             up`)",
            node.addr()
        ))),
    }
}

/// Kills a Redlock master (SIGKILL). With `down_for`, its supervisor brings it back only after
/// that long, as a crashed machine would be; without, at once (with whatever its persistence
/// kept). Returns `host:port pid=N`.
pub async fn kill_node(
    node: &QuorumNode,
    down_for: Option<Duration>,
) -> Result<String, StoreError> {
    on_this_machine(node)?;
    let process = process_of(node).await?;
    if let Some(down_for) = down_for {
        hold_down(&process.dir, down_for)?;
    }
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(process.pid, libc::SIGKILL) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(StoreError::Unavailable(format!(
            "kill {}: {err}",
            process.pid
        )));
    }
    Ok(format!("{} pid={}", node.addr(), process.pid))
}

/// Moves a Redlock master's wall clock `ms` forward: every key's expiry there comes `ms`
/// sooner. The node must run under the clock shim (`oversell up` starts them so).
pub async fn jump_clock(node: &QuorumNode, ms: i64) -> Result<String, StoreError> {
    on_this_machine(node)?;
    let process = process_of(node).await?;
    let file = crate::clock_offset::offset_file(&process.dir);
    let moved = crate::clock_offset::read_offset(&file)
        .and_then(|before| crate::clock_offset::set_offset(&file, before + ms).map(|()| before));
    match moved {
        Ok(before) => Ok(format!(
            "{} clock {:+} ms (now {:+} ms)",
            node.addr(),
            ms,
            before + ms
        )),
        Err(err) => Err(StoreError::Unavailable(format!(
            "{}: no clock to move ({}: {err}); start it under the clock shim (oversell up)",
            node.addr(),
            file.display()
        ))),
    }
}

/// A ZooKeeper server's process, found through its own `conf` answer.
pub struct ZkProcess {
    addr: String,
    dir: std::path::PathBuf,
    pid: i32,
}

/// Finds the ZooKeeper server at `addr`: its dir from its `conf` answer (its `dataDir`), its
/// pid from the file `oversell up` keeps there. Only a server that serves answers `conf`, so
/// a fault striking several finds them all before it kills any.
pub async fn find_zookeeper(addr: &str) -> Result<ZkProcess, StoreError> {
    let unavailable = |why: String| StoreError::ZooKeeper(format!("{addr}: {why}"));
    if !is_loopback(addr) {
        return Err(unavailable(
            "not on this machine: its process is out of reach".into(),
        ));
    }
    let conf = crate::zookeeper::four_letter(addr, "conf")
        .await
        .ok_or_else(|| unavailable("does not answer `conf` (down already?)".into()))?;
    let data = conf
        .lines()
        .find_map(|line| line.strip_prefix("dataDir="))
        .ok_or_else(|| unavailable("no dataDir in its `conf`".into()))?;
    // `dataDir` is `<dir>/data`, shown with ZooKeeper's own `version-2` below it.
    let data = std::path::Path::new(data.trim());
    let data = match data.ends_with("version-2") {
        true => data.parent().unwrap_or(data),
        false => data,
    };
    let dir = data.parent().unwrap_or(data).to_path_buf();
    let pid_file = dir.join(crate::zookeeper::PID_FILE);
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .ok_or_else(|| unavailable(format!("no pid in {}", pid_file.display())))?;
    Ok(ZkProcess {
        addr: addr.to_owned(),
        dir,
        pid,
    })
}

/// Kills a ZooKeeper server (SIGKILL), kept down for `down_for` by a hold-down file its
/// supervisor honours. Returns `host:port pid=N`.
pub fn kill_zookeeper(server: &ZkProcess, down_for: Duration) -> Result<String, StoreError> {
    let ZkProcess { addr, dir, pid } = server;
    let unavailable = |why: String| StoreError::ZooKeeper(format!("{addr}: {why}"));
    let until = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        + down_for;
    let hold = dir.join(HOLD_DOWN_FILE);
    std::fs::write(&hold, until.as_millis().to_string())
        .map_err(|err| unavailable(format!("{}: {err}", hold.display())))?;
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(*pid, libc::SIGKILL) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(unavailable(format!("kill {pid}: {err}")));
    }
    Ok(format!("{addr} pid={pid}"))
}

fn is_loopback(addr: &str) -> bool {
    crate::netns::on_this_machine(addr)
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
