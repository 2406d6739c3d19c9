//! The room as `GET /state` shows it, and as every `/events` `state` event starts: one type
//! for both ([`StateView`], from the API crate), so the dashboard and API clients read the
//! same document.

pub use oversell_api::StateView;

use crate::fleet_sync::RoomConfig;
use crate::ground_truth::GroundTruth;
use crate::keys::Keys;
use crate::lock_store::nodes::LockStoreView;
use crate::redis_pool::StoreError;
use crate::rooms::RoomStatus;
use crate::state::AppState;

/// Where the room runs, beside its figures: the lock store, the fleet's own network (netns)
/// and the fleet's containers (compose).
pub struct Where {
    pub lock_store: LockStoreView,
    pub network: Option<oversell_api::NetworkView>,
    pub containers: Option<oversell_api::state::ContainersView>,
}

/// The room's ground truth and where it runs, read together: what `GET /state` and each live
/// view of a room (`feed`) read before they judge the room and build its view.
pub async fn read_room(state: &AppState, keys: &Keys) -> Result<(GroundTruth, Where), StoreError> {
    let (truth, lock_store, network) = tokio::join!(
        crate::ground_truth::read(&state.resource, &state.lock_store, keys),
        state.lock_store.describe(keys),
        state.network_view()
    );
    let place = Where {
        lock_store,
        network,
        containers: state.containers.as_ref().map(|c| c.view()),
    };
    Ok((truth?, place))
}

/// The view of a room from what this instance read of it.
pub fn state_view(
    instance: &str,
    keys: &Keys,
    room: &RoomConfig,
    truth: GroundTruth,
    status: RoomStatus,
    place: Where,
) -> StateView {
    StateView {
        instance: instance.to_owned(),
        room: keys.room().to_owned(),
        status,
        tier: room.settings.tier,
        settings: room.settings,
        faults: room.faults.to_vec(),
        truth,
        lock_store: place.lock_store,
        network: place.network,
        containers: place.containers,
    }
}
