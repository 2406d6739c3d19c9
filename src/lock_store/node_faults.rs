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
//! A single store's Redis killed for a while (`lock-store-down`) is kept down by the same
//! hold-down as a Redlock master. The Redlock masters are struck the same way, one
//! [`QuorumNode`] at a time: killed (and, for `node-down`, kept down), or their wall clock
//! moved forward through the clock shim they run under (see `crate::member::clock_offset`).
//!
//! Every act goes through [`crate::member::Reach`]: a process on this machine (`oversell up`)
//! is found by the `process_id` and `dir` the node reports; one in a container (docker
//! compose) is acted on by its supervisor, asked over the fleet's network.

use std::path::PathBuf;
use std::time::Duration;

use super::quorum::QuorumNode;
use crate::member::{Process, Reach, Remote};
use crate::redis_pool::{RedisPool, StoreError};

/// The longest replicas are held: their helpers resume them by then even if nobody drops
/// the [`HeldReplicas`] (the instance holding them crashed or froze).
const HOLD_AT_MOST: Duration = Duration::from_secs(5);

/// Replicas stopped by [`hold_replicas`]; resumed when this is dropped, whatever happens.
#[must_use = "dropping it resumes the replicas at once"]
pub struct HeldReplicas {
    held: Vec<Reach>,
}

impl HeldReplicas {
    /// How many replica processes are stopped.
    pub fn count(&self) -> usize {
        self.held.len()
    }
}

impl Drop for HeldReplicas {
    fn drop(&mut self) {
        for reach in self.held.drain(..) {
            match reach {
                Reach::Here(process) => {
                    let _ = process.resume();
                }
                // Asked from a task of its own: a drop cannot wait for an answer. Should it
                // be lost, the supervisor's own helper resumes the replica at HOLD_AT_MOST.
                Reach::Supervised(remote) => {
                    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                        runtime.spawn(async move {
                            if let Err(why) = remote.resume().await {
                                tracing::warn!(%why, "replica not resumed at once");
                            }
                        });
                    }
                }
            }
        }
    }
}

/// Stops the replicas of the primary holding `key` (the one primary; in a Redis Cluster, the
/// master owning the key's slot) — SIGSTOP, resumed at the latest after [`HOLD_AT_MOST`] — and
/// drops every replica's link (`CLIENT KILL TYPE replica`), so the next write of `key` stays
/// on the primary alone.
pub async fn hold_replicas(pool: &RedisPool, key: &str) -> Result<HeldReplicas, StoreError> {
    hold_replicas_for(pool, key, HOLD_AT_MOST).await
}

/// [`hold_replicas`], resumed by their helpers at the latest after `at_most` (at most
/// [`HOLD_AT_MOST`]): a lag of its own length, whose helper cannot then resume a later hold
/// of the same replica early.
pub async fn hold_replicas_for(
    pool: &RedisPool,
    key: &str,
    at_most: Duration,
) -> Result<HeldReplicas, StoreError> {
    let at_most = at_most.min(HOLD_AT_MOST);
    let mut conn = pool
        .client_for(key)
        .await?
        .get_multiplexed_async_connection()
        .await?;
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query_async(&mut conn)
        .await?;
    let mut held = HeldReplicas { held: Vec::new() };
    for addr in replica_addrs(&info) {
        let reach = match Reach::is_remote(&addr) {
            true => Reach::Supervised(Remote::beside(&addr)),
            false => match pid_of(&addr).await {
                Some(pid) => Reach::Here(Process {
                    pid,
                    dir: PathBuf::new(),
                }),
                None => continue,
            },
        };
        match reach.pause(at_most).await {
            Ok(_) => held.held.push(reach),
            Err(why) => tracing::warn!(%addr, %why, "replica not held"),
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

/// The IPv4 address of the primary the pool talks to now (a name, as compose's `lock`, is
/// looked up).
pub async fn primary_ip(pool: &RedisPool) -> Option<std::net::Ipv4Addr> {
    let client = pool.client().await.ok()?;
    let addr = client.get_connection_info().addr().to_string();
    let (host, port) = addr.rsplit_once(':')?;
    if let Ok(ip) = host.parse() {
        return Some(ip);
    }
    let port: u16 = port.parse().ok()?;
    let mut found = tokio::net::lookup_host((host, port)).await.ok()?;
    found.find_map(|a| match a.ip() {
        std::net::IpAddr::V4(ip) => Some(ip),
        std::net::IpAddr::V6(_) => None,
    })
}

/// Kills the primary holding `key` (in a Redis Cluster, the master owning its slot), back at
/// once or after `down_for`; returns `host:port pid=N`.
pub async fn kill_primary(
    pool: &RedisPool,
    key: &str,
    down_for: Option<Duration>,
) -> Result<String, StoreError> {
    let (addr, reach) = store_reach(pool.client_for(key).await?).await?;
    let did = reach
        .kill(down_for)
        .await
        .map_err(StoreError::Unavailable)?;
    Ok(format!("{addr} {did}"))
}

/// Kills the single store's Redis (SIGKILL) and keeps it down for `down_for`: its supervisor
/// brings it back only then, as a crashed server would be, instead of within 100 ms. Returns
/// `host:port pid=N`.
pub async fn kill_store_for(pool: &RedisPool, down_for: Duration) -> Result<String, StoreError> {
    let (addr, reach) = store_reach(pool.client().await?).await?;
    let did = reach
        .kill(Some(down_for))
        .await
        .map_err(|why| StoreError::Unavailable(format!("{addr}: {why}")))?;
    Ok(format!("{addr} {did}"))
}

/// The server `client` talks to, and how to reach its process.
async fn store_reach(client: redis::Client) -> Result<(String, Reach), StoreError> {
    let addr = client.get_connection_info().addr().to_string();
    if Reach::is_remote(&addr) {
        return Ok((addr.clone(), Reach::Supervised(Remote::beside(&addr))));
    }
    let mut conn = client.get_multiplexed_async_connection().await?;
    let (info, dir): (String, Vec<String>) = process_and_dir().query_async(&mut conn).await?;
    let process = process_from(&addr, &info, &dir)?;
    Ok((addr, Reach::Here(process)))
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

fn process_from(addr: &str, info: &str, dir: &[String]) -> Result<Process, StoreError> {
    let unavailable = |why: &str| StoreError::Unavailable(format!("{addr}: {why}"));
    let pid = process_id(info).ok_or_else(|| unavailable("no process_id"))?;
    let dir = dir.get(1).ok_or_else(|| unavailable("no dir"))?;
    Ok(Process {
        pid,
        dir: PathBuf::from(dir),
    })
}

/// How to reach a Redlock master's process.
async fn reach_node(node: &QuorumNode) -> Result<Reach, StoreError> {
    if Reach::is_remote(node.addr()) {
        return Ok(Reach::Supervised(Remote::beside(node.addr())));
    }
    let (info, dir): (String, Vec<String>) = node
        .look(|mut conn| async move { process_and_dir().query_async(&mut conn).await })
        .await?;
    Ok(Reach::Here(process_from(node.addr(), &info, &dir)?))
}

/// Kills a Redlock master (SIGKILL). With `down_for`, its supervisor brings it back only after
/// that long, as a crashed machine would be; without, at once (with whatever its persistence
/// kept). Returns `host:port pid=N`.
pub async fn kill_node(
    node: &QuorumNode,
    down_for: Option<Duration>,
) -> Result<String, StoreError> {
    let reach = reach_node(node).await?;
    let did = reach
        .kill(down_for)
        .await
        .map_err(|why| StoreError::Unavailable(format!("{}: {why}", node.addr())))?;
    Ok(format!("{} {did}", node.addr()))
}

/// Stops a Redlock master (SIGSTOP) for `stop_for`, resumed by a helper; returns
/// `host:port pid=N` once it is stopped.
pub async fn stop_node_for(node: &QuorumNode, stop_for: Duration) -> Result<String, StoreError> {
    let reach = reach_node(node).await?;
    let did = reach
        .pause(stop_for)
        .await
        .map_err(|why| StoreError::Unavailable(format!("{}: {why}", node.addr())))?;
    Ok(format!("{} {did}", node.addr()))
}

/// Moves a Redlock master's wall clock `ms` forward: every key's expiry there comes `ms`
/// sooner. The node must run under the clock shim (`oversell up` and the compose file start
/// the masters so).
pub async fn jump_clock(node: &QuorumNode, ms: i64) -> Result<String, StoreError> {
    let reach = reach_node(node).await?;
    match reach.shift_clock(ms).await {
        Ok(now) => Ok(format!(
            "{} clock {:+} ms (now {:+} ms)",
            node.addr(),
            ms,
            now
        )),
        Err(why) => Err(StoreError::Unavailable(format!("{}: {why}", node.addr()))),
    }
}

/// A ZooKeeper server, found and ready to be struck.
pub struct ZkProcess {
    addr: String,
    reach: Reach,
}

/// Finds the ZooKeeper server at `addr`. On this machine: its dir from its `conf` answer (its
/// `dataDir`), its pid from the file `oversell up` keeps there; in a container: its
/// supervisor, which must say its server runs. Only a server that serves is found, so a fault
/// striking several finds them all before it kills any.
pub async fn find_zookeeper(addr: &str) -> Result<ZkProcess, StoreError> {
    let unavailable = |why: String| StoreError::ZooKeeper(format!("{addr}: {why}"));
    if Reach::is_remote(addr) {
        let remote = Remote::beside(addr);
        let view = remote.view().await.map_err(unavailable)?;
        if view.pid.is_none() {
            return Err(unavailable("down already".into()));
        }
        return Ok(ZkProcess {
            addr: addr.to_owned(),
            reach: Reach::Supervised(remote),
        });
    }
    let conf = crate::zookeeper_recipe::four_letter(addr, "conf")
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
    let pid_file = dir.join(crate::zookeeper_recipe::PID_FILE);
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .ok_or_else(|| unavailable(format!("no pid in {}", pid_file.display())))?;
    Ok(ZkProcess {
        addr: addr.to_owned(),
        reach: Reach::Here(Process { pid, dir }),
    })
}

/// Kills a ZooKeeper server (SIGKILL), kept down for `down_for` by its supervisor. Returns
/// `host:port pid=N`.
pub async fn kill_zookeeper(server: &ZkProcess, down_for: Duration) -> Result<String, StoreError> {
    let did = server
        .reach
        .kill(Some(down_for))
        .await
        .map_err(|why| StoreError::ZooKeeper(format!("{}: {why}", server.addr)))?;
    Ok(format!("{} {did}", server.addr))
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
        assert!(!Reach::is_remote("127.0.0.1:6381") && Reach::is_remote("lock1:6379"));
    }
}
