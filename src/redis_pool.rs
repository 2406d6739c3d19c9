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
use redis::{Cmd, IntoConnectionInfo, Pipeline, RedisError, RedisFuture, RedisResult, Value};

/// A failure to talk to Redis, split by what the client should be told.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Redis is down, unreachable or not answering in time: retry later.
    #[error("redis unavailable: {0}")]
    Unavailable(String),
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

pub struct Manager(RedisConnectionManager);

impl bb8::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = RedisError;

    async fn connect(&self) -> Result<Pooled, RedisError> {
        let conn = self.0.connect().await?;
        Ok(Pooled {
            conn,
            broken: Arc::default(),
        })
    }

    async fn is_valid(&self, pooled: &mut Pooled) -> Result<(), RedisError> {
        self.0.is_valid(&mut pooled.conn).await
    }

    fn has_broken(&self, pooled: &mut Pooled) -> bool {
        pooled.broken.load(Ordering::Relaxed)
    }
}

/// Cheap to clone: the pool is shared by every request of one instance.
#[derive(Clone)]
pub struct RedisPool {
    pool: bb8::Pool<Manager>,
    client: redis::Client,
}

impl RedisPool {
    /// Builds the pool without connecting, so an instance can start while Redis is down.
    pub fn new(url: &str) -> Result<Self, RedisError> {
        // Without TCP_NODELAY, a command written while an earlier one is unanswered waits
        // for an ACK: on a multiplexed connection that is most commands under load.
        let info = url
            .into_connection_info()?
            .set_tcp_settings(TcpSettings::default().set_nodelay(true));
        let client = redis::Client::open(info.clone())?;
        let manager = Manager(RedisConnectionManager::new(info)?);
        let pool = bb8::Pool::builder()
            .max_size(8)
            .test_on_check_out(false)
            .connection_timeout(Duration::from_millis(1000))
            .retry_connection(false)
            .build_unchecked(manager);
        Ok(Self { pool, client })
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

    /// The client, for the dedicated pub/sub connection.
    pub fn client(&self) -> &redis::Client {
        &self.client
    }
}

/// A connection handle; marks its pooled connection broken when the socket is gone.
pub struct Conn {
    inner: MultiplexedConnection,
    broken: Arc<AtomicBool>,
}

impl Conn {
    fn note<T>(&self, result: &RedisResult<T>) {
        if let Err(err) = result {
            if err.is_unrecoverable_error() || err.is_connection_dropped() || err.is_io_error() {
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
