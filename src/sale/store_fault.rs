//! A lock-store fault meets the next holder: a sale claims it before its acquire, or waits
//! for the claimant to strike.

use std::time::{Duration, Instant};

use crate::faults::{self, Fault, FaultKind, FaultPoints};
use crate::redis_pool::StoreError;

use super::SaleCx;

/// Claims a lock-store fault armed for this sale's acquire, if any (no round trip when none
/// is armed).
///
/// The fault is meant for the next holder. A sale that finds one armed but loses the claim
/// waits until the claimant has struck (or `faults::STORE_FAULT_PENDING` has passed): the claimant spends
/// a few round trips holding the replicas off, and on a busy machine another buyer would
/// otherwise take the lock first, normally replicated, and the fault would strike whoever
/// came after.
pub(super) async fn claim_store_fault(cx: &SaleCx<'_>, faults: &FaultPoints<'_>) -> Option<Fault> {
    let mut lost = false;
    let store_faults = FaultKind::ALL
        .into_iter()
        .filter(|k| k.strikes_lock_store());
    for kind in store_faults {
        if !faults.is_armed(kind) {
            continue;
        }
        match faults.claim(kind).await {
            // The claim marked it pending, in the same step.
            Some(fault) => return Some(fault),
            None => lost = true,
        }
    }
    // `lost`: this sale tried to claim and another won. Or the claim was already known when
    // the sale began: the claimant's reload reached this instance first.
    if lost || cx.store_fault_pending {
        let until = Instant::now() + faults::STORE_FAULT_PENDING;
        while Instant::now() < until && strike_pending(cx).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    None
}

/// Whether a claimed lock-store fault has yet to strike (a store error counts as no).
async fn strike_pending(cx: &SaleCx<'_>) -> bool {
    let asked = async {
        let mut conn = cx.resource.conn().await?;
        let pending: bool = redis::cmd("EXISTS")
            .arg(cx.keys.store_fault_pending())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(pending)
    };
    asked.await.unwrap_or(false)
}
