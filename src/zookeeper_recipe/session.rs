//! One [`ZkSession`] per instance, shared by all its sales: contenders of one session are told
//! apart by the uuid in their node's name. An expired session cannot be revived (ZooKeeper
//! deleted its nodes); the next `lock` opens a new one.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;
use zookeeper_client as zk;

use super::zk_error::{connection_lost, unreachable_at_deadline, ZkError};

/// A ZooKeeper session, re-opened when it expired. Dropping it closes the session (once no
/// background clean-up still uses it), and ZooKeeper deletes its nodes at once.
pub struct ZkSession {
    pub(super) connect_string: String,
    pub(super) session_timeout: Duration,
    /// The live client. A tokio `Mutex` held across a re-connect on purpose: concurrent sales
    /// wait for one new session instead of each opening its own.
    pub(super) client: Mutex<zk::Client>,
}

/// Opens a session. The session timeout asked for is bounded by the servers (2 to 20 ticks);
/// the connect is bounded by the session timeout, and fails at once when no server accepts a
/// connection.
pub async fn connect(
    connect_string: &str,
    session_timeout: Duration,
) -> Result<ZkSession, ZkError> {
    let client = open(connect_string, session_timeout).await?;
    Ok(ZkSession {
        connect_string: connect_string.to_owned(),
        session_timeout,
        client: Mutex::new(client),
    })
}

pub(super) async fn open(
    connect_string: &str,
    session_timeout: Duration,
) -> Result<zk::Client, ZkError> {
    let connecting = zk::Client::connector()
        .with_session_timeout(session_timeout)
        // Try each server once rather than cycle until the session timeout: a dead ensemble
        // is reported at once.
        .with_fail_eagerly()
        .connect(connect_string);
    match tokio::time::timeout(session_timeout, connecting).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(err)) => Err(ZkError::Unreachable(format!(
            "cannot open a session on {connect_string}: {err}"
        ))),
        Err(_) => Err(ZkError::Unreachable(format!(
            "no session on {connect_string} within {session_timeout:?}"
        ))),
    }
}

impl ZkSession {
    /// The current session's id (a new one after an expiry).
    pub async fn session_id(&self) -> i64 {
        self.client.lock().await.session_id().0
    }

    /// The session timeout the servers granted.
    pub async fn session_timeout(&self) -> Duration {
        self.client.lock().await.session_timeout()
    }

    /// Whether the current session expired (or was closed): its nodes are gone.
    pub async fn expired(&self) -> bool {
        self.client.lock().await.state().is_terminated()
    }

    /// The live client, re-opening the session if it expired.
    pub(super) async fn client(&self, deadline: Instant) -> Result<zk::Client, ZkError> {
        let mut client = tokio::time::timeout_at(deadline, self.client.lock())
            .await
            .map_err(|_| unreachable_at_deadline())?;
        if client.state().is_terminated() {
            let left = deadline.saturating_duration_since(Instant::now());
            let opened =
                tokio::time::timeout(left, open(&self.connect_string, self.session_timeout));
            *client = opened.await.map_err(|_| unreachable_at_deadline())??;
        }
        Ok(client.clone())
    }
}

/// A request that failed with the connection is asked again: the client queues it until it
/// is connected again, or fails it for good when the session is over (no busy loop).
pub(super) async fn retry_on_connection_loss<T, F>(ask: impl Fn() -> F) -> Result<T, zk::Error>
where
    F: std::future::Future<Output = Result<T, zk::Error>>,
{
    loop {
        match ask().await {
            Err(err) if connection_lost(&err) => continue,
            answer => return answer,
        }
    }
}
