//! A step's reply, read as its [`Reply`] says: what an acquire step took, what a release step
//! saw, whether a renewal renewed.

use std::time::Duration;

use redis::{FromRedisValue, Value};

use super::steps::Reply;
use crate::composed;
use crate::lab::{Released, StepReply};
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
            StepReply::GoOn => Took::GoOn,
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
