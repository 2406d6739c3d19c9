//! `fenced` — `reentrant-watchdog` plus a fencing token: a number from a Redis counter, taken
//! inside the acquire script, that only ever grows. The stock accepts a read or write only
//! with a token at least as high as any it has seen (see `sale/enter.lua`, `sale/commit.lua`).
//!
//! | step | sends (`static/locks/fenced/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: as `reentrant-watchdog`'s, and a fresh hold `INCR`s the counter and keeps the value in the hash | `{depth, token}` held; `{0, lease left}` busy |
//! | release | `release-1.lua`: as `reentrant-watchdog`'s | 1; 0 not ours any more: lost |
//! | renew, every TTL/3 | `renew.lua`: as `reentrant-watchdog`'s | 1 renewed; 0 gone: stop |
//!
//! The articles never reach it: 002 (lines 630–648) tells the pause and lists fixes that only
//! narrow the window. Fencing tokens come from Martin Kleppmann's "How to do distributed
//! locking" (2016); Redisson's counterpart is `RFencedLock` (`lockAndGetToken`).
//!
//! # Guarantee
//! Even when a paused holder outlives its lease and a second holder gets in, the stale holder's
//! write is refused: no oversell, no lost update. The refusal is counted as a stale write.
//!
//! # Known defect
//! None of the lock's: the price is that the protected resource must check the token. A store
//! that cannot (a plain API, a file) gets no protection from it.

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/fenced/acquire-1.lua")));
static RELEASE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/fenced/release-1.lua")));
static RENEW: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/fenced/renew.lua")));

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::Fenced, crate::lock::TierLock::Steps(&Fenced))]
}

pub struct Fenced;

impl Technique for Fenced {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let lock = ACQUIRE
            .call()
            .key(on.keys.reentrant_lock())
            .key(on.keys.fence_counter())
            .arg(on.owner)
            .arg(on.ttl_ms);
        vec![Step::acquire(lock)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let unlock = RELEASE
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        vec![Step::release(unlock)]
    }

    fn renew(&self, on: &On<'_>) -> Option<Step> {
        let renew = RENEW
            .call()
            .key(on.keys.reentrant_lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        Some(Step::renew(renew))
    }

    fn reentrant(&self) -> bool {
        true
    }
}
