//! `uuid-owner` — a unique value per holder; release is `GET`, compare, `DEL` as three steps.
//!
//! # Guarantee
//! A holder no longer deletes a lock it can *see* is someone else's: the slow-business case of
//! `atomic-expiry` is mostly fixed.
//!
//! # Known defect
//! Check-then-act is not atomic. If the lease runs out between the `GET` (which saw our value)
//! and the `DEL`, another buyer takes the lock in that gap and our `DEL` deletes theirs.

use std::time::Duration;

use async_trait::async_trait;

use super::{del_and_observe, set_nx_px, Attempt, Held, Lock, LockCx};
use crate::faults::FaultKind;
use crate::redis_pool::StoreError;

pub struct UuidOwner;

#[async_trait]
impl Lock for UuidOwner {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        set_nx_px(cx).await
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        let mut conn = cx.conn().await?;
        let value: Option<String> = redis::cmd("GET")
            .arg(cx.keys.lock())
            .query_async(&mut conn)
            .await?;
        if value.as_deref() != Some(cx.owner) {
            return Ok(());
        }
        // The gap: the lease may run out right here.
        if let Some(fault) = cx.faults.claim(FaultKind::ReleaseGap).await {
            tokio::time::sleep(Duration::from_millis(fault.ms)).await;
        }
        del_and_observe(cx).await
    }
}
