//! The room as `GET /state` shows it, and as every `/events` `state` event starts: one
//! document for the dashboard, API clients and the load generator's judges. The figures are
//! the ground truth, read from the resource store, never from what a client was told.

use serde::{Deserialize, Serialize};

use crate::fault::Fault;
use crate::settings::Settings;
use crate::store::LockStoreKind;
use crate::tier::Tier;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The fleet's own network (`oversell up --network netns`): its members and the
    /// partition in force; `None` on loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkView>,
    /// The fleet's containers when it runs on docker compose: every member up and its
    /// address; `None` on `oversell up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<ContainersView>,
}

/// A compose fleet's members, as compose's DNS names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContainersView {
    pub members: Vec<ContainerView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContainerView {
    /// The service's name, which is the member's id (`app1`, `lock1`, `redlock3`, `zk2`).
    pub id: String,
    /// Its address on the compose network.
    pub addr: String,
    /// Whether a supervisor of its own (`oversell member`) does what the faults ask of it.
    pub supervised: bool,
}

/// What a room is right now, as `/state` and the sale path see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RoomStatus {
    /// Stocked: sales run.
    Live,
    /// No stock: never stocked, or expired. A sale is a 409 `not_stocked`.
    Absent,
    /// The store lost the room's state: a sale is a 503 `state_lost` until a reset.
    Lost,
}

/// The figures `GET /state` reports. Counters are written by the sale scripts; `oversold` and
/// `lost_updates` are derived from them when the service reads them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroundTruth {
    /// Whether the stock key exists; without it the figures below are zeros, not facts (see
    /// `rooms` for what a missing stock means).
    #[serde(skip)]
    pub stocked: bool,
    pub stock: i64,
    pub initial_stock: i64,
    /// Entries in the ledger: acknowledged sales.
    pub orders: i64,
    /// Items in those orders (each order may carry qty > 1).
    pub items_sold: i64,
    /// Items sold beyond the initial stock.
    pub oversold: i64,
    /// Items sold that never left the stock counter: `items_sold - (initial - stock)`.
    pub lost_updates: i64,
    /// Pairs of critical sections that ran at the same time.
    pub overlaps: i64,
    pub foreign_releases: i64,
    /// Releases that found the lock gone or someone else's: the holder had lost it unknowingly.
    pub lost_releases: i64,
    /// Lock-store faults that struck (a primary killed).
    pub store_faults: i64,
    /// Redlock acquires that won a majority too late: the time spent asking left the lease no
    /// validity, so the lock was given back on every master and asked for again.
    #[serde(default)]
    pub validity_lapsed: i64,
    pub stale_writes_rejected: i64,
    pub lock_timeouts: i64,
    pub lock: LockView,
}

impl GroundTruth {
    /// Every counter by its name in the document, for judges that name the figure they check.
    pub fn figures(&self) -> [(&'static str, i64); 13] {
        [
            ("stock", self.stock),
            ("initial_stock", self.initial_stock),
            ("orders", self.orders),
            ("items_sold", self.items_sold),
            ("oversold", self.oversold),
            ("lost_updates", self.lost_updates),
            ("overlaps", self.overlaps),
            ("foreign_releases", self.foreign_releases),
            ("lost_releases", self.lost_releases),
            ("store_faults", self.store_faults),
            ("validity_lapsed", self.validity_lapsed),
            ("stale_writes_rejected", self.stale_writes_rejected),
            ("lock_timeouts", self.lock_timeouts),
        ]
    }

    /// One counter by name; `None` if there is no such figure.
    pub fn figure(&self, name: &str) -> Option<i64> {
        self.figures()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }
}

/// The lock key as it is now, in the lock store's primary. `ttl_ms: -1` on a held lock means it
/// has no lease: a holder that died will never release it. `held: false, ttl_ms: None` also
/// when the lock store cannot be reached (see `lock_store` in `/state` for each node).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LockView {
    pub held: bool,
    pub ttl_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LockStoreView {
    pub kind: LockStoreKind,
    pub nodes: Vec<NodeView>,
    /// Empty unless the store is behind Sentinel.
    pub sentinels: Vec<SentinelView>,
    /// ZooKeeper, when the instance has one (the ZooKeeper tiers' lock lives there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zookeeper: Option<ZooKeeperView>,
    /// PostgreSQL, when the instance has one (the database tiers' lock lives there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<PostgresView>,
}

/// The database lock store and the room's advisory lock in it (`pg_locks`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PostgresView {
    pub addr: String,
    /// Whether the server answered.
    pub up: bool,
    /// Sessions holding the room's lock (0 or 1) and sessions queued for it, as the server's
    /// lock table shows them.
    pub holding: u32,
    pub waiting: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ZooKeeperView {
    pub servers: Vec<ZooKeeperServerView>,
    /// The room's lock queue, holder first: the owner id in each node, and its czxid.
    pub queue: Vec<ZooKeeperQueued>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ZooKeeperServerView {
    pub addr: String,
    /// `leader`, `follower` or `standalone` as the server says (`srvr`); `None` when it does not
    /// serve (down, or cut off from its quorum).
    pub mode: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ZooKeeperQueued {
    pub owner: String,
    pub sequence: u64,
    pub czxid: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeView {
    pub addr: String,
    pub up: bool,
    /// `primary` or `replica`, as the node says (`ROLE`); `None` when it does not answer.
    pub role: Option<String>,
    /// `none`, `rdb`, `everysec`, `always` or `written`, read from the node's own config.
    pub persistence: Option<String>,
    /// Whether the room's lock key (string or hash) exists on this node.
    pub holds_lock: bool,
    /// The lock's lease left on this node (ms; -1 = no lease).
    pub lock_ttl_ms: Option<i64>,
    /// The owner id in the room's lock key on this node (not for the reentrant tiers' hash):
    /// on Redlock masters, who holds the lock where.
    pub holder: Option<String>,
    /// How far this node's wall clock (`TIME`) is from this instance's, in ms, rounded to
    /// 100 ms so round-trip noise does not show: a `clock-jump` shows here.
    pub clock_skew_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SentinelView {
    pub addr: String,
    pub up: bool,
    /// The primary this Sentinel names now.
    pub primary: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures' names are the document's own keys: a judge naming one reads what
    /// `/state` shows under that name.
    #[test]
    fn every_figure_is_named_as_the_document_names_it() {
        let truth = GroundTruth {
            stocked: true,
            stock: 1,
            initial_stock: 2,
            orders: 3,
            items_sold: 4,
            oversold: 5,
            lost_updates: 6,
            overlaps: 7,
            foreign_releases: 8,
            lost_releases: 9,
            store_faults: 10,
            validity_lapsed: 13,
            stale_writes_rejected: 11,
            lock_timeouts: 12,
            lock: LockView {
                held: false,
                ttl_ms: None,
            },
        };
        let json = serde_json::to_value(&truth).unwrap();
        for (name, value) in truth.figures() {
            assert_eq!(json[name], value, "{name}");
            assert_eq!(truth.figure(name), Some(value));
        }
        let counters = json.as_object().unwrap().len() - 1; // all but `lock`
        assert_eq!(truth.figures().len(), counters);
        assert_eq!(truth.figure("joy"), None);
    }
}

/// The fleet's own network as `/state` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NetworkView {
    /// Every member with a namespace of its own (`lock1`, `sentinel2`, `app3`, …).
    pub members: Vec<String>,
    /// The partition in force, if any.
    pub partition: Option<PartitionView>,
}

/// A network partition in force (`oversell up --network netns`): which members are cut off
/// from which, and for how much longer. The resource store and nginx are never cut off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PartitionView {
    /// The isolated side, as asked.
    pub isolate: Vec<String>,
    /// Every other member of the network: the side the isolated one cannot reach.
    pub rest: Vec<String>,
    /// How long the cut was asked to last.
    pub ms: u64,
    /// How much of it is left.
    pub left_ms: u64,
}

/// `POST /admin/partition`: cut `isolate` off from the rest of the fleet's network for `ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PartitionRequest {
    pub isolate: Vec<String>,
    pub ms: u64,
}
