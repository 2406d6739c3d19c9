//! A lock's steps riding in one round trip with the sale's own scripts, when the lock store is
//! the resource store (`--lock-store shared`, the teaching default): the acquire and the read
//! (with a reentrant lock's nested re-entry and nested release around it) in one, the read
//! running only if the acquire took the lock, and the write and the release in another. They
//! are sent composed into one script (`composed/`). What rides is read off the steps: a
//! lock whose acquire, or release, is one step (one script: every step is).
//!
//! The sale hands its calls over as data and gets its own replies back; the lock's calls
//! around them, and what their replies mean, stay here ([`Wrapped`], [`TripReplies::open`],
//! [`Release::answered`]), reached through the [`Lock`](super::Lock) trait alone.
//!
//! # What it guarantees
//! The same scripts, in the same order, as the sale sends them one by one: the read still
//! runs after the acquire and only under the lock, the release after the write, and the nested
//! hold still covers the read. Only the waiting between them goes.
//!
//! # What breaks it
//! Nothing the lock does not already have: a server that lost its scripts runs none of the
//! composed parts, and the whole is loaded and sent again (`composed/`). A lock store of its
//! own (`single`, `sentinel`, `redlock`) is another server: nothing rides together, and the
//! sale takes the one-by-one path.
//!
//! # Why it exists
//! A locked sale is a chain of round trips, each one a hand-off the next buyer waits
//! for. A tier whose acquire and release are one script each (`setnx`, `atomic-expiry`,
//! `lua-release`) drops from 4 to 2 round trips per sale, the reentrant tiers from 6 to 2.

use std::sync::LazyLock;

use redis::{RedisResult, Value};

use super::release_record;
use super::replies::{self, Took};
use super::steps::{Reply, Request, Step, Technique};
use super::{LockCx, LockError};
use crate::composed::{self, Call, Lua};
use crate::lock_store::LockStoreKind;
use crate::redis_pool::{Conn, StoreError};

/// The replies to calls sent in one round trip (one per call), or why there are none.
pub type Replies = RedisResult<Vec<RedisResult<Value>>>;

/// Whether the lock lives in the stock's own Redis, where its scripts can ride with the sale's.
pub(super) fn shares_server(cx: &LockCx<'_>) -> bool {
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

/// A sale's calls as they go in one round trip with the lock ([`Lock::around`]).
///
/// [`Lock::around`]: super::Lock::around
pub struct Wrapped {
    /// The calls to send, in order: the sale's, inside the lock's nested hold if it has one.
    pub calls: Vec<Call>,
    /// How to read their replies back.
    pub nesting: Nesting,
}

/// Where the lock's calls sit around the sale's in a trip: none, or a reentrant lock's
/// re-entry before them and its nested release (between two looks, `send.rs`) after.
#[derive(Clone, Copy)]
pub struct Nesting(Option<(Reply, Reply)>);

impl Nesting {
    /// No lock's calls around the sale's: a lock that takes no nested hold.
    pub(super) const NONE: Nesting = Nesting(None);
}

impl Wrapped {
    /// The sale's calls alone: a lock that takes no nested hold.
    pub(super) fn plain(calls: Vec<Call>) -> Wrapped {
        Wrapped {
            calls,
            nesting: Nesting::NONE,
        }
    }
}

/// `calls` under the nested hold of the reentrant `technique`, by the lock's owner in `cx`;
/// `None` when that hold cannot go in one trip with them: the lock on another server, or a
/// re-entry or nested release of more than one step.
pub(super) fn nested(
    cx: &LockCx<'_>,
    technique: &dyn Technique,
    calls: Vec<Call>,
) -> Option<Wrapped> {
    if !technique.reentrant() {
        return Some(Wrapped::plain(calls));
    }
    if !shares_server(cx) {
        return None;
    }
    let on = cx.on();
    let (again, again_reply) = one_script(technique.acquire(&on))?;
    let back = Release::of(one_script(technique.release(&on))?);
    let mut all = Vec::with_capacity(calls.len() + 1 + back.calls.len());
    all.push(again);
    all.extend(calls);
    all.extend(back.calls);
    Some(Wrapped {
        calls: all,
        nesting: Nesting(Some((again_reply, back.reply))),
    })
}

/// The replies of a trip sent as a [`Wrapped`], still to be read by the holder they are for
/// (who may be another sale than the one that sent them: a cohort's pass).
pub struct TripReplies {
    pub(super) nesting: Nesting,
    pub(super) replies: Replies,
}

/// What the sale's own calls answered, and the hold depth at them when they ran inside a
/// nested hold (2 or more proves the re-entry).
pub struct Opened {
    pub replies: Vec<RedisResult<Value>>,
    pub depth: Option<u32>,
}

impl TripReplies {
    pub fn new(nesting: Nesting, replies: Replies) -> TripReplies {
        TripReplies { nesting, replies }
    }

    /// Reads the lock's replies around the sale's: the re-entry (the lock someone else's:
    /// [`LockError::Lost`]) and the nested release, recorded as any release's findings are.
    /// Gives back the sale's own replies.
    pub async fn open(self, cx: &LockCx<'_>) -> Result<Opened, LockError> {
        let replies = self.replies.map_err(StoreError::from)?;
        let Some((again, back)) = self.nesting.0 else {
            return Ok(Opened {
                replies,
                depth: None,
            });
        };
        let observed = OBSERVED_CALLS;
        if replies.len() < 1 + observed {
            return Err(
                StoreError::Unavailable("a nested trip gave too few replies".into()).into(),
            );
        }
        let mut replies = replies.into_iter();
        let again_answer = replies.next().unwrap_or(Ok(Value::Nil));
        let own = replies.len() - observed;
        let own: Vec<_> = replies.by_ref().take(own).collect();
        let back_answer = seen(replies.collect());
        let Some(depth) = reentered(again, again_answer)? else {
            // Someone else holds the lock: this owner lost it before its read. Its release
            // will find that out and record it.
            return Err(LockError::Lost);
        };
        release_record::released_in_trip(cx, back, back_answer).await?;
        Ok(Opened {
            replies: own,
            depth: Some(depth),
        })
    }
}

/// One attempt at the acquire `steps` of `technique` with the sale's read riding behind it in
/// the same round trip (inside the nested hold of a reentrant lock), the read running only if
/// the lock was taken: the acquire's reply, and the replies of the rest. `None` when this
/// attempt cannot carry the read: the lock elsewhere, a replica to wait for (`WAIT` must
/// follow the lock write on its own), or an acquire of more than one step (the read must wait
/// for the last, and a holder may die between them).
pub(super) async fn acquire_with_read(
    cx: &LockCx<'_>,
    technique: &dyn Technique,
    steps: &[Step],
    conn: &mut Conn,
) -> Result<Option<(Value, Box<TripReplies>)>, StoreError> {
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
    let Some(read) = nested(cx, technique, read.to_vec()) else {
        return Ok(None);
    };
    let calls: Vec<&Call> = std::iter::once(acquire).chain(&read.calls).collect();
    let mut replies = composed::run_if_first_takes(conn, &calls)
        .await?
        .into_iter();
    let acquired = replies.next().unwrap_or(Ok(Value::Nil))?;
    let rest = TripReplies {
        nesting: read.nesting,
        replies: Ok(replies.collect()),
    };
    Ok(Some((acquired, Box::new(rest))))
}

/// A release step sent inside another script's round trip, behind the sale's last calls
/// ([`Lock::release_behind`]): its calls (the release between two looks at whose lock it is,
/// [`observed`]) and how its reply reads.
///
/// [`Lock::release_behind`]: super::Lock::release_behind
pub struct Release {
    pub calls: [Call; OBSERVED_CALLS],
    reply: Reply,
}

impl Release {
    fn of((call, reply): (Call, Reply)) -> Release {
        Release {
            calls: observed(&call),
            reply,
        }
    }

    /// Reads the release's reply from the replies of the trip's calls behind the sale's, and
    /// records what it saw, as a release sent on its own is.
    pub async fn answered(&self, cx: &LockCx<'_>, replies: Replies) -> Result<(), StoreError> {
        let replies = replies.map_err(StoreError::from)?;
        let answer = seen(replies.into_iter().take(self.calls.len()).collect());
        release_record::released_in_trip(cx, self.reply, answer)
            .await
            .map(drop)
    }
}

/// The release steps `steps` of a lock to send behind the sale's write; `None` when they
/// cannot ride there.
pub(super) fn release_behind(cx: &LockCx<'_>, steps: Vec<Step>) -> Option<Release> {
    if !shares_server(cx) {
        return None;
    }
    one_script(steps).map(Release::of)
}

static HOLDER: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("holder.lua")));

/// How many calls an observed release is ([`observed`]).
pub(super) const OBSERVED_CALLS: usize = 3;

/// A release step's call between two looks at its lock's holder, to send in one script:
/// `[holder, release, holder]`. That is how the ground truth tells a release that deleted
/// another holder's lock, or found its own gone, whatever the step's script itself answers.
pub(super) fn observed(release: &Call) -> [Call; OBSERVED_CALLS] {
    let holder = HOLDER.call().key(release.first_key().unwrap_or_default());
    [holder.clone(), release.clone(), holder]
}

/// The replies of [`observed`]'s calls as one release step's reply, `{reply, before, after}`
/// as a lab lock's wrapper answers (`replies::Released`); the step's own error is the whole
/// reply.
pub(super) fn seen(replies: Vec<RedisResult<Value>>) -> RedisResult<Value> {
    let Ok([before, reply, after]) = <[_; 3]>::try_from(replies) else {
        return Err(redis::RedisError::from((
            redis::ErrorKind::Client,
            "an observed release gave another count of replies than 3",
        )));
    };
    Ok(Value::Array(vec![reply?, before?, after?]))
}

/// The depth the nested acquire reached: 2 (or more) when the owner re-entered, `None` when
/// someone else holds the lock, i.e. the owner has lost it.
fn reentered(reply: Reply, answer: RedisResult<Value>) -> Result<Option<u32>, StoreError> {
    Ok(match replies::took(reply, answer?)? {
        Took::Held { depth, .. } => Some(depth),
        Took::Busy(_) => None,
    })
}
