//! Command-line flags of `oversell serve`; every flag is also an environment variable.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;

use anyhow::Context;
use oversell_api::settings::{LeaseMode, Settings, WaitStrategy, DEFAULT_SYNC_TIMEOUT_MS};
use oversell_api::tier::Tier;

use crate::client_limit::{
    self, DEFAULT_CLIENT_BURST, DEFAULT_CLIENT_RATE, DEFAULT_TRUSTED_PROXIES,
};
use crate::lock_store::{LockStore, LockStoreKind, DEFAULT_SENTINEL_MASTER};
use crate::redis_pool::RedisPool;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The resource store: the Redis that holds the stock, the ledger and every ground-truth
    /// figure (and the locks too, with `--lock-store shared`).
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,

    /// What the resource store is: `single` (one Redis, `--redis-url`) or `cluster` (a Redis
    /// Cluster, `--redis-cluster`: each room's stock and ledger on the master owning its
    /// `{room}` slot, so rooms spread over the masters; the fleet's registry on one). With
    /// `--lock-store shared` the locks go on the same cluster.
    #[arg(long, env = "RESOURCE_STORE", value_enum, default_value_t = ResourceStoreKind::Single)]
    pub resource_store: ResourceStoreKind,

    /// Nodes of the resource store's Redis Cluster, as `host:port,host:port,…` (any that
    /// answers tells where the others are), for `--resource-store cluster`.
    #[arg(
        long,
        env = "REDIS_CLUSTER",
        value_delimiter = ',',
        required_if_eq("resource_store", "cluster")
    )]
    pub redis_cluster: Vec<String>,

    /// Where the locks live: `shared` (in the resource store's Redis), `single` (a Redis of
    /// their own, `--lock-redis-url`), `sentinel` (a primary and replica behind Sentinels,
    /// `--lock-sentinels`; connections follow a failover), `redlock` (independent masters,
    /// `--lock-redis-nodes`, for the `redlock` tier; the other tiers use the first) or
    /// `cluster` (a Redis Cluster, `--lock-cluster`; a room's lock on its slot's master).
    #[arg(long, env = "LOCK_STORE", value_enum, default_value_t = LockStoreKind::Shared)]
    pub lock_store: LockStoreKind,

    /// The lock store's Redis, for `--lock-store single`.
    #[arg(long, env = "LOCK_REDIS_URL", required_if_eq("lock_store", "single"))]
    pub lock_redis_url: Option<String>,

    /// The Sentinels, as `host:port,host:port,…`, for `--lock-store sentinel`.
    #[arg(
        long,
        env = "LOCK_SENTINELS",
        value_delimiter = ',',
        required_if_eq("lock_store", "sentinel")
    )]
    pub lock_sentinels: Vec<String>,

    /// The Redlock masters, as `redis://host:port,redis://host:port,…` (an odd number, 3..=9),
    /// for `--lock-store redlock`.
    #[arg(
        long,
        env = "LOCK_REDIS_NODES",
        value_delimiter = ',',
        required_if_eq("lock_store", "redlock")
    )]
    pub lock_redis_nodes: Vec<String>,

    /// Nodes of a Redis Cluster, as `host:port,host:port,…` (any that answers tells where
    /// the others are), for `--lock-store cluster`.
    #[arg(
        long,
        env = "LOCK_CLUSTER",
        value_delimiter = ',',
        required_if_eq("lock_store", "cluster")
    )]
    pub lock_cluster: Vec<String>,

    /// ZooKeeper, as `host:port,host:port,…`, for the `zookeeper` and `zookeeper-fenced` tiers
    /// (beside whatever `--lock-store` is).
    #[arg(long, env = "ZOOKEEPER", value_name = "HOST:PORT,…")]
    pub zookeeper: Option<String>,

    /// The ZooKeeper session timeout in milliseconds (1000..=10000, what `oversell up`'s
    /// servers accept): a holder silent this long loses its lock node.
    #[arg(long, env = "ZOOKEEPER_SESSION_MS", default_value_t = 4_000,
          value_parser = clap::value_parser!(u64).range(1_000..=10_000))]
    pub zookeeper_session_ms: u64,

    /// PostgreSQL, as `postgres://user@host:port/db`, for the `postgres` and `postgres-fenced`
    /// tiers (beside whatever `--lock-store` is).
    #[arg(long, env = "POSTGRES", value_name = "URL", value_parser = postgres_url)]
    pub postgres: Option<String>,

    /// The master name the Sentinels watch.
    #[arg(long, env = "LOCK_SENTINEL_MASTER", default_value = DEFAULT_SENTINEL_MASTER)]
    pub lock_sentinel_master: String,

    /// Address to listen on (0.0.0.0 in a container).
    #[arg(long, env = "HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,

    /// Port to listen on; 0 picks a free one.
    #[arg(long, env = "PORT", default_value_t = 3000)]
    pub port: u16,

    /// A listening socket inherited from the parent at this descriptor, used instead of
    /// binding --host/--port (how `oversell up` hands each instance the port it reserved).
    #[arg(long, env = "OVERSELL_LISTEN_FD", hide = true)]
    pub listen_fd: Option<i32>,

    /// Threads this instance serves on (up to 1024); 0 or unset: one per core. Instances that
    /// share a machine share its cores: `oversell up` gives each its share (the cores divided
    /// by the instances, at least one); compose and Swarm pass `WORKER_THREADS` on (default 0).
    /// On 2 cores, three instances with one thread each sold up to 1.3× as much as with a
    /// thread per core each, `fair` 1.15–1.17× (`bench/worker-threads.sh`; BENCHMARKS.md, "One
    /// thread per instance").
    #[arg(long, env = "WORKER_THREADS", value_parser = clap::value_parser!(u16).range(0..=1024))]
    pub worker_threads: Option<u16>,

    /// Name of this instance in the ledger and metrics [default: HOSTNAME-PORT].
    #[arg(long, env = "INSTANCE_ID")]
    pub instance_id: Option<String>,

    /// Lock tier a room starts with when Redis has none stored yet.
    #[arg(long = "lock-tier", env = "LOCK_TIER", default_value = "lua-release")]
    pub tier: Tier,

    /// Lease of the lock in milliseconds (10..=600000).
    #[arg(long = "lock-ttl-ms", env = "LOCK_TTL_MS", default_value_t = 3000,
          value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub ttl_ms: u64,

    /// Business work inside the critical section, in milliseconds (0..=60000).
    #[arg(long = "business-ms", env = "BUSINESS_MS", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub business_ms: u64,

    /// How a buyer waits for a held lock: `pubsub`, `spin:<ms>` (the articles' loop is spin:20),
    /// or `cohort[:<passes>]` (an instance's buyers pass the lock among themselves).
    #[arg(long, env = "WAIT", default_value = "pubsub")]
    pub wait: WaitStrategy,

    /// How long a buyer may wait for the lock before a 503, in milliseconds (1..=120000).
    #[arg(long = "wait-deadline-ms", env = "WAIT_DEADLINE_MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(1..=120_000))]
    pub wait_deadline_ms: u64,

    /// After each lock write, wait until this many replicas have it (WAIT) or fail the acquire
    /// with a 503, as Redisson's checkLockSyncedSlaves does (0..=4; 0 = off).
    #[arg(long, env = "SYNC_REPLICAS", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=4))]
    pub sync_replicas: u32,

    /// How long that wait may take, in milliseconds (1..=10000).
    #[arg(long, env = "SYNC_TIMEOUT_MS", default_value_t = DEFAULT_SYNC_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub sync_timeout_ms: u64,

    /// How `reentrant-watchdog` and `fenced` keep their lease: `watchdog` (renewed every
    /// TTL/3, Redisson's `lock()`) or `fixed` (never renewed, Redisson's `lock(leaseTime)`).
    #[arg(long, env = "LEASE", value_enum, default_value_t = LeaseMode::Watchdog)]
    pub lease: LeaseMode,

    /// Bearer token for /admin/*. Without one, a token is generated and logged once.
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// URL that reaches the whole fleet (nginx); server-side bursts and scenarios go through it
    /// [default: this instance's own address].
    #[arg(long, env = "FLEET_URL")]
    pub fleet_url: Option<String>,

    /// The URL students reach the fleet at (e.g. http://192.168.1.20:8080), used in the join
    /// links and QR codes of room tokens [default: the address each request came to].
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Most rooms the fleet holds at once; an admin write that would create one more is a 409
    /// `room_limit` (1..=100000). Reads never create a room.
    #[arg(long, env = "MAX_ROOMS", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_rooms: u64,

    /// Seconds a room lives without a sale or an admin write; then all its keys expire
    /// (1..=2592000, i.e. up to 30 days).
    #[arg(long = "room-ttl-secs", env = "ROOM_TTL_SECS", default_value_t = 86_400,
          value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    pub room_ttl_secs: u64,

    /// Most `/events` streams (dashboards) this instance serves at once; one more is a 503
    /// `too_many_streams` (1..=100000).
    #[arg(long, env = "MAX_EVENT_STREAMS", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_event_streams: u64,

    /// Requests per second each client address may send this instance, on average (0: no
    /// limit); over it a JSON 429 `too_many_requests` with Retry-After, counted in /metrics
    /// (`oversell_client_limit_refused_total`). The numbers of nginx's
    /// per-client limit in front (`oversell up`, compose), which holds an address to them over
    /// the whole fleet, so behind it this second line refuses nobody; it is the first line
    /// where no nginx of ours stands (an ingress, a client pointed at one instance).
    #[arg(long, env = "CLIENT_RATE", value_name = "N", default_value_t = DEFAULT_CLIENT_RATE)]
    pub client_rate: u32,

    /// Requests over --client-rate served at once before the 429s start.
    #[arg(long, env = "CLIENT_BURST", value_name = "N", default_value_t = DEFAULT_CLIENT_BURST,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub client_burst: u32,

    /// Peers that name the client in `X-Real-IP` (nginx, an ingress), as CIDRs or addresses,
    /// comma-separated. Their requests count against the address named; without one they are
    /// the fleet's own (nginx's fleet port, the grader, health checks) and never limited.
    /// Any other peer counts as itself, whatever it sends.
    #[arg(long, env = "TRUSTED_PROXIES", value_name = "CIDR,…", value_delimiter = ',',
          default_value = DEFAULT_TRUSTED_PROXIES, value_parser = client_limit::parse_network)]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// Rooms the fleet grades at once (the lab's "Attack my lock"); the others wait in one
    /// line, in the order they pressed, and see their place. The same on every instance
    /// (1..=64). The default is what two cores carry with every card right and the demo room
    /// selling at 0.9× its rate or better (BENCHMARKS §8: 2, 4, 6, 8, 12 and 16 side by side).
    #[arg(long, env = "GRADING_SLOTS", default_value_t = DEFAULT_GRADING_SLOTS,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub grading_slots: u64,

    /// Serve the dashboard from this directory instead of the copy built into the binary (for
    /// editing it without rebuilding) [default: the embedded copy].
    #[arg(long, env = "STATIC_DIR")]
    pub static_dir: Option<PathBuf>,
}

/// `--grading-slots`' default.
pub const DEFAULT_GRADING_SLOTS: u64 = 8;

/// What holds the stock, the ledger and the ground truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ResourceStoreKind {
    /// One Redis.
    Single,
    /// A Redis Cluster: the rooms spread over its masters by their `{room}` hash slot.
    Cluster,
}

impl std::fmt::Display for ResourceStoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ResourceStoreKind::Single => "single",
            ResourceStoreKind::Cluster => "cluster",
        })
    }
}

impl ServeArgs {
    /// Flags that parse but do not fit together, as one line naming the flag.
    pub fn validate(&self) -> Result<(), String> {
        let cluster_given = self.redis_cluster.iter().any(|node| !node.is_empty());
        match self.resource_store {
            ResourceStoreKind::Single if cluster_given => {
                return Err(
                    "error: --redis-cluster names the resource store's cluster nodes \
                            and needs --resource-store cluster"
                        .into(),
                );
            }
            ResourceStoreKind::Cluster if !cluster_given => {
                return Err(
                    "error: --redis-cluster: --resource-store cluster needs the \
                            cluster's nodes, e.g. --redis-cluster 127.0.0.1:7001,127.0.0.1:7002"
                        .into(),
                );
            }
            _ => {}
        }
        let beside = oversell_api::Beside {
            zookeeper: self.zookeeper.as_deref().is_some_and(|z| !z.is_empty()),
            postgres: self.postgres.as_deref().is_some_and(|p| !p.is_empty()),
        };
        match self.tier.misfit(self.lock_store, beside) {
            Some(why) => Err(format!("error: --lock-tier: {why}")),
            None => Ok(()),
        }
    }

    /// The room limits these flags set.
    pub fn room_limits(&self) -> crate::rooms::RoomLimits {
        crate::rooms::RoomLimits {
            max_rooms: usize::try_from(self.max_rooms).unwrap_or(usize::MAX),
            ttl: std::time::Duration::from_secs(self.room_ttl_secs),
        }
    }

    /// The dashboard directory to serve from disk; `None` (also for an empty `STATIC_DIR`,
    /// as docker-compose sets it) serves the copy built into the binary.
    pub fn dashboard_dir(&self) -> Option<&std::path::Path> {
        self.static_dir
            .as_deref()
            .filter(|dir| !dir.as_os_str().is_empty())
    }

    /// The settings a room starts with.
    pub fn initial_settings(&self) -> Settings {
        Settings {
            tier: self.tier,
            ttl_ms: self.ttl_ms,
            business_ms: self.business_ms,
            wait: self.wait,
            wait_deadline_ms: self.wait_deadline_ms,
            sync_replicas: self.sync_replicas,
            sync_timeout_ms: self.sync_timeout_ms,
            lease: self.lease,
        }
    }

    /// The resource store's pool: one Redis, or a Redis Cluster. Nothing is contacted yet.
    pub fn resource_store(&self) -> anyhow::Result<RedisPool> {
        match self.resource_store {
            ResourceStoreKind::Single => RedisPool::new(&self.redis_url)
                .with_context(|| format!("invalid --redis-url {}", self.redis_url)),
            ResourceStoreKind::Cluster => {
                RedisPool::resource_cluster(&self.redis_cluster).context("invalid --redis-cluster")
            }
        }
    }

    /// The lock store these flags name; `resource` is the resource store's pool, which
    /// `shared` reuses.
    pub fn lock_store(&self, resource: &RedisPool) -> anyhow::Result<LockStore> {
        let store = match self.lock_store {
            LockStoreKind::Shared => LockStore::shared(resource),
            LockStoreKind::Single => {
                let url = self.lock_redis_url.as_deref().unwrap_or_default();
                LockStore::single(url).with_context(|| format!("invalid --lock-redis-url {url}"))?
            }
            LockStoreKind::Sentinel => {
                LockStore::sentinel(&self.lock_sentinels, &self.lock_sentinel_master)
                    .context("invalid --lock-sentinels")?
            }
            LockStoreKind::Redlock => {
                LockStore::redlock(&self.lock_redis_nodes).context("invalid --lock-redis-nodes")?
            }
            LockStoreKind::Cluster => {
                LockStore::cluster(&self.lock_cluster).context("invalid --lock-cluster")?
            }
        };
        let store = match self.zookeeper.as_deref().filter(|z| !z.is_empty()) {
            Some(servers) => store.with_zookeeper(
                servers,
                std::time::Duration::from_millis(self.zookeeper_session_ms),
            ),
            None => store,
        };
        let store = match self.postgres.as_deref().filter(|p| !p.is_empty()) {
            Some(url) => store.with_postgres(url).map_err(anyhow::Error::msg)?,
            None => store,
        };
        if let Some(why) = self.tier.misfit(store.kind(), store.beside()) {
            anyhow::bail!("--lock-tier: {why}");
        }
        Ok(store)
    }
}

/// A `--postgres` URL PostgreSQL's client can read (empty: none, as compose passes it).
fn postgres_url(url: &str) -> Result<String, String> {
    if !url.is_empty() {
        url.parse::<tokio_postgres::Config>()
            .map_err(|err| format!("{err} (e.g. postgres://oversell@127.0.0.1:5432/postgres)"))?;
    }
    Ok(url.to_owned())
}
