//! `none` — no lock at all.
//!
//! # Guarantee
//! None. Every buyer runs the read-check-write at once.
//!
//! # Known defect
//! Races: two buyers read the same stock `n`, both sell, both write `n - 1`. The ledger shows
//! more orders than items left the stock (lost updates) and, once the stock runs out, more
//! orders than there was stock (oversold).
//!
//! Not a step list: there is no step to send.

use async_trait::async_trait;

use crate::lock::{Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;
use oversell_api::tier::Tier;

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::None, crate::lock::TierLock::Own(Box::new(NoLock)))]
}

pub struct NoLock;

#[async_trait]
impl Lock for NoLock {
    async fn try_acquire(&self, _cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        Ok(Attempt::Acquired(Held::plain()))
    }

    async fn release(&self, _cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        Ok(())
    }
}
