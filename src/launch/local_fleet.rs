//! The whole local topology as one value: a private Redis, N supervised instances and nginx in
//! front, in a temp run dir. `Fleet::start` brings it up in that order and returns once nginx
//! answers; `Fleet::stop` takes it down in the reverse order and leaves nothing behind.
//! Beside it: its run dir (`run_dir`) and the waits and port checks of its start (`readiness`).

mod readiness;
mod run_dir;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use oversell_api::tier::Tier;
use tokio::sync::watch;

use super::netns::{FleetNetwork, NetworkKind, Place};
use super::nginx::{self, Nginx};
use super::postgres_server::{self, PostgresSpec};
use super::process;
use super::redis_nodes::{self, LockStorePlan, RedisNodeSpec};
use super::redis_server;
use super::supervisor::{Instance, InstanceSpec, Supervisor};
use super::topology::{instance_id, ClientLimits, InstanceEnv, DEFAULT_CLIENT_BURST};
use super::zookeeper_servers::{self, ZooKeeperPlan};
use crate::client_limit::DEFAULT_TRUSTED_PROXIES;
use crate::config::ResourceStoreKind;
use crate::lock_store::{LockStoreKind, Persistence};
use oversell_client::ports::{free_port, free_ports};
use readiness::{ensure_free, free_listeners, wait_answering, wait_healthy};
use run_dir::{remove_stale_run_dirs, OWNER_FILE, RUN_DIR_PREFIX};

const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// How long ZooKeeper may take to serve at start-up (a JVM each; an ensemble elects a leader).
const ZOOKEEPER_READY: Duration = Duration::from_secs(30);
/// How long PostgreSQL may take to accept connections at start-up (`initdb` included).
const POSTGRES_READY: Duration = Duration::from_secs(60);
/// PostgreSQL's id: its supervisor's name and its namespace under `--network netns`.
const POSTGRES_ID: &str = "postgres";
/// What `oversell up` was asked for.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    pub instances: usize,
    /// Threads each instance serves on; `None`: its share of this machine's cores.
    pub worker_threads: Option<usize>,
    /// nginx's port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// The address nginx listens on (the instances and Redis stay on loopback).
    pub host: IpAddr,
    /// The private Redis' port; `None` picks a free one.
    pub redis_port: Option<u16>,
    /// Where Redis keeps its data; `None`: a temp dir and no persistence.
    pub redis_dir: Option<PathBuf>,
    pub tier: Tier,
    /// Where the locks live, and how that store keeps its data.
    pub lock_store: LockStoreKind,
    pub lock_persistence: Persistence,
    /// How many masters a `redlock` store has (odd, 3..=9); ignored by the other kinds.
    pub lock_nodes: usize,
    /// ZooKeeper servers to run for the ZooKeeper tiers (1 or 3); `None`: no ZooKeeper.
    pub zookeeper_nodes: Option<usize>,
    /// Whether to run PostgreSQL for the database tiers.
    pub postgres: bool,
    pub admin_token: String,
    /// Where students reach the fleet, for join links (`--public-url`); `None`: the address
    /// each request came to.
    pub public_url: Option<String>,
    /// Each client address's fair share, enforced by nginx and, behind it, by each instance;
    /// `None`: no limit.
    pub client_limits: Option<ClientLimits>,
    /// An absolute path, handed to every instance as `STATIC_DIR`; `None`: the dashboard
    /// built into the binary.
    pub static_dir: Option<PathBuf>,
    /// The `oversell` binary the instances run (`serve`): `up` passes its own executable.
    pub program: PathBuf,
    /// Loopback, or a network namespace per process (`--network netns`).
    pub network: NetworkKind,
    /// One Redis for the stock, or a Redis Cluster (six nodes, the lock store's launcher's):
    /// then the lock store is `shared`, on the same cluster.
    pub resource_store: ResourceStoreKind,
    /// How the resource store keeps the stock and the ledger (`always` by default: every
    /// acknowledged order is on disk before its 200).
    pub resource_persistence: Persistence,
}

pub struct Fleet {
    url: String,
    host: IpAddr,
    port: u16,
    /// nginx's port for the fleet's own calls (`FLEET_URL`), never limited per client.
    fleet_port: u16,
    admin_token: String,
    /// Fields drop in declaration order: an interrupted start kills nginx, then the
    /// instances, then Redis, and removes the run dir last.
    nginx: Nginx,
    /// What nginx is restarted with when it dies.
    nginx_binary: std::path::PathBuf,
    client_limits: Option<ClientLimits>,
    /// Where nginx proxies to: each instance's address.
    upstreams: Vec<SocketAddr>,
    /// The fleet network's gateway address, where nginx listens too (for the namespaced
    /// instances' server-side bursts).
    gateway: Option<IpAddr>,
    supervisors: Vec<Supervisor>,
    /// The lock store's Redis nodes and Sentinels, stopped after the instances.
    store_supervisors: Vec<Supervisor>,
    /// The ZooKeeper servers, stopped with the lock store.
    zookeeper_supervisors: Vec<Supervisor>,
    /// PostgreSQL, stopped with the lock store.
    postgres_supervisor: Option<Supervisor>,
    stop: watch::Sender<bool>,
    store_stop: watch::Sender<bool>,
    lock_store: LockStoreKind,
    /// The resource store: supervised like every other child (a killed one comes back with
    /// its append-only file), stopped with the lock store. None when the resource store is a
    /// cluster: its nodes are `store_supervisors`.
    redis: Option<Supervisor>,
    redis_url: Option<String>,
    resource_store: ResourceStoreKind,
    resource_persistence: Persistence,
    run_dir: tempfile::TempDir,
    /// The namespaces, veth pairs and bridge of `--network netns`: removed last, once every
    /// process in them has stopped.
    network: Option<FleetNetwork>,
}

impl Fleet {
    /// Starts Redis, the instances, then nginx; fails with a one-line reason (a missing
    /// program with its install command, a port in use, an instance that exits at start-up).
    pub async fn start(config: FleetConfig) -> anyhow::Result<Self> {
        if redis_server::find_binary("redis-server").is_none() {
            bail!("redis-server not found; install it with: sudo apt-get install -y redis-server");
        }
        if config.resource_store == ResourceStoreKind::Cluster
            && config.network == NetworkKind::Netns
        {
            bail!("--resource-store cluster runs on loopback only: the resource store is never partitioned");
        }
        let nginx_binary = nginx::find()?;
        let port = match config.port {
            0 => free_port()?,
            port => {
                ensure_free(config.host, port, "nginx --port", "--port")?;
                port
            }
        };
        if let Some(redis_port) = config.redis_port {
            ensure_free(LOOPBACK, redis_port, "--redis-port", "--redis-port")?;
        }
        // On loopback each instance is handed a socket bound now (see `InstanceSpec`); in a
        // namespace of its own nothing else can take its port, and it binds it itself.
        let app_listeners = match config.network {
            NetworkKind::Loopback => free_listeners(config.instances)?,
            NetworkKind::Netns => vec![],
        };
        let app_ports: Vec<u16> = match config.network {
            NetworkKind::Loopback => app_listeners
                .iter()
                .map(|l| l.local_addr().map(|a| a.port()))
                .collect::<Result<_, _>>()?,
            NetworkKind::Netns => free_ports(config.instances)?,
        };
        process::raise_open_files_limit();
        let app_ids: Vec<String> = (1..=config.instances).map(instance_id).collect();
        let network = match config.network {
            NetworkKind::Loopback => None,
            NetworkKind::Netns => {
                let ids = [
                    LockStorePlan::ids(config.lock_store, config.lock_nodes),
                    config
                        .zookeeper_nodes
                        .map(ZooKeeperPlan::ids)
                        .unwrap_or_default(),
                    match config.postgres {
                        true => vec![POSTGRES_ID.to_owned()],
                        false => vec![],
                    },
                    app_ids.clone(),
                ]
                .concat();
                let network = FleetNetwork::create(&ids)?;
                for run in network.removed_stale() {
                    process::say(&format!(
                        "removed the network {run}: left by an up killed before it could clean up"
                    ));
                }
                Some(network)
            }
        };
        let place_of = |id: &str| {
            network
                .as_ref()
                .and_then(|n| n.place(id))
                .unwrap_or(Place::LOOPBACK)
        };
        let gateway = network.as_ref().map(|n| n.network().gateway);
        let host_side = gateway.unwrap_or(std::net::Ipv4Addr::LOCALHOST);

        remove_stale_run_dirs();
        let run_dir = tempfile::Builder::new().prefix(RUN_DIR_PREFIX).tempdir()?;
        // Whose run dir this is, for the next `up` after a `kill -9` of this one.
        std::fs::write(
            run_dir.path().join(OWNER_FILE),
            std::process::id().to_string(),
        )?;
        let (store_stop, store_stopping) = watch::channel(false);
        let on_cluster = config.resource_store == ResourceStoreKind::Cluster;
        // The stock and the ledger survive a killed Redis: an append-only file, fsynced as
        // `resource_persistence` says, in the run dir (or in --redis-dir, across runs). On a
        // cluster, the same on every node (below).
        let redis = match on_cluster {
            true => None,
            false => Some(
                start_resource_redis(&config, run_dir.path(), gateway, store_stopping.clone())
                    .await?,
            ),
        };
        let redis_url = redis
            .as_ref()
            .map(|(_, port)| format!("redis://127.0.0.1:{port}"));
        // Where the instances reach it: the gateway address from inside a namespace.
        let instance_redis_url = redis
            .as_ref()
            .map(|(_, port)| format!("redis://{host_side}:{port}"))
            .unwrap_or_default();
        let redis = redis.map(|(supervisor, _)| supervisor);

        // A cluster resource store is the lock store's six-node cluster, holding the locks
        // too (`shared`), kept on disk like the one Redis.
        let (plan_kind, plan_persistence) = match on_cluster {
            true => (LockStoreKind::Cluster, config.resource_persistence),
            false => (config.lock_store, config.lock_persistence),
        };
        let plan = LockStorePlan::new(
            plan_kind,
            plan_persistence,
            config.lock_nodes,
            run_dir.path(),
            &mut free_ports(LockStorePlan::ports_needed(plan_kind, config.lock_nodes))?.into_iter(),
            &place_of,
        )?;
        let (lock_redis_url, lock_sentinels, lock_redis_nodes, lock_cluster) = (
            plan.single_url().unwrap_or_default(),
            plan.sentinel_addrs().join(","),
            plan.redlock_urls().join(","),
            plan.cluster_addrs().join(","),
        );
        let (lock_cluster, redis_cluster) = match on_cluster {
            true => (String::new(), lock_cluster),
            false => (lock_cluster, String::new()),
        };
        let cluster = plan.is_cluster();
        let mut store_supervisors = Vec::new();
        if network.is_none() {
            for sentinel in plan.sentinels.iter().map(|s| s.port) {
                ensure_free(LOOPBACK, sentinel, "a Sentinel", "another run")?;
            }
        }
        let LockStorePlan { nodes, sentinels } = plan;
        let (node_ports, sentinel_ports): (Vec<_>, Vec<_>) = (
            nodes.iter().map(|n| (n.id.clone(), n.addr())).collect(),
            sentinels
                .iter()
                .map(|s| (s.id.clone(), s.place.addr(s.port)))
                .collect(),
        );
        for node in nodes {
            store_supervisors.push(Supervisor::start(node, store_stopping.clone()));
        }
        // The data nodes first: a Sentinel must find its primary answering.
        wait_answering(&node_ports).await?;
        if cluster {
            redis_nodes::form_cluster(&node_ports).await?;
        }
        for sentinel in sentinels {
            store_supervisors.push(Supervisor::start(sentinel, store_stopping.clone()));
        }
        wait_answering(&sentinel_ports).await?;
        redis_nodes::wait_ready(&node_ports, &sentinel_ports).await?;

        let mut zookeeper_supervisors = Vec::new();
        let zookeeper = match config.zookeeper_nodes {
            Some(nodes) => {
                zookeeper_servers::installation()?;
                let plan = ZooKeeperPlan::new(
                    nodes,
                    run_dir.path(),
                    &mut free_ports(ZooKeeperPlan::ports_needed(nodes))?.into_iter(),
                )?
                .placed(place_of);
                let endpoints = plan.endpoints();
                for server in plan.servers.clone() {
                    zookeeper_supervisors.push(Supervisor::start(server, store_stopping.clone()));
                }
                zookeeper_servers::wait_ready(&endpoints, ZOOKEEPER_READY).await?;
                plan.connect_string()
            }
            None => String::new(),
        };
        let mut postgres_supervisor = None;
        let postgres = match config.postgres {
            true => {
                postgres_server::installation()?;
                let port = free_ports(1)?[0];
                let spec = PostgresSpec::new(run_dir.path(), port, place_of(POSTGRES_ID));
                postgres_supervisor = Some(Supervisor::start(spec.clone(), store_stopping.clone()));
                postgres_server::wait_ready(&spec, POSTGRES_READY).await?;
                spec.url()
            }
            false => String::new(),
        };

        let url = format!("http://127.0.0.1:{port}");
        // nginx's port for the fleet's own calls, which no per-client limit counts.
        let fleet_port = free_ports(1)?[0];
        let (stop, stopping) = watch::channel(false);
        let mut app_listeners = app_listeners.into_iter();
        let upstreams: Vec<SocketAddr> = app_ids
            .iter()
            .zip(&app_ports)
            .map(|(id, &p)| place_of(id).addr(p))
            .collect();
        // The instances keep a per-client limit of their own, with nginx's numbers, and
        // believe the X-Real-IP of nginx only: on loopback, or the bridge's gateway.
        let limits = config.client_limits.as_ref();
        let trusted_proxies = match gateway {
            Some(gateway) => format!("{DEFAULT_TRUSTED_PROXIES},{gateway}/32"),
            None => DEFAULT_TRUSTED_PROXIES.to_owned(),
        };
        // The instances share this machine's cores: each its share, not one thread per core.
        let worker_threads = config.worker_threads.unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            cores.div_ceil(app_ids.len().max(1))
        });
        let supervisors: Vec<Supervisor> = app_ids
            .iter()
            .zip(&app_ports)
            .map(|(id, &app_port)| {
                let place = place_of(id);
                let env = InstanceEnv {
                    instance_id: id.clone(),
                    host: place.ip.to_string(),
                    port: app_port.to_string(),
                    redis_url: instance_redis_url.clone(),
                    resource_store: config.resource_store.to_string(),
                    redis_cluster: redis_cluster.clone(),
                    lock_store: config.lock_store.to_string(),
                    lock_redis_url: lock_redis_url.clone(),
                    lock_sentinels: lock_sentinels.clone(),
                    lock_redis_nodes: lock_redis_nodes.clone(),
                    lock_cluster: lock_cluster.clone(),
                    zookeeper: zookeeper.clone(),
                    postgres: postgres.clone(),
                    admin_token: config.admin_token.clone(),
                    lock_tier: config.tier.to_string(),
                    static_dir: config
                        .static_dir
                        .as_deref()
                        .map(|dir| dir.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    fleet_url: format!("http://{host_side}:{fleet_port}"),
                    public_url: config.public_url.clone().unwrap_or_default(),
                    client_rate: limits.as_ref().map_or("0".into(), |l| l.rate.clone()),
                    client_burst: limits
                        .as_ref()
                        .map_or(DEFAULT_CLIENT_BURST.to_string(), |l| l.burst.clone()),
                    trusted_proxies: trusted_proxies.clone(),
                    fleet: String::new(),
                    worker_threads: worker_threads.to_string(),
                };
                let spec = InstanceSpec {
                    program: config.program.clone(),
                    port: app_port,
                    place,
                    env,
                    listener: std::sync::Mutex::new(app_listeners.next()),
                    network: network.as_ref().map(|n| n.network().encode()),
                };
                Supervisor::start(spec, stopping.clone())
            })
            .collect();
        wait_healthy(&supervisors).await?;
        let gateway = gateway.map(IpAddr::V4);
        // The namespaced instances reach nginx through the bridge, on the fleet's own port.
        let client_limits = config.client_limits;
        let nginx = Nginx::start(
            &nginx_binary,
            run_dir.path(),
            (config.host, gateway),
            (port, fleet_port),
            &upstreams,
            client_limits.as_ref(),
        )
        .await?;
        Ok(Fleet {
            url,
            host: config.host,
            port,
            fleet_port,
            admin_token: config.admin_token,
            nginx,
            nginx_binary,
            client_limits,
            upstreams,
            gateway,
            supervisors,
            store_supervisors,
            zookeeper_supervisors,
            postgres_supervisor,
            stop,
            store_stop,
            lock_store: config.lock_store,
            redis,
            redis_url,
            resource_store: config.resource_store,
            resource_persistence: config.resource_persistence,
            run_dir,
            network,
        })
    }

    /// The fleet's own network (`--network netns`), if it has one.
    pub fn network(&self) -> Option<&crate::member::network::Network> {
        self.network.as_ref().map(FleetNetwork::network)
    }

    /// nginx's URL: the fleet as a whole.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where nginx listens.
    pub fn host(&self) -> IpAddr {
        self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// Every instance with its current pid (which changes when it is restarted).
    pub fn instances(&self) -> Vec<Instance> {
        self.supervisors.iter().map(Supervisor::instance).collect()
    }

    /// The resource store's URL, when it is one Redis.
    pub fn redis_url(&self) -> Option<&str> {
        self.redis_url.as_deref()
    }

    /// The resource store's process, with its current pid, when it is one Redis.
    pub fn redis_process(&self) -> Option<Instance> {
        self.redis.as_ref().map(Supervisor::instance)
    }

    /// One Redis, or a Redis Cluster (whose nodes are [`Fleet::lock_store_processes`]).
    pub fn resource_store(&self) -> ResourceStoreKind {
        self.resource_store
    }

    pub fn resource_persistence(&self) -> Persistence {
        self.resource_persistence
    }

    pub fn lock_store(&self) -> LockStoreKind {
        self.lock_store
    }

    /// The lock store's processes (Redis nodes, Sentinels) with their current pids.
    pub fn lock_store_processes(&self) -> Vec<Instance> {
        self.store_supervisors
            .iter()
            .map(Supervisor::instance)
            .collect()
    }

    /// The ZooKeeper servers with their current pids (none unless asked for).
    pub fn zookeeper_processes(&self) -> Vec<Instance> {
        self.zookeeper_supervisors
            .iter()
            .map(Supervisor::instance)
            .collect()
    }

    /// PostgreSQL with its current pid, when the fleet runs it.
    pub fn postgres_process(&self) -> Option<Instance> {
        self.postgres_supervisor.as_ref().map(Supervisor::instance)
    }

    pub fn nginx_pid(&self) -> Option<u32> {
        self.nginx.pid()
    }

    pub fn run_dir(&self) -> &std::path::Path {
        self.run_dir.path()
    }

    /// Completes if nginx exits by itself (the fleet is then unreachable until
    /// [`Fleet::restart_nginx`]).
    pub async fn nginx_exited(&mut self) -> String {
        self.nginx.exited().await
    }

    /// Starts nginx again, on the same address, in front of the same instances. The run dir
    /// is made again first: nginx keeps its config, pid file and temp files there, and someone
    /// may have removed it.
    pub async fn restart_nginx(&mut self) -> anyhow::Result<()> {
        std::fs::create_dir_all(self.run_dir.path())?;
        let nginx = Nginx::start(
            &self.nginx_binary,
            self.run_dir.path(),
            (self.host, self.gateway),
            (self.port, self.fleet_port),
            &self.upstreams,
            self.client_limits.as_ref(),
        );
        self.nginx = nginx.await?;
        Ok(())
    }

    /// nginx first (no new requests), then every instance (SIGTERM: each drains, a frozen one
    /// is resumed first), then Redis; the run dir is removed. Waits for every process.
    pub async fn stop(mut self) {
        self.nginx.stop().await;
        let _ = self.stop.send(true);
        let supervisors = std::mem::take(&mut self.supervisors);
        futures_util::future::join_all(supervisors.into_iter().map(Supervisor::join)).await;
        let _ = self.store_stop.send(true);
        let mut store = std::mem::take(&mut self.store_supervisors);
        store.append(&mut self.zookeeper_supervisors);
        store.extend(self.postgres_supervisor.take());
        futures_util::future::join_all(store.into_iter().map(Supervisor::join)).await;
        if let Some(redis) = self.redis {
            redis.join().await;
        }
        // Dropping `self` removes the run dir.
    }
}

/// Starts the one-Redis resource store and waits for it to answer; returns it with its port.
async fn start_resource_redis(
    config: &FleetConfig,
    run_dir: &std::path::Path,
    gateway: Option<std::net::Ipv4Addr>,
    stopping: watch::Receiver<bool>,
) -> anyhow::Result<(Supervisor, u16)> {
    let port = match config.redis_port {
        Some(port) => port,
        None => free_port()?,
    };
    let redis = Supervisor::start(
        RedisNodeSpec {
            id: "redis".into(),
            port,
            dir: config
                .redis_dir
                .clone()
                .unwrap_or_else(|| run_dir.join("redis")),
            persistence: config.resource_persistence,
            sentinel: None,
            clock_shim: None,
            place: Place::LOOPBACK,
            also_bind: gateway,
            cluster_bus: None,
        },
        stopping,
    );
    wait_answering(&[("redis".into(), Place::LOOPBACK.addr(port))]).await?;
    Ok((redis, port))
}
