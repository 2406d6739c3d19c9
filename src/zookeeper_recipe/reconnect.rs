//! A session given up in the middle of an acquire (the `reconnect-*` faults): the instance
//! opens a new session right after the buyer created its node, as Curator does when it
//! declares a session lost after a long disconnect, while the servers still hold the old one
//! and its nodes for a while. What the recipe then makes of its node decides whether two
//! buyers hold the lock at once (CURATOR-604).
//!
//! The old session is kept alive for `linger` (its client still answers the servers' pings),
//! then closed from a second connection to it: the servers delete its nodes at once, as they
//! do when they expire a session. A connect with the session's id and password is the only
//! way to end it that does not depend on every clone of its client being dropped.

use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zk;

use super::cleanup::Cleanup;
use super::recipe::{connected, create_node, wait_in_line, Created, Expired, Zk, ZkHeld};
use super::session::{open, retry_on_connection_loss, ZkSession};
use super::zk_error::ZkError;

/// What the recipe makes of the node it created under the session it gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OldNode {
    /// Still its own, found by its name, as `InterProcessMutex` finds it (CURATOR-604).
    Kept,
    /// Its own only if its owner is the session now, as `LeaderLatch` checks since
    /// CURATOR-696: it is not, so the node is deleted and the buyer queues again.
    Checked,
}

/// The session given up as a buyer queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconnect {
    /// How long the servers keep the old session, and its nodes, once it is given up.
    pub linger: Duration,
    pub old_node: OldNode,
}

impl ZkSession {
    /// [`ZkSession::lock`], with the session replaced right after our node is created.
    pub async fn lock_across_reconnect(
        &self,
        room: &str,
        owner: &str,
        deadline: Instant,
        reconnect: Reconnect,
    ) -> Result<ZkHeld, ZkError> {
        let client = self.client(deadline).await?;
        let mut cleanup = Cleanup::new(&client, room);
        let created = match tokio::time::timeout_at(
            deadline,
            create_node(&client, &mut cleanup, owner),
        )
        .await
        {
            Ok(Ok(created)) => created,
            Ok(Err(Zk(err))) => return Err(err.into()),
            // Nothing to carry over: the plain recipe from here.
            Ok(Err(Expired)) => return self.lock(room, owner, deadline).await,
            Err(_) => return Err(ZkError::Timeout),
        };
        let new = self.replace(reconnect.linger).await?;
        let path = format!("{}/{}", cleanup.dir, created.name);
        match reconnect.old_node {
            OldNode::Kept => {
                let mut kept = Cleanup::moved_to(&new, &mut cleanup);
                self.wait_on_old_node(&new, &mut kept, &created, room, owner, deadline)
                    .await
            }
            OldNode::Checked => {
                let owner_now = new.session_id().0;
                match retry_on_connection_loss(|| new.check_stat(&path)).await? {
                    // Ours after all (never, with the old session still held): wait on it.
                    Some(stat) if stat.ephemeral_owner == owner_now => {
                        let mut kept = Cleanup::moved_to(&new, &mut cleanup);
                        return self
                            .wait_on_old_node(&new, &mut kept, &created, room, owner, deadline)
                            .await;
                    }
                    // Not this session's: deleted now rather than left to hold the line until
                    // the old session ends, as LeaderLatch's reset deletes its old node.
                    Some(_) => match retry_on_connection_loss(|| new.delete(&path, None)).await {
                        Ok(()) | Err(zk::Error::NoNode) => {}
                        Err(err) => return Err(err.into()),
                    },
                    None => {}
                }
                cleanup.disarm();
                self.lock(room, owner, deadline).await
            }
        }
    }

    /// Waits in line under `new` on the node created under the old session.
    async fn wait_on_old_node(
        &self,
        new: &zk::Client,
        kept: &mut Cleanup,
        created: &Created,
        room: &str,
        owner: &str,
        deadline: Instant,
    ) -> Result<ZkHeld, ZkError> {
        match tokio::time::timeout_at(deadline, wait_in_line(new, kept, created)).await {
            Ok(Ok(held)) => {
                kept.disarm();
                Ok(held)
            }
            // The old session ended while we were in line, and the node with it.
            Ok(Err(Expired)) => self.lock(room, owner, deadline).await,
            Ok(Err(Zk(err))) => Err(err.into()),
            Err(_) if kept.in_line && connected(new.state()) => Err(ZkError::Timeout),
            Err(_) => Err(ZkError::Unreachable(format!(
                "ZooKeeper did not answer before the deadline (session {})",
                new.state()
            ))),
        }
    }

    /// Opens a new session for the instance and gives up the one it had: the servers keep the
    /// old one for `linger`, then it is closed. Returns the new session's client.
    async fn replace(&self, linger: Duration) -> Result<zk::Client, ZkError> {
        let fresh = open(&self.connect_string, self.session_timeout).await?;
        let old = std::mem::replace(&mut *self.client.lock().await, fresh.clone());
        let connect_string = self.connect_string.clone();
        tokio::spawn(async move {
            tokio::time::sleep(linger).await;
            let session = old.session().clone();
            let closing = zk::Client::connector()
                .with_session(session)
                .with_fail_eagerly()
                .connect(&connect_string);
            match closing.await {
                // Dropped at once: its close ends the session on the servers.
                Ok(second) => drop(second),
                // Already over (expired meanwhile): its nodes are gone too.
                Err(err) => tracing::debug!(%err, "the old session was already over"),
            }
            drop(old);
        });
        Ok(fresh)
    }
}
