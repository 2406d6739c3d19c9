//! Leaving no node behind: a `lock` call that did not end with the lock, and a release the
//! servers did not acknowledge, delete their node in the background until it is gone or the
//! session is over (which takes it anyway). A stray node of a *live* session is never cleaned by
//! ZooKeeper: it would hold the room until the instance restarts.

use std::time::Duration;

use zookeeper_client as zk;

use super::naming::{lock_dir, LOCK_NAME};
use super::zk_error::is_session_over;

/// Between retries of a background clean-up whose request failed with the connection.
const CLEANUP_RETRY: Duration = Duration::from_millis(100);

/// Removes the node of a `lock` call that did not end with the lock: cancelled at the deadline
/// (or by the caller dropping it) or failed. Armed from before the create is sent, because a
/// create cancelled in flight may still happen; the clean-up finds the node by the uuid in its
/// name, and since one session's requests are served in order, its listing sees the create.
pub(super) struct Cleanup {
    client: zk::Client,
    pub(super) dir: String,
    /// `_c_<uuid>-lock-`: unique to this call.
    pub(super) marker: String,
    /// The node's name once the create answered.
    name: Option<String>,
    /// Waiting on the watch of the node ahead (rather than for an answer).
    pub(super) in_line: bool,
    armed: bool,
}

impl Cleanup {
    pub(super) fn new(client: &zk::Client, room: &str) -> Self {
        Cleanup {
            client: client.clone(),
            dir: lock_dir(room),
            marker: format!("_c_{}{LOCK_NAME}", uuid::Uuid::new_v4()),
            name: None,
            in_line: false,
            armed: true,
        }
    }

    /// The clean-up of `old`'s node, moved to `client`'s session: `old` is disarmed.
    pub(super) fn moved_to(client: &zk::Client, old: &mut Cleanup) -> Self {
        old.armed = false;
        Cleanup {
            client: client.clone(),
            dir: old.dir.clone(),
            marker: old.marker.clone(),
            name: old.name.clone(),
            in_line: false,
            armed: true,
        }
    }

    pub(super) fn created(&mut self, name: &str) {
        self.name = Some(name.to_owned());
    }

    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.armed || self.client.state().is_terminated() {
            // Held, or the session is over and ZooKeeper deletes its nodes itself.
            return;
        }
        let client = self.client.clone();
        let dir = std::mem::take(&mut self.dir);
        let marker = std::mem::take(&mut self.marker);
        let name = self.name.take();
        // Outside a runtime (a test dropping a future after its runtime) nothing can be sent:
        // the node then goes with the session.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let name = match name {
                Some(name) => Some(name),
                None => find_by_marker(&client, &dir, &marker).await,
            };
            if let Some(name) = name {
                delete_until_gone(&client, &format!("{dir}/{name}")).await;
            }
        });
    }
}

async fn find_by_marker(client: &zk::Client, dir: &str, marker: &str) -> Option<String> {
    loop {
        match client.list_children(dir).await {
            Ok(children) => return children.into_iter().find(|c| c.starts_with(marker)),
            Err(err) if is_session_over(&err) || err == zk::Error::NoNode => return None,
            Err(_) => tokio::time::sleep(CLEANUP_RETRY).await,
        }
    }
}

pub(super) fn spawn_delete(client: zk::Client, path: String) {
    tokio::spawn(async move { delete_until_gone(&client, &path).await });
}

/// Deletes `path` until it is gone or the session is over (which takes the node with it).
async fn delete_until_gone(client: &zk::Client, path: &str) {
    loop {
        match client.delete(path, None).await {
            Ok(()) | Err(zk::Error::NoNode) => return,
            Err(err) if is_session_over(&err) => return,
            Err(err) => {
                tracing::debug!(%err, path, "deleting a lock node again");
                tokio::time::sleep(CLEANUP_RETRY).await;
            }
        }
    }
}
