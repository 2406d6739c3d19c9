//! The lock tiers behind one small interface.
//!
//! Each tier lives in its own file and opens with what it guarantees and what breaks it.
//! A tier implements one attempt (`try_acquire`) and `release`; the waiting loop around the
//! attempt (spin or pub/sub, always bounded by a deadline) is shared and lives in `wait.rs`.
//! `atomic-deduct` takes no lock at all, so [`Locks::get`] has nothing for it: the sale path
//! runs its script instead.

pub mod atomic_deduct;
mod atomic_expiry;
mod fenced;
mod local;
mod lua_release;
mod none;
mod reentrant_watchdog;
mod setnx;
mod setnx_expire;
mod uuid_owner;
mod wait;

use std::sync::LazyLock;
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;

use crate::faults::FaultPoints;
use crate::keys::Keys;
use crate::redis_pool::{Conn, RedisPool, StoreError};
use crate::settings::Settings;
use crate::tier::Tier;

pub use wait::ReleaseSignals;

/// Everything one acquire or release needs to know.
pub struct LockCx<'a> {
    pub redis: &'a RedisPool,
    pub keys: &'a Keys,
    pub settings: &'a Settings,
    /// Unique per sale (and per process run): the lock value or hash field of this holder.
    pub owner: &'a str,
    /// This instance's id, for the timeline.
    pub instance: &'a str,
    /// The faults armed for this room, and how to claim one.
    pub faults: &'a FaultPoints<'a>,
    pub signals: &'a ReleaseSignals,
}

impl LockCx<'_> {
    async fn conn(&self) -> Result<Conn, StoreError> {
        self.redis.conn().await
    }
}

/// A lock this sale holds. Dropping it without `release` leaves the Redis lock to its lease.
pub struct Held {
    /// The fencing token, for the `fenced` tier.
    pub fence: Option<u64>,
    /// How many times the owner holds the lock after this acquire (2 = re-entered).
    pub depth: u32,
    _keep: Keep,
}

/// What must live exactly as long as the hold.
enum Keep {
    Nothing,
    /// The in-process mutex guard of the `local` tier.
    Local {
        _guard: tokio::sync::OwnedMutexGuard<()>,
    },
    /// The lease renewal task of the reentrant tiers; aborted on drop.
    Watchdog {
        _renewals: reentrant_watchdog::Watchdog,
    },
}

impl Held {
    fn plain() -> Self {
        Held {
            fence: None,
            depth: 1,
            _keep: Keep::Nothing,
        }
    }
}

/// The outcome of one attempt.
pub enum Attempt {
    Acquired(Held),
    /// Someone else holds it; `lease_left` bounds a pub/sub wait when the tier knows it.
    Busy {
        lease_left: Option<Duration>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("lock wait deadline passed")]
    Timeout,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[async_trait]
pub trait Lock: Send + Sync {
    /// One attempt to take the lock, without waiting.
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError>;

    /// Gives the lock back. Errors leave the lock to its lease (or forever, for `setnx`).
    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError>;

    /// Takes the lock, waiting as the settings say, until the wait deadline.
    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        wait::until_acquired(self, cx).await
    }

    /// Whether the same owner may take the lock again while holding it.
    fn reentrant(&self) -> bool {
        false
    }
}

/// One lock object per tier for this instance (the `local` tier keeps its mutexes here).
pub struct Locks {
    none: none::NoLock,
    local: local::LocalLock,
    setnx: setnx::Setnx,
    setnx_expire: setnx_expire::SetnxExpire,
    atomic_expiry: atomic_expiry::AtomicExpiry,
    uuid_owner: uuid_owner::UuidOwner,
    lua_release: lua_release::LuaRelease,
    reentrant: reentrant_watchdog::ReentrantWatchdog,
    fenced: fenced::Fenced,
}

impl Default for Locks {
    fn default() -> Self {
        Locks {
            none: none::NoLock,
            local: local::LocalLock::default(),
            setnx: setnx::Setnx,
            setnx_expire: setnx_expire::SetnxExpire,
            atomic_expiry: atomic_expiry::AtomicExpiry,
            uuid_owner: uuid_owner::UuidOwner,
            lua_release: lua_release::LuaRelease,
            reentrant: reentrant_watchdog::ReentrantWatchdog::plain(),
            fenced: fenced::Fenced::default(),
        }
    }
}

impl Locks {
    /// The lock of a tier; `None` for `atomic-deduct`, which needs none.
    pub fn get(&self, tier: Tier) -> Option<&dyn Lock> {
        Some(match tier {
            Tier::None => &self.none,
            Tier::Local => &self.local,
            Tier::Setnx => &self.setnx,
            Tier::SetnxExpire => &self.setnx_expire,
            Tier::AtomicExpiry => &self.atomic_expiry,
            Tier::UuidOwner => &self.uuid_owner,
            Tier::LuaRelease => &self.lua_release,
            Tier::ReentrantWatchdog => &self.reentrant,
            Tier::Fenced => &self.fenced,
            Tier::AtomicDeduct => return None,
        })
    }
}

// ---- pieces shared by several tiers ----

/// `SET lock owner NX PX ttl`: the atomic take-with-lease of the tiers from `atomic-expiry` up.
async fn set_nx_px(cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
    let mut conn = cx.conn().await?;
    let taken: Option<String> = redis::cmd("SET")
        .arg(cx.keys.lock())
        .arg(cx.owner)
        .arg("NX")
        .arg("PX")
        .arg(cx.settings.ttl_ms)
        .query_async(&mut conn)
        .await?;
    Ok(match taken {
        Some(_) => Attempt::Acquired(Held::plain()),
        None => Attempt::Busy {
            lease_left: Some(cx.settings.ttl()),
        },
    })
}

static DEL_AND_OBSERVE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("del_and_observe.lua")));

/// The naive tiers' unconditional `DEL`, done as `GETDEL` so the ground truth can see whose
/// lock it removed. Deletes exactly what `DEL` would; also publishes the release.
async fn del_and_observe(cx: &LockCx<'_>) -> Result<(), StoreError> {
    let mut conn = cx.conn().await?;
    let _: i64 = DEL_AND_OBSERVE
        .key(cx.keys.lock())
        .key(cx.keys.foreign_releases())
        .key(cx.keys.timeline())
        .arg(cx.owner)
        .arg(cx.keys.released_channel())
        .arg(cx.instance)
        .invoke_async(&mut conn)
        .await?;
    Ok(())
}
