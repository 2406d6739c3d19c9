//! `atomic-expiry` — `SET lock v NX PX ttl` in one command; `DEL` to release.
//!
//! # Guarantee
//! Mutual exclusion while the business work is shorter than the lease, and no deadlock: a dead
//! holder's lock always expires.
//!
//! # Known defect
//! The value is not checked on release. When the work outlasts the lease, the lock expires,
//! buyer B takes it, and A's `DEL` then deletes *B's* lock — letting C in beside B. Foreign
//! releases and overlapping critical sections follow.
//!
//! The articles use a fixed value; here the value is the holder's id, which this tier never
//! reads — it is there only so the ground truth can see whose lock a `DEL` removed.

use async_trait::async_trait;

use super::{del_and_observe, set_nx_px, Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;

pub struct AtomicExpiry;

#[async_trait]
impl Lock for AtomicExpiry {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        set_nx_px(cx).await
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        del_and_observe(cx).await
    }
}
