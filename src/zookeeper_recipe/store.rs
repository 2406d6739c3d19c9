//! An instance's way to ZooKeeper ([`ZkStore`]: the session, opened on first use), and what
//! `/state` shows of it: each server's mode, and each room's queue.

use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zk;

use super::four_letter::four_letter;
use super::naming::{lock_dir, sorted_contenders};
use super::session::{connect, retry_on_connection_loss, ZkSession};
use super::zk_error::{unreachable_at_deadline, ZkError};

/// A contender in a room's queue, as [`ZkSession::queue`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkNode {
    pub path: String,
    pub sequence: u64,
    /// The node's data: the contender's owner id.
    pub owner: String,
    pub czxid: i64,
    pub session: i64,
}

impl ZkSession {
    /// The room's queue, holder first.
    pub async fn queue(&self, room: &str) -> Result<Vec<ZkNode>, ZkError> {
        let client = self.client(Instant::now() + self.session_timeout).await?;
        let dir = lock_dir(room);
        let names = match retry_on_connection_loss(|| client.list_children(&dir)).await {
            Err(zk::Error::NoNode) => return Ok(vec![]),
            listed => listed?,
        };
        let mut nodes = Vec::new();
        for (sequence, name) in sorted_contenders(names) {
            let path = format!("{dir}/{name}");
            match retry_on_connection_loss(|| client.get_data(&path)).await {
                Ok((data, stat)) => nodes.push(ZkNode {
                    path,
                    sequence,
                    owner: String::from_utf8_lossy(&data).into_owned(),
                    czxid: stat.czxid,
                    session: stat.ephemeral_owner,
                }),
                // Released between the listing and the read.
                Err(zk::Error::NoNode) => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(nodes)
    }
}

impl ZkSession {
    /// Deletes every node in the room's line, whoever's session holds it, as a reset deletes a
    /// Redis lock's key: a node left by a live session (a release whose delete was lost) would
    /// otherwise hold the room until that session ends. Waiters whose node goes queue again; a
    /// holder's release then finds its lock lost. Returns how many were deleted.
    pub async fn clear(&self, room: &str, deadline: Instant) -> Result<usize, ZkError> {
        let clearing = async {
            let client = self.client(deadline).await?;
            let dir = lock_dir(room);
            let names = match retry_on_connection_loss(|| client.list_children(&dir)).await {
                Err(zk::Error::NoNode) => return Ok(0),
                listed => listed?,
            };
            let mut deleted = 0;
            for (_, name) in sorted_contenders(names) {
                let path = format!("{dir}/{name}");
                match retry_on_connection_loss(|| client.delete(&path, None)).await {
                    Ok(()) => deleted += 1,
                    Err(zk::Error::NoNode) => {}
                    Err(err) => return Err(err.into()),
                }
            }
            Ok(deleted)
        };
        tokio::time::timeout_at(deadline, clearing)
            .await
            .map_err(|_| unreachable_at_deadline())?
    }
}

/// Between tries to open a first session.
const REOPEN_PAUSE: Duration = Duration::from_millis(100);

/// An instance's way to ZooKeeper: where it is, and the session, opened on first use. An
/// instance starts while ZooKeeper is down; its buyers get 503s until it answers.
pub struct ZkStore {
    connect_string: String,
    session_timeout: Duration,
    session: tokio::sync::OnceCell<ZkSession>,
    /// Each server's mode as last asked, and when: every watched room's `/state` shows them,
    /// and many rooms must not mean many connections per second to each server. A std
    /// `Mutex`, never held across `.await`.
    modes: std::sync::Mutex<Option<(Instant, ServerModes)>>,
}

/// Each server (`host:port`) and its mode (`None`: not serving).
pub type ServerModes = Vec<(String, Option<String>)>;

/// How long the servers' modes are reused before they are asked again.
const MODES_FRESH: Duration = Duration::from_millis(1_000);

impl ZkStore {
    pub fn new(connect_string: &str, session_timeout: Duration) -> ZkStore {
        ZkStore {
            connect_string: connect_string.to_owned(),
            session_timeout,
            session: tokio::sync::OnceCell::new(),
            modes: std::sync::Mutex::default(),
        }
    }

    /// Each server (`host:port`) and its mode as its `srvr` answer names it (`leader`,
    /// `follower`, `standalone`); `None` when it does not serve. Asked at most once a second.
    pub async fn server_modes(&self) -> ServerModes {
        let cached = self.modes.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some((_, modes)) = cached.filter(|(at, _)| at.elapsed() < MODES_FRESH) {
            return modes;
        }
        let servers = self.connect_string.split(',').map(|addr| async move {
            let srvr = four_letter(addr, "srvr").await;
            let mode = srvr.and_then(|answer| {
                answer
                    .lines()
                    .find_map(|line| line.strip_prefix("Mode: "))
                    .map(|mode| mode.trim().to_owned())
            });
            (addr.to_owned(), mode)
        });
        let modes = futures_util::future::join_all(servers).await;
        *self.modes.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), modes.clone()));
        modes
    }

    /// `host:port,host:port,…`.
    pub fn connect_string(&self) -> &str {
        &self.connect_string
    }

    /// The session, opened now if it never was. A failed open (no server answers, or the
    /// ensemble is electing a leader) is tried again every [`REOPEN_PAUSE`] until `deadline`,
    /// as a buyer of the Redis tiers waits out an outage of its lock store.
    pub async fn session(&self, deadline: Instant) -> Result<&ZkSession, ZkError> {
        loop {
            let opening = self
                .session
                .get_or_try_init(|| connect(&self.connect_string, self.session_timeout));
            let err = match tokio::time::timeout_at(deadline, opening).await {
                Ok(Ok(session)) => return Ok(session),
                Ok(Err(err)) => err,
                Err(_) => unreachable_at_deadline(),
            };
            if Instant::now() + REOPEN_PAUSE >= deadline {
                return Err(err);
            }
            tokio::time::sleep(REOPEN_PAUSE).await;
        }
    }

    /// The session, if one was opened.
    pub fn opened(&self) -> Option<&ZkSession> {
        self.session.get()
    }
}
