//! `fenced` — `reentrant-watchdog` plus a fencing token: a number from a Redis counter, taken
//! inside the acquire script, that only ever grows. The stock accepts a read or write only
//! with a token at least as high as any it has seen (see `sale/enter.lua`, `sale/commit.lua`).
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

use async_trait::async_trait;

use super::reentrant_watchdog::ReentrantWatchdog;
use super::{Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;

pub struct Fenced(ReentrantWatchdog);

impl Default for Fenced {
    fn default() -> Self {
        Fenced(ReentrantWatchdog::fencing())
    }
}

#[async_trait]
impl Lock for Fenced {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        self.0.try_acquire(cx).await
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        self.0.release(cx, held).await
    }

    fn reentrant(&self) -> bool {
        true
    }
}
