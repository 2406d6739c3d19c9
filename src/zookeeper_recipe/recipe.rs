//! The recipe itself: take the room's lock by queueing an ephemeral sequential node and waiting
//! until it is the lowest, watching only the node just ahead; give it back by deleting the node.
//!
//! # Why not the crate's own `Client::lock`
//!
//! `zookeeper-client` has this recipe (`LockPrefix::new_curator` + `Client::lock`), and its
//! waiting is right (lowest wins, watch the predecessor). It is not used because:
//! - cancelling it while the node is being created leaves the node behind (0.11.2: the
//!   background clean-up deletes the child's bare name, not its path, and the error is
//!   ignored; tried against a real server, 5 calls of 5 cancelled that early each left their
//!   node). A stray node of a *live* session is never cleaned by ZooKeeper: it would hold
//!   the room until the instance restarts. Our wait is always cancelled at the buyer's
//!   deadline, so this case is common, not rare;
//! - it returns neither the creation zxid (the fencing token; one more read) nor whether a
//!   release found its node (the release is a fire-and-forget delete on drop).
//!
//! So the recipe is written here on the crate's plain API (create, list children, get-data
//! with a watch, delete), in the crate's Curator naming; cancelling [`ZkSession::lock`] at any
//! point leaves no node behind (see [`Cleanup`]).

use tokio::time::Instant;
use zookeeper_client as zk;

use super::cleanup::{spawn_delete, Cleanup};
use super::naming::{sequence_of, sorted_contenders};
use super::session::{retry_on_connection_loss, ZkSession};
use super::zk_error::{connection_lost, is_session_over, unreachable_at_deadline, ZkError};

/// A lock this holder took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkHeld {
    /// The lock node: `/oversell/locks/<room>/_c_<uuid>-lock-<sequence>`.
    pub path: String,
    /// The node's sequence number: grows with every contender of this room.
    pub sequence: u64,
    /// The zxid that created the node: grows with every write to ZooKeeper, so it is the
    /// fencing token.
    pub czxid: i64,
    /// The session that owns the node (it goes when the session expires).
    pub session: i64,
}

/// A release's first delete lost on a connection loss (the `release-delete-*` faults), and
/// what the release does then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteLoss {
    /// Nothing lost.
    None,
    /// The release gives up on the delete: the node stays as long as the session lives.
    Forgotten,
    /// The delete is sent again until it lands (Curator's `guaranteed()`).
    Retried,
}

/// What a release found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The node was there, and is deleted: the next waiter is woken.
    Deleted,
    /// The node was already gone: the session expired (or someone deleted the node) while
    /// this holder believed it held the lock. Whatever it wrote meanwhile was unprotected.
    Lost,
}

impl ZkSession {
    /// Takes the room's lock for `owner` (stored as the node's data), waiting in line until
    /// `deadline`. On any error, including the deadline, no node of this call is left behind.
    pub async fn lock(
        &self,
        room: &str,
        owner: &str,
        deadline: Instant,
    ) -> Result<ZkHeld, ZkError> {
        loop {
            let client = self.client(deadline).await?;
            let mut cleanup = Cleanup::new(&client, room);
            let attempt = tokio::time::timeout_at(deadline, acquire(&client, &mut cleanup, owner));
            match attempt.await {
                Ok(Ok(held)) => {
                    cleanup.disarm();
                    return Ok(held);
                }
                // Our session expired while in line: our node is gone with it. Queue again
                // on a new session, if there is time.
                Ok(Err(Expired)) if Instant::now() < deadline => continue,
                Ok(Err(Expired)) => return Err(unreachable_at_deadline()),
                Ok(Err(Zk(err))) => return Err(err.into()),
                // `cleanup` is dropped on the way out and removes our node. In line behind a
                // live holder, that is a busy lock; stuck on a request, ZooKeeper did not
                // answer (a leader that lost its quorum holds writes until it notices).
                Err(_) if cleanup.in_line && connected(client.state()) => {
                    return Err(ZkError::Timeout)
                }
                Err(_) => {
                    return Err(ZkError::Unreachable(format!(
                        "ZooKeeper did not answer before the deadline (session {})",
                        client.state()
                    )))
                }
            }
        }
    }

    /// Gives the lock back by deleting its node. If the servers cannot be reached, the delete
    /// goes on in the background until it succeeds or the session ends (which deletes the
    /// node anyway), so the room is never left locked by a live session.
    pub async fn release(&self, held: &ZkHeld) -> Result<Released, ZkError> {
        self.release_meeting(held, DeleteLoss::None).await
    }

    /// [`ZkSession::release`], its first delete lost on the way as `loss` says (the
    /// `release-delete-*` faults).
    pub async fn release_meeting(
        &self,
        held: &ZkHeld,
        loss: DeleteLoss,
    ) -> Result<Released, ZkError> {
        let client = self.client.lock().await.clone();
        if client.session_id().0 != held.session {
            // The holder's session expired and a new one was opened since: the node went
            // with the old one (or is about to, when the servers notice).
            return Ok(Released::Lost);
        }
        if loss == DeleteLoss::Forgotten {
            // What `InterProcessMutex#release` did before CURATOR-678: its record of the hold
            // is gone whatever the delete did, and nothing sends the delete again.
            return Err(ZkError::Unreachable(format!(
                "the delete of {} was lost with the connection, and not sent again",
                held.path
            )));
        }
        // A delete retried after a lost connection may find its own work done: NoNode then,
        // with the session still alive (an ephemeral node goes only by a delete or with its
        // session), means the first try deleted it.
        let deleting = async {
            let mut retried = false;
            let mut lose_first = loss == DeleteLoss::Retried;
            loop {
                let answer = match std::mem::take(&mut lose_first) {
                    true => Err(zk::Error::ConnectionLoss),
                    false => client.delete(&held.path, None).await,
                };
                match answer {
                    Ok(()) => return Ok(()),
                    Err(err) if connection_lost(&err) => retried = true,
                    Err(err) => return Err((err, retried)),
                }
            }
        };
        match tokio::time::timeout(client.session_timeout(), deleting).await {
            Ok(Ok(())) => Ok(Released::Deleted),
            Ok(Err((zk::Error::NoNode, true))) if !client.state().is_terminated() => {
                Ok(Released::Deleted)
            }
            Ok(Err((zk::Error::NoNode, _))) => Ok(Released::Lost),
            Ok(Err((err, _))) if client.state().is_terminated() || is_session_over(&err) => {
                Ok(Released::Lost)
            }
            Ok(Err((err, _))) => {
                spawn_delete(client, held.path.clone());
                Err(err.into())
            }
            Err(_) => {
                spawn_delete(client, held.path.clone());
                Err(ZkError::Unreachable(format!(
                    "release of {} not acknowledged within the session timeout",
                    held.path
                )))
            }
        }
    }

    /// Whether `held`'s node is still there and still this session's: what a careful holder
    /// can check before it writes. (Still racy: the session may expire right after. Only a
    /// fencing token checked by the resource closes that gap.)
    pub async fn still_held(&self, held: &ZkHeld) -> Result<bool, ZkError> {
        let client = self.client.lock().await.clone();
        if client.state().is_terminated() || client.session_id().0 != held.session {
            return Ok(false);
        }
        match retry_on_connection_loss(|| client.check_stat(&held.path)).await {
            Ok(Some(stat)) => Ok(stat.ephemeral_owner == held.session),
            Ok(None) => Ok(false),
            Err(err) if is_session_over(&err) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }
}

pub(super) fn connected(state: zk::SessionState) -> bool {
    matches!(
        state,
        zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly
    )
}

/// Why one pass of the recipe stopped.
pub(super) enum Stop {
    /// The session expired: its node is gone.
    Expired,
    Zk(zk::Error),
}
pub(super) use Stop::{Expired, Zk};

impl From<zk::Error> for Stop {
    fn from(err: zk::Error) -> Self {
        match is_session_over(&err) {
            true => Expired,
            false => Zk(err),
        }
    }
}

/// Our node as its create answered.
pub(super) struct Created {
    pub(super) name: String,
    pub(super) sequence: u64,
    pub(super) czxid: i64,
}

/// Creates our node, then waits until it is the lowest.
async fn acquire(client: &zk::Client, cleanup: &mut Cleanup, owner: &str) -> Result<ZkHeld, Stop> {
    let created = create_node(client, cleanup, owner).await?;
    wait_in_line(client, cleanup, &created).await
}

/// Waits until `created` is the lowest node of the room, watching only the node just ahead.
/// The node is found by its name: whose session it is, is not asked.
pub(super) async fn wait_in_line(
    client: &zk::Client,
    cleanup: &mut Cleanup,
    created: &Created,
) -> Result<ZkHeld, Stop> {
    let dir = cleanup.dir.clone();
    let name = &created.name;
    loop {
        let children = retry_on_connection_loss(|| client.list_children(&dir)).await?;
        let line = sorted_contenders(children);
        let Some(place) = line.iter().position(|(_, n)| n == name) else {
            // Our node is gone: only an expiry (or someone deleting it) does that.
            return Err(Expired);
        };
        if place == 0 {
            return Ok(ZkHeld {
                path: format!("{dir}/{name}"),
                sequence: created.sequence,
                czxid: created.czxid,
                session: client.session_id().0,
            });
        }
        // Watch only the node just ahead. A get-data watch, as Curator does: an exists watch
        // on a node already gone would stay registered on the server.
        let ahead = format!("{dir}/{}", line[place - 1].1);
        match retry_on_connection_loss(|| client.get_and_watch_data(&ahead)).await {
            Ok((_, _, watcher)) => {
                cleanup.in_line = true;
                watcher.changed().await;
                cleanup.in_line = false;
            }
            // It went between the listing and the watch: look again.
            Err(zk::Error::NoNode) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// Creates our ephemeral sequential node (and the room's dir the first time).
pub(super) async fn create_node(
    client: &zk::Client,
    cleanup: &mut Cleanup,
    owner: &str,
) -> Result<Created, Stop> {
    let prefix = format!("{}/{}", cleanup.dir, cleanup.marker);
    let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    loop {
        match client.create(&prefix, owner.as_bytes(), &ephemeral).await {
            Ok((stat, sequence)) => {
                let name = format!("{}{sequence}", cleanup.marker);
                cleanup.created(&name);
                let sequence = u64::try_from(sequence.into_i64()).unwrap_or_default();
                let czxid = stat.czxid;
                return Ok(Created {
                    name,
                    sequence,
                    czxid,
                });
            }
            Err(zk::Error::NoNode) => {
                let dir = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
                retry_on_connection_loss(|| client.mkdir(&cleanup.dir, &dir)).await?;
            }
            // The create may or may not have happened: look for our uuid, as Curator does.
            Err(err) if connection_lost(&err) => {
                let children =
                    retry_on_connection_loss(|| client.list_children(&cleanup.dir)).await?;
                if let Some(name) = children
                    .into_iter()
                    .find(|c| c.starts_with(&cleanup.marker))
                {
                    cleanup.created(&name);
                    let path = format!("{}/{name}", cleanup.dir);
                    let Some(stat) = retry_on_connection_loss(|| client.check_stat(&path)).await?
                    else {
                        return Err(Expired);
                    };
                    let sequence = sequence_of(&name).unwrap_or_default();
                    let czxid = stat.czxid;
                    return Ok(Created {
                        name,
                        sequence,
                        czxid,
                    });
                }
            }
            Err(err) => return Err(err.into()),
        }
    }
}
