//! What one sale needs from the instance ([`SaleCx`]), and the lock's view of it: the faults
//! it meets, and the lock-store fault it claims before its acquire, which meets the next
//! holder (a sale claims it, or waits for the claimant to strike).

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversell_api::settings::Settings;

use crate::faults::{self, Fault, FaultKind, FaultPoints};
use crate::keys::Keys;
use crate::lock::{Lock, LockCx, ReleaseSignals};
use crate::lock_store::node_faults::HeldReplicas;
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::redis_pool::{RedisPool, StoreError};

/// What one sale needs from the instance.
pub struct SaleCx<'a> {
    /// The resource store.
    pub resource: &'a RedisPool,
    /// Where the lock lives.
    pub store: &'a LockStore,
    pub keys: &'a Keys,
    pub settings: Settings,
    pub instance: &'a str,
    pub owner: String,
    /// The room's lock (its tier's, or the lab's own); `None` for a tier that takes none.
    pub lock: Option<&'a dyn Lock>,
    pub signals: &'a ReleaseSignals,
    pub metrics: &'a Metrics,
    /// The faults armed for the room when the sale started.
    pub faults: Arc<[Fault]>,
    /// Whether a claimed lock-store fault had yet to strike when the room was last loaded.
    pub store_fault_pending: bool,
    /// The room's reset generation when the sale began (from the room's settings, reloaded
    /// on every instance at a reset): its write, and what its lock's release records, count
    /// only if no reset came since. Empty when the room has none: then nothing is checked.
    pub generation: String,
    /// When this instance began the sale: its write records how long the buyer had been
    /// served by then, waiting for the lock included, so the page can tell a queue's even
    /// waits from a race's long tail.
    pub began: Instant,
}

impl SaleCx<'_> {
    pub(super) fn fault_points(&self) -> FaultPoints<'_> {
        FaultPoints {
            armed: &self.faults,
            resource: self.resource,
            keys: self.keys,
            instance: self.instance,
        }
    }
}

/// The lock's view of a sale, under the sale's own owner (the lock carries another when it was
/// handed over in a cohort: `lock::Section` knows which).
pub(super) fn lock_cx<'a>(
    cx: &'a SaleCx<'_>,
    faults: &'a FaultPoints<'a>,
    store_fault: &'a std::sync::Mutex<Option<Fault>>,
    held_replicas: &'a std::sync::Mutex<Option<HeldReplicas>>,
) -> LockCx<'a> {
    LockCx {
        store: cx.store,
        resource: cx.resource,
        keys: cx.keys,
        settings: &cx.settings,
        owner: &cx.owner,
        instance: cx.instance,
        signals: cx.signals,
        metrics: cx.metrics,
        faults,
        store_fault,
        held_replicas,
        read: None,
        generation: &cx.generation,
        parked: None,
    }
}

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
