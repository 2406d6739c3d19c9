//! The independent Redis masters a Redlock quorum votes over: one connection per node, every
//! command bounded by a short per-node timeout, and no node's failure ever waiting on another.
//!
//! Why not the bb8 pool the rest of the service uses: bb8 never hands a failed connect back to
//! the caller, who waits out the whole connection timeout instead, so a killed node would cost
//! every acquire that timeout. Here a refused connect fails at once, a hung node fails after
//! [`NODE_TIMEOUT`], and the algorithm counts both as "not granted" — which is what Redlock's
//! per-node timeout is for. One multiplexed connection per node is what Redlock clients (rslock,
//! Redisson's `RedissonRedLock`) keep too. Redisson deprecated `RedissonRedLock` in 3.12.5
//! (001 still recommends it): its `RLock` now waits for the replicas after each lock write,
//! and `RFencedLock` hands out a fencing token, which no Redlock can.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, IntoConnectionInfo};

use crate::redis_pool::StoreError;

/// How long one node may take to answer one command before its vote counts as lost. Small
/// against the lease, as the algorithm asks (it suggests 5–50 ms for a 10 s lease); 100 ms
/// leaves room for a busy 2-core machine, where the tail of a loopback reply reaches tens of ms.
pub const NODE_TIMEOUT: Duration = Duration::from_millis(100);

/// How long a look that is no vote may take: a fault finding the process it strikes, or which
/// masters hold a sale's value. Held to [`NODE_TIMEOUT`], a look on a loaded machine misses a
/// master that is up, and the fault then strikes nothing ("found no master to kill").
pub const LOOK_TIMEOUT: Duration = Duration::from_secs(5);

/// After a connect failed, how long the node counts as down without being asked again.
///
/// A killed master refuses connects at once, but every caller tried its own connect, one after
/// another under the node's lock: with a few hundred buyers voting, the line behind a dead
/// master grew past [`NODE_TIMEOUT`] on a busy machine, so every vote, release and extension
/// waited the whole timeout for it, and a minority down slowed the sale to a few a second
/// (the Redlock promise is that it costs little). A master restarted meanwhile is asked again
/// this long after, at most.
const REFUSED_FOR: Duration = Duration::from_millis(200);

/// One master of the quorum.
pub struct QuorumNode {
    addr: String,
    client: redis::Client,
    /// The live connection, if one is open. A tokio mutex: a connect is awaited under it, so
    /// concurrent callers share one connect instead of opening several.
    conn: tokio::sync::Mutex<Option<MultiplexedConnection>>,
    /// Until when a failed connect stands for the node's answer ([`REFUSED_FOR`]).
    refused_until: std::sync::Mutex<Option<Instant>>,
    refused_for: Duration,
}

impl QuorumNode {
    fn new(url: &str) -> Result<Self, redis::RedisError> {
        let info = url
            .into_connection_info()?
            .set_tcp_settings(crate::redis_pool::tcp_settings());
        let addr = info.addr().to_string();
        Ok(QuorumNode {
            addr,
            client: redis::Client::open(info)?,
            conn: tokio::sync::Mutex::new(None),
            refused_until: std::sync::Mutex::new(None),
            refused_for: REFUSED_FOR,
        })
    }

    /// `host:port`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    async fn conn(&self) -> Result<MultiplexedConnection, StoreError> {
        self.still_refused()?;
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            return Ok(conn.clone());
        }
        // Queued behind a connect that just failed: that failure is this caller's answer too.
        self.still_refused()?;
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(NODE_TIMEOUT))
            .set_response_timeout(Some(NODE_TIMEOUT));
        match self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
        {
            Ok(conn) => {
                *slot = Some(conn.clone());
                Ok(conn)
            }
            Err(err) => {
                *self.refusal() = Some(Instant::now() + self.refused_for);
                Err(err.into())
            }
        }
    }

    /// The node's answer while a failed connect still stands for it.
    fn still_refused(&self) -> Result<(), StoreError> {
        match *self.refusal() {
            Some(until) if Instant::now() < until => Err(StoreError::Unavailable(format!(
                "{} refused a connect less than {:?} ago",
                self.addr, self.refused_for
            ))),
            _ => Ok(()),
        }
    }

    fn refusal(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.refused_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `op` on a connection of its own, within [`LOOK_TIMEOUT`]: for what is no vote (a
    /// fault's look at the process, which masters hold a value), so a busy machine's late
    /// answer is waited for. A connection of its own: the shared one answers within
    /// [`NODE_TIMEOUT`] only.
    pub async fn look<T, F, Fut>(&self, op: F) -> Result<T, StoreError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(LOOK_TIMEOUT))
            .set_response_timeout(Some(LOOK_TIMEOUT));
        let attempt = async {
            let conn = self
                .client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            op(conn).await
        };
        match tokio::time::timeout(LOOK_TIMEOUT, attempt).await {
            Ok(answer) => answer.map_err(StoreError::from),
            Err(_) => Err(StoreError::Unavailable(format!(
                "{} did not answer within {LOOK_TIMEOUT:?}",
                self.addr
            ))),
        }
    }

    /// Drops the connection after it failed, so the next command reconnects (to a node that
    /// was restarted meanwhile).
    async fn forget(&self) {
        *self.conn.lock().await = None;
    }

    /// Runs `op` on this node within [`NODE_TIMEOUT`] (connect included).
    ///
    /// A node that answers too late keeps its connection: a multiplexed connection matches
    /// each late reply to its abandoned request, so it is still good, and its order still
    /// puts a release behind the acquire it undoes. Reconnecting instead would make every
    /// next command on a busy machine pay a connect inside the same short timeout, fail, and
    /// reconnect again, so that healthy masters looked dead. Only a connection that broke
    /// (refused, reset, closed) is dropped.
    pub async fn run<T, F, Fut>(&self, op: F) -> Result<T, StoreError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let attempt = async {
            let conn = self.conn().await?;
            Ok::<_, StoreError>(op(conn).await)
        };
        let late = || {
            StoreError::Unavailable(format!(
                "{} did not answer within {NODE_TIMEOUT:?}",
                self.addr
            ))
        };
        match tokio::time::timeout(NODE_TIMEOUT, attempt).await {
            Err(_) => Err(late()),
            // The connect failed: there is no connection to drop.
            Ok(Err(not_connected)) => Err(not_connected),
            Ok(Ok(Ok(answer))) => Ok(answer),
            Ok(Ok(Err(err))) if err.is_timeout() => Err(late()),
            Ok(Ok(Err(err))) => {
                let err = StoreError::from(err);
                if matches!(err, StoreError::Unavailable(_)) {
                    self.forget().await;
                }
                Err(err)
            }
        }
    }
}

/// The masters, in their configured order (node 1 first).
#[derive(Default)]
pub struct QuorumNodes {
    nodes: Vec<QuorumNode>,
}

impl QuorumNodes {
    /// Nothing is contacted until the first command.
    pub fn new(urls: &[String]) -> Result<Self, redis::RedisError> {
        let nodes = urls
            .iter()
            .map(|url| QuorumNode::new(url))
            .collect::<Result<_, _>>()?;
        Ok(QuorumNodes { nodes })
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// How many votes make a majority: N/2 + 1.
    pub fn quorum(&self) -> usize {
        self.nodes.len() / 2 + 1
    }

    pub fn nodes(&self) -> &[QuorumNode] {
        &self.nodes
    }

    /// Runs `op` on every node at once; one result per node, in node order. The slowest
    /// node costs at most [`NODE_TIMEOUT`].
    pub async fn each<T, F, Fut>(&self, op: F) -> Vec<Result<T, StoreError>>
    where
        F: Fn(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        join_all(self.nodes.iter().map(|node| node.run(&op))).await
    }

    /// [`QuorumNode::look`] on every node at once; one result per node, in node order.
    pub async fn look_each<T, F, Fut>(&self, op: F) -> Vec<Result<T, StoreError>>
    where
        F: Fn(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        join_all(self.nodes.iter().map(|node| node.look(&op))).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::redis_server::RedisServer;

    async fn client_id(node: &QuorumNode) -> Result<i64, StoreError> {
        node.run(
            |mut conn| async move { redis::cmd("CLIENT").arg("ID").query_async(&mut conn).await },
        )
        .await
    }

    #[tokio::test]
    async fn a_node_that_answers_late_keeps_its_connection_and_a_restarted_one_is_reconnected() {
        let mut redis = RedisServer::start().unwrap();
        let node = QuorumNode::new(&redis.url()).unwrap();
        let first = client_id(&node).await.unwrap();
        // Every client's commands wait 500 ms: the node's next answer comes too late.
        let client = redis::Client::open(redis.url()).unwrap();
        let mut admin = client.get_multiplexed_async_connection().await.unwrap();
        let () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(500)
            .arg("ALL")
            .query_async(&mut admin)
            .await
            .unwrap();
        let late = client_id(&node).await;
        assert!(
            matches!(&late, Err(StoreError::Unavailable(why)) if why.contains("did not answer")),
            "{late:?}"
        );
        // Once the pause is over, the same connection answers again.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let after = loop {
            if let Ok(id) = client_id(&node).await {
                break id;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "never answered again"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(after, first, "a late answer made the node reconnect");
        // A restarted master closed the connection: the node opens a new one.
        redis.restart().unwrap();
        // Kept, the old connection would fail for good.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while client_id(&node).await.is_err() {
            assert!(tokio::time::Instant::now() < deadline, "never reconnected");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A master that refused a connect is not asked again for a while: the callers queued
    /// behind that connect, and those after it, are answered at once with the refusal, and
    /// once the window has passed the node connects to the master that came back.
    #[tokio::test]
    async fn a_refused_connect_answers_for_the_node_until_its_window_passes() {
        let mut redis = RedisServer::start().unwrap();
        let mut node = QuorumNode::new(&redis.url()).unwrap();
        node.refused_for = Duration::from_secs(60);
        redis.kill();
        // The first command finds the master gone; the next connect is refused.
        let mut refusals = 0;
        while refusals == 0 {
            match client_id(&node).await {
                Err(StoreError::Unavailable(why)) if why.contains("refused a connect") => {
                    refusals += 1
                }
                Err(_) => {}
                Ok(id) => panic!("a killed master answered: {id}"),
            }
        }
        let many = join_all((0..50).map(|_| client_id(&node))).await;
        for answer in &many {
            assert!(
                matches!(answer, Err(StoreError::Unavailable(why)) if why.contains("refused a connect")),
                "{answer:?}"
            );
        }
        // Back, and with no window left: asked again, it answers.
        redis.restart().unwrap();
        node.refused_for = Duration::ZERO;
        *node.refusal() = None;
        let deadline = Instant::now() + Duration::from_secs(10);
        while client_id(&node).await.is_err() {
            assert!(Instant::now() < deadline, "never reconnected");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A look is no vote: it waits past the vote's timeout for a master that answers late.
    #[tokio::test]
    async fn a_look_waits_for_a_late_answer_that_a_vote_gives_up_on() {
        let redis = RedisServer::start().unwrap();
        let node = QuorumNode::new(&redis.url()).unwrap();
        let client = redis::Client::open(redis.url()).unwrap();
        let mut admin = client.get_multiplexed_async_connection().await.unwrap();
        let pause = NODE_TIMEOUT * 4;
        let () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(pause.as_millis() as u64)
            .arg("ALL")
            .query_async(&mut admin)
            .await
            .unwrap();
        let looked = node
            .look(
                |mut conn| async move { redis::cmd("DBSIZE").query_async::<i64>(&mut conn).await },
            )
            .await;
        assert!(matches!(looked, Ok(0)), "{looked:?}");
    }
}
