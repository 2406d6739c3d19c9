//! What a release step saw, read from its reply and recorded in the ground truth: a lost
//! release (the holder's lock was already gone), a foreign release (it removed another's).
//! Shared by the engine's one-by-one release and the release that rides with the sale's write
//! (`riding.rs`).

use redis::{RedisResult, Value};

use super::replies;
use super::steps::Reply;
use super::LockCx;
use crate::ground_truth::record;
use crate::redis_pool::StoreError;

/// Reads a release step's reply and records what it saw in the resource store; whether the
/// release goes on. Only the first step sees the lock as its holder left it, so only its
/// finding the lock gone or someone else's is a lost release.
pub(super) async fn released(
    cx: &LockCx<'_>,
    reply: Reply,
    answer: Result<Value, StoreError>,
    first: bool,
) -> Result<bool, StoreError> {
    let seen = replies::seen(reply, answer?, cx.owner)?;
    if seen.lost && first {
        // Redisson throws IllegalMonitorStateException here: the only moment a holder whose
        // lease ran out learns it.
        cx.lost_release().await?;
    }
    if let Some(victim) = &seen.foreign {
        let since = cx.generation;
        record::foreign_release(cx.resource, cx.keys, since, cx.instance, cx.owner, victim).await?;
    }
    Ok(seen.go_on)
}

/// [`released`] for a reply that came back in a composed script's round trip.
pub(super) async fn released_in_trip(
    cx: &LockCx<'_>,
    reply: Reply,
    answer: RedisResult<Value>,
) -> Result<bool, StoreError> {
    released(cx, reply, answer.map_err(StoreError::from), true).await
}
