//! The room as `GET /state` shows it, and as every `/events` `state` event starts: one type
//! for both ([`StateView`], from the API crate), so the dashboard and API clients read the
//! same document.

pub use oversell_api::StateView;

use crate::fleet::RoomConfig;
use crate::ground_truth::GroundTruth;
use crate::keys::Keys;
use crate::lock_store::nodes::LockStoreView;
use crate::rooms::RoomStatus;

/// The view of a room from what this instance read of it.
pub fn state_view(
    instance: &str,
    keys: &Keys,
    room: &RoomConfig,
    truth: GroundTruth,
    status: RoomStatus,
    lock_store: LockStoreView,
    network: Option<oversell_api::NetworkView>,
    containers: Option<oversell_api::state::ContainersView>,
) -> StateView {
    StateView {
        instance: instance.to_owned(),
        room: keys.room().to_owned(),
        status,
        tier: room.settings.tier,
        settings: room.settings,
        faults: room.faults.to_vec(),
        truth,
        lock_store,
        network,
        containers,
    }
}
