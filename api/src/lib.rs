//! The contract between oversell's service, its load generator (`loadtest`) and its
//! dashboard, written once as types: which tiers exist and what each needs, the room's
//! settings, the faults, a burst's request and report, the document `GET /state` (and
//! every `/events` `state` event) returns, and the lines of a run's history, which the
//! service and the recorder write and the checker reads.
//!
//! Pure data and validation, no I/O: the service builds these from Redis, `loadtest` reads
//! them back with serde, and the dashboard gets the tier list from `GET /tiers`.

pub mod burst;
pub mod fault;
pub mod grade;
pub mod history;
pub mod member;
pub mod settings;
pub mod state;
pub mod store;
pub mod tier;

pub use burst::{BurstReport, BurstRequest, Via};
pub use fault::{Fault, FaultKind};
pub use settings::{LeaseMode, Settings, SettingsPatch, WaitStrategy};
pub use state::{
    GroundTruth, LockView, NetworkView, PartitionRequest, PartitionView, RoomStatus, StateView,
};
pub use store::{LockStoreKind, Persistence};
pub use tier::{Beside, Tier};
