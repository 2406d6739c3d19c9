//! `setnx-expire` — `SETNX lock v`, then `EXPIRE` as a second command; `DEL` to release.
//!
//! | step | sends (`static/locks/setnx-expire/`) | reply |
//! |---|---|---|
//! | acquire 1 | `acquire-1.lua`: `SETNX lock owner` | 1 taken, 0 busy |
//! | acquire 2 | `acquire-2.lua`: `PEXPIRE lock ttl` | 1 |
//! | release | `release-1.lua`: `DEL lock`, publish | 1 |
//!
//! # Guarantee
//! Mutual exclusion across instances, and a holder that dies *after* the `EXPIRE` no longer
//! deadlocks the sale: its lock expires after the lease.
//!
//! # Known defect
//! The two commands are not atomic. A holder that dies between `SETNX` and `EXPIRE` leaves a
//! lock with no lease: the same deadlock as `setnx`.

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static SETNX: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/setnx-expire/acquire-1.lua"
    ))
});
static EXPIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/setnx-expire/acquire-2.lua"
    ))
});
static RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/setnx-expire/release-1.lua"
    ))
});

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(
        Tier::SetnxExpire,
        crate::lock::TierLock::Steps(&SetnxExpire),
    )]
}

pub struct SetnxExpire;

impl Technique for SetnxExpire {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let setnx = SETNX.call().key(on.keys.lock()).arg(on.owner);
        let expire = EXPIRE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms);
        // The window: a death between the two leaves the lock without a lease.
        vec![Step::acquire(setnx), Step::acquire(expire)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        let del = RELEASE
            .call()
            .key(on.keys.lock())
            .arg(on.owner)
            .arg(on.ttl_ms)
            .arg(on.keys.released_channel());
        vec![Step::release(del)]
    }
}
