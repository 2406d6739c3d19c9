//! `lua-release` — a unique value per holder; release is one Lua compare-and-delete.
//!
//! # Guarantee
//! A holder only ever deletes its own lock: zero foreign releases, and no deadlock (the lease
//! expires). The articles' "diamond" tier.
//!
//! # Known defect
//! The lease is fixed. Business work longer than the lease still lets a second holder in while
//! the first is working: overlapping critical sections, lost updates, oversell. The first
//! holder finds out only at its release, which finds the lock gone or someone else's: counted
//! as a lost release.

use async_trait::async_trait;

use super::{release_if_owner, riding, set_nx_px, Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;

pub struct LuaRelease;

#[async_trait]
impl Lock for LuaRelease {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        // With the lock in the resource store, the sale's read rides behind the `SET NX PX`.
        Ok(match riding::acquire_with_read(cx).await? {
            None => return set_nx_px(cx).await,
            Some(((0, lease_left), _)) => Attempt::busy(lease_left),
            Some((_, read)) => Attempt::Acquired(Held {
                read,
                ..Held::plain()
            }),
        })
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        release_if_owner(cx).await
    }
}
