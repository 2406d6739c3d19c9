//! The lock-store faults, at the two moments they strike a sale that claimed one:
//! just before each acquire attempt, and right after the acquire succeeds.

use super::LockCx;
use crate::faults::{Fault, FaultKind};
use crate::ground_truth::record;
use crate::lock_store::chaos as store;

/// `failover`: hold the primary's replicas off, so the lock written by this attempt stays on
/// the primary alone. They resume when the returned guard is dropped, after the attempt.
pub(super) async fn before_attempt(cx: &LockCx<'_>, fault: &Fault) -> Option<store::HeldReplicas> {
    if fault.kind != FaultKind::Failover {
        return None;
    }
    match store::hold_replicas(cx.store.pool()).await {
        Ok(held) => {
            tracing::debug!(replicas = held.len(), "fault: replicas held off");
            Some(held)
        }
        Err(err) => {
            tracing::warn!(%err, "fault: could not hold the replicas off");
            None
        }
    }
}

/// `failover` and `lock-store-restart`: kill the lock store's primary at once (SIGKILL), with
/// the lock just taken on it. Sentinel then promotes the replica, or the supervisor restarts
/// the single Redis with its persistence setting.
pub(super) async fn after_acquire(cx: &LockCx<'_>, fault: &Fault) {
    match store::kill_primary(cx.store.pool()).await {
        Ok(node) => {
            tracing::warn!(fault = %fault.kind, %node, "fault: lock store primary killed");
            let recorded = record::store_fault(
                cx.truth,
                cx.keys,
                cx.instance,
                cx.owner,
                fault.kind.id(),
                &node,
            )
            .await;
            if let Err(err) = recorded {
                tracing::warn!(%err, "store fault not recorded");
            }
            // The other buyers, waiting for the strike, may go now.
            if let Err(err) = struck(cx).await {
                tracing::warn!(%err, "store fault still marked pending");
            }
        }
        Err(err) => tracing::error!(%err, fault = %fault.kind, "fault: could not kill the primary"),
    }
}

/// Clears the pending mark and tells every instance to reload the room, so their sales stop
/// waiting for a strike that has happened.
async fn struck(cx: &LockCx<'_>) -> Result<(), crate::redis_pool::StoreError> {
    let mut conn = cx.truth.conn().await?;
    let _: () = redis::pipe()
        .del(cx.keys.store_fault_pending())
        .ignore()
        .publish(
            crate::keys::CONTROL_CHANNEL,
            crate::control::Control::reload(cx.keys.room()).to_json(),
        )
        .ignore()
        .query_async(&mut conn)
        .await?;
    Ok(())
}
