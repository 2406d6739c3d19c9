//! `local` — an in-process mutex, one per instance (and room).
//!
//! # Guarantee
//! Mutual exclusion among the buyers served by one process. With a single instance it never
//! oversells.
//!
//! # Known defect
//! Other instances have mutexes of their own: behind a load balancer with two or more
//! instances, buyers on different instances run the critical section together and oversell.
//!
//! Not a step list: the lock is a mutex inside the process, and no Redis sees it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::time::Instant;

use crate::lock::{Attempt, Held, Keep, Lock, LockCx, LockError};
use crate::redis_pool::StoreError;
use oversell_api::tier::Tier;

/// The map is a std `Mutex` (held only to look up a room, never across `.await`); each room's
/// lock is a tokio `Mutex` because it is held across the whole async critical section.
/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(
        Tier::Local,
        crate::lock::TierLock::Own(Box::new(LocalLock::default())),
    )]
}

#[derive(Default)]
pub struct LocalLock {
    rooms: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl LocalLock {
    fn mutex(&self, room: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        rooms.entry(room.to_owned()).or_default().clone()
    }
}

fn held(guard: tokio::sync::OwnedMutexGuard<()>) -> Held {
    Held {
        _keep: Keep::Local { _guard: guard },
        ..Held::plain()
    }
}

#[async_trait]
impl Lock for LocalLock {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        Ok(match self.mutex(cx.keys.room()).try_lock_owned() {
            Ok(guard) => Attempt::Acquired(held(guard)),
            Err(_) => Attempt::Busy { lease_left: None },
        })
    }

    /// Its own acquire, which knows its waiters (the instance's line is for the Redis tiers).
    async fn acquire_again(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        self.acquire(cx).await
    }

    /// Waits in the mutex's own fair queue rather than spinning, bounded by the deadline.
    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        let deadline = Instant::now() + cx.settings.wait_deadline();
        let mutex = self.mutex(cx.keys.room());
        match tokio::time::timeout_at(deadline, mutex.lock_owned()).await {
            Ok(guard) => Ok(held(guard)),
            Err(_) => Err(LockError::Timeout),
        }
    }

    async fn release(&self, _cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        drop(held);
        Ok(())
    }
}
