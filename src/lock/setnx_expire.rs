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
use super::{del_and_observe, Attempt, Held, Lock, LockCx};
use crate::faults::{self, FaultKind};
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
        // The window: a crash here leaves the lock without a lease.
        if cx
            .faults
            .claim(FaultKind::CrashBeforeExpire)
            .await
            .is_some()
        {
            faults::crash("between SETNX and EXPIRE");
        }
        // The same window, for its room alone: the holder stops dead, the instance serves on.
        if cx
            .faults
            .claim(FaultKind::HolderDiesBetweenSteps)
            .await
            .is_some()
        {
            return Ok(Attempt::HolderDied);
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
