//! What one sale needs from the instance ([`SaleCx`]), and the lock's view of it.

use std::sync::Arc;
use std::time::Instant;

use oversell_api::settings::Settings;

use crate::faults::{Fault, FaultPoints};
use crate::keys::Keys;
use crate::lock::{self, LockCx, ReleaseSignals};
use crate::lock_store::node_faults::HeldReplicas;
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::redis_pool::RedisPool;

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
    pub locks: &'a lock::Locks,
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
    /// The room's own lock, for the `custom` tier.
    pub lab: Option<Arc<crate::lab::LabLock>>,
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

/// The lock's view of a sale; `owner` is the lock's value in Redis (the sale's own owner, or
/// the owner of the cohort that handed the lock to it).
pub(super) fn lock_cx<'a>(
    cx: &'a SaleCx<'_>,
    owner: &'a str,
    faults: &'a FaultPoints<'a>,
    store_fault: &'a std::sync::Mutex<Option<Fault>>,
    held_replicas: &'a std::sync::Mutex<Option<HeldReplicas>>,
) -> LockCx<'a> {
    LockCx {
        store: cx.store,
        resource: cx.resource,
        keys: cx.keys,
        settings: &cx.settings,
        owner,
        instance: cx.instance,
        signals: cx.signals,
        metrics: cx.metrics,
        faults,
        store_fault,
        held_replicas,
        read: None,
        generation: &cx.generation,
        lab: cx.lab.as_deref(),
    }
}
