//! Connections of their own, for a request that waits in the server before it runs: a
//! blocking pop sent ahead of it in the same write (`Ahead`, in `conn.rs`) parks it there until the pop
//! returns, and the server runs it the moment it does, with no round trip to the client in
//! between. A `fair` buyer's next attempt waits this way for its call (`lock/parked.rs`).
//!
//! The pool's connections are multiplexed: whatever waits in the server on one holds back every
//! request sent behind it. A parked request therefore gets a connection nobody else uses until
//! its answer comes, and a request dropped before its answer closes that connection, so that
//! the server forgets the wait and the request behind it instead of running it for nobody.
//! At most [`PARKED_PER_POOL`] wait at once per pool; past that a caller is told to wait as it
//! would without one (bounded sockets, on either side).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::Manager;

/// How many requests of one instance may wait in one server at once: one per buyer queued on
/// this instance for a fleet's busiest lock (64 buyers through three instances queue about 22
/// each), with room for a burst.
pub(super) const PARKED_PER_POOL: u32 = 128;

/// The connections parked requests go through, beside a pool's shared ones.
pub(super) struct Parking {
    pub(super) pool: bb8::Pool<Manager>,
    free: Arc<Semaphore>,
}

/// A parked request's connection, checked out of [`Parking`] while its handle lives.
pub(super) struct Checkout {
    _conn: bb8::PooledConnection<'static, Manager>,
    _permit: OwnedSemaphorePermit,
}

impl Parking {
    pub(super) fn new(pool: bb8::Pool<Manager>) -> Parking {
        Parking {
            pool,
            free: Arc::new(Semaphore::new(PARKED_PER_POOL as usize)),
        }
    }

    /// A connection nobody else uses, with its broken-mark; `None` when [`PARKED_PER_POOL`]
    /// requests wait already.
    pub(super) async fn checkout(
        &self,
    ) -> Result<Option<(Checkout, super::conn::Link, Arc<AtomicBool>)>, super::StoreError> {
        let Ok(permit) = self.free.clone().try_acquire_owned() else {
            return Ok(None);
        };
        let conn = loop {
            let conn = self.pool.get_owned().await.map_err(|e| match e {
                bb8::RunError::User(err) => super::StoreError::from(err),
                bb8::RunError::TimedOut => {
                    super::StoreError::Unavailable("no connection in time".into())
                }
            })?;
            if !conn.broken.load(Ordering::Relaxed) {
                break conn;
            }
        };
        let (link, broken) = (conn.conn.clone(), conn.broken.clone());
        let checkout = Checkout {
            _conn: conn,
            _permit: permit,
        };
        Ok(Some((checkout, link, broken)))
    }
}
