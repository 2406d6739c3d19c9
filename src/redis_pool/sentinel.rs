//! Following a Sentinel-managed primary: which node the Sentinels name, checked to be one.

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, IntoConnectionInfo, RedisError, RedisResult, Value};

use super::answer_limits::tcp_settings;

/// The Sentinels to ask, and the name of the primary they watch.
///
/// Written here rather than with redis-rs' `SentinelClient`: that client serialises every
/// lookup behind one `&mut` and has no timeouts of its own, and during a failover a bb8
/// connect stuck behind it kept a whole instance waiting for seconds after the new primary
/// was up. Each step here is bounded by [`SENTINEL_STEP`].
#[derive(Clone)]
pub(super) struct SentinelTarget {
    pub(super) sentinels: Vec<String>,
    pub(super) master: String,
    pub(super) config: AsyncConnectionConfig,
}

/// How long one Sentinel, or the primary it names, may take to answer.
pub(super) const SENTINEL_STEP: Duration = Duration::from_millis(300);

impl SentinelTarget {
    /// A client for the primary: the first node a Sentinel names that answers `ROLE` as a
    /// primary. Every Sentinel is asked in turn, because right after a failover one of them
    /// may still name the dead primary until the others' hello messages reach it.
    pub(super) async fn primary(&self) -> RedisResult<redis::Client> {
        self.connect_primary().await.map(|(client, _)| client)
    }

    /// A connection to the primary, checked to be one (`ROLE`).
    pub(super) async fn connect(&self) -> RedisResult<MultiplexedConnection> {
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

pub(super) fn timed_out(what: &str) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} did not answer within {SENTINEL_STEP:?}"),
    ))
}
