//! A queued buyer's next attempt, parked in the lock store: sent at once, behind a blocking pop
//! of the list where the lock's release calls this buyer by name (`fair`: `release-1.lua`),
//! so the store runs it the moment the call comes, or when the pop gives up at the time the
//! buyer would have come back anyway. The attempt is the usual one (with the sale's read
//! riding behind it), on a connection of the buyer's own (`redis_pool/parking.rs`).
//!
//! # Why
//! A lock that hands itself to one named buyer waits, at every hand-off, for that buyer to hear
//! its call (a pub/sub message to its instance), wake and send its attempt: two trips between
//! the store and an instance during which the lock is free and nobody may take it. Parked,
//! the attempt is in the store already; the hand-off is the store's own and the buyer hears
//! its call as the answer to its attempt, with its read.
//!
//! # What it keeps
//! The lock's own order and scripts: the parked attempt is the attempt the buyer would send
//! when called, and it may still find the lock busy (a call it missed, a place that lapsed),
//! then it parks again. Ahead of its pop the buyer marks itself parked
//! ([`Keys::parked_mark_of`]), and a release that calls a marked buyer publishes no message:
//! the store runs its attempt, and no instance needs waking for it. A buyer that waits as
//! pub/sub does (a fault to strike around its attempt, no connection of its own free, a
//! cluster) leaves no mark and is called by the message as before. A buyer that leaves while
//! parked (its request dropped) closes its connection: the store forgets the pop and the
//! attempt behind it, and its place lapses as a dead waiter's does.

use std::sync::Mutex;
use std::time::Duration;

use super::{Lock, LockCx};
use crate::keys::Keys;
use crate::redis_pool::{Ahead, Conn, StoreError};

/// A shorter wait is waited here: Redis ends a blocking pop that times out on its own clock's
/// next tick (up to 1/`hz`, 100 ms by default, on an idle server), far later than this.
const SHORTEST_PARK: Duration = Duration::from_millis(20);

/// A connection whose next request is parked behind a buyer's call; taken once, by the next
/// attempt's [`LockCx::conn`].
pub struct Parked(Mutex<Option<Conn>>);

impl Parked {
    pub(super) fn take(&self) -> Option<Conn> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// For a buyer whose attempt found `lock` busy and who would wait at most `bound` for its
/// call: its next attempt's connection, parked behind that call. `None`: it waits as pub/sub
/// does (the lock calls nobody by name, the wait is too short to park, a hook acts around this
/// sale's attempts, or no connection of its own is free).
pub(super) async fn next_attempt<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    bound: Duration,
) -> Result<Option<Parked>, StoreError> {
    let Some(key) = lock.call_key(cx) else {
        return Ok(None);
    };
    if bound < SHORTEST_PARK || cx.hook.is_some() {
        return Ok(None);
    }
    // The mark lives no longer than the pop may wait. Redis may end a pop that timed out a
    // little after the mark lapsed: a release then also publishes its message, which the
    // buyer, back from its attempt, no longer needs.
    let mut mark = redis::cmd("SET");
    let mark_ms = bound.as_millis().max(1) as u64;
    mark.arg(Keys::parked_mark_of(&key))
        .arg(1)
        .arg("PX")
        .arg(mark_ms);
    let ahead = Ahead::blocking_pop(&key, bound).after(mark);
    let conn = cx.store.pool().parked(ahead).await?;
    Ok(conn.map(|conn| Parked(Mutex::new(Some(conn)))))
}
