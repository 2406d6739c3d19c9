//! The lock store: the Redis the locks live in, kept apart from the resource store (the stock,
//! the ledger and every ground-truth figure), so that a fault striking the locks never touches
//! what measures it.
//!
//! - `shared`: the locks live in the resource store's Redis (the teaching default: one server).
//! - `single`: one Redis of its own, which can be killed and restarted (with or without an
//!   append-only file) while the ground truth survives.
//! - `sentinel`: a primary, a replica and Sentinels; connections follow a failover.
//! - `redlock`: N independent masters (no replication between them) for the `redlock` tier's
//!   quorum; every other tier uses the first of them as a single store.
//! - `cluster`: a Redis Cluster (masters with a replica each); a room's lock lives on the
//!   master owning its `{room}` slot, and that master's failover loses it as Sentinel's does.
//!
//! - [`nodes`]: what `/state` shows of the store: each node, its role, whether it is up, and
//!   which node holds the room's lock right now.
//! - [`node_faults`]: the store's faults, done for real: a replica link cut, a primary killed,
//!   masters killed, restarted, slowed or their clocks moved (through [`crate::member`]).
//! - [`quorum`]: the Redlock masters, each with its own short timeout.

pub(crate) mod node_faults;
pub(crate) mod nodes;
pub(crate) mod quorum;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use crate::keys::{Keys, RELEASED_PATTERN};
use crate::pg_store::PgStore;
use crate::redis_pool::{RedisPool, StoreError};
use crate::zookeeper_recipe::ZkStore;

/// How many seconds a replica may go without acknowledging before it no longer counts for
/// `min-replicas-to-write`: Redis' own granularity (replicas acknowledge every second).
pub const MIN_REPLICAS_MAX_LAG_S: u32 = 1;

/// The master name the Sentinels watch, unless `--lock-sentinel-master` says otherwise.
pub const DEFAULT_SENTINEL_MASTER: &str = "oversell-lock";

pub use oversell_api::{LockStoreKind, Persistence};

/// The lock store of one instance. Cheap to clone.
#[derive(Clone)]
pub struct LockStore {
    kind: LockStoreKind,
    pool: RedisPool,
    /// Open connections to each node, for describing the store (see [`nodes`]).
    nodes: Arc<nodes::NodeConnections>,
    /// The Redlock masters; empty unless the kind is `redlock`.
    quorum: Arc<quorum::QuorumNodes>,
    /// ZooKeeper, beside any of the Redis kinds, for the ZooKeeper tiers.
    zookeeper: Option<Arc<ZkStore>>,
    /// PostgreSQL, beside any of the Redis kinds, for the database tiers.
    postgres: Option<Arc<PgStore>>,
}

impl LockStore {
    /// The locks live beside the stock, in the resource store's Redis.
    pub fn shared(resource: &RedisPool) -> Self {
        Self::with(LockStoreKind::Shared, resource.clone())
    }

    pub fn single(url: &str) -> Result<Self, redis::RedisError> {
        Ok(Self::with(
            LockStoreKind::Single,
            RedisPool::for_locks(url)?,
        ))
    }

    pub fn sentinel(sentinels: &[String], master: &str) -> Result<Self, redis::RedisError> {
        Ok(Self::with(
            LockStoreKind::Sentinel,
            RedisPool::sentinel(sentinels, master)?,
        ))
    }

    /// A Redis Cluster reached through any of `seeds` (`host:port`): each room's lock lives on
    /// the master owning its slot.
    pub fn cluster(seeds: &[String]) -> Result<Self, redis::RedisError> {
        Ok(Self::with(
            LockStoreKind::Cluster,
            RedisPool::cluster(seeds)?,
        ))
    }

    /// Independent masters at `urls` (an odd number, 3..=9). Tiers other than `redlock` use
    /// the first one as a single store.
    pub fn redlock(urls: &[String]) -> anyhow::Result<Self> {
        let n = urls.len();
        if !(3..=9).contains(&n) || n.is_multiple_of(2) {
            anyhow::bail!(
                "Redlock needs an odd number of masters from 3 to 9 (a majority must be unique); \
                 got {n}"
            );
        }
        let mut store = Self::with(LockStoreKind::Redlock, RedisPool::for_locks(&urls[0])?);
        store.quorum = Arc::new(quorum::QuorumNodes::new(urls)?);
        Ok(store)
    }

    fn with(kind: LockStoreKind, pool: RedisPool) -> Self {
        LockStore {
            kind,
            pool,
            nodes: Arc::default(),
            quorum: Arc::default(),
            zookeeper: None,
            postgres: None,
        }
    }

    /// ZooKeeper at `connect_string` too (`host:port,…`), for the ZooKeeper tiers.
    pub fn with_zookeeper(mut self, connect_string: &str, session_timeout: Duration) -> Self {
        self.zookeeper = Some(Arc::new(ZkStore::new(connect_string, session_timeout)));
        self
    }

    /// ZooKeeper, when the instance was given one.
    pub fn zookeeper(&self) -> Option<&ZkStore> {
        self.zookeeper.as_deref()
    }

    /// PostgreSQL at `url` too (`postgres://user@host:port/db`), for the database tiers.
    pub fn with_postgres(mut self, url: &str) -> Result<Self, String> {
        self.postgres = Some(Arc::new(PgStore::new(url)?));
        Ok(self)
    }

    /// PostgreSQL, when the instance was given one.
    pub fn postgres(&self) -> Option<&PgStore> {
        self.postgres.as_deref()
    }

    /// What this store has beside its Redis, for [`oversell_api::Tier::misfit`].
    pub fn beside(&self) -> oversell_api::Beside {
        oversell_api::Beside {
            zookeeper: self.zookeeper.is_some(),
            postgres: self.postgres.is_some(),
        }
    }

    /// The Redlock masters (empty unless the store is `redlock`).
    pub fn quorum(&self) -> &quorum::QuorumNodes {
        &self.quorum
    }

    pub fn kind(&self) -> LockStoreKind {
        self.kind
    }

    /// Connections to the store's primary.
    pub fn pool(&self) -> &RedisPool {
        &self.pool
    }

    /// Whether a buyer whose lock attempt finds the store unreachable should try again until
    /// the wait deadline. Yes for a lock store of its own, which a failover (Sentinel) or its
    /// supervisor (a single Redis) brings back within seconds; Redisson retries the same way.
    /// No for a shared one: it is the resource store, and without it nothing can be sold, so
    /// the buyer is told at once.
    pub fn waits_out_outages(&self) -> bool {
        self.kind != LockStoreKind::Shared
    }

    /// Listens for the lock-release messages published in the store, until aborted, and
    /// reconnects (to the new primary, after a failover) when the connection drops.
    ///
    /// `released(room, message)` is called for each release; `lost_messages()` after every reconnect,
    /// because releases published while disconnected are gone and waiters must look again.
    /// Callbacks rather than the waiters themselves, so this module knows nothing of the lock
    /// tiers.
    pub fn spawn_release_listener(
        &self,
        released: impl Fn(&str, &str) + Send + Sync + 'static,
        lost_messages: impl Fn() + Send + Sync + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let pool = self.pool.clone();
        tokio::spawn(async move {
            // Short back-off: during a failover the next primary is usually there within 2 s.
            let mut backoff = Duration::from_millis(50);
            loop {
                match listen_once(&pool, &released, &lost_messages).await {
                    Ok(()) => {
                        tracing::warn!("lock store: release channel closed; reconnecting");
                        backoff = Duration::from_millis(50);
                    }
                    Err(err) => tracing::debug!(%err, "lock store: subscribe failed; retrying"),
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(500));
            }
        })
    }

    /// Every node of the store as it is now, and which one holds the room's lock.
    pub async fn describe(&self, keys: &Keys) -> nodes::LockStoreView {
        nodes::describe(self, keys).await
    }

    /// Sets `min-replicas-to-write` to `replicas` (with `min-replicas-max-lag` of
    /// [`MIN_REPLICAS_MAX_LAG_S`]) on every data node of a Sentinel store, replicas too, so
    /// that whichever is promoted keeps it. Returns the nodes set.
    pub async fn set_min_replicas(&self, replicas: u32) -> Result<Vec<String>, StoreError> {
        let view = self
            .describe(&Keys::for_room(crate::keys::DEFAULT_ROOM))
            .await;
        let mut set = Vec::new();
        for node in &view.nodes {
            let asked = async {
                let client = redis::Client::open(format!("redis://{}", node.addr))?;
                let mut conn = client.get_multiplexed_async_connection().await?;
                redis::cmd("CONFIG")
                    .arg("SET")
                    .arg("min-replicas-to-write")
                    .arg(replicas)
                    .arg("min-replicas-max-lag")
                    .arg(MIN_REPLICAS_MAX_LAG_S)
                    .query_async::<()>(&mut conn)
                    .await
            };
            match tokio::time::timeout(Duration::from_secs(2), asked).await {
                Ok(Ok(())) => set.push(node.addr.clone()),
                Ok(Err(err)) => return Err(err.into()),
                Err(_) => {
                    return Err(StoreError::Unavailable(format!(
                        "{} did not answer CONFIG SET",
                        node.addr
                    )))
                }
            }
        }
        Ok(set)
    }
}

async fn listen_once(
    pool: &RedisPool,
    released: &(impl Fn(&str, &str) + Send + Sync),
    lost_messages: &(impl Fn() + Send + Sync),
) -> Result<(), redis::RedisError> {
    let client = pool.client().await?;
    let listening_to = client.get_connection_info().addr().to_string();
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.psubscribe(RELEASED_PATTERN).await?;
    tracing::debug!("lock store: listening for releases; waking every waiter");
    lost_messages();
    let mut messages = pubsub.into_on_message();
    let mut check = tokio::time::interval(PRIMARY_CHECK);
    loop {
        tokio::select! {
            msg = messages.next() => match msg {
                Some(msg) => {
                    if let Some(room) = Keys::room_of(msg.get_channel_name()) {
                        let message: String = msg.get_payload().unwrap_or_default();
                        released(room, &message);
                    }
                }
                None => return Ok(()),
            },
            _ = check.tick() => {
                // A partition closes nothing: a subscription to a primary that was cut off
                // and replaced stays open, silent. Behind Sentinel, follow the primary they
                // name; when they cannot be asked (this side is cut off from them), stay.
                let now = tokio::time::timeout(PRIMARY_CHECK, pool.client()).await;
                if let Ok(Ok(now)) = now {
                    if now.get_connection_info().addr().to_string() != listening_to {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// How often the release listener behind Sentinel checks it still listens to the primary.
const PRIMARY_CHECK: Duration = Duration::from_secs(1);
