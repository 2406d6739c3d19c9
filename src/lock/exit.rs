//! The lock leaving a sale with the sale's last calls, in their round trip
//! ([`exit_behind`], for `section.rs`): its release riding there (`riding.rs`),
//! or, in a cohort (`cohort.rs`), the lock handed to the next buyer of this instance with that
//! buyer's read riding there instead; and a cohort's lock let go on its own.

use super::cohort::{forget_old_release, Baton, Member, Successor};
use super::riding::{Nesting, Release, Replies};
use super::{Held, Lock, LockCx, TripReplies};
use crate::composed::Call;
use crate::redis_pool::StoreError;

/// The lock on its way out, riding behind the sale's last calls in their round trip
/// ([`exit_behind`]): the calls to send after the sale's, and what to do with their replies.
pub struct Exit {
    pub calls: Vec<Call>,
    then: Then,
}

enum Then {
    /// The lock's release rides there; a cohort's next buyer takes its turn after it.
    Released {
        release: Release,
        member: Option<Box<Member>>,
    },
    /// Handed to the next buyer of this instance, whose read rides there (inside the lock's
    /// nested hold for a reentrant lock; `nesting` `None`: it was not sent, the buyer reads on
    /// its own).
    Passed {
        held: Held,
        member: Box<Member>,
        to: Successor,
        nesting: Option<Nesting>,
    },
}

/// What rides behind the sale's last calls as `held` leaves: a pass to the next buyer of a
/// cohort when one waits and the baton may pass again, else the lock's release when it can
/// ride there (`release_behind`); `Err(held)` when nothing rides and the lock is let go after
/// ([`let_go`]).
pub(super) fn exit_behind<L: Lock + ?Sized>(
    lock: &L,
    cx: &LockCx<'_>,
    mut held: Held,
) -> Result<Exit, Held> {
    let member = held.cohort.take();
    if let Some(member) = member {
        let ttl = cx.settings.ttl();
        if let Some(mut to) = member.turn.successor(&member.lease, member.passes, ttl) {
            let read = Some(to.read(held.fence)).filter(|read| !read.is_empty());
            let wrapped = read.and_then(|read| lock.around(cx, read));
            let (calls, nesting) = match wrapped {
                Some(wrapped) => (wrapped.calls, Some(wrapped.nesting)),
                None => (Vec::new(), None),
            };
            let then = Then::Passed {
                held,
                member,
                to,
                nesting,
            };
            return Ok(Exit { calls, then });
        }
        held.cohort = Some(member);
    }
    let Some(release) = lock.release_behind(cx) else {
        return Err(held);
    };
    let member = held.cohort.take();
    if member.is_some() {
        forget_old_release(cx);
    }
    // Stop renewing before giving the lock back, as the tier's own release does.
    drop(held);
    let calls = release.calls.to_vec();
    let then = Then::Released { release, member };
    Ok(Exit { calls, then })
}

impl Exit {
    /// Reads the replies of the calls that rode (`theirs`: those after the sale's own, or the
    /// trip's failure): records the release, or hands the lock and its read's replies to the
    /// next buyer (given back and released if that buyer's task is gone).
    pub async fn answered<L: Lock + ?Sized>(
        self,
        lock: &L,
        cx: &LockCx<'_>,
        theirs: Replies,
    ) -> Result<(), StoreError> {
        match self.then {
            Then::Released { release, member } => {
                let answered = match theirs {
                    Ok(replies) => release.answered(cx, &mut replies.into_iter()).await,
                    Err(err) => Err(err.into()),
                };
                if let Some(member) = member {
                    member.turn.released();
                }
                answered
            }
            Then::Passed {
                held,
                member,
                to,
                nesting,
            } => {
                let read = nesting.map(|nesting| TripReplies::new(nesting, theirs));
                let Member { turn, lease, .. } = *member;
                match turn.pass(to, Baton { held, lease }, read) {
                    Ok(()) => {
                        cx.metrics.lock_passed(cx.settings.tier);
                        Ok(())
                    }
                    // The successor's task is gone.
                    Err(back) => {
                        let (turn, baton) = *back;
                        forget_old_release(cx);
                        let released = lock.release(cx, baton.held).await;
                        turn.released();
                        released
                    }
                }
            }
        }
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
