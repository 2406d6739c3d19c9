//! The Redis processes of `oversell up`, each supervised like an instance (a killed one is
//! restarted with the same port, data dir and settings, and the restart is logged):
//!
//! - the resource store: one `redis-server`;
//! - the lock store: nothing more for `shared`; one `redis-server` for `single`; for
//!   `sentinel`, a primary, a replica and three Sentinels (`redis-server --sentinel`); for
//!   `redlock`, N independent masters; for `cluster`, six nodes with `cluster-enabled`, made
//!   one Redis Cluster of three masters and three replicas by `redis-cli --cluster create`.
//!
//! A node killed by the `node-down` or `lock-store-down` fault leaves a hold-down file in its
//! data dir (`member::HOLD_DOWN_FILE`): it stays down until the time written there,
//! as a crashed machine would, instead of being back within 100 ms.
//!
//! A data node behind Sentinel asks the Sentinels whom to follow each time it starts. A killed
//! primary comes back only once they have promoted another node (or after
//! [`PROMOTION_WAIT`]), as the replica of the new primary: restarted at once, it would be back
//! before Sentinel noticed it had gone, and no failover would ever happen.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use tokio::process::Command;

use super::clock_shim;
use super::netns::Place;
use super::redis_server;
use super::supervisor::ChildSpec;
use crate::lock_store::{LockStoreKind, Persistence, DEFAULT_SENTINEL_MASTER};
use crate::member::clock_offset;
use crate::redis_pool::named_primary;

/// How long Sentinel notices a dead primary after (`down-after-milliseconds`). 500 ms was
/// tried: on a busy 2-core machine a Sentinel then took a primary promoted a moment earlier
/// for dead, and failed over a second time.
pub const DOWN_AFTER_MS: u64 = 1_000;
/// How long a killed primary waits for Sentinel to promote another node before it restarts
/// anyway.
const PROMOTION_WAIT: Duration = Duration::from_secs(10);
/// How long the lock store may take to be ready at start-up (Sentinels find each other by
/// hello messages every 2 s).
const READY_DEADLINE: Duration = Duration::from_secs(20);

/// One `redis-server` data node.
pub struct RedisNodeSpec {
    pub id: String,
    pub port: u16,
    pub dir: PathBuf,
    pub persistence: Persistence,
    /// Set behind Sentinel: whom to follow.
    pub sentinel: Option<FollowSentinel>,
    /// The clock shim to run under (a Redlock master: the `clock-jump` fault moves its clock
    /// through the offset file in its data dir). `None`: the true clock, at vDSO speed.
    pub clock_shim: Option<PathBuf>,
    /// Where it runs: loopback, or a namespace of the fleet's network.
    pub place: Place,
    /// An address to listen on besides the place's: the resource store's on the fleet
    /// network's bridge, where the namespaced instances reach it.
    pub also_bind: Option<Ipv4Addr>,
    /// A Redis Cluster node: the port its cluster bus listens on (Redis' default, the data
    /// port + 10000, may be past 65535 for the free ports `up` takes).
    pub cluster_bus: Option<u16>,
}

impl RedisNodeSpec {
    pub fn addr(&self) -> SocketAddr {
        self.place.addr(self.port)
    }
}

pub struct FollowSentinel {
    pub sentinels: Vec<SocketAddr>,
    /// The primary at the very first start.
    pub first_primary: SocketAddr,
    started: AtomicBool,
}

/// The accessors a spec answers from its own `id`, `port` and `place` fields: the same for a
/// Redis node and a Sentinel, written once.
macro_rules! named_child {
    () => {
        fn id(&self) -> &str {
            &self.id
        }

        fn port(&self) -> u16 {
            self.port
        }

        fn place(&self) -> Place {
            self.place.clone()
        }
    };
}

#[async_trait]
impl ChildSpec for RedisNodeSpec {
    named_child!();

    async fn command(&self) -> std::io::Result<Command> {
        std::fs::create_dir_all(&self.dir)?;
        super::supervisor::stay_down(&self.dir).await;
        let mut command = redis_command()?;
        let mut bind = self.place.ip.to_string();
        if let Some(also) = self.also_bind {
            bind = format!("{bind} {also}");
        }
        command
            .args(["--port", &self.port.to_string(), "--bind", &bind])
            // Bound to named addresses only, and with no password: protected mode would
            // refuse the fleet network's own members.
            .args(["--protected-mode", "no"])
            .args(["--daemonize", "no", "--loglevel", "notice"])
            // A replica that lost its primary syncs again at once, not after Redis' default
            // 5 s wait for more replicas to share the snapshot.
            .args(["--repl-diskless-sync-delay", "0"])
            .args(persistence_args(self.persistence))
            .arg("--dir")
            .arg(&self.dir)
            // Its own log in its data dir: a Redis' start-up banner is noise in `up`'s output.
            .arg("--logfile")
            .arg(self.dir.join("redis.log"));
        if let Some(bus) = self.cluster_bus {
            command.args(cluster_args(bus));
        }
        if let Some(shim) = &self.clock_shim {
            let offset = clock_offset::offset_file(&self.dir);
            clock_offset::create_offset_file(&offset)?;
            command.envs(clock_shim::preload_env(shim, &offset));
        }
        if let Some(follow) = &self.sentinel {
            if let Some(primary) = follow.primary_for(self.addr()).await {
                let (ip, port) = (primary.ip().to_string(), primary.port().to_string());
                command.args(["--replicaof", &ip, &port]);
            }
        }
        Ok(command)
    }
}

impl FollowSentinel {
    /// The primary this node must replicate from at this start, or `None` to start as primary.
    async fn primary_for(&self, me: SocketAddr) -> Option<SocketAddr> {
        if !self.started.swap(true, Ordering::Relaxed) {
            return (me != self.first_primary).then_some(self.first_primary);
        }
        let deadline = Instant::now() + PROMOTION_WAIT;
        loop {
            let named = named_primaries(&self.sentinels).await;
            // Any Sentinel naming another node means a failover happened: follow it. The
            // others may lag behind by a hello message or two.
            if let Some(primary) = named.iter().copied().find(|p| *p != me) {
                return Some(primary);
            }
            if Instant::now() >= deadline {
                return match named.is_empty() {
                    true => Some(self.first_primary).filter(|p| *p != me),
                    false => None,
                };
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The primary's address as each Sentinel that answers names it.
async fn named_primaries(sentinels: &[SocketAddr]) -> Vec<SocketAddr> {
    let mut named = Vec::new();
    for sentinel in sentinels {
        let asked = async {
            let addr = named_primary(&sentinel.to_string(), DEFAULT_SENTINEL_MASTER)
                .await
                .ok()?;
            addr.parse::<SocketAddr>().ok()
        };
        if let Ok(Some(primary)) = tokio::time::timeout(Duration::from_millis(500), asked).await {
            named.push(primary);
        }
    }
    named
}

/// One Sentinel. Its config file is written once; Sentinel rewrites it with what it learns,
/// and a restarted Sentinel starts from that.
pub struct SentinelSpec {
    pub id: String,
    pub port: u16,
    pub place: Place,
    pub conf: PathBuf,
    pub first_primary: SocketAddr,
}

#[async_trait]
impl ChildSpec for SentinelSpec {
    named_child!();

    async fn command(&self) -> std::io::Result<Command> {
        if !self.conf.exists() {
            let log = self.conf.with_extension("log");
            let conf = sentinel_conf(self.place.addr(self.port), self.first_primary, &log);
            std::fs::write(&self.conf, conf)?;
        }
        let mut command = redis_command()?;
        command.arg(&self.conf).arg("--sentinel");
        Ok(command)
    }
}

/// Quorum 2 of 3; a primary silent for [`DOWN_AFTER_MS`] is down. `failover-timeout` is short
/// so that repeated failovers (the benchmarks) are not refused for minutes.
fn sentinel_conf(me: SocketAddr, primary: SocketAddr, log: &std::path::Path) -> String {
    let m = DEFAULT_SENTINEL_MASTER;
    let log = log.display();
    let (port, bind) = (me.port(), me.ip());
    let (primary_ip, primary_port) = (primary.ip(), primary.port());
    format!(
        "port {port}\nbind {bind}\nprotected-mode no\ndaemonize no\nloglevel notice\n\
         logfile \"{log}\"\n\
         sentinel monitor {m} {primary_ip} {primary_port} 2\n\
         sentinel down-after-milliseconds {m} {DOWN_AFTER_MS}\n\
         sentinel failover-timeout {m} 2000\n\
         sentinel parallel-syncs {m} 1\n"
    )
}

/// How long a silent cluster master counts as failing (`cluster-node-timeout`): with Redis'
/// default of 15 s a failover chapter would wait a quarter of a minute; Sentinel's store here
/// notices after [`DOWN_AFTER_MS`], and this is the same.
pub const CLUSTER_NODE_TIMEOUT_MS: u64 = 1_000;

/// A cluster node's arguments. Its view of the cluster (`nodes.conf`, in its data dir)
/// survives a restart, so a killed master comes back as a node that knows it lost its slots
/// and follows the replica promoted in its place. `cluster-require-full-coverage no`: the
/// other masters' rooms keep selling while one shard fails over.
fn cluster_args(bus: u16) -> Vec<String> {
    [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-port",
        &bus.to_string(),
        "--cluster-node-timeout",
        &CLUSTER_NODE_TIMEOUT_MS.to_string(),
        "--cluster-require-full-coverage",
        "no",
    ]
    .map(String::from)
    .to_vec()
}

/// How many nodes `oversell up --lock-store cluster` runs: three masters, a replica each.
pub const CLUSTER_NODES: usize = 6;

/// Makes the cluster's nodes one Redis Cluster, three masters with a replica each
/// (`redis-cli --cluster create`), unless they already are one.
pub async fn form_cluster(nodes: &[(String, SocketAddr)]) -> anyhow::Result<()> {
    let (_, first) = nodes.first().context("a cluster needs nodes")?;
    let known: Option<String> = query(*first, redis::cmd("CLUSTER").arg("INFO")).await;
    if known.is_some_and(|info| !info.contains("cluster_known_nodes:1\r")) {
        return Ok(());
    }
    let cli = redis_server::find_binary("redis-cli").context(
        "redis-cli not found (it makes the cluster); install it with: sudo apt-get install -y \
         redis-tools",
    )?;
    let output = Command::new(cli)
        .arg("--cluster")
        .arg("create")
        .args(nodes.iter().map(|(_, addr)| addr.to_string()))
        .args(["--cluster-replicas", "1", "--cluster-yes"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .context("could not run redis-cli --cluster create")?;
    if !output.status.success() {
        bail!(
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .chain(String::from_utf8_lossy(&output.stderr).lines())
                .filter(|l| l.contains("ERR") || l.contains("rror"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(())
}

fn redis_command() -> std::io::Result<Command> {
    let binary = redis_server::find_binary("redis-server").ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "redis-server not found; install it with: sudo apt-get install -y redis-server",
        )
    })?;
    Ok(Command::new(binary))
}

/// The lock store's processes as `oversell up` plans them.
pub struct LockStorePlan {
    pub nodes: Vec<RedisNodeSpec>,
    pub sentinels: Vec<SentinelSpec>,
}

impl LockStorePlan {
    /// The ids of the processes a `kind` store runs (`masters`: a Redlock store's), data
    /// nodes first: what a fleet network gives a namespace each.
    pub fn ids(kind: LockStoreKind, masters: usize) -> Vec<String> {
        match kind {
            LockStoreKind::Shared => vec![],
            LockStoreKind::Single => vec!["lock".into()],
            LockStoreKind::Sentinel => ["lock1", "lock2", "sentinel1", "sentinel2", "sentinel3"]
                .map(String::from)
                .to_vec(),
            LockStoreKind::Redlock => (1..=masters).map(|n| format!("redlock{n}")).collect(),
            LockStoreKind::Cluster => (1..=CLUSTER_NODES).map(|n| format!("cluster{n}")).collect(),
        }
    }

    /// Ports are taken from `ports` (free ones); data dirs go under `run_dir`; each process
    /// runs where `place_of` says for its id.
    pub fn new(
        kind: LockStoreKind,
        persistence: Persistence,
        masters: usize,
        run_dir: &std::path::Path,
        ports: &mut impl Iterator<Item = u16>,
        place_of: &dyn Fn(&str) -> Place,
    ) -> anyhow::Result<Self> {
        let mut port = || ports.next().context("not enough free ports");
        let node = |id: &str, port: u16, sentinel: Option<FollowSentinel>| RedisNodeSpec {
            id: id.to_owned(),
            port,
            dir: run_dir.join(id),
            persistence,
            sentinel,
            clock_shim: None,
            place: place_of(id),
            also_bind: None,
            cluster_bus: None,
        };
        Ok(match kind {
            LockStoreKind::Shared => LockStorePlan {
                nodes: vec![],
                sentinels: vec![],
            },
            LockStoreKind::Single => LockStorePlan {
                nodes: vec![node("lock", port()?, None)],
                sentinels: vec![],
            },
            LockStoreKind::Sentinel => {
                let (primary, replica) = (port()?, port()?);
                let sentinel_ports = [port()?, port()?, port()?];
                let sentinel_id = |i: usize| format!("sentinel{}", i + 1);
                let sentinels: Vec<SocketAddr> = sentinel_ports
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| place_of(&sentinel_id(i)).addr(p))
                    .collect();
                let first_primary = place_of("lock1").addr(primary);
                let follow = || FollowSentinel {
                    sentinels: sentinels.clone(),
                    first_primary,
                    started: AtomicBool::new(false),
                };
                LockStorePlan {
                    nodes: vec![
                        node("lock1", primary, Some(follow())),
                        node("lock2", replica, Some(follow())),
                    ],
                    sentinels: sentinel_ports
                        .iter()
                        .enumerate()
                        .map(|(i, &p)| SentinelSpec {
                            id: sentinel_id(i),
                            port: p,
                            place: place_of(&sentinel_id(i)),
                            conf: run_dir.join(format!("{}.conf", sentinel_id(i))),
                            first_primary,
                        })
                        .collect(),
                }
            }
            LockStoreKind::Redlock => {
                let shim = clock_shim::install_preload(run_dir)
                    .context("cannot write the clock shim into the run dir")?;
                LockStorePlan {
                    nodes: (1..=masters)
                        .map(|n| {
                            Ok(RedisNodeSpec {
                                clock_shim: Some(shim.clone()),
                                ..node(&format!("redlock{n}"), port()?, None)
                            })
                        })
                        .collect::<anyhow::Result<_>>()?,
                    sentinels: vec![],
                }
            }
            LockStoreKind::Cluster => LockStorePlan {
                nodes: (1..=CLUSTER_NODES)
                    .map(|n| {
                        let (data, bus) = (port()?, port()?);
                        Ok(RedisNodeSpec {
                            cluster_bus: Some(bus),
                            ..node(&format!("cluster{n}"), data, None)
                        })
                    })
                    .collect::<anyhow::Result<_>>()?,
                sentinels: vec![],
            },
        })
    }

    /// How many free ports the plan for `kind` takes (`masters`: a Redlock store's).
    pub fn ports_needed(kind: LockStoreKind, masters: usize) -> usize {
        match kind {
            LockStoreKind::Shared => 0,
            LockStoreKind::Single => 1,
            LockStoreKind::Sentinel => 5,
            LockStoreKind::Redlock => masters,
            // A data port and a cluster bus port each.
            LockStoreKind::Cluster => 2 * CLUSTER_NODES,
        }
    }

    /// `LOCK_CLUSTER` for a Redis Cluster store: every node.
    pub fn cluster_addrs(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.cluster_bus.is_some())
            .map(|n| n.addr().to_string())
            .collect()
    }

    /// Whether the nodes are to be made one Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.nodes.iter().any(|n| n.cluster_bus.is_some())
    }

    /// `LOCK_REDIS_NODES` for a Redlock store: every master, node 1 first.
    pub fn redlock_urls(&self) -> Vec<String> {
        let cluster = self.is_cluster();
        match !cluster && self.nodes.len() > 1 && self.sentinels.is_empty() {
            true => self
                .nodes
                .iter()
                .map(|n| format!("redis://{}", n.addr()))
                .collect(),
            false => vec![],
        }
    }

    /// `LOCK_REDIS_URL` for a single store.
    pub fn single_url(&self) -> Option<String> {
        match (self.nodes.as_slice(), self.sentinels.is_empty()) {
            ([node], true) => Some(format!("redis://{}", node.addr())),
            _ => None,
        }
    }

    /// `LOCK_SENTINELS` for a Sentinel store.
    pub fn sentinel_addrs(&self) -> Vec<String> {
        self.sentinels
            .iter()
            .map(|s| s.place.addr(s.port).to_string())
            .collect()
    }
}

/// Waits until every lock-store node (`id`, address) answers, and behind Sentinel until the
/// replica is in sync and every Sentinel knows the replica and the two other Sentinels.
pub async fn wait_ready(
    nodes: &[(String, SocketAddr)],
    sentinels: &[(String, SocketAddr)],
) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_DEADLINE;
    let mut waiting_for = String::new();
    while Instant::now() < deadline {
        match not_ready(nodes, sentinels).await {
            None => return Ok(()),
            Some(what) => waiting_for = what,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the lock store was not ready within {READY_DEADLINE:?}: {waiting_for}")
}

/// What is not ready yet, in words.
async fn not_ready(
    nodes: &[(String, SocketAddr)],
    sentinels: &[(String, SocketAddr)],
) -> Option<String> {
    for (id, addr) in nodes {
        let info: Option<String> = query(*addr, redis::cmd("INFO").arg("replication")).await;
        let Some(info) = info else {
            return Some(format!("{id} does not answer"));
        };
        if info.contains("role:slave") && !info.contains("master_link_status:up") {
            return Some(format!("{id} is not in sync with its primary"));
        }
        let cluster: Option<String> = query(*addr, redis::cmd("CLUSTER").arg("INFO")).await;
        // A node without cluster support answers with an error: nothing more to wait for.
        if let Some(cluster) = cluster {
            if !cluster.contains("cluster_state:ok") {
                return Some(format!("{id}: the cluster is not formed yet"));
            }
            if info.contains("role:master") && info.contains("connected_slaves:0") {
                return Some(format!("{id}: a master without its replica yet"));
            }
        }
    }
    let m = DEFAULT_SENTINEL_MASTER;
    for (id, addr) in sentinels {
        let others: Option<Vec<redis::Value>> =
            query(*addr, redis::cmd("SENTINEL").arg("sentinels").arg(m)).await;
        let replicas: Option<Vec<redis::Value>> =
            query(*addr, redis::cmd("SENTINEL").arg("replicas").arg(m)).await;
        match (others, replicas) {
            (Some(o), Some(r)) if o.len() + 1 >= sentinels.len() && !r.is_empty() => {}
            _ => return Some(format!("{id} has not found its peers yet")),
        }
    }
    None
}

async fn query<T: redis::FromRedisValue>(addr: SocketAddr, cmd: &mut redis::Cmd) -> Option<T> {
    let asked = async {
        let client = redis::Client::open(format!("redis://{addr}")).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        cmd.query_async(&mut conn).await.ok()
    };
    tokio::time::timeout(Duration::from_millis(500), asked)
        .await
        .ok()
        .flatten()
}

/// The `redis-server` arguments for a persistence setting: RDB snapshots by the classic save
/// rules, or an append-only file fsynced as asked (and then no snapshots), rewritten once it
/// reaches [`AOF_REWRITE_MIN_SIZE`].
fn persistence_args(persistence: Persistence) -> Vec<&'static str> {
    let fsync = match persistence {
        Persistence::None => return vec!["--appendonly", "no", "--save", ""],
        Persistence::Rdb => {
            return vec![
                "--appendonly",
                "no",
                "--save",
                oversell_api::store::RDB_SAVE_RULES,
            ]
        }
        Persistence::Everysec => "everysec",
        Persistence::Always => "always",
        Persistence::Written => "no",
    };
    vec![
        "--appendonly",
        "yes",
        "--appendfsync",
        fsync,
        "--save",
        "",
        "--auto-aof-rewrite-min-size",
        AOF_REWRITE_MIN_SIZE,
    ]
}

/// The size at which an append-only file is rewritten (if it has also doubled since the last
/// rewrite, Redis' default rule). A sale writes about 3 KB to the resource store's file (the
/// ledger, the timeline, the lock's and the queue's keys), so at a fleet's full pace Redis'
/// default 64 MB comes every few seconds, and each rewrite (a fork, and a child writing the
/// data out beside the sales) slows an in-order lock's queue for about 100 ms on two cores:
/// the slowest turns of a 5 s run. At 256 MB the file still loads within about 2 s after a
/// restart (170 MB took 1.4 s) and stays far from filling a small disk.
const AOF_REWRITE_MIN_SIZE: &str = "256mb";
