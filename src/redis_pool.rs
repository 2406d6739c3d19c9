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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::io::tcp::TcpSettings;
use redis::{
    AsyncConnectionConfig, Cmd, IntoConnectionInfo, Pipeline, RedisError, RedisFuture, RedisResult,
    Value,
};

/// A failure to talk to Redis, split by what the client should be told.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Redis is down, unreachable or not answering in time: retry later.
    #[error("redis unavailable: {0}")]
    Unavailable(String),
    /// A lock write reached fewer replicas than `sync_replicas` asks, within `sync_timeout_ms`.
    #[error("the lock reached {acked} of {wanted} replicas in time")]
    NotReplicated { acked: u32, wanted: u32 },
    /// Fewer Redlock masters answered than make a majority: nobody can be granted the lock.
    #[error("only {answered} of {nodes} lock nodes answered; a majority needs {quorum}")]
    NoQuorum {
        answered: usize,
        nodes: usize,
        quorum: usize,
    },
    /// ZooKeeper (the ZooKeeper tiers' lock store) has no session for us, or no quorum.
    #[error("zookeeper unavailable: {0}")]
    ZooKeeper(String),
    /// PostgreSQL (the database tiers' lock store) is down, unreachable, or ended our session.
    #[error("postgres unavailable: {0}")]
    Postgres(String),
    /// Redis answered with an error: a bug in a script or a wrong key type.
    #[error("redis error: {0}")]
    Failed(RedisError),
    /// A lab lock's step failed: refused by its ACL, raised an error, ran too long, or the
    /// room has no lock to run. The message is for the student.
    #[error("{0}")]
    Lab(String),
}

impl From<RedisError> for StoreError {
    fn from(err: RedisError) -> Self {
        if err.is_io_error()
            || err.is_timeout()
            || err.is_connection_refusal()
            || err.is_connection_dropped()
            || err.is_unrecoverable_error()
            // A primary demoted by a failover refuses writes until clients follow it.
            || err.code() == Some("READONLY")
            // A primary cut off from its replicas under `min-replicas-to-write` refuses
            // writes until they are back (or until a failover and the heal demote it).
            || err.code() == Some("NOREPLICAS")
            // A script running past `busy-reply-threshold` (a lab script that loops) holds the
            // server until it is killed: every other command is refused meanwhile.
            || err.code() == Some("BUSY")
            // A Redis Cluster whose master for the slot is down and not yet replaced, or a
            // slot moving: the failover's window.
            || matches!(err.code(), Some("CLUSTERDOWN" | "TRYAGAIN" | "MOVED" | "ASK"))
        {
            StoreError::Unavailable(err.to_string())
        } else {
            StoreError::Failed(err)
        }
    }
}

/// A pooled connection plus the flag the pool reads to drop it.
pub struct Pooled {
    conn: Link,
    broken: Arc<AtomicBool>,
}

/// A connection to one server, or to a Redis Cluster (routed by slot, one socket per node).
#[derive(Clone)]
enum Link {
    Node(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Node(conn) => conn.req_packed_command(cmd),
            Link::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Node(conn) => conn.req_packed_commands(pipeline, offset, count),
            Link::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Node(conn) => conn.get_db(),
            Link::Cluster(conn) => conn.get_db(),
        }
    }
}

/// Where new connections go: one fixed server, or whichever server the Sentinels name as the
/// primary right now (asked again for every new connection, so the pool follows a failover
/// as soon as a broken connection is replaced).
enum Target {
    Direct(redis::Client),
    Sentinel(SentinelTarget),
    Cluster(ClusterClient),
}

/// The Sentinels to ask, and the name of the primary they watch.
///
/// Written here rather than with redis-rs' `SentinelClient`: that client serialises every
/// lookup behind one `&mut` and has no timeouts of its own, and during a failover a bb8
/// connect stuck behind it kept a whole instance waiting for seconds after the new primary
/// was up. Each step here is bounded by [`SENTINEL_STEP`].
#[derive(Clone)]
struct SentinelTarget {
    sentinels: Vec<String>,
    master: String,
    config: AsyncConnectionConfig,
}

/// How long one Sentinel, or the primary it names, may take to answer.
const SENTINEL_STEP: Duration = Duration::from_millis(300);

impl SentinelTarget {
    /// A client for the primary: the first node a Sentinel names that answers `ROLE` as a
    /// primary. Every Sentinel is asked in turn, because right after a failover one of them
    /// may still name the dead primary until the others' hello messages reach it.
    async fn primary(&self) -> RedisResult<redis::Client> {
        self.connect_primary().await.map(|(client, _)| client)
    }

    /// A connection to the primary, checked to be one (`ROLE`).
    async fn connect(&self) -> RedisResult<MultiplexedConnection> {
        self.connect_primary().await.map(|(_, conn)| conn)
    }

    async fn connect_primary(&self) -> RedisResult<(redis::Client, MultiplexedConnection)> {
        let mut last = None;
        for sentinel in &self.sentinels {
            let tried = async {
                let addr = self.ask(sentinel).await?;
                let info = format!("redis://{addr}")
                    .into_connection_info()?
                    .set_tcp_settings(tcp_settings());

                let client = redis::Client::open(info)?;
                let mut conn = client
                    .get_multiplexed_async_connection_with_config(&self.config)
                    .await?;
                let role: Vec<Value> = redis::cmd("ROLE").query_async(&mut conn).await?;
                match role.first() {
                    Some(Value::BulkString(word)) if word.as_slice() == b"master" => {
                        Ok((client, conn))
                    }
                    _ => Err(RedisError::from((
                        redis::ErrorKind::Io,
                        "the node a Sentinel names is not a primary (yet)",
                    ))),
                }
            };
            match tokio::time::timeout(SENTINEL_STEP, tried).await {
                Ok(Ok(found)) => return Ok(found),
                Ok(Err(err)) => last = Some(err),
                Err(_) => last = Some(timed_out(sentinel)),
            }
        }
        Err(last.unwrap_or_else(|| timed_out("any sentinel")))
    }

    async fn ask(&self, sentinel: &str) -> RedisResult<String> {
        named_primary(sentinel, &self.master).await
    }
}

/// `host:port` of the primary the Sentinel at `sentinel` names for `master`.
pub async fn named_primary(sentinel: &str, master: &str) -> RedisResult<String> {
    let client = redis::Client::open(format!("redis://{sentinel}"))?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let (ip, port): (String, String) = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(master)
        .query_async(&mut conn)
        .await?;
    Ok(format!("{ip}:{port}"))
}

fn timed_out(what: &str) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} did not answer within {SENTINEL_STEP:?}"),
    ))
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
        let manager = Manager {
            target: Target::Direct(client.clone()),
            config: connection_config(),
        };
        Ok(Self {
            pool: build_pool(manager, RESOURCE_CONNECT),
            source: Arc::new(Source::Direct(client)),
            response_timeout,
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
        let manager = Manager {
            target: Target::Sentinel(target.clone()),
            config,
        };
        Ok(Self {
            pool: build_pool(manager, FAILOVER_CONNECT),
            source: Arc::new(Source::Sentinel(target)),
            response_timeout: LOCK_RESPONSE_TIMEOUT,
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
            pool: build_pool(manager, connect_timeout),
            source: Arc::new(Source::Cluster(seeds.to_vec())),
            response_timeout,
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
        })
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

/// The first of a cluster's `seeds` that answers `PING` in time, with a connection to it. A
/// `PUBLISH` on any node reaches every node's subscribers, so any one serves for pub/sub.
async fn answering_node(seeds: &[String]) -> RedisResult<(redis::Client, MultiplexedConnection)> {
    let mut last = None;
    for seed in seeds {
        let tried = async {
            let info = format!("redis://{seed}")
                .into_connection_info()?
                .set_tcp_settings(tcp_settings());
            let client = redis::Client::open(info)?;
            let mut conn = client
                .get_multiplexed_async_connection_with_config(&connection_config())
                .await?;
            redis::cmd("PING").query_async::<()>(&mut conn).await?;
            Ok((client, conn))
        };
        match tokio::time::timeout(SENTINEL_STEP, tried).await {
            Ok(Ok(found)) => return Ok(found),
            Ok(Err(err)) => last = Some(err),
            Err(_) => last = Some(timed_out(seed)),
        }
    }
    Err(last.unwrap_or_else(|| timed_out("any cluster node")))
}

/// `host:port` of the master in one `CLUSTER SLOTS` entry (`[start, end, [ip, port, id], …]`)
/// when its range holds `slot`.
fn slot_owner(range: &Value, slot: u16) -> Option<String> {
    let Value::Array(parts) = range else {
        return None;
    };
    let bound = |i: usize| redis::from_redis_value::<i64>(parts.get(i)?.clone()).ok();
    let (start, end) = (bound(0)?, bound(1)?);
    if !(start..=end).contains(&i64::from(slot)) {
        return None;
    }
    let Value::Array(master) = parts.get(2)? else {
        return None;
    };
    let ip: String = redis::from_redis_value(master.first()?.clone()).ok()?;
    let port: i64 = redis::from_redis_value(master.get(1)?.clone()).ok()?;
    Some(format!("{ip}:{port}"))
}

/// redis-rs' own default: a Redis that has not answered in this long (of time this process
/// ran) counts as unavailable.
const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_millis(500);
/// A lock store that has not answered a command in this long is unreachable (a partition drops
/// packets without closing anything): the connection is dropped, and behind Sentinel the next
/// one asks where the primary is now.
const LOCK_RESPONSE_TIMEOUT: Duration = Duration::from_millis(2_000);
/// `WAIT` alone may take longer: above the longest a lock write may wait for its replicas
/// (`sync_timeout_ms` ≤ 10 s).
const WAIT_RESPONSE_TIMEOUT: Duration = Duration::from_millis(11_000);

/// How long `cmd` may go unanswered on a connection whose limit is `usual`.
fn limit_for(cmd: &Cmd, usual: Duration) -> Duration {
    let is_wait = cmd.args_iter().next().is_some_and(
        |arg| matches!(arg, redis::Arg::Simple(name) if name.eq_ignore_ascii_case(b"WAIT")),
    );
    match is_wait {
        true => usual.max(WAIT_RESPONSE_TIMEOUT),
        false => usual,
    }
}

/// Answers are timed by [`answered_within`] on each `Conn`, not by redis-rs: see there.
fn connection_config() -> AsyncConnectionConfig {
    AsyncConnectionConfig::new().set_response_timeout(None)
}

/// A timer that fires this much after its deadline says the process was not running (stopped
/// by a freeze, or starved), not that Redis was slow.
const LATE: Duration = Duration::from_millis(100);
/// How many late firings an answer is given a fresh `limit` for, so that a process starved
/// again and again still gives up in the end.
const MAX_LATE: u32 = 4;

/// `answer`, if it comes within `limit` of time this process was running; a timeout error
/// otherwise.
///
/// redis-rs' own response timeout counts a process freeze (SIGSTOP, a long pause) against
/// Redis: on resume the timer fires before the connection's reader has read the answer already
/// waiting in the socket, and a write Redis did is reported to the buyer as a 503. Here a
/// timer that fires late gives the answer a fresh `limit` instead.
async fn answered_within<T>(limit: Duration, answer: RedisFuture<'_, T>) -> RedisResult<T> {
    tokio::pin!(answer);
    let mut deadline = tokio::time::Instant::now() + limit;
    let mut late_firings = 0;
    loop {
        tokio::select! {
            biased;
            result = &mut answer => return result,
            () = tokio::time::sleep_until(deadline) => {
                let now = tokio::time::Instant::now();
                if now - deadline < LATE || late_firings == MAX_LATE {
                    return Err(RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no answer from redis within {limit:?}"),
                    )));
                }
                late_firings += 1;
                deadline = now + limit;
            }
        }
    }
}

/// Without TCP_NODELAY, a command written while an earlier one is unanswered waits for an
/// ACK: on a multiplexed connection that is most commands under load.
pub(crate) fn tcp_settings() -> TcpSettings {
    TcpSettings::default().set_nodelay(true)
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

fn build_pool(manager: Manager, timeout: Duration) -> bb8::Pool<Manager> {
    bb8::Pool::builder()
        .max_size(8)
        .test_on_check_out(false)
        .connection_timeout(timeout)
        .retry_connection(false)
        .build_unchecked(manager)
}

/// A connection handle; marks its pooled connection broken when the socket is gone. Clones
/// share the socket and the mark.
#[derive(Clone)]
pub struct Conn {
    inner: Link,
    broken: Arc<AtomicBool>,
    response_timeout: Duration,
}

impl Conn {
    /// Whether an error showed the socket gone: a connection kept outside the pool is made
    /// anew then.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    fn note<T>(&self, result: &RedisResult<T>) {
        // A cluster connection reconnects to a node by itself, and follows a failover by
        // `MOVED`: replacing it would only cost a new slot map. Except after a timeout: a
        // master that stopped answering (a freeze, a partition) sends no `MOVED`, and
        // redis-rs retries a timed-out command on the same node without asking the cluster
        // again, so it would keep sending that slot's commands to the silent master after
        // the cluster promoted its replica. A new connection reads the slot map afresh.
        if matches!(self.inner, Link::Cluster(_)) {
            if result.as_ref().is_err_and(RedisError::is_timeout) {
                self.broken.store(true, Ordering::Relaxed);
            }
            return;
        }
        if let Err(err) = result {
            // READONLY: the server was demoted to a replica by a failover; reconnect to the
            // new primary.
            let demoted = err.code() == Some("READONLY");
            if demoted
                || err.is_unrecoverable_error()
                || err.is_connection_dropped()
                || err.is_io_error()
            {
                self.broken.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let answer = self.inner.req_packed_command(cmd);
            let result = answered_within(limit_for(cmd, self.response_timeout), answer).await;
            self.note(&result);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let limit = pipeline
                .cmd_iter()
                .map(|cmd| limit_for(cmd, self.response_timeout))
                .max()
                .unwrap_or(self.response_timeout);
            let answer = self.inner.req_packed_commands(pipeline, offset, count);
            let result = answered_within(limit, answer).await;
            self.note(&result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_silent_redis_times_out_after_the_limit() {
        let started = std::time::Instant::now();
        let silent: RedisFuture<'_, ()> = Box::pin(std::future::pending());
        let err = answered_within(Duration::from_millis(50), silent)
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(started.elapsed() >= Duration::from_millis(50));
    }

    /// The runtime's only thread is blocked past the limit (as SIGSTOP would stop it); the
    /// answer is there, but the task that reads it runs only after the caller's timer fired,
    /// as redis-rs' connection reader may.
    #[tokio::test(flavor = "current_thread")]
    async fn an_answer_that_came_during_a_freeze_is_not_a_timeout() {
        let (answer_tx, answer_rx) = tokio::sync::oneshot::channel::<i64>();
        // The connection's reader, due just after the caller's deadline.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(60)).await;
            let _ = answer_tx.send(7);
        });
        let answer: RedisFuture<'_, i64> = Box::pin(async move {
            answer_rx
                .await
                .map_err(|_| RedisError::from((redis::ErrorKind::Io, "reader gone")))
        });
        let waiting = tokio::spawn(answered_within(Duration::from_millis(50), answer));
        tokio::task::yield_now().await;
        // The freeze: nothing else on this runtime runs for 300 ms.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(waiting.await.unwrap().unwrap(), 7);
    }
}
