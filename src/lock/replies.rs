//! A step's reply, read as its [`Reply`] says: what an acquire step took, what a release step
//! saw, whether a renewal renewed.

use std::time::Duration;

use redis::Value;

use super::steps::Reply;
use crate::lab::{self, Released, StepReply};
use crate::redis_pool::StoreError;

/// What an acquire step took.
pub(super) enum Took {
    /// Its part is done: the next step runs, or, after the last, the lock is held at this
    /// depth, with the fencing token when the step answered one.
    Held { depth: u32, fence: Option<u64> },
    /// Someone else holds it, for at most this much more when known.
    Busy(Option<Duration>),
}

/// What a release step saw.
pub(super) struct Seen {
    /// Whether the next release step runs.
    pub go_on: bool,
    /// The step stopped on a lock already gone or someone else's: the holder had lost it,
    /// and now knows.
    pub lost: bool,
    /// The step removed the lock of this other holder.
    pub foreign: Option<String>,
}

pub(super) fn took(reply: Reply, answer: Value) -> Result<Took, StoreError> {
    if reply != Reply::Contract {
        return Err(misread(reply, "an acquire"));
    }
    Ok(match StepReply::read(&answer) {
        StepReply::GoOn => {
            let (depth, fence) = lab::hold(&answer);
            Took::Held { depth, fence }
        }
        StepReply::Stop { lease_left_ms } => Took::Busy(lease_left_ms.and_then(lease)),
    })
}

pub(super) fn seen(reply: Reply, answer: Value, owner: &str) -> Result<Seen, StoreError> {
    if reply != Reply::ContractObserved {
        return Err(misread(reply, "a release"));
    }
    let released = Released::read(answer)?;
    let go_on = released.reply == StepReply::GoOn;
    Ok(Seen {
        // Lost only when the step itself stopped on it: that is the holder learning it had
        // lost the lock (Redisson's IllegalMonitorStateException). A blind `DEL` learns
        // nothing, and counting what it never saw would charge one holder's loss to another
        // (a stale holder's `DEL` of the next one's lock, found gone by that next one).
        lost: !go_on && released.before != owner,
        foreign: released.took_anothers(owner).map(str::to_owned),
        go_on,
    })
}

/// Whether a renew step renewed; `false` stops the renewals.
pub(super) fn renewed(reply: Reply, answer: Value) -> Result<bool, StoreError> {
    match reply {
        Reply::Contract => Ok(StepReply::read(&answer) == StepReply::GoOn),
        other => Err(misread(other, "a renew")),
    }
}

/// A lease left as Redis gives it (`PTTL`): no key (-2, just released) or no lease (-1)
/// bounds nothing.
fn lease(ms: i64) -> Option<Duration> {
    u64::try_from(ms).ok().map(Duration::from_millis)
}

fn misread(reply: Reply, step: &str) -> StoreError {
    StoreError::from(redis::RedisError::from((
        redis::ErrorKind::Client,
        "a step's reply read the wrong way",
        format!("{reply:?} is not how {step} step's reply reads"),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i64) -> Value {
        Value::Int(n)
    }

    fn pair(a: Value, b: Value) -> Value {
        Value::Array(vec![a, b])
    }

    fn text(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn an_acquire_is_taken_busy_for_the_lease_left_or_held_with_its_depth_and_token() {
        let ms = |n| Some(Duration::from_millis(n));
        assert!(matches!(
            took(Reply::Contract, int(1)).unwrap(),
            Took::Held {
                depth: 1,
                fence: None
            }
        ));
        assert!(matches!(
            took(Reply::Contract, pair(int(2), int(7))).unwrap(),
            Took::Held {
                depth: 2,
                fence: Some(7)
            }
        ));
        let busy = took(Reply::Contract, pair(int(0), int(150))).unwrap();
        assert!(matches!(busy, Took::Busy(lease) if lease == ms(150)));
        // Just released (-2): nothing bounds the wait.
        let gone = took(Reply::Contract, pair(int(0), int(-2))).unwrap();
        assert!(matches!(gone, Took::Busy(None)));
        assert!(matches!(
            took(Reply::Contract, Value::Nil).unwrap(),
            Took::Busy(None)
        ));
    }

    #[test]
    fn a_release_sees_a_foreign_release_a_lost_one_and_whether_to_go_on() {
        let answer = |reply, before, after| Value::Array(vec![reply, text(before), text(after)]);
        // A blind delete of someone else's lock: foreign, but the holder learned nothing.
        let foreign = seen(Reply::ContractObserved, answer(int(1), "b", ""), "a").unwrap();
        assert_eq!(foreign.foreign.as_deref(), Some("b"));
        assert!(!foreign.lost);
        let mine = seen(Reply::ContractObserved, answer(int(1), "a", ""), "a").unwrap();
        assert!(mine.go_on && !mine.lost && mine.foreign.is_none());
        let not_mine = seen(Reply::ContractObserved, answer(int(0), "b", "b"), "a").unwrap();
        assert!(!not_mine.go_on && not_mine.lost && not_mine.foreign.is_none());
    }
}
