//! What one sale needs from the instance ([`SaleCx`]), and the lock's view of it.

use std::time::Instant;

use oversell_api::settings::Settings;

use crate::keys::Keys;
use crate::lock::{LockCx, ReleaseSignals, RoomLock};
use crate::metrics::Metrics;
use crate::redis_pool::RedisPool;

/// What one sale needs from the instance.
pub struct SaleCx<'a> {
    /// The resource store.
    pub resource: &'a RedisPool,
    pub keys: &'a Keys,
    pub settings: Settings,
    pub instance: &'a str,
    pub owner: String,
    /// The room's lock (its tier's, or the lab's own, wrapped in the fault layer when the
    /// room has faults armed); `None` for a tier that takes none.
    pub lock: Option<&'a RoomLock<'a>>,
    pub signals: &'a ReleaseSignals,
    pub metrics: &'a Metrics,
    /// The room's reset generation when the sale began (from the room's settings, reloaded
    /// on every instance at a reset): its write, and what its lock's release records, count
    /// only if no reset came since. Empty when the room has none: then nothing is checked.
    pub generation: &'a str,
    /// When this instance began the sale: its write records how long the buyer had been
    /// served by then, waiting for the lock included, so the page can tell a queue's even
    /// waits from a race's long tail.
    pub began: Instant,
}

/// The lock's view of a sale, under the sale's own owner (the lock carries another when it was
/// handed over in a cohort: `lock::Section` knows which).
pub(super) fn lock_cx<'a>(cx: &'a SaleCx<'_>, lock: &'a RoomLock<'_>) -> LockCx<'a> {
    LockCx {
        store: lock.store(),
        resource: cx.resource,
        keys: cx.keys,
        settings: &cx.settings,
        owner: &cx.owner,
        sends_as: None,
        instance: cx.instance,
        signals: cx.signals,
        metrics: cx.metrics,
        hook: lock.hook(),
        read: None,
        generation: cx.generation,
        parked: None,
    }
}
