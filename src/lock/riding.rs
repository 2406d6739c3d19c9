//! Lock steps that ride in one round trip with the sale's own scripts, when the lock store is
//! the resource store (`--lock-store shared`, the teaching default): the acquire and the read
//! (with the reentrant tiers' nested re-entry and nested release around it) in one, the
//! read running only if the acquire took the lock, and the write and the release in another.
//! They are sent composed into one script (`composed.rs`).
//!
//! # What it guarantees
//! The same scripts, in the same order, as the sale sends them one by one: the read still
//! runs after the acquire and only under the lock, the release after the write, and the nested
//! hold still covers the read. Only the waiting between them goes.
//!
//! # What breaks it
//! Nothing the tier does not already have: a server that lost its scripts runs none of the
//! composed parts, and the whole is loaded and sent again (`composed.rs`). A lock store of its
//! own (`single`, `sentinel`, `redlock`) is another server: nothing rides together, and the
//! sale takes the one-by-one path.
//!
//! # Why it exists
//! A locked sale is a chain of round trips, each one a hand-off the next buyer waits
//! for. `lua-release` drops from 4 to 2 round trips per sale, the reentrant tiers from 6 to 2.

use std::sync::LazyLock;

use oversell_api::tier::Tier;
use redis::{RedisResult, Value};

use super::cohort::ReadReplies;
use super::LockCx;

use crate::composed::{self, reply, Call, Lua};
use crate::keys::Keys;
use crate::lock_store::LockStoreKind;
use crate::redis_pool::StoreError;

// The tiers' own script files, so the same hashes as the tiers' own calls: a script one of
// them loaded is loaded for the other.
static RELEASE_IF_OWNER: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("lua_release.lua")));
static REENTRANT_ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("reentrant_acquire.lua")));
static REENTRANT_RELEASE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("reentrant_release.lua")));
static SET_NX_PX: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("set_nx_px.lua")));

/// A sale's read as calls to send behind the acquire that takes the lock, given the lock's
/// owner (`sale/mod.rs` makes them; a fenced read carries [`composed::ACQUIRED`] as its token).
pub type ReadCalls<'a> = &'a (dyn Fn(&str) -> Vec<Call> + Sync);

/// What an attempt that carried the sale's read got back: the acquire's own reply (taken, or
/// the hold depth, and the lease left or the fencing token: `set_nx_px.lua`,
/// `reentrant_acquire.lua`) and, when it took the lock, the read's replies.
pub type AcquiredWithRead = ((i64, i64), Option<Box<ReadReplies>>);

/// One attempt to take the lock with the sale's read riding behind it in the same round trip,
/// the read running only if the lock was taken; `None` when this attempt cannot carry it (see
/// [`acquire_carrying_read`]), and the tier then makes its own attempt.
pub async fn acquire_with_read(cx: &LockCx<'_>) -> Result<Option<AcquiredWithRead>, StoreError> {
    let (Some(read), Some(acquire)) = (cx.read, acquire_carrying_read(cx)) else {
        return Ok(None);
    };
    let read = read(cx.owner);
    let calls: Vec<&Call> = std::iter::once(&acquire).chain(&read).collect();
    let mut conn = cx.conn().await?;
    let mut replies = composed::run_if_first_takes(&mut conn, &calls)
        .await?
        .into_iter();
    let acquired: (i64, i64) = reply(replies.next().unwrap_or(Ok(Value::Nil)))?;
    let read = (acquired.0 > 0).then(|| Box::new(Ok(replies.collect())));
    Ok(Some((acquired, read)))
}

/// The tier's acquire as a call the sale's read can ride behind: with the lock in the resource
/// store, and no replica to wait for (`WAIT` must follow the lock write on its own). A fenced
/// read is sent with the token this acquire takes (see [`composed::run_if_first_takes`]).
fn acquire_carrying_read(cx: &LockCx<'_>) -> Option<Call> {
    if !rides_with_sale(cx) || cx.settings.sync_replicas > 0 {
        return None;
    }
    Some(match cx.settings.tier {
        Tier::LuaRelease => SET_NX_PX
            .call()
            .key(cx.keys.lock())
            .arg(cx.owner)
            .arg(cx.settings.ttl_ms),
        Tier::ReentrantWatchdog | Tier::Fenced => REENTRANT_ACQUIRE
            .call()
            .key(cx.keys.reentrant_lock())
            .key(cx.keys.fence_counter())
            .arg(cx.settings.ttl_ms)
            .arg(cx.owner)
            .arg(if cx.settings.tier == Tier::Fenced {
                "1"
            } else {
                "0"
            }),
        _ => return None,
    })
}

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
/// give the nested hold back, as two calls that surround a sale's read in one round trip. The
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
