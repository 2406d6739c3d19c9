//! `custom` — the lab: the room's own lock, its steps written by students in Lua
//! (`crate::lab` has the contract and the safety rules).
//!
//! # Guarantee
//! Whatever its scripts guarantee, and no more: each step is sent as it stands, as a round
//! trip of its own, so two commands a student split across steps are not atomic, exactly as
//! in the articles. The sale around it is every tier's: the same wait loop, fault points and
//! ground truth, so a lab lock and a built-in tier with the same scripts are judged alike.
//!
//! # Known defect
//! Depends on the scripts: the grader (`POST /admin/lab/grade`) attacks the lock with the
//! ladder's faults and says where it broke. Like every lock here without a fencing token,
//! none survives a holder paused past its lease.
//!
//! Why not a step list inside the built-in tiers: theirs ride with the sale's own scripts in
//! one round trip when the lock shares the stock's server (`riding.rs`); a student's never
//! does, since it never shares that server.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use oversell_api::settings::LeaseMode;
use redis::{Script, Value};

use super::renewals::Renewals;
use super::{between_acquire_steps, Attempt, Held, Keep, Lock, LockCx};
use crate::faults::FaultKind;
use crate::ground_truth::record;
use crate::keys::Keys;
use crate::lab::conns::LabConns;
use crate::lab::runaway::{self, Stopped};
use crate::lab::{LabLock, Released, Step, StepReply, STEP_LIMIT};
use crate::lock_store::LockStore;
use crate::redis_pool::{Conn, RedisPool, StoreError};

#[derive(Default)]
pub struct CustomLock {
    conns: LabConns,
}

#[async_trait]
impl Lock for CustomLock {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        let lab = submitted(cx)?;
        let mut conn = self.conns.conn(cx.store, cx.keys, lab).await?;
        let on = StepEnv::of(cx);
        for (i, step) in lab.acquire.iter().enumerate() {
            if i == 1 {
                if let Some(died) = between_acquire_steps(cx).await {
                    return Ok(died);
                }
            }
            if let StepReply::Stop { lease_left_ms } =
                StepReply::read(&on.run(&mut conn, step).await?)
            {
                return Ok(match lease_left_ms {
                    Some(ms) => Attempt::busy(ms),
                    None => Attempt::Busy { lease_left: None },
                });
            }
        }
        if let Err(err) = cx.replicated(&mut conn).await {
            // Not on enough replicas: give back what was taken, and fail this acquire.
            let _ = self.release(cx, Held::plain()).await;
            return Err(err);
        }
        let keep = match (&lab.renew, cx.settings.lease) {
            (Some(renew), LeaseMode::Watchdog) => Keep::Renewing {
                _renewals: renewals(on, conn, renew),
            },
            _ => Keep::Nothing,
        };
        Ok(Attempt::Acquired(Held {
            _keep: keep,
            ..Held::plain()
        }))
    }

    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError> {
        // Stop renewing before giving the lock back.
        drop(held);
        let lab = submitted(cx)?;
        let mut conn = self.conns.conn(cx.store, cx.keys, lab).await?;
        let on = StepEnv::of(cx);
        for (i, step) in lab.release.iter().enumerate() {
            if i == 1 {
                // Between two release steps: where `uuid-owner`'s lease runs out.
                if let Some(fault) = cx.faults.claim(FaultKind::ReleaseGap).await {
                    tokio::time::sleep(Duration::from_millis(fault.ms)).await;
                }
            }
            let released = Released::read(on.run(&mut conn, step).await?)?;
            if i == 0 && released.before != cx.owner {
                cx.lost_release().await?;
            }
            if let Some(victim) = released.took_anothers(cx.owner) {
                let since = cx.generation;
                record::foreign_release(cx.truth, cx.keys, since, cx.instance, cx.owner, victim)
                    .await?;
            }
            if released.reply != StepReply::GoOn {
                break;
            }
        }
        Ok(())
    }
}

fn submitted<'a>(cx: &LockCx<'a>) -> Result<&'a LabLock, StoreError> {
    cx.lab.ok_or_else(|| {
        StoreError::Lab(
            "this room's tier is custom but it has no lock of its own: submit one first \
             (PUT /admin/lab, or `loadtest lab submit`)"
                .into(),
        )
    })
}

/// What running a step needs, owned, so the renewal task can keep it.
struct StepEnv {
    store: LockStore,
    truth: RedisPool,
    keys: Keys,
    owner: String,
    instance: String,
    ttl_ms: u64,
}

impl StepEnv {
    fn of(cx: &LockCx<'_>) -> StepEnv {
        StepEnv {
            store: cx.store.clone(),
            truth: cx.truth.clone(),
            keys: cx.keys.clone(),
            owner: cx.owner.to_owned(),
            instance: cx.instance.to_owned(),
            ttl_ms: cx.settings.ttl_ms,
        }
    }

    /// Runs one step by the contract: `KEYS[1]` the lock, `ARGV` owner, lease, release
    /// channel. A step Redis refused or that raised an error is the student's to read; one
    /// that ran past [`STEP_LIMIT`] is stopped. Both are noted for `GET /lab`.
    async fn run(&self, conn: &mut Conn, step: &Step) -> Result<Value, StoreError> {
        let sent = self.invoke(conn, &step.script).await;
        let err = match sent {
            Ok(value) => return Ok(value),
            Err(err) => err,
        };
        let why = if err.is_timeout() {
            match runaway::stop(self.store.pool()).await {
                Ok(Stopped::Killed) => format!(
                    "ran longer than {} ms and was stopped (SCRIPT KILL)",
                    STEP_LIMIT.as_millis()
                ),
                Ok(Stopped::StoreRestarted) => format!(
                    "ran longer than {} ms after writing, which SCRIPT KILL cannot stop: the \
                     lock store was shut down without saving and restarted, every lock in it \
                     lost",
                    STEP_LIMIT.as_millis()
                ),
                // Not a script of ours: the store is slow or down.
                Ok(Stopped::NotRunning) | Err(_) => return Err(err.into()),
            }
        } else {
            match StoreError::from(err) {
                StoreError::Failed(err) => crate::lab::as_said(&err),
                // Down, failing over, or busy with another room's runaway: not this step's.
                other => return Err(other),
            }
        };
        let message = format!("{}: {why}", step.name);
        crate::lab::note_error(&self.truth, &self.keys, &message).await;
        Err(StoreError::Lab(message))
    }

    async fn invoke(&self, conn: &mut Conn, script: &Script) -> redis::RedisResult<Value> {
        script
            .key(self.keys.lock())
            .arg(&self.owner)
            .arg(self.ttl_ms)
            .arg(self.keys.released_channel())
            .invoke_async(conn)
            .await
    }
}

/// The renew step on the watchdog's schedule until the hold ends (drop) or the step says the
/// lock is no longer ours.
fn renewals(on: StepEnv, conn: Conn, renew: &Step) -> Renewals {
    let on = Arc::new(on);
    let step = Arc::new(Step {
        name: renew.name.clone(),
        code: renew.code.clone(),
        script: renew.script.clone(),
    });
    let ttl_ms = on.ttl_ms;
    Renewals::every_third_of(ttl_ms, move || {
        let (on, step, mut conn) = (on.clone(), step.clone(), conn.clone());
        async move {
            match on.run(&mut conn, &step).await.as_ref().map(StepReply::read) {
                Ok(StepReply::GoOn) => {
                    let renewed =
                        record::renewal(&on.truth, &on.keys, &on.instance, &on.owner).await;
                    if let Err(err) = renewed {
                        tracing::debug!(%err, "renewal not recorded on the timeline");
                    }
                    true
                }
                Ok(StepReply::Stop { .. }) => false,
                // A failing store may come back while the lease lasts (see the tier
                // `reentrant-watchdog`); a student's error stops nothing either.
                Err(err) => {
                    tracing::warn!(%err, "lab renewal failed; retrying");
                    true
                }
            }
        }
    })
}
