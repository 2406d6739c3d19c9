//! `zookeeper` and `zookeeper-fenced` — the other answer: a lock in ZooKeeper, as Curator's
//! `InterProcessMutex` takes it (the recipe itself is in `crate::zookeeper_recipe`).
//!
//! Each buyer creates an ephemeral sequential node under the room's lock dir; the lowest
//! sequence holds the lock; every other buyer watches only the node just ahead of it, so a
//! release wakes one waiter, never a herd; release deletes the node. Re-entry is counted here,
//! per owner, as Curator counts it per thread: the nested step adds a hold, no second node.
//! The room's `wait` setting (spin, pub/sub) does not apply: a waiter is woken by its watch;
//! its `ttl_ms` neither: the session timeout (`ZOOKEEPER_SESSION_MS`) stands in for a lease.
//!
//! # Guarantee
//! One holder at a time while every holder's session is alive, first come first served. No
//! lease to tune: a holder that dies loses its node when its session times out, and only then
//! — slow work keeps the lock as long as the holder's process answers ZooKeeper's pings.
//! ZooKeeper is consistent (CP, in the CAP theorem's words; 001 says strongly consistent): a
//! write is acknowledged by a quorum, so losing one server of three loses no lock; without a
//! quorum it refuses (a 503), rather than answer wrongly.
//!
//! # What breaks it
//! A pause of the holder's whole process (GC, SIGSTOP) longer than the session timeout: the
//! session expires, the node goes, the next buyer takes the lock, and the paused holder wakes
//! still believing it holds it — the `freeze` fault shows the stale write. ZooKeeper is not
//! immune to pauses either.
//!
//! `zookeeper-fenced` closes that gap as `fenced` does: the node's creation zxid, which only
//! grows, is the fencing token, and the stock refuses a write with a lower token than it has
//! seen. ZooKeeper can issue such a token; Redlock cannot.
//!
//! Two of Curator's incidents are faults here (`faulty/`): a session given up as a buyer
//! queues, after which the buyer either counts its old node as its own (CURATOR-604) or checks
//! which session owns it ([`Reconnect`]); and a release whose delete is lost on a connection
//! loss, given up on (CURATOR-678) or sent again until it lands ([`DeleteLoss`]).
//!
//! Not a step list: the lock is a queue of nodes in ZooKeeper, each waiter watching the one
//! ahead of it, not a Redis key tried again.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use tokio::time::Instant;

use crate::faults::FaultKind;
use crate::lock::hook::{Go, Point};
use crate::lock::{Attempt, Held, Lock, LockCx, LockError};
use oversell_api::tier::Tier;

use crate::redis_pool::StoreError;
use crate::zookeeper_recipe::{DeleteLoss, OldNode, Reconnect, Released, ZkError, ZkHeld, ZkStore};

/// The tiers this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![
        (
            Tier::Zookeeper,
            crate::lock::TierLock::Own(Box::new(ZooKeeperLock::plain())),
        ),
        (
            Tier::ZookeeperFenced,
            crate::lock::TierLock::Own(Box::new(ZooKeeperLock::fencing())),
        ),
    ]
}

pub struct ZooKeeperLock {
    /// Whether the holder's fencing token is handed to the stock (`zookeeper-fenced`).
    fenced: bool,
    /// The lock nodes this instance's sales hold, by owner, and how many times each holds its
    /// own. A std `Mutex`: held only to look up or update an entry, never across `.await`.
    holds: Mutex<HashMap<String, (ZkHeld, u32)>>,
}

impl ZooKeeperLock {
    pub fn plain() -> Self {
        Self::new(false)
    }

    pub fn fencing() -> Self {
        Self::new(true)
    }

    fn new(fenced: bool) -> Self {
        ZooKeeperLock {
            fenced,
            holds: Mutex::default(),
        }
    }

    fn holds(&self) -> std::sync::MutexGuard<'_, HashMap<String, (ZkHeld, u32)>> {
        self.holds.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn held(&self, node: &ZkHeld, depth: u32) -> Held {
        Held {
            fence: self.fenced.then(|| u64::try_from(node.czxid).unwrap_or(0)),
            depth,
            ..Held::plain()
        }
    }

    /// A re-entry: the owner already holds the lock here.
    fn reenter(&self, owner: &str) -> Option<Held> {
        let mut holds = self.holds();
        let (node, depth) = holds.get_mut(owner)?;
        *depth += 1;
        Some(self.held(node, *depth))
    }
}

#[async_trait]
impl Lock for ZooKeeperLock {
    /// ZooKeeper's recipe has no "try once": a buyer queues, and waits for its predecessor to
    /// go. One attempt is a place in line given up at once.
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        match self.take(cx, Instant::now()).await {
            Ok(held) => Ok(Attempt::Acquired(held)),
            // The recipe never says `Lost`, nor that a waiter died (its session ends and takes
            // its node with it); all mean someone else holds the lock.
            Err(
                LockError::Timeout | LockError::Lost | LockError::WaiterDied | LockError::Abandoned,
            ) => Ok(Attempt::Busy { lease_left: None }),
            Err(LockError::HolderDied) => Ok(Attempt::HolderDied),
            Err(LockError::Store(err)) => Err(err),
        }
    }

    /// Its own acquire, which knows its waiters (the instance's line is for the Redis tiers).
    async fn acquire_again(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        self.acquire(cx).await
    }

    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        if let Some(held) = self.reenter(cx.owner) {
            return Ok(held);
        }
        // Before the claimant queues (where `zk-node-down` strikes).
        cx.at(Point::BeforeAttempt).await;
        let held = self
            .take(cx, Instant::now() + cx.settings.wait_deadline())
            .await?;
        // A session fault struck inside the acquire is recorded now that it took the lock.
        if reconnect(cx).is_some() {
            cx.at(Point::AfterAttempt { took: true }).await;
        }
        Ok(held)
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        let node = {
            let mut holds = self.holds();
            let Some((_, depth)) = holds.get_mut(cx.owner) else {
                return Ok(());
            };
            *depth -= 1;
            if *depth > 0 {
                return Ok(());
            }
            holds.remove(cx.owner).map(|(node, _)| node)
        };
        let Some(node) = node else { return Ok(()) };
        let session = zookeeper(cx)?
            .opened()
            .ok_or_else(|| unavailable("no session to release with"))?;
        let loss = match cx.at(Point::BeforeDelete).await {
            Go::DeleteLost { retried: false } => DeleteLoss::Forgotten,
            Go::DeleteLost { retried: true } => DeleteLoss::Retried,
            _ => DeleteLoss::None,
        };
        match session
            .release_meeting(&node, loss)
            .await
            .map_err(store_error)?
        {
            Released::Deleted => Ok(()),
            // The session expired while the holder worked: its node, and the lock, were gone.
            Released::Lost => cx.lost_release().await,
        }
    }

    fn reentrant(&self) -> bool {
        true
    }
}

impl ZooKeeperLock {
    /// Queues for the room's lock until `deadline`.
    async fn take(&self, cx: &LockCx<'_>, deadline: Instant) -> Result<Held, LockError> {
        let session = zookeeper(cx)?
            .session(deadline)
            .await
            .map_err(store_error)?;
        let room = cx.keys.room();
        let taking = match reconnect(cx) {
            Some(reconnect) => {
                session
                    .lock_across_reconnect(room, cx.owner, deadline, reconnect)
                    .await
            }
            None => session.lock(room, cx.owner, deadline).await,
        };
        let node = match taking {
            Ok(node) => node,
            Err(ZkError::Timeout) => return Err(LockError::Timeout),
            Err(err) => return Err(LockError::Store(store_error(err))),
        };
        let held = self.held(&node, 1);
        self.holds().insert(cx.owner.to_owned(), (node, 1));
        Ok(held)
    }
}

/// The session given up as this sale queues, when it claimed a `reconnect-*` fault.
fn reconnect(cx: &LockCx<'_>) -> Option<Reconnect> {
    let fault = cx.hook.and_then(|hook| hook.claimed_store_fault())?;
    let old_node = match fault.kind {
        FaultKind::ReconnectKeepsNode => OldNode::Kept,
        FaultKind::ReconnectChecksOwner => OldNode::Checked,
        _ => return None,
    };
    Some(Reconnect {
        linger: std::time::Duration::from_millis(fault.ms),
        old_node,
    })
}

fn zookeeper<'a>(cx: &LockCx<'a>) -> Result<&'a ZkStore, StoreError> {
    cx.store
        .zookeeper()
        .ok_or_else(|| unavailable("this instance was given no ZooKeeper (--zookeeper)"))
}

fn store_error(err: ZkError) -> StoreError {
    match err {
        ZkError::Unreachable(why) => StoreError::ZooKeeper(why),
        ZkError::Timeout => StoreError::ZooKeeper("no answer before the deadline".into()),
        ZkError::Failed(err) => StoreError::ZooKeeper(err.to_string()),
    }
}

fn unavailable(why: &str) -> StoreError {
    StoreError::ZooKeeper(why.to_owned())
}
