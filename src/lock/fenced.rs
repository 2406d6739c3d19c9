//! `fenced` — `reentrant-watchdog` plus a fencing token: a number from a Redis counter, taken
//! inside the acquire script, that only ever grows. The stock accepts a read or write only
//! with a token at least as high as any it has seen (see `sale/enter.lua`, `sale/commit.lua`).
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire | `reentrant_acquire.lua` with a token: a fresh hold `INCR`s the counter, keeps the value in the hash | `{depth, token}` held; `{0, lease left}` busy |
//! | release, renew | as `reentrant-watchdog` | |
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

use super::reentrant_watchdog::{self, ReentrantWatchdog};
use super::steps::{On, Step, Technique};

pub struct Fenced;

impl Technique for Fenced {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        vec![reentrant_watchdog::acquire(on, true)]
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        ReentrantWatchdog.release(on)
    }

    fn renew(&self, on: &On<'_>) -> Option<Step> {
        ReentrantWatchdog.renew(on)
    }

    fn reentrant(&self) -> bool {
        true
    }
}
