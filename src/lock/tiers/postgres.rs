//! `postgres` and `postgres-fenced` — the third answer: a lock held by a database session, a
//! PostgreSQL advisory lock keyed by the room (the sessions are `crate::pg_store`'s).
//!
//! 001 names three places a distributed lock can live (line 45: Redis, ZooKeeper, or a
//! database); these tiers are the database. A buyer opens a transaction and takes
//! `pg_advisory_xact_lock(app, room)`: the lock belongs to the transaction, so `COMMIT` is the
//! release, and a session that ends for any reason ends the transaction and frees the lock.
//! How a buyer waits follows the room's `wait` setting: `spin` tries
//! `pg_try_advisory_xact_lock` and sleeps between tries, as the articles' Redis loops do;
//! `pubsub` (and `cohort`) queue in the database itself — a blocking `pg_advisory_xact_lock`
//! bounded by `lock_timeout` at the buyer's deadline, woken by the server the moment the lock
//! is free, first come first served (PostgreSQL grants a lock's waiters in queue order).
//! Waking waiters with `LISTEN/NOTIFY` instead was measured (`bench/src/bin/pg-wait.rs`): a
//! notification wakes every listener, and the herd sold a fourteenth as much.
//!
//! A transaction's lock, not a session's (`pg_advisory_lock`): the sessions are pooled, and a
//! session lock is reentrant for its session, so one left behind by a sale that failed before
//! its unlock would let the pool's next user straight in. A transaction's lock cannot outlive
//! it, and the server's way of taking a lock back from a holder that stopped
//! (`idle_in_transaction_session_timeout`) needs the transaction.
//!
//! # Guarantee
//! One holder at a time while every holder's session lives. No lease: a holder that crashes
//! frees the lock at once (its socket closes, its session ends), and a holder that is slow or
//! paused keeps it for as long as its session lasts — nobody else gets in, however long the
//! pause. The price is availability: every buyer waits behind a frozen holder, until its own
//! deadline (a 503), where a Redis lease would have let the next one in.
//!
//! With `lease: fixed` the session gets a timeout instead
//! (`idle_in_transaction_session_timeout` = the room's `ttl_ms`): the server ends a holder's
//! session that sent nothing for that long inside its transaction, which is how a database
//! takes back a lock from a holder that stopped. That trades the availability back for the
//! lease's defect.
//!
//! # What breaks it
//! With the timeout, a holder paused longer than it (a GC stop, `SIGSTOP`): the server ends its
//! session, the next buyer takes the lock, and the paused holder wakes still believing it
//! holds it and writes a stale value (its `COMMIT` fails, too late: a lost release). Without
//! the timeout, nothing lets anyone in while a frozen holder's connection stays open.
//!
//! `postgres-fenced` closes the gap as `fenced` does: under the lock the holder takes
//! `nextval` of a sequence, which only grows, as its fencing token, and the stock refuses a
//! write with a lower token than it has seen.
//!
//! Not a step list: the lock is a session's, not a Redis key tried again. Not reentrant here:
//! a nested step takes a session of its own, and waits for the sale's own lock.

use async_trait::async_trait;
use oversell_api::settings::{LeaseMode, WaitStrategy};
use tokio_postgres::error::SqlState;

use crate::lock::hook::Point;
use crate::lock::{wait, Attempt, Held, Keep, Lock, LockCx, LockError};
use crate::pg_store::{self, PgStore, Session, FENCE_SEQUENCE, LOCK_CLASS, QUERY_TIMEOUT};
use crate::redis_pool::StoreError;
use oversell_api::tier::Tier;

/// The tiers this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![
        (
            Tier::Postgres,
            crate::lock::TierLock::Own(Box::new(PostgresLock::plain())),
        ),
        (
            Tier::PostgresFenced,
            crate::lock::TierLock::Own(Box::new(PostgresLock::fencing())),
        ),
    ]
}

pub struct PostgresLock {
    /// Whether the holder's fencing token is handed to the stock (`postgres-fenced`).
    fenced: bool,
}

impl PostgresLock {
    pub fn plain() -> Self {
        PostgresLock { fenced: false }
    }

    pub fn fencing() -> Self {
        PostgresLock { fenced: true }
    }

    /// The statements that open the buyer's transaction and take the lock — waiting in the
    /// database's queue at most `queue_ms`, or trying once (`None`) — whose last value is the
    /// token (1 when unfenced), or 0 when the lock was not taken.
    fn taking(&self, cx: &LockCx<'_>, queue_ms: Option<u64>) -> String {
        let key = pg_store::room_key(cx.keys.room());
        let mut sql = String::from("BEGIN;");
        if let Some(ms) = queue_ms {
            sql += &format!(" SET LOCAL lock_timeout = {ms};");
        }
        if cx.settings.lease == LeaseMode::Fixed {
            sql += &format!(
                " SET LOCAL idle_in_transaction_session_timeout = {};",
                cx.settings.ttl_ms
            );
        }
        let token = match self.fenced {
            true => format!("nextval('{FENCE_SEQUENCE}')"),
            false => "1".into(),
        };
        sql + &match queue_ms {
            Some(_) => {
                format!(" SELECT pg_advisory_xact_lock({LOCK_CLASS}, {key}); SELECT {token};")
            }
            None => format!(
                " SELECT CASE WHEN pg_try_advisory_xact_lock({LOCK_CLASS}, {key}) THEN {token} \
                 ELSE 0 END;"
            ),
        }
    }

    fn held(&self, session: Session, token: u64) -> Held {
        Held {
            fence: self.fenced.then_some(token),
            _keep: Keep::Session(Box::new(session)),
            ..Held::plain()
        }
    }

    /// A session ready for this tier (the fencing sequence made, when fenced).
    async fn session(&self, pg: &PgStore) -> Result<Session, StoreError> {
        let session = pg.session(QUERY_TIMEOUT).await?;
        if self.fenced {
            pg.fence_sequence(&session).await?;
        }
        Ok(session)
    }

    /// Queues in the database until the buyer's deadline.
    async fn queue(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        let pg = postgres(cx)?;
        let deadline = tokio::time::Instant::now() + cx.settings.wait_deadline();
        let session = self.session(pg).await?;
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let wait_ms = (left.as_millis() as u64).max(1);
        let sql = self.taking(cx, Some(wait_ms));
        // The server ends the wait at `lock_timeout`; the round trip gets a little more.
        let answered = session.query_raw(&sql, left + QUERY_TIMEOUT).await?;
        match answered {
            Ok(messages) => match token(&messages) {
                Some(token) if token > 0 => Ok(self.held(session, token)),
                _ => Err(LockError::Store(StoreError::Postgres(
                    "the lock query answered no token".into(),
                ))),
            },
            Err(err) if err.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
                rolled_back(pg, session).await;
                Err(LockError::Timeout)
            }
            Err(err) => Err(LockError::Store(StoreError::Postgres(pg_store::describe(
                &err,
            )))),
        }
    }
}

#[async_trait]
impl Lock for PostgresLock {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        let pg = postgres(cx)?;
        let session = self.session(pg).await?;
        let sql = self.taking(cx, None);
        let answered = session.query_raw(&sql, QUERY_TIMEOUT).await?;
        let messages = answered.map_err(|err| StoreError::Postgres(pg_store::describe(&err)))?;
        match token(&messages) {
            Some(token) if token > 0 => Ok(Attempt::Acquired(self.held(session, token))),
            _ => {
                rolled_back(pg, session).await;
                Ok(Attempt::Busy { lease_left: None })
            }
        }
    }

    /// Its own acquire, which knows its waiters (the instance's line is for the Redis tiers).
    async fn acquire_again(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        self.acquire(cx).await
    }

    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        if let WaitStrategy::Spin { .. } = cx.settings.wait {
            return wait::until_acquired(self, cx).await;
        }
        cx.at(Point::BeforeAttempt).await;
        self.queue(cx).await
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        let Keep::Session(session) = held._keep else {
            return Ok(());
        };
        let session = *session;
        let pg = postgres(cx)?;
        match session.query("COMMIT", QUERY_TIMEOUT).await {
            Ok(_) => {
                pg.put_back(session);
                Ok(())
            }
            // The server ended the session while the holder worked (its timeout, a restart):
            // the lock was gone before this release.
            Err(_) if session.is_closed() => cx.lost_release().await,
            Err(err) => Err(err),
        }
    }
}

/// Ends a transaction that took nothing, and keeps its session for the next buyer.
async fn rolled_back(pg: &PgStore, session: Session) {
    if session.query("ROLLBACK", QUERY_TIMEOUT).await.is_ok() {
        pg.put_back(session);
    }
}

/// The token the lock query answered: its last statement's one value.
fn token(messages: &[tokio_postgres::SimpleQueryMessage]) -> Option<u64> {
    pg_store::first_values(messages)
        .pop()
        .and_then(|v| v.parse().ok())
}

fn postgres<'a>(cx: &LockCx<'a>) -> Result<&'a PgStore, StoreError> {
    cx.store.postgres().ok_or_else(|| {
        StoreError::Postgres("this instance was given no PostgreSQL (--postgres)".into())
    })
}
