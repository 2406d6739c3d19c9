//! The flags of `oversell up`: what each means, which do not fit together, and the fleet they
//! ask for.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use oversell_api::tier::Tier;

use crate::config::ResourceStoreKind;
use crate::launch::local_fleet::FleetConfig;
use crate::launch::netns::NetworkKind;
use crate::launch::topology::{
    ClientLimits, DEFAULT_CLIENT_BURST, DEFAULT_CLIENT_CONNS, DEFAULT_CLIENT_RATE,
};
use crate::lock_store::{LockStoreKind, Persistence};

/// Redlock masters when `--lock-nodes` is not given: the published algorithm's example.
const DEFAULT_LOCK_NODES: u16 = 5;

/// The flags of `oversell up`. Other settings of `oversell serve` (BUSINESS_MS, LOCK_TTL_MS,
/// WAIT, WAIT_DEADLINE_MS, RUST_LOG) are read from the environment by every instance.
#[derive(Debug, Clone, Args)]
pub struct UpArgs {
    /// How many instances to run behind nginx (1..=32).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub instances: u16,

    /// Port nginx listens on (on --host); 0 picks a free one.
    #[arg(long, default_value_t = 8080)]
    pub port: u16,

    /// Address nginx listens on. Beyond loopback (e.g. 0.0.0.0, so students reach the
    /// instructor's fleet from their laptops) --admin-token is required: anyone who reaches
    /// the fleet could otherwise reset, crash or freeze it.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,

    /// Port of the private redis-server [default: a free port].
    #[arg(long)]
    pub redis_port: Option<u16>,

    /// Keep the resource store's data (its append-only file, see --resource-persistence) in
    /// DIR across runs [default: `redis/` in the class dir (--class-dir); with no class dir,
    /// the run dir, removed on exit].
    #[arg(long, value_name = "DIR")]
    pub redis_dir: Option<PathBuf>,

    /// Where the class is kept across runs of `up`, so that it survives `up`'s own crash: the
    /// resource store's data (the rooms, their tokens' digests, the votes, the stock), the
    /// admin token and the room tokens files. `up` started again on the same directory without
    /// --class reopens the class with every room and token (a restart revokes none); --class N
    /// makes a new one [default: $XDG_STATE_HOME/oversell/up-PORT, or
    /// ~/.local/state/oversell/up-PORT; with --port 0 none: the run dir, removed on exit].
    #[arg(long, value_name = "DIR")]
    pub class_dir: Option<PathBuf>,

    /// Where the locks live: `shared` (in the resource store's Redis, the teaching default),
    /// `single` (a Redis of their own, which a fault can kill and restart), `sentinel` (a
    /// primary, a replica and three Sentinels: a fault can fail it over), `redlock`
    /// (`--lock-nodes` independent masters, for the `redlock` tier; their clocks can jump) or
    /// `cluster` (a Redis Cluster of three masters and three replicas: a fault can fail over
    /// the master owning a room's lock).
    #[arg(long, value_enum, default_value_t = LockStoreKind::Shared)]
    pub lock_store: LockStoreKind,

    /// Where the stock, the ledger and the ground truth live: `single` (one private
    /// redis-server) or `cluster` (six `cluster-enabled` nodes made one Redis Cluster of three
    /// masters with a replica each, append-only files fsynced every second: each room's keys on
    /// the master owning its `{room}` slot, so rooms spread over the masters). With `cluster`
    /// the locks go on the same cluster (`--lock-store shared`).
    #[arg(long, value_enum, default_value_t = ResourceStoreKind::Single)]
    pub resource_store: ResourceStoreKind,

    /// The lab: students write their own locks (tier `custom`), which run only on a lock
    /// store apart from the stock. With the default `--lock-store shared` this starts a
    /// `single` one; a `sentinel` one also serves (Redlock masters do not).
    #[arg(long)]
    pub lab: bool,

    /// Start ZooKeeper too, for the `zookeeper` and `zookeeper-fenced` tiers (implied by
    /// `--tier zookeeper…`). Needs Debian's `zookeeper` package (a JVM server).
    #[arg(long)]
    pub zookeeper: bool,

    /// Start PostgreSQL too, for the `postgres` and `postgres-fenced` tiers (implied by
    /// `--tier postgres…`). Needs Debian's `postgresql` package; as root, the server runs as
    /// its `postgres` user.
    #[arg(long)]
    pub postgres: bool,

    /// How many ZooKeeper servers: 1 (standalone) or 3 (an ensemble that keeps working with
    /// one down) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub zookeeper_nodes: Option<u8>,

    /// How many independent masters `--lock-store redlock` runs: odd, 3..=9 [default: 5].
    #[arg(long, value_name = "N")]
    pub lock_nodes: Option<u16>,

    /// How the lock store's Redis keeps its data: `none` (a restart comes back empty), `rdb`
    /// (snapshots by the save rules 900 1 / 300 10 / 60 10000), `everysec`, `always` or
    /// `written` (append-only file, fsynced each second, before every reply, or by the kernel
    /// after each write reached it before its reply).
    /// Needs `--lock-store single`, `sentinel` or `redlock`.
    #[arg(long, value_enum)]
    pub lock_persistence: Option<Persistence>,

    /// How the resource store (the stock and the ledger of acknowledged orders) keeps its
    /// data: `written` (the default) appends every write to the file before its reply and lets
    /// the kernel flush it, so a killed store keeps every order it acknowledged, even with a
    /// busy disk, and no sale waits on an fsync; `always` also fsyncs before every reply, which
    /// a machine that loses power needs, at about a third of a safe tier's rate; `everysec`
    /// can lose up to about 2 s of acknowledged orders when its disk lags (BENCHMARKS.md,
    /// "What an acknowledged order survives").
    #[arg(long, value_enum, default_value = "written")]
    pub resource_persistence: Persistence,

    /// Lock tier the fleet starts with.
    #[arg(long, env = "LOCK_TIER", default_value = "lua-release")]
    pub tier: Tier,

    /// Bearer token for /admin/*, the same on every instance [default: the one the class dir
    /// keeps from an earlier run, else a generated one].
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// Make a class at start: rooms student-01…student-N, each stocked and given a room
    /// token of its own, written with its join link to the room tokens file the banner names
    /// (1..=400; more than MAX_ROOMS, 200 by default, needs it raised). The class page
    /// (/class) shows the rooms at a glance.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=400))]
    pub class: Option<u16>,

    /// Print the admin token and every room's token in the banner, as well as in their files.
    /// Off by default: the terminal `up` runs in is often the one on the projector, and
    /// whoever reads the admin token there can freeze the whole fleet.
    #[arg(long)]
    pub show_tokens: bool,

    /// The URL students reach the fleet at, for the join links of a class, e.g.
    /// http://192.168.1.20:8080 [default: the address each request came to].
    #[arg(long, env = "PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,

    /// Requests per second each client address may send through nginx, on average (0: no
    /// per-client limits). Over it a client gets a JSON 429 with Retry-After. Loopback is
    /// never limited: the host's own load generator and tests are the fleet's. Each instance
    /// keeps the same limit (and --client-burst) behind nginx, for whoever reaches its port
    /// directly; nginx names the client to it in X-Real-IP.
    #[arg(long, env = "CLIENT_RATE", value_name = "N", default_value_t = DEFAULT_CLIENT_RATE)]
    pub client_rate: u32,

    /// Requests over --client-rate served at once before the 429s start: a class of 60
    /// phones behind one address (a school's NAT) loading their dashboards at once.
    #[arg(long, env = "CLIENT_BURST", value_name = "N", default_value_t = DEFAULT_CLIENT_BURST,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub client_burst: u32,

    /// Connections each client address may hold open at once (a dashboard's stream is one;
    /// 60 phones behind one address hold 60, and up to 6 each while a page loads).
    #[arg(long, env = "CLIENT_CONNS", value_name = "N", default_value_t = DEFAULT_CLIENT_CONNS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub client_conns: u32,

    /// Threads each instance serves on [default: the machine's cores divided by the
    /// instances, at least 1; 0: one per core each]. Instances on one machine share its
    /// cores: on 2 cores, three with one thread each sold up to 1.3× as much as with a thread
    /// per core each (`bench/worker-threads.sh`; BENCHMARKS.md, "One thread per instance").
    #[arg(long, env = "WORKER_THREADS", value_name = "N",
          value_parser = clap::value_parser!(u16).range(0..=1024))]
    pub worker_threads: Option<u16>,

    /// Serve the dashboard from this directory (for editing it without rebuilding)
    /// [default: the copy built into the binary].
    #[arg(long, env = "STATIC_DIR")]
    pub static_dir: Option<PathBuf>,

    /// `loopback`: every process on this machine's loopback. `netns`: each Redis node,
    /// Sentinel, ZooKeeper server and instance in a network namespace of its own, on a bridge
    /// the fleet makes (10.231.x.0/24), so the `partition` fault can cut links between them
    /// (nginx and the resource store stay on the host and are never cut off). Needs root,
    /// `ip` (iproute2) and `nft` (nftables); all of it goes with the fleet.
    #[arg(long, value_enum, default_value_t = NetworkKind::Loopback)]
    pub network: NetworkKind,
}

impl UpArgs {
    /// Flags that parse but do not fit together, as one line naming the flag.
    pub fn validate(&self) -> Result<(), String> {
        if self.network == NetworkKind::Netns {
            if let Some(why) = crate::launch::netns::unavailable() {
                return Err(format!("error: {why}"));
            }
        }
        if let Some(why) = self.resource_store_misfit() {
            return Err(format!("error: --resource-store cluster: {why}"));
        }
        if self.lab
            && matches!(
                self.lock_store,
                LockStoreKind::Redlock | LockStoreKind::Cluster
            )
        {
            return Err(format!(
                "error: --lab runs students' locks on one lock store apart from the stock: \
                 give --lock-store single or sentinel, not {}",
                self.lock_store
            ));
        }
        if self.lock_persistence.is_some() && self.lock_store() == LockStoreKind::Shared {
            return Err("error: --lock-persistence needs a lock store of its own \
                        (--lock-store single, sentinel, redlock or cluster); a shared lock store is \
                        the resource store's Redis"
                .into());
        }
        match (self.lock_nodes, self.lock_store) {
            (Some(_), kind) if kind != LockStoreKind::Redlock => {
                return Err(format!(
                    "error: --lock-nodes counts Redlock masters and needs --lock-store redlock \
                     (this is --lock-store {kind})"
                ));
            }
            (Some(n), _) if !(3..=9).contains(&n) || n.is_multiple_of(2) => {
                return Err(format!(
                    "error: --lock-nodes {n}: Redlock needs an odd number of masters from 3 to \
                     9, so that a majority is unique (e.g. --lock-nodes 5)"
                ));
            }
            _ => {}
        }
        if self.zookeeper_nodes == Some(2) {
            return Err(
                "error: --zookeeper-nodes 2: an ensemble of two survives no failure; \
                        run 1 (standalone) or 3"
                    .into(),
            );
        }
        if self.zookeeper_nodes().is_some() {
            if let Err(err) = crate::launch::zookeeper_servers::installation() {
                return Err(format!("error: --zookeeper: {err}"));
            }
        }
        if self.wants_postgres() {
            if let Err(err) = crate::launch::postgres_server::installation() {
                return Err(format!("error: --postgres: {err}"));
            }
        }
        if let Some(why) = self
            .tier
            .misfit(self.lock_store(), oversell_api::Beside::BOTH)
        {
            return Err(format!("error: --tier: {why}"));
        }
        if let Some(url) = &self.public_url {
            let scheme = url.starts_with("http://") || url.starts_with("https://");
            if !scheme || url.contains(['?', '#', ' ']) {
                return Err(format!(
                    "error: --public-url {url}: give the URL students open, with no query or \
                     fragment (e.g. --public-url http://192.168.1.20:8080)"
                ));
            }
        }
        if !self.host.is_loopback() && !self.admin_token_given() {
            return Err(format!(
                "error: --host {} opens the admin API beyond this machine: give --admin-token \
                 (or ADMIN_TOKEN) a secret of your own",
                self.host
            ));
        }
        Ok(())
    }

    /// Why these flags do not fit a cluster resource store, if they do not.
    fn resource_store_misfit(&self) -> Option<String> {
        if self.resource_store != ResourceStoreKind::Cluster {
            return None;
        }
        if self.lock_store != LockStoreKind::Shared {
            return Some(format!(
                "the locks go on the same cluster: leave --lock-store at shared (this is \
                 --lock-store {})",
                self.lock_store
            ));
        }
        let why = if self.lab || self.tier.needs_lab() {
            "--lab (the custom tier) needs a lock store apart from the stock, with a \
             student's ACL user on it; on a cluster that user would have to be made on every \
             node"
        } else if self.redis_port.is_some() || self.redis_dir.is_some() {
            "--redis-port and --redis-dir set the one resource Redis, which a cluster replaces"
        } else if self.network == NetworkKind::Netns {
            "--network netns: the resource store is never partitioned, so it stays on loopback \
             with one Redis"
        } else {
            return None;
        };
        Some(why.into())
    }

    /// Whether `--admin-token` (or ADMIN_TOKEN) gave a token.
    pub fn admin_token_given(&self) -> bool {
        self.admin_token.as_deref().is_some_and(|t| !t.is_empty())
    }

    /// The lock store to start: `--lock-store`, or `single` for the lab on a shared one.
    pub fn lock_store(&self) -> LockStoreKind {
        match (self.lab || self.tier.needs_lab(), self.lock_store) {
            (true, LockStoreKind::Shared) => LockStoreKind::Single,
            (_, kind) => kind,
        }
    }

    /// How many ZooKeeper servers to run: asked for by `--zookeeper`, `--zookeeper-nodes` or a
    /// ZooKeeper tier; `None`: no ZooKeeper.
    pub fn zookeeper_nodes(&self) -> Option<usize> {
        let wanted =
            self.zookeeper || self.zookeeper_nodes.is_some() || self.tier.needs_zookeeper();
        wanted.then(|| usize::from(self.zookeeper_nodes.unwrap_or(1)))
    }

    /// Whether to run PostgreSQL: asked for by `--postgres` or a database tier.
    pub fn wants_postgres(&self) -> bool {
        self.postgres || self.tier.needs_postgres()
    }

    /// The fleet these flags ask for, the instances running this very executable.
    pub fn config(&self) -> anyhow::Result<FleetConfig> {
        let program = std::env::current_exe().context("cannot find the oversell executable")?;
        // Absolute: the instances may run in another directory than this command.
        let static_dir = match self
            .static_dir
            .as_deref()
            .filter(|d| !d.as_os_str().is_empty())
        {
            Some(dir) => Some(
                std::path::absolute(dir)
                    .with_context(|| format!("bad --static-dir {}", dir.display()))?,
            ),
            None => None,
        };
        let admin_token = match &self.admin_token {
            Some(token) if !token.is_empty() => token.clone(),
            _ => uuid::Uuid::new_v4().simple().to_string(),
        };
        Ok(FleetConfig {
            instances: usize::from(self.instances),
            worker_threads: self.worker_threads.map(usize::from),
            port: self.port,
            host: self.host,
            redis_port: self.redis_port,
            redis_dir: self.redis_dir.clone(),
            tier: self.tier,
            lock_store: self.lock_store(),
            resource_store: self.resource_store,
            lock_persistence: self.lock_persistence.unwrap_or(Persistence::None),
            resource_persistence: self.resource_persistence,
            lock_nodes: usize::from(self.lock_nodes.unwrap_or(DEFAULT_LOCK_NODES)),
            zookeeper_nodes: self.zookeeper_nodes(),
            postgres: self.wants_postgres(),
            admin_token,
            public_url: self.public_url.clone(),
            client_limits: (self.client_rate > 0).then(|| ClientLimits {
                rate: self.client_rate.to_string(),
                burst: self.client_burst.to_string(),
                conns: self.client_conns.to_string(),
                // IPv4 loopback; ::1 is always exempt.
                exempt: vec!["127.0.0.1/32".into()],
            }),
            static_dir,
            program,
            network: self.network,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::UpArgs;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        up: UpArgs,
    }

    #[test]
    fn the_instances_serve_the_embedded_dashboard_unless_a_directory_is_asked_for() {
        std::env::remove_var("STATIC_DIR");
        let config = Cli::parse_from(["up"]).up.config().unwrap();
        assert_eq!(config.static_dir, None);
        let config = Cli::parse_from(["up", "--static-dir", "static"])
            .up
            .config()
            .unwrap();
        assert!(config.static_dir.unwrap().is_absolute());
    }
}
