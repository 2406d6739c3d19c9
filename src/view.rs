//! The room as `GET /state` shows it, and as every `/events` `state` event starts: one type
//! for both, so the dashboard and API clients read the same document.

use serde::Serialize;

use crate::faults::Fault;
use crate::fleet::RoomConfig;
use crate::ground_truth::GroundTruth;
use crate::keys::Keys;
use crate::lock_store::nodes::LockStoreView;
use crate::rooms::RoomStatus;
use crate::settings::Settings;
use crate::tier::Tier;

#[derive(Debug, Clone, Serialize)]
pub struct StateView {
    pub instance: String,
    pub room: String,
    /// `live`, or `absent` (no stock: never stocked, or expired; the figures are zeros). A
    /// lost room has no view: it is a 503 `state_lost`.
    pub status: RoomStatus,
    pub tier: Tier,
    pub settings: Settings,
    /// Faults armed and not yet fired.
    pub faults: Vec<Fault>,
    #[serde(flatten)]
    pub truth: GroundTruth,
    /// Where the lock lives: each node, its role, up or down, and which one holds the lock.
    pub lock_store: LockStoreView,
}

impl StateView {
    pub fn new(
        instance: &str,
        keys: &Keys,
        room: &RoomConfig,
        truth: GroundTruth,
        status: RoomStatus,
        lock_store: LockStoreView,
    ) -> Self {
        StateView {
            instance: instance.to_owned(),
            room: keys.room().to_owned(),
            status,
            tier: room.settings.tier,
            settings: room.settings,
            faults: room.faults.to_vec(),
            truth,
            lock_store,
        }
    }
}
