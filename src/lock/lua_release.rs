//! `lua-release` — a unique value per holder; release is one Lua compare-and-delete.
//!
//! # Guarantee
//! A holder only ever deletes its own lock: zero foreign releases, and no deadlock (the lease
//! expires). The articles' "diamond" tier.
//!
//! # Known defect
//! The lease is fixed. Business work longer than the lease still lets a second holder in while
//! the first is working: overlapping critical sections, lost updates, oversell.

use std::sync::LazyLock;

use async_trait::async_trait;
use redis::Script;

use super::{set_nx_px, Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;

static RELEASE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua_release.lua")));

pub struct LuaRelease;

#[async_trait]
impl Lock for LuaRelease {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        set_nx_px(cx).await
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        let mut conn = cx.conn().await?;
        let _: i64 = RELEASE
            .key(cx.keys.lock())
            .arg(cx.owner)
            .arg(cx.keys.released_channel())
            .invoke_async(&mut conn)
            .await?;
        Ok(())
    }
}
