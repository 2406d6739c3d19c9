//! Sending one step: its round trip on a connection to the lock store.
//!
//! A release step goes with a look at whose lock the key holds just before it and just after
//! it, in the same script (a built-in tier's composed with `holder.lua`, a lab lock's inside
//! its wrapper): that is how the ground truth tells a release that deleted another holder's
//! lock, or found its own gone, whatever the step's script itself answers.

use std::sync::LazyLock;

use redis::{RedisResult, Value};

use super::steps::{On, Reply, Step};
use crate::composed::{self, Call, Lua};
use crate::lock_store::LockStore;
use crate::redis_pool::{Conn, RedisPool, StoreError};

static HOLDER: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("holder.lua")));

/// What sending a step needs besides the connection.
pub(super) struct Env<'a> {
    /// The lock store, for stopping a lab step that runs away.
    pub store: &'a LockStore,
    /// The resource store, where a lab step's error is noted for its students.
    pub resource: &'a RedisPool,
    pub on: On<'a>,
}

/// Sends one step and returns its reply; a release step's as `{reply, before, after}`.
pub(super) async fn send(conn: &mut Conn, step: &Step, env: &Env<'_>) -> Result<Value, StoreError> {
    let on = &env.on;
    Ok(match (&step.request, step.reply) {
        (super::steps::Request::Script(call), Reply::ContractObserved) => {
            let calls = observed(call);
            let calls: Vec<&Call> = calls.iter().collect();
            let replies = composed::run_in_order(conn, &calls).await?;
            seen(replies)?
        }
        (super::steps::Request::Script(call), _) => call.invoke(conn).await?,
        // The lab's contract: `KEYS[1]` the lock, `KEYS[2]` the fencing-token counter,
        // `KEYS[3]` and `KEYS[4]` a waiters' queue and when each place lapses; `ARGV` owner,
        // lease, release channel, how much longer the buyer waits.
        (super::steps::Request::Lab(step), _) => {
            let lock = on.keys.lock();
            let sent = step
                .script
                .key(&lock)
                .key(on.keys.fence_counter())
                .key(crate::keys::Keys::queue_of(&lock))
                .key(crate::keys::Keys::timeouts_of(&lock))
                .arg(on.owner)
                .arg(on.ttl_ms)
                .arg(on.keys.released_channel())
                .arg(on.wait_ms)
                .invoke_async(conn)
                .await;
            match sent {
                Ok(value) => value,
                Err(err) => {
                    let store = env.store.pool();
                    return Err(crate::lab::failed(store, env.resource, on.keys, step, err).await);
                }
            }
        }
    })
}

/// How many calls an observed release is ([`observed`]).
pub(crate) const OBSERVED_CALLS: usize = 3;

/// A built-in release step's call between two looks at its lock's holder, to send in one
/// script: `[holder, release, holder]`.
pub(crate) fn observed(release: &Call) -> [Call; OBSERVED_CALLS] {
    let holder = HOLDER.call().key(release.first_key().unwrap_or_default());
    [holder.clone(), release.clone(), holder]
}

/// The replies of [`observed`]'s calls as one release step's reply, `{reply, before, after}`
/// as a lab lock's wrapper answers (`lab::Released`); the step's own error is the whole reply.
pub(crate) fn seen(replies: Vec<RedisResult<Value>>) -> RedisResult<Value> {
    let Ok([before, reply, after]) = <[_; 3]>::try_from(replies) else {
        return Err(redis::RedisError::from((
            redis::ErrorKind::Client,
            "an observed release gave another count of replies than 3",
        )));
    };
    Ok(Value::Array(vec![reply?, before?, after?]))
}
