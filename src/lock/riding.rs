//! A lock's steps riding in one round trip with the sale's own scripts, when the lock store is
//! the resource store (`--lock-store shared`, the teaching default): the acquire and the read
//! (with a reentrant lock's nested re-entry and nested release around it) in one, the read
//! running only if the acquire took the lock, and the write and the release in another. They
//! are sent composed into one script (`composed.rs`). What rides is read off the steps: a
//! lock whose acquire, or release, is one step (one script: every step is).
//!
//! # What it guarantees
//! The same scripts, in the same order, as the sale sends them one by one: the read still
//! runs after the acquire and only under the lock, the release after the write, and the nested
//! hold still covers the read. Only the waiting between them goes.
//!
//! # What breaks it
//! Nothing the lock does not already have: a server that lost its scripts runs none of the
//! composed parts, and the whole is loaded and sent again (`composed.rs`). A lock store of its
//! own (`single`, `sentinel`, `redlock`) is another server: nothing rides together, and the
//! sale takes the one-by-one path.
//!
//! # Why it exists
//! A locked sale is a chain of round trips, each one a hand-off the next buyer waits
//! for. A tier whose acquire and release are one script each (`setnx`, `atomic-expiry`,
//! `lua-release`) drops from 4 to 2 round trips per sale, the reentrant tiers from 6 to 2.

use redis::{RedisResult, Value};

use super::cohort::ReadReplies;
use super::replies::{self, Took};
use super::send;
use super::steps::{On, Reply, Request, Step, Technique};
use super::{Lock, LockCx};
use crate::composed::{self, Call};
use crate::lock_store::LockStoreKind;
use crate::redis_pool::{Conn, StoreError};

/// A sale's read as calls to send behind the acquire that takes the lock, given the lock's
/// owner (`sale/mod.rs` makes them; a fenced read carries [`composed::ACQUIRED`] as its token).
pub type ReadCalls<'a> = &'a (dyn Fn(&str) -> Vec<Call> + Sync);

/// Whether the lock lives in the stock's own Redis, where its scripts can ride with the sale's.
pub fn shares_server(cx: &LockCx<'_>) -> bool {
    cx.store.kind() == LockStoreKind::Shared
}

/// The steps as one script, when they are.
fn one_script(mut steps: Vec<Step>) -> Option<(Call, Reply)> {
    match (steps.pop(), steps.is_empty()) {
        (
            Some(Step {
                request: Request::Script(call),
                reply,
            }),
            true,
        ) => Some((call, reply)),
        _ => None,
    }
}

/// One attempt at the acquire `steps` with the sale's read riding behind it in the same round
/// trip, the read running only if the lock was taken: the acquire's reply, and the read's
/// replies. `None` when this attempt cannot carry the read: the lock elsewhere, a replica to
/// wait for (`WAIT` must follow the lock write on its own), or an acquire of more than one
/// step (the read must wait for the last, and a holder may die between them).
pub(super) async fn acquire_with_read(
    cx: &LockCx<'_>,
    steps: &[Step],
    conn: &mut Conn,
) -> Result<Option<(Value, Box<ReadReplies>)>, StoreError> {
    let (
        Some(read),
        [Step {
            request: Request::Script(acquire),
            reply: Reply::Contract,
        }],
    ) = (cx.read, steps)
    else {
        return Ok(None);
    };
    if !shares_server(cx) || cx.settings.sync_replicas > 0 {
        return Ok(None);
    }
    let read = read(cx.owner);
    let calls: Vec<&Call> = std::iter::once(acquire).chain(&read).collect();
    let mut replies = composed::run_if_first_takes(conn, &calls)
        .await?
        .into_iter();
    let acquired = replies.next().unwrap_or(Ok(Value::Nil))?;
    Ok(Some((acquired, Box::new(Ok(replies.collect())))))
}

/// A release step sent inside another script's round trip: its calls (the release between
/// two looks at whose lock it is, as `send.rs` sends it on its own) and how its reply reads.
pub struct Release {
    pub calls: [Call; 3],
    pub reply: Reply,
}

impl Release {
    fn of((call, reply): (Call, Reply)) -> Release {
        Release {
            calls: send::observed(&call),
            reply,
        }
    }

    /// The release step's reply, from the next replies of its calls.
    pub fn answer(
        &self,
        replies: &mut impl Iterator<Item = RedisResult<Value>>,
    ) -> RedisResult<Value> {
        send::seen(replies.take(self.calls.len()).collect())
    }
}

/// The lock's release to send behind the sale's write; `None` when it cannot ride there.
pub fn release_behind_write(cx: &LockCx<'_>, lock: &dyn Lock) -> Option<Release> {
    let technique = lock.steps()?;
    if !shares_server(cx) {
        return None;
    }
    one_script(technique.release(&cx.on())).map(Release::of)
}

/// A reentrant lock's nested hold, as calls around a sale's read in one round trip.
pub struct Nested {
    /// The acquire again, by the lock's owner.
    pub again: (Call, Reply),
    /// The release of the nested hold.
    pub back: Release,
}

/// The nested hold of `technique` under `on`'s owner; `None` unless its acquire and release
/// are one script each. Given in parts so that a cohort can build a successor's read.
pub fn nested(technique: &dyn Technique, on: &On<'_>) -> Option<Nested> {
    Some(Nested {
        again: one_script(technique.acquire(on))?,
        back: Release::of(one_script(technique.release(on))?),
    })
}

/// The depth the nested acquire reached: 2 (or more) when the owner re-entered, `None` when
/// someone else holds the lock, i.e. the owner has lost it.
pub fn reentered(reply: Reply, answer: RedisResult<Value>) -> Result<Option<u32>, StoreError> {
    Ok(match replies::took(reply, answer?)? {
        Took::Held { depth, .. } => Some(depth),
        Took::Busy(_) => None,
    })
}
