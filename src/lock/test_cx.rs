//! A [`LockCx`] for unit tests: every part of it owned here, no hook.

use oversell_api::settings::{LeaseMode, Settings, WaitStrategy};
use oversell_api::tier::Tier;

use super::{LockCx, ReleaseSignals};
use crate::keys::Keys;
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::redis_pool::RedisPool;

/// Where nothing listens: a pool connects only when asked for a connection, so a test whose
/// lock never sends anything can name this.
pub const NOWHERE: &str = "redis://127.0.0.1:1";

/// The owner every test acquire is made by.
pub const OWNER: &str = "o1";

pub struct TestCx {
    pub store: LockStore,
    pub resource: RedisPool,
    pub keys: Keys,
    pub settings: Settings,
    pub signals: ReleaseSignals,
    metrics: Metrics,
}

impl TestCx {
    /// Room `test`, the stock's Redis at `resource`, the locks in `store`.
    pub fn new(store: LockStore, resource: RedisPool, settings: Settings) -> TestCx {
        TestCx {
            store,
            resource,
            keys: Keys::for_room("test"),
            settings,
            signals: ReleaseSignals::default(),
            metrics: Metrics::new("i1"),
        }
    }

    pub fn cx(&self) -> LockCx<'_> {
        LockCx {
            store: &self.store,
            resource: &self.resource,
            keys: &self.keys,
            settings: &self.settings,
            owner: OWNER,
            sends_as: None,
            instance: "i1",
            signals: &self.signals,
            metrics: &self.metrics,
            hook: None,
            read: None,
            generation: "",
            parked: None,
        }
    }
}

/// A fixed lease (no watchdog), no replicas to wait for, waiting as `wait` says.
pub fn settings(wait: WaitStrategy, deadline_ms: u64) -> Settings {
    Settings {
        tier: Tier::LuaRelease,
        ttl_ms: 1_000,
        business_ms: 0,
        wait,
        wait_deadline_ms: deadline_ms,
        sync_replicas: 0,
        sync_timeout_ms: 1_000,
        lease: LeaseMode::Fixed,
    }
}
