//! The ZooKeeper lock recipe, on the `zookeeper-client` crate: what the `zookeeper` and
//! `zookeeper-fenced` tiers take and give back.
//!
//! # The recipe (ZooKeeper's own, and Curator's `InterProcessMutex`)
//!
//! Each contender creates an *ephemeral sequential* node under the room's lock dir,
//! `/oversell/locks/<room>/_c_<uuid>-lock-<sequence>` (Curator's naming, so a Curator client
//! would queue in the same line). The lowest sequence holds the lock. Every other contender
//! watches only the node just ahead of it, so a release wakes one waiter, not the herd. Release
//! deletes the node.
//!
//! What it guarantees: one holder at a time *while every holder's session is alive*, first come
//! first served, and no lease to tune: a holder that dies loses its node when its session times
//! out, and only then. ZooKeeper is consistent (a write is acknowledged by a quorum), so a lock
//! survives a server's crash; with no quorum it refuses, rather than answer wrongly.
//!
//! What breaks it: a holder that *pauses* (GC, SIGSTOP, a slow disk) longer than its session
//! timeout. Its session expires, its node is deleted, the next waiter takes the lock, and the
//! paused holder wakes up still believing it holds it — ZooKeeper is not immune to pauses
//! either. The fix is the same as for Redis: a fencing token checked by the resource. Here the
//! token comes free: the node's creation zxid ([`ZkHeld::czxid`]), which only grows, across
//! rooms, sessions, leader changes and a re-created lock dir. (The sequence number also grows,
//! but only per lock dir: it would restart if the dir were deleted and re-created.)
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
//!
//! # Sessions
//!
//! One [`ZkSession`] per instance, shared by all its sales: contenders of one session are told
//! apart by the uuid in their node's name. An expired session cannot be revived (ZooKeeper
//! deleted its nodes); the next `lock` opens a new one.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;
use zookeeper_client as zk;

/// Where the lock dirs live: one persistent dir per room, never deleted, so that its sequence
/// numbers never restart.
pub const LOCK_ROOT: &str = "/oversell/locks";
/// Curator's lock name: nodes are `_c_<uuid>-lock-<sequence>`.
const LOCK_NAME: &str = "-lock-";
/// Between retries of a background clean-up whose request failed with the connection.
const CLEANUP_RETRY: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, thiserror::Error)]
pub enum ZkError {
    /// No server answered, or none that has a quorum: the buyer gets a 503, never a hang.
    #[error("ZooKeeper unreachable: {0}")]
    Unreachable(String),
    /// The deadline passed while waiting behind other holders.
    #[error("lock wait deadline passed")]
    Timeout,
    /// ZooKeeper refused a request: a bug here (a bad path, a wrong node type).
    #[error("ZooKeeper error: {0}")]
    Failed(zk::Error),
}

impl From<zk::Error> for ZkError {
    fn from(err: zk::Error) -> Self {
        use zk::Error::*;
        match err {
            SessionExpired | SessionMoved | NoHosts | Timeout | ClientClosed | Throttled => {
                ZkError::Unreachable(err.to_string())
            }
            err if connection_lost(&err) => ZkError::Unreachable(err.to_string()),
            err => ZkError::Failed(err),
        }
    }
}

/// Whether a request failed with its connection rather than by the server's answer. The crate
/// fails the requests in flight with whatever broke the connection: `ConnectionLoss`, an I/O
/// error or "no response from connection in N ms" (the last two as `Custom`). Such a request
/// may or may not have been applied.
fn connection_lost(err: &zk::Error) -> bool {
    matches!(
        err,
        zk::Error::ConnectionLoss | zk::Error::Custom(_) | zk::Error::UnexpectedError(_)
    )
}

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

/// What a release found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The node was there, and is deleted: the next waiter is woken.
    Deleted,
    /// The node was already gone: the session expired (or someone deleted the node) while
    /// this holder believed it held the lock. Whatever it wrote meanwhile was unprotected.
    Lost,
}

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

/// A ZooKeeper session, re-opened when it expired. Dropping it closes the session (once no
/// background clean-up still uses it), and ZooKeeper deletes its nodes at once.
pub struct ZkSession {
    connect_string: String,
    session_timeout: Duration,
    /// The live client. A tokio `Mutex` held across a re-connect on purpose: concurrent sales
    /// wait for one new session instead of each opening its own.
    client: Mutex<zk::Client>,
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

async fn open(connect_string: &str, session_timeout: Duration) -> Result<zk::Client, ZkError> {
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
    async fn client(&self, deadline: Instant) -> Result<zk::Client, ZkError> {
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
        let client = self.client.lock().await.clone();
        if client.session_id().0 != held.session {
            // The holder's session expired and a new one was opened since: the node went
            // with the old one (or is about to, when the servers notice).
            return Ok(Released::Lost);
        }
        // A delete retried after a lost connection may find its own work done: NoNode then,
        // with the session still alive (an ephemeral node goes only by a delete or with its
        // session), means the first try deleted it.
        let deleting = async {
            let mut retried = false;
            loop {
                match client.delete(&held.path, None).await {
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

/// The file in a server's dir (the parent of its `dataDir`) holding its process id.
pub const PID_FILE: &str = "zookeeper.pid";
/// Between tries to open a first session.
const REOPEN_PAUSE: Duration = Duration::from_millis(100);
/// How long a four-letter question may take before the server counts as not answering.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);

/// Asks a four-letter word (`srvr`, `conf`, …) of the server at `addr`; `None` if it does not
/// answer in time (or the word is not on its whitelist: it then closes without a word).
pub async fn four_letter(addr: &str, word: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let asked = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        stream.write_all(word.as_bytes()).await.ok()?;
        // The server answers and closes.
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.ok()?;
        Some(answer).filter(|a| !a.is_empty())
    };
    tokio::time::timeout(ASK_TIMEOUT, asked)
        .await
        .ok()
        .flatten()
}

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
    /// as a buyer of the Redis tiers rides out an outage of its lock store.
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

/// The room's lock dir.
pub fn lock_dir(room: &str) -> String {
    format!("{LOCK_ROOT}/{room}")
}

fn unreachable_at_deadline() -> ZkError {
    ZkError::Unreachable("no ZooKeeper session before the deadline".to_owned())
}

fn connected(state: zk::SessionState) -> bool {
    matches!(
        state,
        zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly
    )
}

fn is_session_over(err: &zk::Error) -> bool {
    matches!(
        err,
        zk::Error::SessionExpired | zk::Error::ClientClosed | zk::Error::SessionMoved
    )
}

/// Why one pass of the recipe stopped.
enum Stop {
    /// The session expired: its node is gone.
    Expired,
    Zk(zk::Error),
}
use Stop::{Expired, Zk};

impl From<zk::Error> for Stop {
    fn from(err: zk::Error) -> Self {
        match is_session_over(&err) {
            true => Expired,
            false => Zk(err),
        }
    }
}

/// Creates our node, then waits until it is the lowest.
async fn acquire(client: &zk::Client, cleanup: &mut Cleanup, owner: &str) -> Result<ZkHeld, Stop> {
    let (name, sequence, czxid) = create_node(client, cleanup, owner).await?;
    let dir = cleanup.dir.clone();
    loop {
        let children = retry_on_connection_loss(|| client.list_children(&dir)).await?;
        let line = sorted_contenders(children);
        let Some(place) = line.iter().position(|(_, n)| *n == name) else {
            // Our node is gone: only an expiry (or someone deleting it) does that.
            return Err(Expired);
        };
        if place == 0 {
            return Ok(ZkHeld {
                path: format!("{dir}/{name}"),
                sequence,
                czxid,
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

/// Creates our ephemeral sequential node (and the room's dir the first time). Returns its
/// name, sequence and creation zxid.
async fn create_node(
    client: &zk::Client,
    cleanup: &mut Cleanup,
    owner: &str,
) -> Result<(String, u64, i64), Stop> {
    let prefix = format!("{}/{}", cleanup.dir, cleanup.marker);
    let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    loop {
        match client.create(&prefix, owner.as_bytes(), &ephemeral).await {
            Ok((stat, sequence)) => {
                let name = format!("{}{sequence}", cleanup.marker);
                cleanup.created(&name);
                let sequence = u64::try_from(sequence.into_i64()).unwrap_or_default();
                return Ok((name, sequence, stat.czxid));
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
                    return Ok((name, sequence, stat.czxid));
                }
            }
            Err(err) => return Err(err.into()),
        }
    }
}

/// A request that failed with the connection is asked again: the client queues it until it
/// is connected again, or fails it for good when the session is over (no busy loop).
async fn retry_on_connection_loss<T, F>(ask: impl Fn() -> F) -> Result<T, zk::Error>
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

/// The sequence number at the end of a lock node's name.
fn sequence_of(name: &str) -> Option<u64> {
    let (_, digits) = name.rsplit_once(LOCK_NAME)?;
    digits.parse().ok()
}

/// The lock nodes among `children`, lowest sequence first.
fn sorted_contenders(children: Vec<String>) -> Vec<(u64, String)> {
    let mut line: Vec<(u64, String)> = children
        .into_iter()
        .filter_map(|name| Some((sequence_of(&name)?, name)))
        .collect();
    line.sort_unstable();
    line
}

/// Removes the node of a `lock` call that did not end with the lock: cancelled at the deadline
/// (or by the caller dropping it) or failed. Armed from before the create is sent, because a
/// create cancelled in flight may still happen; the clean-up finds the node by the uuid in its
/// name, and since one session's requests are served in order, its listing sees the create.
struct Cleanup {
    client: zk::Client,
    dir: String,
    /// `_c_<uuid>-lock-`: unique to this call.
    marker: String,
    /// The node's name once the create answered.
    name: Option<String>,
    /// Waiting on the watch of the node ahead (rather than for an answer).
    in_line: bool,
    armed: bool,
}

impl Cleanup {
    fn new(client: &zk::Client, room: &str) -> Self {
        Cleanup {
            client: client.clone(),
            dir: lock_dir(room),
            marker: format!("_c_{}{LOCK_NAME}", uuid::Uuid::new_v4()),
            name: None,
            in_line: false,
            armed: true,
        }
    }

    fn created(&mut self, name: &str) {
        self.name = Some(name.to_owned());
    }

    fn disarm(&mut self) {
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

fn spawn_delete(client: zk::Client, path: String) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contenders_are_ordered_by_sequence_not_by_uuid() {
        let children = vec![
            "_c_ffff-lock-0000000012".to_owned(),
            "_c_0000-lock-0000000013".to_owned(),
            "_c_aaaa-lock-0000000002".to_owned(),
            "not-a-lock".to_owned(),
        ];
        let line: Vec<u64> = sorted_contenders(children)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(line, vec![2, 12, 13]);
    }

    #[test]
    fn sessions_that_are_gone_map_to_unreachable() {
        for err in [
            zk::Error::ConnectionLoss,
            zk::Error::NoHosts,
            zk::Error::SessionExpired,
        ] {
            assert!(matches!(ZkError::from(err), ZkError::Unreachable(_)));
        }
        assert!(matches!(
            ZkError::from(zk::Error::NoNode),
            ZkError::Failed(_)
        ));
    }
}
