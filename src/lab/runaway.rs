//! Stopping a lab script that runs too long (`while true do end`).
//!
//! Redis runs one script at a time and nothing else meanwhile: past `busy-reply-threshold`
//! every other client is answered `BUSY`, and only `SCRIPT KILL` or `SHUTDOWN NOSAVE` are
//! taken. A script that has not written yet is killed; one that has cannot be (Redis would
//! leave half its writes), so the lock store is shut down without saving and its supervisor
//! (`oversell up`) starts it again, with whatever its persistence kept. Either way the
//! student is told which step it was and why.

use crate::redis_pool::{RedisPool, StoreError};

/// How a runaway step was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// `SCRIPT KILL`: the script had written nothing.
    Killed,
    /// `SHUTDOWN NOSAVE`: the script had written, so only a restart could stop it.
    StoreRestarted,
    /// No script was running: the step was slow for another reason (the store is down).
    NotRunning,
}

/// Stops whatever script the lock store is running, through the store's own (default user)
/// connections.
pub async fn stop(store: &RedisPool) -> Result<Stopped, StoreError> {
    let mut conn = store.conn().await?;
    let killed: redis::RedisResult<()> = redis::cmd("SCRIPT")
        .arg("KILL")
        .query_async(&mut conn)
        .await;
    let err = match killed {
        Ok(()) => return Ok(Stopped::Killed),
        Err(err) => err,
    };
    match err.code() {
        Some("NOTBUSY") => Ok(Stopped::NotRunning),
        Some("UNKILLABLE") => {
            // The reply never comes: the server exits.
            let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN")
                .arg("NOSAVE")
                .query_async(&mut conn)
                .await;
            Ok(Stopped::StoreRestarted)
        }
        _ => Err(err.into()),
    }
}
