//! `setnx-expire` — `SETNX lock v`, then `EXPIRE` as a second command; `DEL` to release.
//!
//! # Guarantee
//! Mutual exclusion across instances, and a holder that dies *after* the `EXPIRE` no longer
//! deadlocks the sale: its lock expires after the lease.
//!
//! # Known defect
//! The two commands are not atomic. A holder that dies between `SETNX` and `EXPIRE` leaves a
//! lock with no lease: the same deadlock as `setnx`.

use async_trait::async_trait;

use super::setnx::setnx;
use super::{between_acquire_steps, del_and_observe, Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;

pub struct SetnxExpire;

#[async_trait]
impl Lock for SetnxExpire {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        if !setnx(cx).await? {
            return Ok(Attempt::Busy {
                lease_left: Some(cx.settings.ttl()),
            });
        }
        // The window: a death here leaves the lock without a lease.
        if let Some(died) = between_acquire_steps(cx).await {
            return Ok(died);
        }
        let mut conn = cx.conn().await?;
        let _: bool = redis::cmd("PEXPIRE")
            .arg(cx.keys.lock())
            .arg(cx.settings.ttl_ms)
            .query_async(&mut conn)
            .await?;
        Ok(Attempt::Acquired(Held::plain()))
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        del_and_observe(cx).await
    }
}
