//! `setnx` — `SETNX lock v`, work, `DEL lock`; retry while it is taken.
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

use async_trait::async_trait;

use super::{del_and_observe, Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;

pub struct Setnx;

/// `SETNX lock owner`; shared with `setnx-expire`, which adds its `EXPIRE` afterwards.
pub(super) async fn setnx(cx: &LockCx<'_>) -> Result<bool, StoreError> {
    let mut conn = cx.conn().await?;
    let taken: bool = redis::cmd("SETNX")
        .arg(cx.keys.lock())
        .arg(cx.owner)
        .query_async(&mut conn)
        .await?;
    Ok(taken)
}

#[async_trait]
impl Lock for Setnx {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        Ok(if setnx(cx).await? {
            Attempt::Acquired(Held::plain())
        } else {
            Attempt::Busy { lease_left: None }
        })
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        del_and_observe(cx).await
    }
}
