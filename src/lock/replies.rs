//! A step's reply, read as its [`Reply`] says: what an acquire step took, what a release step
//! saw, whether a renewal renewed.

use std::time::Duration;

use redis::{FromRedisValue, Value};

use super::steps::Reply;
use crate::composed;
use crate::lab::{self, Released, StepReply};
use crate::redis_pool::StoreError;

/// What an acquire step took.
pub(super) enum Took {
    /// Its part is done: the next step runs, or, after the last, the lock is held.
    GoOn,
    /// Held, at this depth, with the fencing token when the hold is fenced.
    Held { depth: u32, fence: Option<u64> },
    /// Someone else holds it, for at most this much more when known.
    Busy(Option<Duration>),
}

/// What a release step saw.
pub(super) struct Seen {
    /// Whether the next release step runs.
    pub go_on: bool,
    /// The lock was already gone or someone else's: the holder had lost it.
    pub lost: bool,
    /// The step removed the lock of this other holder.
    pub foreign: Option<String>,
}

pub(super) fn took(reply: Reply, answer: Value) -> Result<Took, StoreError> {
    Ok(match reply {
        Reply::Taken { busy_for } => match parse::<bool>(answer)? {
            true => Took::GoOn,
            false => Took::Busy(busy_for),
        },
        Reply::Ignored => Took::GoOn,
        Reply::TakenOrLeaseLeft => {
            let (taken, lease_left): (Value, i64) = parse(answer)?;
            match taken {
                Value::Nil | Value::Int(0) => Took::Busy(lease(lease_left)),
                _ => Took::GoOn,
            }
        }
        Reply::Hold { fenced } => {
            let (depth, extra): (i64, i64) = parse(answer)?;
            match u32::try_from(depth) {
                Ok(depth @ 1..) => Took::Held {
                    depth,
                    fence: fenced.then_some(extra as u64),
                },
                _ => Took::Busy(lease(extra)),
            }
        }
        Reply::Contract => match StepReply::read(&answer) {
            StepReply::GoOn => {
                let (depth, fence) = lab::hold(&answer);
                Took::Held { depth, fence }
            }
            StepReply::Stop { lease_left_ms } => Took::Busy(lease_left_ms.and_then(lease)),
        },
        other => return Err(misread(other, "an acquire")),
    })
}

pub(super) fn seen(reply: Reply, answer: Value, owner: &str) -> Result<Seen, StoreError> {
    let mut seen = Seen {
        go_on: true,
        lost: false,
        foreign: None,
    };
    match reply {
        Reply::Removed => {
            let removed: Option<String> = parse(answer)?;
            seen.foreign = removed.filter(|victim| victim != owner);
        }
        Reply::OwnedByUs => {
            let value: Option<String> = parse(answer)?;
            seen.go_on = value.as_deref() == Some(owner);
        }
        Reply::LostIf(lost) => seen.lost = parse::<i64>(answer)? == lost,
        Reply::ContractObserved => {
            let released = Released::read(answer)?;
            seen.lost = released.before != owner;
            seen.foreign = released.took_anothers(owner).map(str::to_owned);
            seen.go_on = released.reply == StepReply::GoOn;
        }
        other => return Err(misread(other, "a release")),
    }
    Ok(seen)
}

/// Whether a renew step renewed; `false` stops the renewals.
pub(super) fn renewed(reply: Reply, answer: Value) -> Result<bool, StoreError> {
    match reply {
        Reply::Renewed => Ok(parse::<i64>(answer)? == 1),
        Reply::Contract => Ok(StepReply::read(&answer) == StepReply::GoOn),
        other => Err(misread(other, "a renew")),
    }
}

fn parse<T: FromRedisValue>(answer: Value) -> Result<T, StoreError> {
    Ok(composed::reply(Ok(answer))?)
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

    fn busy_for(took: Took) -> Option<Option<Duration>> {
        match took {
            Took::Busy(lease) => Some(lease),
            _ => None,
        }
    }

    #[test]
    fn set_nx_px_reads_the_same_from_a_pipeline_and_a_script() {
        let reply = Reply::TakenOrLeaseLeft;
        let taken = [pair(Value::Okay, int(-1)), pair(int(1), int(0))];
        for answer in taken {
            assert!(matches!(took(reply, answer).unwrap(), Took::GoOn));
        }
        let ms = |n| Some(Some(Duration::from_millis(n)));
        let busy = took(reply, pair(Value::Nil, int(150))).unwrap();
        assert_eq!(busy_for(busy), ms(150));
        let busy = took(reply, pair(int(0), int(150))).unwrap();
        assert_eq!(busy_for(busy), ms(150));
        // Just released (-2): nothing bounds the wait.
        let gone = took(reply, pair(int(0), int(-2))).unwrap();
        assert_eq!(busy_for(gone), Some(None));
    }

    #[test]
    fn a_hold_gives_its_depth_and_only_a_fenced_one_its_token() {
        let fenced = took(Reply::Hold { fenced: true }, pair(int(2), int(7))).unwrap();
        assert!(matches!(
            fenced,
            Took::Held {
                depth: 2,
                fence: Some(7)
            }
        ));
        let plain = took(Reply::Hold { fenced: false }, pair(int(1), int(0))).unwrap();
        assert!(matches!(
            plain,
            Took::Held {
                depth: 1,
                fence: None
            }
        ));
        let busy = took(Reply::Hold { fenced: false }, pair(int(0), int(300))).unwrap();
        assert!(matches!(busy, Took::Busy(Some(_))));
    }

    #[test]
    fn a_release_sees_a_foreign_release_a_lost_one_and_whether_to_go_on() {
        let other = Value::BulkString(b"b".to_vec());
        let removed = seen(Reply::Removed, other.clone(), "a").unwrap();
        assert_eq!(removed.foreign.as_deref(), Some("b"));
        assert!(seen(Reply::Removed, Value::Nil, "a")
            .unwrap()
            .foreign
            .is_none());
        assert!(!seen(Reply::OwnedByUs, other, "a").unwrap().go_on);
        let ours = Value::BulkString(b"a".to_vec());
        assert!(seen(Reply::OwnedByUs, ours, "a").unwrap().go_on);
        assert!(seen(Reply::LostIf(-1), int(-1), "a").unwrap().lost);
        assert!(!seen(Reply::LostIf(0), int(1), "a").unwrap().lost);
    }
}
