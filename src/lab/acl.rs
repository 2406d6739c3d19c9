//! The room's lock-store user: the only identity a student's script ever runs as.
//!
//! Redis checks every command a script calls against the ACL of the connection that sent
//! `EVALSHA`, keys included (declared or not), so a user confined here confines the script:
//! it may touch keys that start with the room's lock key and the room's fencing-token counter,
//! and publish on the room's release channel, with the commands a lock needs and nothing else.
//! `FLUSHALL`, `CONFIG`, `KEYS`, `DEBUG`, `SHUTDOWN`, `SCRIPT FLUSH|KILL`, `FUNCTION`,
//! `MODULE`, `ACL` are refused with Redis's own `NOPERM` error, which the student sees.

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

use super::LabUser;

/// What a lock's steps may call: strings, hashes, expiry, a counter, a list and a sorted set
/// (a waiters' queue and when each place lapses, `fair`'s), publish, time; `WAIT`
/// after a lock write when the room asks for replicas; `EVALSHA` and `SCRIPT LOAD` to run
/// the steps themselves.
pub const COMMANDS: &[&str] = &[
    "eval",
    "evalsha",
    "script|load",
    "script|exists",
    "ping",
    "time",
    "wait",
    "type",
    "exists",
    "get",
    "set",
    "setnx",
    "setex",
    "psetex",
    "getset",
    "getdel",
    "getex",
    "del",
    "unlink",
    "expire",
    "pexpire",
    "expireat",
    "pexpireat",
    "persist",
    "ttl",
    "pttl",
    "pexpiretime",
    "incr",
    "incrby",
    "decr",
    "decrby",
    "hset",
    "hsetnx",
    "hget",
    "hmget",
    "hdel",
    "hexists",
    "hincrby",
    "hgetall",
    "hkeys",
    "hvals",
    "hlen",
    "rpush",
    "lpush",
    "lpop",
    "rpop",
    "lindex",
    "llen",
    "lrange",
    "lrem",
    "lpos",
    "zadd",
    "zrem",
    "zscore",
    "zincrby",
    "zrange",
    "zcard",
    "publish",
    // The wrapper's lease stamp (`step.lua`): on the lock's own stream only, as every key here.
    "xadd",
];

/// How long a script may run before Redis answers `BUSY` to everyone else and takes a
/// `SCRIPT KILL` (Redis's default is 5 s: a whole class would wait that long).
pub const BUSY_REPLY_THRESHOLD_MS: u64 = 200;

/// Makes the room's user on the lock store (unless it exists), and sets the store's busy
/// threshold. Called at submission, and again when a step's login is refused: a lock store
/// restarted without persistence has forgotten its users.
pub async fn prepare(store: &RedisPool, keys: &Keys, user: &LabUser) -> Result<(), StoreError> {
    let mut conn = store.conn().await?;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("busy-reply-threshold")
        .arg(BUSY_REPLY_THRESHOLD_MS)
        .query_async(&mut conn)
        .await?;
    let known: redis::Value = redis::cmd("ACL")
        .arg("GETUSER")
        .arg(&user.name)
        .query_async(&mut conn)
        .await?;
    if known != redis::Value::Nil {
        return Ok(());
    }
    let _: () = rules(keys, user).query_async(&mut conn).await?;
    Ok(())
}

/// `ACL SETUSER` for the room's user: on, its password, the room's lock keys, its
/// fencing-token counter and release channel, and [`COMMANDS`] alone.
pub fn rules(keys: &Keys, user: &LabUser) -> redis::Cmd {
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER")
        .arg(&user.name)
        .arg("reset")
        .arg("on")
        .arg(format!(">{}", user.password))
        .arg(format!("~{}*", keys.lock()))
        .arg(format!("~{}", keys.fence_counter()))
        .arg(format!("&{}", keys.released_channel()))
        .arg("-@all");
    for command in COMMANDS {
        cmd.arg(format!("+{command}"));
    }
    cmd
}

/// Whether a failure is the lock store refusing the room's login (a store restarted
/// without its users).
pub fn login_refused(err: &StoreError) -> bool {
    let text = err.to_string();
    text.contains("WRONGPASS") || text.contains("NOAUTH") || text.contains("AuthenticationFailed")
}
