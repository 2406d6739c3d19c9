//! A step's reply, read as its [`Reply`] says: what an acquire step took, what a release step
//! saw, whether a renewal renewed. Every step answers by the lab's contract
//! (docs/src/workshop/lab.md), which the built-in tiers' scripts keep too: go on or stop (with
//! the lease left), the hold's depth and fencing token, and for a release, whose lock the key
//! held before and after it ([`StepReply`], [`hold`], [`Released`]).

use std::time::Duration;

use redis::Value;

use super::steps::Reply;
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
            let (depth, fence) = hold(&answer);
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

/// What a step answered, read by the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepReply {
    GoOn,
    /// Busy (an acquire) or stop (a release, a renew), with the lease left when given.
    Stop {
        lease_left_ms: Option<i64>,
    },
}

impl StepReply {
    pub fn read(value: &Value) -> StepReply {
        let stop = StepReply::Stop {
            lease_left_ms: None,
        };
        match value {
            Value::Int(n) if *n > 0 => StepReply::GoOn,
            Value::Okay | Value::SimpleString(_) | Value::Boolean(true) => StepReply::GoOn,
            Value::BulkString(bytes) if !bytes.is_empty() && bytes.as_slice() != b"0" => {
                StepReply::GoOn
            }
            Value::Array(items) => match items.first().map(StepReply::read) {
                Some(StepReply::GoOn) => StepReply::GoOn,
                Some(_) => StepReply::Stop {
                    lease_left_ms: match items.get(1) {
                        Some(Value::Int(ms)) => Some(*ms),
                        _ => None,
                    },
                },
                None => stop,
            },
            _ => stop,
        }
    }
}

/// What an acquire step that goes on says of the hold: its depth (1 unless it answered
/// `{depth, token}`), and its fencing token when that is above 0.
pub fn hold(value: &Value) -> (u32, Option<u64>) {
    let Value::Array(items) = value else {
        return (1, None);
    };
    let depth = match items.first() {
        Some(Value::Int(depth)) => u32::try_from(*depth).unwrap_or(1).max(1),
        _ => 1,
    };
    let token = match items.get(1) {
        Some(Value::Int(token)) => u64::try_from(*token).ok().filter(|t| *t > 0),
        _ => None,
    };
    (depth, token)
}

/// What a wrapped release step answered: the student's reply, and whose lock the key held
/// before and after it ran (empty: none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub reply: StepReply,
    pub before: String,
    pub after: String,
}

impl Released {
    pub fn read(value: Value) -> Result<Released, StoreError> {
        let Value::Array(mut items) = value else {
            return Err(StoreError::Lab(
                "a release step's wrapper answered something else than 3 values".into(),
            ));
        };
        let text = |v: Option<Value>| match v {
            Some(Value::BulkString(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        };
        let after = text(items.pop());
        let before = text(items.pop());
        let reply = items
            .first()
            .map(StepReply::read)
            .unwrap_or(StepReply::Stop {
                lease_left_ms: None,
            });
        Ok(Released {
            reply,
            before,
            after,
        })
    }

    /// The release deleted (or overwrote) a lock someone else held.
    pub fn took_anothers(&self, owner: &str) -> Option<&str> {
        let anothers = !self.before.is_empty() && self.before != owner;
        (anothers && self.after != self.before).then_some(self.before.as_str())
    }
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

    #[test]
    fn replies_read_by_the_contract() {
        assert_eq!(StepReply::read(&Value::Int(1)), StepReply::GoOn);
        assert_eq!(StepReply::read(&Value::Okay), StepReply::GoOn);
        assert_eq!(
            StepReply::read(&Value::Nil),
            StepReply::Stop {
                lease_left_ms: None
            }
        );
        assert_eq!(
            StepReply::read(&Value::Array(vec![Value::Int(0), Value::Int(250)])),
            StepReply::Stop {
                lease_left_ms: Some(250)
            }
        );
        assert_eq!(
            StepReply::read(&Value::Array(vec![Value::Int(1), Value::Int(-1)])),
            StepReply::GoOn
        );
    }

    #[test]
    fn an_acquire_says_its_depth_and_its_token_only_when_above_0() {
        let pair = |a, b| Value::Array(vec![Value::Int(a), Value::Int(b)]);
        assert_eq!(hold(&Value::Int(1)), (1, None));
        assert_eq!(hold(&Value::Okay), (1, None));
        assert_eq!(hold(&pair(2, 0)), (2, None));
        assert_eq!(hold(&pair(1, 7)), (1, Some(7)));
    }

    #[test]
    fn a_release_that_removed_someone_elses_lock_is_told_apart() {
        let released = |before: &str, after: &str| Released {
            reply: StepReply::GoOn,
            before: before.into(),
            after: after.into(),
        };
        assert_eq!(released("b", "").took_anothers("a"), Some("b"));
        assert_eq!(released("a", "").took_anothers("a"), None);
        assert_eq!(released("b", "b").took_anothers("a"), None);
        assert_eq!(released("", "").took_anothers("a"), None);
    }
}
