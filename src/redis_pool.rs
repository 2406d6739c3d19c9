//! The connection pool to Redis.
//!
//! bb8 pools multiplexed connections made by the [`Manager`] here (bb8-redis' manager can set
//! no response timeout, which a lock store's `WAIT` needs, and cannot follow Sentinel). A
//! multiplexed connection never reports itself broken, so after a Redis restart the pool would
//! keep handing out dead sockets; `Conn` therefore marks its pooled connection broken on an
//! unrecoverable error, and the pool replaces it. Checkouts are not PINGed: that would add a round trip to every
//! sale, and a dead connection is found by the first command on it instead.
//!
//! A Redis Cluster lock store pools redis-rs' cluster connections instead: each routes a
//! command (a script, a pipeline) to the master owning its keys' slot, follows `MOVED` after a
//! failover, and reconnects to a node by itself. Every room's keys share its `{room}` hash
//! tag, so whatever one lock step sends lands on one node.
//!
//! Beside the pool: its connection kinds (`conn`), how long an answer may take
//! (`answer_limits`), following Sentinel (`sentinel`) and a cluster's slots (`cluster`), and
//! what a failure means for the client (`store_error`).

mod answer_limits;
mod cluster;
mod conn;
mod parking;
mod sentinel;
mod store_error;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use redis::cluster::ClusterClient;
use redis::{AsyncConnectionConfig, IntoConnectionInfo, RedisError, Value};

use answer_limits::{
    connection_config, DEFAULT_RESPONSE_TIMEOUT, LOCK_RESPONSE_TIMEOUT, WAIT_RESPONSE_TIMEOUT,
};
use cluster::{answering_node, slot_owner};
use conn::{Link, Pooled};
use parking::Parking;
use sentinel::{SentinelTarget, SENTINEL_STEP};

pub(crate) use answer_limits::tcp_settings;
pub use conn::Ahead;
pub use conn::Conn;
pub use sentinel::named_primary;
pub use store_error::StoreError;

/// Where new connections go: one fixed server, or whichever server the Sentinels name as the
/// primary right now (asked again for every new connection, so the pool follows a failover
/// as soon as a broken connection is replaced).
enum Target {
    Direct(redis::Client),
    Sentinel(SentinelTarget),
    Cluster(ClusterClient),
}

pub struct Manager {
    target: Target,
    config: AsyncConnectionConfig,
}

impl bb8::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = RedisError;

    async fn connect(&self) -> Result<Pooled, RedisError> {
        let conn = match &self.target {
            Target::Direct(client) => Link::Node(
                client
                    .get_multiplexed_async_connection_with_config(&self.config)
                    .await?,
            ),
            Target::Sentinel(target) => Link::Node(target.connect().await?),
            Target::Cluster(client) => Link::Cluster(client.get_async_connection().await?),
        };
        Ok(Pooled {
            conn,
            broken: Arc::default(),
        })
    }

    async fn is_valid(&self, pooled: &mut Pooled) -> Result<(), RedisError> {
        redis::cmd("PING").query_async::<()>(&mut pooled.conn).await
    }

    fn has_broken(&self, pooled: &mut Pooled) -> bool {
        pooled.broken.load(Ordering::Relaxed)
    }
}

/// Cheap to clone: the pool is shared by every request of one instance.
#[derive(Clone)]
pub struct RedisPool {
    pool: bb8::Pool<Manager>,
    source: Arc<Source>,
    /// How long an answer may take before Redis counts as unavailable.
    response_timeout: Duration,
    /// Connections of their own for parked requests (`parking.rs`); none on a cluster.
    parking: Option<Arc<Parking>>,
}

impl RedisPool {
    /// Builds the pool without connecting, so an instance can start while Redis is down.
    pub fn new(url: &str) -> Result<Self, RedisError> {
        Self::direct(url, DEFAULT_RESPONSE_TIMEOUT)
    }

    /// A pool for a lock store: its answers may take as long as the longest `WAIT` for
    /// replicas (`sync_timeout_ms`) before they count as lost.
    pub fn for_locks(url: &str) -> Result<Self, RedisError> {
        Self::direct(url, LOCK_RESPONSE_TIMEOUT)
    }

    fn direct(url: &str, response_timeout: Duration) -> Result<Self, RedisError> {
        let info = url.into_connection_info()?.set_tcp_settings(tcp_settings());
        let client = redis::Client::open(info)?;
        let manager = || Manager {
            target: Target::Direct(client.clone()),
            config: connection_config(),
        };
        let parked = build_pool(manager(), RESOURCE_CONNECT, parking::PARKED_PER_POOL);
        Ok(Self {
            pool: build_pool(manager(), RESOURCE_CONNECT, SHARED_PER_POOL),
            source: Arc::new(Source::Direct(client)),
            response_timeout,
            parking: Some(Arc::new(Parking::new(parked))),
        })
    }

    /// A lock-store pool whose connections go to the primary the Sentinels at `sentinels`
    /// (`host:port`) name for `master`. Nothing is contacted until a connection is asked for.
    pub fn sentinel(sentinels: &[String], master: &str) -> Result<Self, RedisError> {
        for sentinel in sentinels {
            format!("redis://{sentinel}").into_connection_info()?;
        }
        let config = connection_config();
        let target = SentinelTarget {
            sentinels: sentinels.to_vec(),
            master: master.to_owned(),
            config: config.clone(),
        };
        let manager = || Manager {
            target: Target::Sentinel(target.clone()),
            config: config.clone(),
        };
        let parked = build_pool(manager(), FAILOVER_CONNECT, parking::PARKED_PER_POOL);
        Ok(Self {
            pool: build_pool(manager(), FAILOVER_CONNECT, SHARED_PER_POOL),
            source: Arc::new(Source::Sentinel(target)),
            response_timeout: LOCK_RESPONSE_TIMEOUT,
            parking: Some(Arc::new(Parking::new(parked))),
        })
    }

    /// A lock-store pool for a Redis Cluster whose nodes include `seeds` (`host:port`; any
    /// one that answers tells where the others are). Nothing is contacted until a connection
    /// is asked for.
    pub fn cluster(seeds: &[String]) -> Result<Self, RedisError> {
        Self::cluster_with(seeds, LOCK_RESPONSE_TIMEOUT, FAILOVER_CONNECT)
    }

    /// A resource-store pool for a Redis Cluster (`--resource-store cluster`): each room's
    /// stock and ledger on the master owning its `{room}` slot, the fleet's registry on the
    /// master owning the fleet's. New connections are waited for as one resource Redis' are:
    /// a new cluster connection reads the slot map from the nodes first, which under load
    /// took longer than a lock store's quarter of a second. Answers as a cluster lock store's:
    /// with one Redis' half a second, bursts of 600 buyers over 30 rooms on a busy 2-core
    /// host (six nodes, three instances) had a buyer or two refused as `redis_unavailable`
    /// in one run of three while every node was up; a silent master is still found within
    /// two seconds.
    pub fn resource_cluster(seeds: &[String]) -> Result<Self, RedisError> {
        Self::cluster_with(seeds, LOCK_RESPONSE_TIMEOUT, RESOURCE_CONNECT)
    }

    fn cluster_with(
        seeds: &[String],
        response_timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Self, RedisError> {
        if seeds.iter().all(|s| s.is_empty()) {
            return Err(RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "no cluster node given",
            )));
        }
        let urls: Vec<String> = seeds.iter().map(|s| format!("redis://{s}")).collect();
        for url in &urls {
            url.as_str().into_connection_info()?;
        }
        let client = ClusterClient::builder(urls)
            .tcp_settings(tcp_settings())
            .connection_timeout(SENTINEL_STEP)
            // Answers are timed by `answered_within` on each `Conn`, as for one server.
            .response_timeout(WAIT_RESPONSE_TIMEOUT)
            // A failover's dead master refuses for a second or two: a few quick retries,
            // then the error goes to the wait loop, which tries again by the buyer's deadline.
            .retries(3)
            .min_retry_wait(20)
            .max_retry_wait(200)
            .build()?;
        let manager = Manager {
            target: Target::Cluster(client),
            config: connection_config(),
        };
        Ok(Self {
            pool: build_pool(manager, connect_timeout, SHARED_PER_POOL),
            source: Arc::new(Source::Cluster(seeds.to_vec())),
            response_timeout,
            parking: None,
        })
    }

    /// A connection for one piece of work. The multiplexed connection is cloned out of the pool
    /// at once, so concurrent requests share sockets instead of queueing for them.
    pub async fn conn(&self) -> Result<Conn, StoreError> {
        let pooled = loop {
            let pooled = self.pool.get().await.map_err(|e| match e {
                bb8::RunError::User(err) => StoreError::from(err),
                bb8::RunError::TimedOut => StoreError::Unavailable("no connection in time".into()),
            })?;
            // Found dead after it went back to the pool: hand it back again, which drops it.
            if !pooled.broken.load(Ordering::Relaxed) {
                break pooled;
            }
        };
        Ok(Conn {
            inner: pooled.conn.clone(),
            broken: pooled.broken.clone(),
            response_timeout: self.response_timeout,
            ahead: None,
            _own: None,
        })
    }

    /// A connection of its own whose next request goes behind `ahead` (a blocking pop) and
    /// runs in the server when it returns (`parking.rs`). `None`: no request can park here
    /// now (a cluster, or as many parked as the pool allows); the caller waits its own way.
    pub async fn parked(&self, ahead: Ahead) -> Result<Option<Conn>, StoreError> {
        let Some(parking) = &self.parking else {
            return Ok(None);
        };
        let Some((checkout, inner, broken)) = parking.checkout().await? else {
            return Ok(None);
        };
        Ok(Some(Conn {
            inner,
            broken,
            response_timeout: self.response_timeout,
            ahead: Some(ahead),
            _own: Some(Arc::new(checkout)),
        }))
    }

    /// A dedicated pub/sub connection to the server (the current primary, behind Sentinel).
    pub async fn pubsub(&self) -> Result<redis::aio::PubSub, RedisError> {
        self.client().await?.get_async_pubsub().await
    }

    /// A client for the server new connections go to now: the fixed one, or the primary the
    /// Sentinels name at this moment.
    pub async fn client(&self) -> Result<redis::Client, RedisError> {
        match &*self.source {
            Source::Direct(client) => Ok(client.clone()),
            Source::Sentinel(target) => target.primary().await,
            Source::Cluster(seeds) => answering_node(seeds).await.map(|(client, _)| client),
        }
    }

    /// A client for the server that holds `key`: the one server (the primary, behind
    /// Sentinel), or in a Redis Cluster the master owning the key's slot right now.
    pub async fn client_for(&self, key: &str) -> Result<redis::Client, RedisError> {
        let Source::Cluster(seeds) = &*self.source else {
            return self.client().await;
        };
        let (_, mut conn) = answering_node(seeds).await?;
        let (slot, slots): (u16, Vec<Value>) = redis::pipe()
            .cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(&mut conn)
            .await?;
        let owner = slots.iter().find_map(|range| slot_owner(range, slot));
        let addr = owner.ok_or_else(|| {
            RedisError::from((
                redis::ErrorKind::Io,
                "no master owns the key's slot (a failover is under way)",
            ))
        })?;
        let info = format!("redis://{addr}")
            .into_connection_info()?
            .set_tcp_settings(tcp_settings());
        redis::Client::open(info)
    }

    /// The seed nodes, when this pool talks to a Redis Cluster.
    pub fn cluster_seeds(&self) -> Option<&[String]> {
        match &*self.source {
            Source::Cluster(seeds) => Some(seeds),
            _ => None,
        }
    }

    /// A connection of its own to the server new connections go to now (behind Sentinel,
    /// the current primary), logged in as the ACL user `user`, whose answers count as lost
    /// after `response_timeout`: the lab's scripts run through one per room, confined to what
    /// that user may do. Not pooled: a refused login must reach the caller at once.
    pub async fn dedicated_as(
        &self,
        user: &str,
        password: &str,
        response_timeout: Duration,
    ) -> Result<Conn, StoreError> {
        let client = self.client().await?;
        let info = as_user(client.get_connection_info().clone(), user, password);
        let inner = redis::Client::open(info)?
            .get_multiplexed_async_connection_with_config(&connection_config())
            .await?;
        Ok(Conn {
            inner: Link::Node(inner),
            broken: Arc::default(),
            response_timeout,
            ahead: None,
            _own: None,
        })
    }

    /// The Sentinels and master name, when this pool follows a Sentinel-managed primary.
    pub fn sentinels(&self) -> Option<(&[String], &str)> {
        match &*self.source {
            Source::Sentinel(target) => Some((&target.sentinels, &target.master)),
            _ => None,
        }
    }
}

/// What the pool was built from; kept beside it for pub/sub and for describing the store.
enum Source {
    Direct(redis::Client),
    Sentinel(SentinelTarget),
    /// A Redis Cluster's seed nodes.
    Cluster(Vec<String>),
}

/// `info` logging in as `user` with `password`.
fn as_user(info: redis::ConnectionInfo, user: &str, password: &str) -> redis::ConnectionInfo {
    let login = info
        .redis_settings()
        .clone()
        .set_username(user)
        .set_password(password);
    info.set_redis_settings(login)
}

/// How long a caller waits for a new connection to the resource store. bb8 does not hand a
/// failed connect back to the caller waiting for it: the caller waits out this timeout.
const RESOURCE_CONNECT: Duration = Duration::from_millis(1000);
/// The same for a lock store behind Sentinel or on a cluster: a failover makes connects fail
/// for a second or two, so the pool gives up sooner and the wait loop tries again sooner.
const FAILOVER_CONNECT: Duration = Duration::from_millis(250);

/// Sockets per shared pool: multiplexed, each carries many requests at once.
const SHARED_PER_POOL: u32 = 8;

fn build_pool(manager: Manager, timeout: Duration, size: u32) -> bb8::Pool<Manager> {
    bb8::Pool::builder()
        .max_size(size)
        .test_on_check_out(false)
        .connection_timeout(timeout)
        .retry_connection(false)
        .build_unchecked(manager)
}
