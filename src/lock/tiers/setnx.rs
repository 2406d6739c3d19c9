//! `setnx` — `SETNX lock v`, work, `DEL lock`; retry while it is taken.
//!
//! | step | sends (`static/locks/setnx/`) | reply |
//! |---|---|---|
//! | acquire | `acquire-1.lua`: `SETNX lock owner` | 1 taken, 0 busy (for how long, unknown: there is no lease) |
//! | release | `release-1.lua`: `DEL lock`, publish | 1 |
//!
//! # Guarantee
//! Mutual exclusion across every instance, as long as every holder lives to release.
//!
//! # Known defect
//! The lock has no lease. A holder that dies inside the critical section (crash, kill, power
//! loss) never deletes it: every later buyer waits forever — a deadlock that only a manual
//! reset ends.
//!
//! The value is the holder's id; this tier never reads it, it is there so the ground truth can
//! see whose lock a `DEL` removed.

use std::sync::LazyLock;

use crate::lock::steps::{Lua, On, Step, Technique};
use oversell_api::tier::Tier;

static ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/setnx/acquire-1.lua")));
static RELEASE: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../static/locks/setnx/release-1.lua")));

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::Setnx, crate::lock::TierLock::Steps(&Setnx))]
}

pub struct Setnx;

impl Technique for Setnx {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let setnx = ACQUIRE.call().key(on.keys.lock()).arg(on.owner);
        vec![Step::acquire(setnx)]
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
