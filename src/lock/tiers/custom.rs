//! `custom` — the lab: the room's own lock, its steps written by students in Lua
//! (`crate::lab` has the contract and the safety rules).
//!
//! A step list like the built-in Redis tiers', run by the same engine (`engine.rs`): the same
//! wait loop, fault points, replica check, watchdog and ground truth, so a lab lock and a
//! built-in tier with the same scripts are judged alike. This file only adapts the lab: the
//! room's submitted steps, sent on a connection logged in as the room's user.
//!
//! # Guarantee
//! Whatever its scripts guarantee, and no more: each step is sent as it stands, as a round
//! trip of its own, so two commands a student split across steps are not atomic, exactly as
//! in the articles.
//!
//! # Known defect
//! Depends on the scripts: the grader (`POST /admin/lab/grade`) attacks the lock with the
//! ladder's faults and says where it broke. Like every lock here without a fencing token,
//! none survives a holder paused past its lease.

use std::sync::Arc;

use async_trait::async_trait;

use crate::lab::conns::LabConns;
use crate::lab::{self, LabLock};
use crate::lock::engine::{self, Via};
use crate::lock::steps::{On, Reply, Request, Step, Technique};
use crate::lock::{Attempt, Held, Lock, LockCx};
use crate::redis_pool::StoreError;
use oversell_api::tier::Tier;

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(
        Tier::Custom,
        crate::lock::TierLock::Own(Box::new(CustomLock::default())),
    )]
}

/// The tier's lock: each room's own is made of the steps it submitted ([`Lock::in_room`]).
#[derive(Default)]
pub struct CustomLock {
    conns: LabConns,
}

#[async_trait]
impl Lock for CustomLock {
    /// No room's steps: nothing to take.
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        self.room(None).try_acquire(cx).await
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        self.room(None).release(cx, held).await
    }

    fn in_room<'a>(&'a self, lab: Option<&'a LabLock>) -> Option<Box<dyn Lock + 'a>> {
        Some(Box::new(self.room(lab)))
    }
}

impl CustomLock {
    fn room<'a>(&'a self, lab: Option<&'a LabLock>) -> RoomLab<'a> {
        RoomLab {
            conns: &self.conns,
            lab,
        }
    }
}

/// One room's lock: its submitted steps (`None`: it has none yet), sent on its connection.
struct RoomLab<'a> {
    conns: &'a LabConns,
    lab: Option<&'a LabLock>,
}

#[async_trait]
impl Lock for RoomLab<'_> {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        let lab = self.submitted()?;
        engine::attempt(cx, &LabSteps(lab), Via::Lab(self.conns, lab)).await
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        let lab = self.submitted()?;
        engine::release(cx, &LabSteps(lab), Via::Lab(self.conns, lab), held).await
    }
}

impl RoomLab<'_> {
    fn submitted(&self) -> Result<&LabLock, StoreError> {
        self.lab.ok_or_else(|| {
            StoreError::Lab(
                "this room's tier is custom but it has no lock of its own: submit one first \
                 (PUT /admin/lab, or `loadtest lab submit`)"
                    .into(),
            )
        })
    }
}

/// The room's lock as steps, each read by the lab's contract.
struct LabSteps<'a>(&'a LabLock);

/// The room's steps, each read as `reply` says.
fn steps(steps: &[Arc<lab::Step>], reply: Reply) -> Vec<Step> {
    let step = |lab: &Arc<lab::Step>| Step {
        request: Request::Lab(lab.clone()),
        reply,
    };
    steps.iter().map(step).collect()
}

impl Technique for LabSteps<'_> {
    fn acquire(&self, _on: &On<'_>) -> Vec<Step> {
        steps(&self.0.acquire, Reply::Contract)
    }

    fn release(&self, _on: &On<'_>) -> Vec<Step> {
        steps(&self.0.release, Reply::ContractObserved)
    }

    fn renew(&self, _on: &On<'_>) -> Option<Step> {
        let renew = self.0.renew.as_ref()?;
        steps(std::slice::from_ref(renew), Reply::Contract).pop()
    }
}
