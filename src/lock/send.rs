//! Sending one step: its round trip on a connection to the lock store.
//!
//! A release step goes with a look at whose lock the key holds just before it and just after
//! it, in the same script (a built-in tier's composed with `holder.lua`, as `riding.rs` sends
//! it behind a sale's write too; a lab lock's inside its wrapper): that is how the ground
//! truth tells a release that deleted another holder's lock, or found its own gone, whatever
//! the step's script itself answers.

use redis::Value;

use super::riding::{observed, seen};
use super::steps::{On, Reply, Step};
use crate::composed::{self, Call};
use crate::lock_store::LockStore;
use crate::redis_pool::{Conn, RedisPool, StoreError};

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
        // lease, release channel, how much longer the buyer waits. Then, for the wrapper
        // alone (the student's code never sees them): the lock's lease stream and the step's
        // kind, for the lease it stamps.
        (super::steps::Request::Lab(step), _) => {
            let lock = on.keys.lock();
            let kind = step.name.split(' ').next().unwrap_or_default();
            let sent = step
                .script
                .key(&lock)
                .key(on.keys.fence_counter())
                .key(crate::keys::Keys::queue_of(&lock))
                .key(crate::keys::Keys::timeouts_of(&lock))
                .key(on.keys.lock_leases())
                .arg(on.owner)
                .arg(on.ttl_ms)
                .arg(on.keys.released_channel())
                .arg(on.wait_ms)
                .arg(kind)
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
