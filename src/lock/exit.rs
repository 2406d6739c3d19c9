//! The lock leaving a sale with the sale's last call, in its round trip ([`leave`], for
//! `section.rs`), from the choice of how to the hand-over:
//!
//! - in a cohort (`cohort.rs`), when another buyer of this instance waits and the baton may
//!   pass again, handed to that buyer, with the buyer's read riding behind the call (under
//!   the lock's fencing token, inside the lock's nested hold for a reentrant lock);
//! - else its release riding behind the call (`riding.rs`);
//! - else, when nothing can ride, the call alone and the lock let go after it ([`let_go`]).

use super::cohort::{forget_old_release, Baton, Member, Successor};
use super::riding::Nesting;
use super::{Held, Lock, LockCx, TripReplies};
use crate::composed::{self, Call};
use crate::redis_pool::{Conn, StoreError};

/// What leaving gave: the reply to the sale's last call, and whether the lock went on to the
/// next buyer of this instance (a cohort's pass).
pub struct Left {
    pub reply: redis::RedisResult<redis::Value>,
    pub passed: bool,
}

/// Sends `last` and ends `held` with it: passed to the next buyer of a cohort, or released
/// behind it, or let go after it. An error: no connection for the call (the lock is let go).
pub(super) async fn leave<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    mut held: Held,
    last: &Call,
) -> Result<Left, StoreError> {
    let mut conn = match cx.resource.conn().await {
        Ok(conn) => conn,
        Err(err) => {
            logged(cx, let_go(lock, cx, held).await);
            return Err(err);
        }
    };
    if let Some(member) = held.cohort.take() {
        let ttl = cx.settings.ttl();
        match member.turn.successor(&member.lease, member.passes, ttl) {
            Some(to) => return Ok(pass(lock, cx, &mut conn, held, *member, to, last).await),
            None => held.cohort = Some(member),
        }
    }
    let Some(release) = lock.release_behind(cx) else {
        let reply = last.invoke(&mut conn).await;
        logged(cx, let_go(lock, cx, held).await);
        return Ok(Left {
            reply,
            passed: false,
        });
    };
    let member = held.cohort.take();
    if member.is_some() {
        forget_old_release(cx);
    }
    // Stop renewing before giving the lock back, as the tier's own release does.
    drop(held);
    let calls: Vec<&Call> = std::iter::once(last).chain(&release.calls).collect();
    let trip = composed::run_in_order(&mut conn, &calls).await;
    let (reply, theirs) = composed::first_and_rest(trip);
    let answered = release.answered(cx, theirs).await;
    if let Some(member) = member {
        member.turn.released();
    }
    logged(cx, answered);
    Ok(Left {
        reply,
        passed: false,
    })
}

/// Hands the lock to `to` with `last`: the successor's read rides behind the call, and the
/// lock and the read's replies go to the successor (given back and released if that buyer's
/// task is gone).
async fn pass<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    conn: &mut Conn,
    held: Held,
    member: Member,
    mut to: Successor,
    last: &Call,
) -> Left {
    let read = std::mem::take(&mut to.read);
    // A lock without a nested hold sends the read as it is; `None`: not sent, the successor
    // reads on its own.
    let (read, nesting) = match read.is_empty() {
        true => (Vec::new(), None),
        false if !lock.reentrant() => (read, Some(Nesting::NONE)),
        false => match lock.around(cx, read) {
            Some(wrapped) => (wrapped.calls, Some(wrapped.nesting)),
            None => (Vec::new(), None),
        },
    };
    let calls: Vec<&Call> = std::iter::once(last).chain(&read).collect();
    let trip = composed::run_holding(conn, &calls, held.fence).await;
    let (reply, theirs) = composed::first_and_rest(trip);
    let read = nesting.map(|nesting| TripReplies {
        nesting,
        replies: theirs,
    });
    let Member { turn, lease, .. } = member;
    let Err(back) = turn.pass(to, Baton { held, lease }, read) else {
        return Left {
            reply,
            passed: true,
        };
    };
    // The successor's task is gone.
    let (turn, baton) = *back;
    forget_old_release(cx);
    logged(cx, lock.release(cx, baton.held).await);
    turn.released();
    Left {
        reply,
        passed: false,
    }
}

/// A release that failed leaves the lock to its lease; the sale's outcome stands.
pub(super) fn logged(cx: &LockCx<'_>, released: Result<(), StoreError>) {
    if let Err(err) = released {
        tracing::warn!(%err, tier = %cx.settings.tier, "release failed");
    }
}

/// Gives back the lock a sale acquired, on its own round trips: released, and a cohort's
/// turn handed to the next buyer of this instance.
pub(super) async fn let_go<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    mut held: Held,
) -> Result<(), StoreError> {
    let Some(member) = held.cohort.take() else {
        return lock.release(cx, held).await;
    };
    forget_old_release(cx);
    let released = lock.release(cx, held).await;
    member.turn.released();
    released
}
