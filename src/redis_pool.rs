//! The connection pool to Redis.
//!
//! bb8 pools multiplexed connections created by bb8-redis' manager. bb8-redis never reports a
//! multiplexed connection as broken, so after a Redis restart the pool would keep handing out
//! dead sockets; `Conn` therefore marks its pooled connection broken on an unrecoverable error,
//! and the pool replaces it. Checkouts are not PINGed: that would add a round trip to every
//! sale, and a dead connection is found by the first command on it instead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bb8_redis::RedisConnectionManager;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::io::tcp::TcpSettings;
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{Cmd, IntoConnectionInfo, Pipeline, RedisError, RedisFuture, RedisResult, Value};

/// A failure to talk to Redis, split by what the client should be told.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Redis is down, unreachable or not answering in time: retry later.
    #[error("redis unavailable: {0}")]
    Unavailable(String),
    /// A lock write reached fewer replicas than `sync_replicas` asks, within `sync_timeout_ms`.
    #[error("the lock reached {acked} of {wanted} replicas in time")]
    NotReplicated { acked: u32, wanted: u32 },
    /// Redis answered with an error: a bug in a script or a wrong key type.
    #[error("redis error: {0}")]
    Failed(RedisError),
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
        {
            StoreError::Unavailable(err.to_string())
        } else {
            StoreError::Failed(err)
        }
    }
}

/// A pooled connection plus the flag the pool reads to drop it.
pub struct Pooled {
    conn: MultiplexedConnection,
    broken: Arc<AtomicBool>,
}

/// Where new connections go: one fixed server, or whichever server the Sentinels name as the
/// primary right now (asked again for every new connection, so the pool follows a failover
/// as soon as a broken connection is replaced).
enum Target {
    Direct(RedisConnectionManager),
    /// A tokio `Mutex`: `SentinelClient` needs `&mut` to ask, and the ask is awaited.
    Sentinel(tokio::sync::Mutex<SentinelClient>),
}

pub struct Manager(Target);

impl bb8::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = RedisError;

    async fn connect(&self) -> Result<Pooled, RedisError> {
        let conn = match &self.0 {
            Target::Direct(manager) => manager.connect().await?,
            Target::Sentinel(client) => client.lock().await.get_async_connection().await?,
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
}

impl RedisPool {
    /// Builds the pool without connecting, so an instance can start while Redis is down.
    pub fn new(url: &str) -> Result<Self, RedisError> {
        let info = url.into_connection_info()?.set_tcp_settings(tcp_settings());
        let client = redis::Client::open(info.clone())?;
        let manager = Manager(Target::Direct(RedisConnectionManager::new(info)?));
        Ok(Self {
            pool: build_pool(manager),
            source: Arc::new(Source::Direct(client)),
        })
    }

    /// A pool whose connections go to the primary the Sentinels at `sentinels` (`host:port`)
    /// name for `master`. Nothing is contacted until the first connection is asked for.
    pub fn sentinel(sentinels: &[String], master: &str) -> Result<Self, RedisError> {
        let build = || {
            let urls: Vec<String> = sentinels.iter().map(|s| format!("redis://{s}")).collect();
            let node = SentinelNodeConnectionInfo::default().set_tcp_settings(tcp_settings());
            SentinelClient::build(
                urls,
                master.to_owned(),
                Some(node),
                SentinelServerType::Master,
            )
        };
        let manager = Manager(Target::Sentinel(tokio::sync::Mutex::new(build()?)));
        Ok(Self {
            pool: build_pool(manager),
            source: Arc::new(Source::Sentinel {
                client: tokio::sync::Mutex::new(build()?),
                sentinels: sentinels.to_vec(),
                master: master.to_owned(),
            }),
        })
    }

    /// A connection for one piece of work. The multiplexed connection is cloned out of the pool
    /// at once, so concurrent requests share sockets instead of queueing for them.
    pub async fn conn(&self) -> Result<Conn, StoreError> {
        let pooled = self.pool.get().await.map_err(|e| match e {
            bb8::RunError::User(err) => StoreError::from(err),
            bb8::RunError::TimedOut => StoreError::Unavailable("no connection within 1s".into()),
        })?;
        Ok(Conn {
            inner: pooled.conn.clone(),
            broken: pooled.broken.clone(),
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
            Source::Sentinel { client, .. } => client.lock().await.async_get_client().await,
        }
    }

    /// The Sentinels and master name, when this pool follows a Sentinel-managed primary.
    pub fn sentinels(&self) -> Option<(&[String], &str)> {
        match &*self.source {
            Source::Direct(_) => None,
            Source::Sentinel {
                sentinels, master, ..
            } => Some((sentinels, master)),
        }
    }
}

/// What the pool was built from; kept beside it for pub/sub and for describing the store.
enum Source {
    Direct(redis::Client),
    Sentinel {
        /// A second Sentinel client, so a pub/sub or topology question never waits behind the
        /// pool's own connects.
        client: tokio::sync::Mutex<SentinelClient>,
        sentinels: Vec<String>,
        master: String,
    },
}

/// Without TCP_NODELAY, a command written while an earlier one is unanswered waits for an
/// ACK: on a multiplexed connection that is most commands under load.
fn tcp_settings() -> TcpSettings {
    TcpSettings::default().set_nodelay(true)
}

fn build_pool(manager: Manager) -> bb8::Pool<Manager> {
    bb8::Pool::builder()
        .max_size(8)
        .test_on_check_out(false)
        .connection_timeout(Duration::from_millis(1000))
        .retry_connection(false)
        .build_unchecked(manager)
}

/// A connection handle; marks its pooled connection broken when the socket is gone.
pub struct Conn {
    inner: MultiplexedConnection,
    broken: Arc<AtomicBool>,
}

impl Conn {
    fn note<T>(&self, result: &RedisResult<T>) {
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
            let result = self.inner.req_packed_command(cmd).await;
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
            let result = self
                .inner
                .req_packed_commands(pipeline, offset, count)
                .await;
            self.note(&result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}
