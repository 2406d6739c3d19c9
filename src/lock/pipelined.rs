//! Lock steps that ride in one pipeline with the sale's own scripts, when the lock store is
//! the resource store (`--lock-store shared`, the teaching default): the write and the release
//! in one round trip, and the reentrant tiers' nested re-entry, read and nested release in
//! another.
//!
//! # What it guarantees
//! The same commands, in the same order, as the sale sends them one by one: Redis runs a
//! pipeline's commands in the order sent, so the release still runs after the write, and the
//! nested hold still covers the read. Only the waiting between them goes.
//!
//! # What breaks it, and how it is kept from breaking
//! A server that has lost its scripts (a restart, `SCRIPT FLUSH`) answers `EVALSHA` with
//! `NOSCRIPT`, and redis-rs' `Script::invoke`, which loads and retries, cannot do so inside a
//! pipeline. Worse, a pipeline's other commands still run: a release whose script happened to
//! be loaded would run after a write that did not, and the write, sent again, would land
//! without the lock. So every call but the last is sent whole (`EVAL`), which no script cache
//! can refuse; only the last goes by hash, and when it meets `NOSCRIPT` it alone is sent again
//! through `invoke`, which loads it. Everything before it has run by then, so the order holds.
//! Sending a script whole costs its bytes and a SHA1 in Redis (about 2–3 µs on the bench
//! machine), far less than the round trip it saves.
//!
//! A lock store of its own (`single`, `sentinel`, `redlock`) is another server: nothing rides
//! together, and the sale takes the one-by-one path.
//!
//! # Why it exists
//! Issue 12: a locked sale is a chain of round trips, each one a hand-off the next buyer waits
//! for. `lua-release` drops from 4 to 3 round trips per sale, the reentrant tiers from 6 to 3.

use std::sync::LazyLock;

use oversell_api::tier::Tier;
use redis::{RedisError, RedisResult, Script, ToRedisArgs, Value};

use super::LockCx;

use crate::keys::Keys;
use crate::lock_store::LockStoreKind;
use crate::redis_pool::{Conn, StoreError};

/// A Lua script kept with its source, so that it can be sent whole inside a pipeline.
pub struct Lua {
    source: &'static str,
    script: Script,
}

impl Lua {
    pub fn new(source: &'static str) -> Lua {
        Lua {
            source,
            script: Script::new(source),
        }
    }

    /// A call of this script, to which keys and arguments are added in order.
    pub fn call(&'static self) -> Call {
        Call {
            lua: self,
            keys: Vec::new(),
            args: Vec::new(),
        }
    }
}

/// One call of a script: its keys and arguments.
pub struct Call {
    lua: &'static Lua,
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

impl Call {
    pub fn key(mut self, key: impl ToRedisArgs) -> Self {
        self.keys.extend(key.to_redis_args());
        self
    }

    pub fn arg(mut self, arg: impl ToRedisArgs) -> Self {
        self.args.extend(arg.to_redis_args());
        self
    }

    /// Runs the call on its own: `EVALSHA`, loading the script when the server lacks it.
    pub async fn invoke<T: redis::FromRedisValue>(&self, conn: &mut Conn) -> RedisResult<T> {
        let mut invocation = self.lua.script.prepare_invoke();
        for key in &self.keys {
            invocation.key(key.as_slice());
        }
        for arg in &self.args {
            invocation.arg(arg.as_slice());
        }
        invocation.invoke_async(conn).await
    }

    /// The call as a command: the whole source (`EVAL`), or its hash (`EVALSHA`).
    fn cmd(&self, whole: bool) -> redis::Cmd {
        let mut cmd = match whole {
            true => redis::cmd("EVAL"),
            false => redis::cmd("EVALSHA"),
        };
        match whole {
            true => cmd.arg(self.lua.source),
            false => cmd.arg(self.lua.script.get_hash()),
        };
        cmd.arg(self.keys.len()).arg(&self.keys).arg(&self.args);
        cmd
    }
}

/// Sends the calls in one round trip, in order, and returns each one's reply (a script's
/// error, such as `NOSTOCK`, is that call's reply; a lost connection is the whole answer).
/// Every call but the last goes whole; the last goes by hash and, should the server have
/// lost its scripts, is sent again on its own, loading it (see the module's doc).
pub async fn run_in_order(
    conn: &mut Conn,
    calls: &[&Call],
) -> RedisResult<Vec<RedisResult<Value>>> {
    let Some((last, before)) = calls.split_last() else {
        return Ok(Vec::new());
    };
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for call in before {
        pipe.add_command(call.cmd(true));
    }
    pipe.add_command(last.cmd(false));
    let replies: Vec<Value> = pipe.query_async(conn).await?;
    let mut replies: Vec<RedisResult<Value>> =
        replies.into_iter().map(Value::extract_error).collect();
    if let Some(reply) = replies.last_mut() {
        if matches!(reply, Err(err) if is_noscript(err)) {
            *reply = last.invoke(conn).await;
        }
    }
    Ok(replies)
}

fn is_noscript(err: &RedisError) -> bool {
    err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
}

/// A reply of [`run_in_order`] as the type the script returns.
pub fn reply<T: redis::FromRedisValue>(reply: RedisResult<Value>) -> RedisResult<T> {
    Ok(T::from_redis_value(reply?)?)
}

// The tiers' own script files, so the same hashes as the tiers' own calls: a script one of
// them loaded is loaded for the other.
static RELEASE_IF_OWNER: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("lua_release.lua")));
static REENTRANT_ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("reentrant_acquire.lua")));
static REENTRANT_RELEASE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("reentrant_release.lua")));

/// Whether the lock's steps can ride with the sale's: one server for both, and a tier whose
/// release is one script whose answer the tier reads the same way here.
pub fn rides_with_sale(cx: &LockCx<'_>) -> bool {
    cx.store.kind() == LockStoreKind::Shared
        && matches!(
            cx.settings.tier,
            Tier::LuaRelease | Tier::ReentrantWatchdog | Tier::Fenced
        )
}

/// The tier's release as one call, as `lua_release.rs` and `reentrant_watchdog.rs` send it
/// (the same script files, so the same hashes). Call [`released`] with its reply.
pub fn release(cx: &LockCx<'_>) -> Option<Call> {
    Some(match cx.settings.tier {
        Tier::LuaRelease => RELEASE_IF_OWNER
            .call()
            .key(cx.keys.lock())
            .arg(cx.owner)
            .arg(cx.keys.released_channel()),
        Tier::ReentrantWatchdog | Tier::Fenced => REENTRANT_RELEASE
            .call()
            .key(cx.keys.reentrant_lock())
            .arg(cx.settings.ttl_ms)
            .arg(cx.owner)
            .arg(cx.keys.released_channel()),
        _ => return None,
    })
}

/// Reads a release's reply as the tier does: a release that found the lock gone or someone
/// else's is a lost release, recorded in the resource store.
pub async fn released(cx: &LockCx<'_>, answer: RedisResult<Value>) -> Result<(), StoreError> {
    let left: i64 = reply(answer)?;
    let lost = match cx.settings.tier {
        Tier::LuaRelease => left == 0,
        _ => left == -1,
    };
    if lost {
        cx.lost_release().await?;
    }
    Ok(())
}

/// The reentrant tiers' nested step: take the lock again (as `owner`, the lock's owner) and
/// give the nested hold back, as two calls that surround a sale's read in one pipeline. The
/// parts are given one by one, so that a cohort can build a successor's read (`cohort.rs`).
pub fn reentry(keys: &Keys, tier: Tier, ttl_ms: u64, owner: &str) -> (Call, Call) {
    let acquire = REENTRANT_ACQUIRE
        .call()
        .key(keys.reentrant_lock())
        .key(keys.fence_counter())
        .arg(ttl_ms)
        .arg(owner)
        // Only read when the hash is gone (the outer hold was lost and nobody holds the lock):
        // the acquire is then a fresh one and, for `fenced`, takes a token, as the tier's does.
        .arg(if tier == Tier::Fenced { "1" } else { "0" });
    let release = REENTRANT_RELEASE
        .call()
        .key(keys.reentrant_lock())
        .arg(ttl_ms)
        .arg(owner)
        .arg(keys.released_channel());
    (acquire, release)
}

/// The depth the nested acquire reached: 2 (or more) when the owner re-entered, `None` when
/// someone else holds the lock, i.e. the owner has lost it.
pub fn reentered(answer: RedisResult<Value>) -> RedisResult<Option<u32>> {
    let (depth, _): (u32, i64) = reply(answer)?;
    Ok((depth > 0).then_some(depth))
}
