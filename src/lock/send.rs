//! Sending one step: its round trip on a connection to the lock store.

use std::sync::LazyLock;

use redis::{Script, Value};

use super::steps::{On, Request};
use crate::lock_store::LockStore;
use crate::redis_pool::{Conn, RedisPool, StoreError};

static DEL_AND_OBSERVE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("del_and_observe.lua")));

/// What sending a step needs besides the connection.
pub(super) struct Env<'a> {
    /// The lock store, for stopping a lab step that runs away.
    pub store: &'a LockStore,
    /// The resource store, where a lab step's error is noted for its students.
    pub truth: &'a RedisPool,
    pub on: On<'a>,
}

/// Sends one step and returns its reply (a pipeline's replies as one array).
pub(super) async fn send(
    conn: &mut Conn,
    request: &Request,
    env: &Env<'_>,
) -> Result<Value, StoreError> {
    let on = &env.on;
    Ok(match request {
        Request::Commands(pipe) => {
            let replies: Vec<Value> = pipe.query_async(conn).await?;
            match <[Value; 1]>::try_from(replies) {
                Ok([one]) => one,
                Err(many) => Value::Array(many),
            }
        }
        Request::Del => {
            DEL_AND_OBSERVE
                .key(on.keys.lock())
                .arg(on.keys.released_channel())
                .invoke_async(conn)
                .await?
        }
        Request::Script(call) => call.invoke(conn).await?,
        // The lab's contract: `KEYS[1]` the lock, `KEYS[2]` the fencing-token counter; `ARGV`
        // owner, lease, release channel.
        Request::Lab(step) => {
            let sent = step
                .script
                .key(on.keys.lock())
                .key(on.keys.fence_counter())
                .arg(on.owner)
                .arg(on.ttl_ms)
                .arg(on.keys.released_channel())
                .invoke_async(conn)
                .await;
            match sent {
                Ok(value) => value,
                Err(err) => {
                    let store = env.store.pool();
                    return Err(crate::lab::failed(store, env.truth, on.keys, step, err).await);
                }
            }
        }
    })
}
