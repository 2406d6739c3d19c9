//! PostgreSQL beside the Redis lock store, for the database tiers (`lock/tiers/postgres.rs`): the
//! sessions their locks are held by, and what `/state` shows of the server.
//!
//! A database lock belongs to a *session* (a connection), not to a value with a lease: the
//! lock lasts exactly as long as the session holding it, so a holder's session is taken out of
//! the idle list for the whole hold and goes back only after a release the server confirmed.
//! Dropping a [`Session`] closes its connection, and the server frees whatever it held — what
//! a crashed holder's operating system does when it closes the socket.
//!
//! Why a small list of our own rather than a pool crate: a pooled connection is returned on
//! drop, and here a dropped session must be *closed* (it may still hold the lock, or be in a
//! transaction the server is about to end); what is left is a bounded count and a list.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oversell_api::state::PostgresView;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use crate::redis_pool::StoreError;

/// Sessions one instance may have open at once. Each waiter of the database's own queue holds
/// one while it waits, so with three instances at most 3 × this are open: `oversell up` gives
/// its server room for them. Buyers beyond it wait for a session first, in arrival order
/// (tokio's semaphore is fair).
pub const SESSIONS_PER_INSTANCE: usize = 48;
/// How long connecting may take; a server that does not answer in time is down (503).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// A query that is not a lock wait must answer within this; else the server is unavailable.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
/// The fencing tokens' sequence: one for every room, only its order matters.
pub const FENCE_SEQUENCE: &str = "oversell_fence";
/// The first of the two advisory-lock keys: which application the lock is (the second is the
/// room), so another program's advisory locks in the same database never collide with ours.
pub const LOCK_CLASS: i32 = 0x05e1;

/// One instance's sessions to the database.
pub struct PgStore {
    config: tokio_postgres::Config,
    /// `host:port`, for `/state` and error messages.
    addr: String,
    idle: Mutex<Vec<Client>>,
    sessions: Arc<Semaphore>,
    /// Whether the fencing sequence is known to exist (created once, by whoever comes first).
    sequence_ready: tokio::sync::OnceCell<()>,
}

/// A session taken from the store: returned with [`PgStore::put_back`], closed on drop.
pub struct Session {
    client: Client,
    _permit: OwnedSemaphorePermit,
}

impl PgStore {
    /// A store for `url` (`postgres://user@host:port/db`); nothing is connected yet.
    pub fn new(url: &str) -> Result<Self, String> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|err| format!("--postgres {url}: {err}"))?;
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .application_name("oversell")
            // The holder's side of a cut-off server: TCP tells it the session is gone.
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(2));
        let addr = addr_of(&config);
        Ok(PgStore {
            config,
            addr,
            idle: Mutex::default(),
            sessions: Arc::new(Semaphore::new(SESSIONS_PER_INSTANCE)),
            sequence_ready: tokio::sync::OnceCell::new(),
        })
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// A session: an idle one, or a new connection. Waits for a free slot at most `within`.
    pub async fn session(&self, within: Duration) -> Result<Session, StoreError> {
        let permit = tokio::time::timeout(within, self.sessions.clone().acquire_owned())
            .await
            .map_err(|_| {
                StoreError::Postgres(format!(
                    "all {SESSIONS_PER_INSTANCE} sessions of this instance stayed busy"
                ))
            })?
            .map_err(|_| StoreError::Postgres("the session list is closed".into()))?;
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let client = match idle.filter(|c| !c.is_closed()) {
            Some(client) => client,
            None => self.connect().await?,
        };
        Ok(Session {
            client,
            _permit: permit,
        })
    }

    /// Gives a session whose transaction ended back to the idle list.
    pub fn put_back(&self, session: Session) {
        if session.client.is_closed() {
            return;
        }
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(session.client);
    }

    async fn connect(&self) -> Result<Client, StoreError> {
        let (client, connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(|err| unavailable(&self.addr, &err))?;
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(%err, "postgres: a session ended");
            }
        });
        Ok(client)
    }

    /// Makes sure the fencing tokens' sequence exists.
    pub async fn fence_sequence(&self, session: &Session) -> Result<(), StoreError> {
        self.sequence_ready
            .get_or_try_init(|| async {
                let create = format!("CREATE SEQUENCE IF NOT EXISTS {FENCE_SEQUENCE}");
                match session.query(&create, QUERY_TIMEOUT).await {
                    Ok(_) => Ok(()),
                    // Two instances creating it at once: one of them loses the catalog race,
                    // and the sequence is there all the same.
                    Err(StoreError::Postgres(why)) if why.contains("already exists") => Ok(()),
                    Err(StoreError::Postgres(why)) if why.contains("duplicate key") => Ok(()),
                    Err(err) => Err(err),
                }
            })
            .await
            .map(|_| ())
    }

    /// The server and the room's lock in its lock table, for `/state`; whatever is not known
    /// `within` (the server, or a free session, is slow) is shown as down.
    pub async fn describe(&self, room_key: i32, within: Duration) -> PostgresView {
        let mut view = PostgresView {
            addr: self.addr.clone(),
            up: false,
            holding: 0,
            waiting: 0,
        };
        let Ok(Ok(session)) = tokio::time::timeout(within, self.session(within)).await else {
            return view;
        };
        let sql = format!(
            "SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted) \
             FROM pg_locks WHERE locktype = 'advisory' AND classid = {LOCK_CLASS} \
             AND objid = {} AND objsubid = 2",
            room_key as u32
        );
        if let Ok(rows) = session.query(&sql, within).await {
            view.up = true;
            if let Some(row) = rows.first() {
                let count = |i: usize| row.get(i).cloned().flatten()?.parse().ok();
                view.holding = count(0).unwrap_or(0);
                view.waiting = count(1).unwrap_or(0);
            }
            self.put_back(session);
        }
        view
    }
}

impl Session {
    /// Sends `sql` (one or more statements, in one round trip) and returns the rows of every
    /// statement, as text; bounded by `within`. An error leaves the session to the caller: a
    /// failed transaction must be rolled back before the session is reused.
    pub async fn query(
        &self,
        sql: &str,
        within: Duration,
    ) -> Result<Vec<Vec<Option<String>>>, StoreError> {
        let answered = tokio::time::timeout(within, self.client.simple_query(sql))
            .await
            .map_err(|_| {
                StoreError::Postgres(format!("no answer within {} ms", within.as_millis()))
            })?;
        let messages = answered.map_err(|err| StoreError::Postgres(describe(&err)))?;
        Ok(messages
            .into_iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => Some(
                    (0..row.len())
                        .map(|i| row.get(i).map(str::to_owned))
                        .collect(),
                ),
                _ => None,
            })
            .collect())
    }

    /// Sends `sql` and returns the database's own error, unread, for a caller that tells its
    /// SQL states apart (a lock wait that timed out).
    pub async fn query_raw(
        &self,
        sql: &str,
        within: Duration,
    ) -> Result<Result<Vec<SimpleQueryMessage>, tokio_postgres::Error>, StoreError> {
        tokio::time::timeout(within, self.client.simple_query(sql))
            .await
            .map_err(|_| {
                StoreError::Postgres(format!("no answer within {} ms", within.as_millis()))
            })
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// The room's second advisory-lock key: a stable hash of its id (FNV-1a, folded to 32 bits),
/// the same in every instance and every build.
pub fn room_key(room: &str) -> i32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in room.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    ((hash >> 32) ^ hash) as u32 as i32
}

/// The first column of every row the statements answered, in order (SQL nulls left out).
pub fn first_values(messages: &[SimpleQueryMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        })
        .collect()
}

fn unavailable(addr: &str, err: &tokio_postgres::Error) -> StoreError {
    StoreError::Postgres(format!("{addr}: {}", describe(err)))
}

/// The database's message when it sent one, else the client's.
pub fn describe(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None if err.is_closed() => "the session was closed".into(),
        None => err.to_string(),
    }
}

fn addr_of(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_key_is_stable_and_rooms_differ() {
        assert_eq!(room_key("default"), room_key("default"));
        assert_ne!(room_key("default"), room_key("room-2"));
        // Pinned: instances of different builds must agree on it.
        assert_eq!(
            room_key(""),
            ((0xcbf2_9ce4_8422_2325u64 >> 32) ^ 0xcbf2_9ce4_8422_2325u64) as u32 as i32
        );
    }

    #[test]
    fn a_bad_url_is_named() {
        let err = PgStore::new("postgres://u@h:notaport/db").err().unwrap();
        assert!(err.contains("--postgres"), "{err}");
        let store = PgStore::new("postgres://oversell@127.0.0.1:5999/oversell").unwrap();
        assert_eq!(store.addr(), "127.0.0.1:5999");
    }
}
