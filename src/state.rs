//! The state every handler shares.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::feed::Feeds;
use crate::fleet_sync::FleetSync;
use crate::grading_queue::GradingQueue;
use crate::lock::{Locks, ReleaseSignals};
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::poll::PollWatch;
use crate::redis_pool::RedisPool;
use crate::rooms::{RoomLimits, Rooms};

/// What an instance bounds for its readers and the fleet's rooms (from the flags).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub rooms: RoomLimits,
    /// Most `/events` streams this instance serves at once.
    pub event_streams: usize,
    /// Rooms the fleet grades at once (the same on every instance).
    pub grading_slots: usize,
}

/// Cheap to clone: one `Arc` around what the instance owns.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    /// The resource store: stock, ledger, ground truth, settings, faults, control channel.
    pub resource: RedisPool,
    /// Where the locks live (the same Redis as `resource` with `--lock-store shared`).
    pub lock_store: LockStore,
    pub instance: String,
    /// Unique per process start, so lock owners of a restarted instance never collide with
    /// those of its previous life.
    pub run_id: String,
    pub admin_token: String,
    /// Reaches the whole fleet (nginx), for server-side bursts and scenarios.
    pub fleet_url: String,
    /// Where students reach the fleet, for the join links of room tokens (`--public-url`);
    /// `None`: the address each request came to.
    pub public_url: Option<String>,
    pub fleet: Arc<FleetSync>,
    /// Room registry, TTLs and lost-state detection; an `Arc` so a TTL renewal can run in a
    /// task of its own.
    pub rooms: Arc<Rooms>,
    /// The `/events` pollers of this instance, one per watched room, and the stream limit.
    pub feeds: Feeds,
    /// The class vote as this instance last read it, for every `/poll/events` stream; an `Arc`
    /// so its watcher runs in a task of its own.
    pub poll: Arc<PollWatch>,
    pub locks: Locks,
    pub signals: Arc<ReleaseSignals>,
    pub metrics: Metrics,
    /// The fleet's line of lab gradings.
    pub grading: GradingQueue,
    /// The keep-alive connections of this instance's calls to the fleet (`fleet_url`): every
    /// grading and scenario run from here shares them.
    pub fleet_calls: FleetCalls,
    /// Buyers of server-side bursts running on this instance, at most
    /// [`MAX_BURST_BUYERS`](oversell_api::burst::MAX_BURST_BUYERS) across every burst.
    pub burst_buyers: Arc<tokio::sync::Semaphore>,
    /// Rooms with a server-side burst running on this instance: one at a time per room, so
    /// that one student's room cannot take every burst buyer of the instance from the others.
    pub burst_rooms: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Set when graceful shutdown begins, so endless responses (SSE) end and let it finish.
    pub stopping: tokio::sync::watch::Sender<bool>,
    /// Work started by a request that outlives it and must get to say how it ended before the
    /// instance exits (the class vote's runs in every room keep, on `stopping`, which rooms
    /// they leave unrun): the instance waits for it, for at most
    /// `startup::BACKGROUND_GRACE`, after its last request.
    pub background: tokio_util::task::TaskTracker,
    /// The compose fleet's members and addresses, looked up in the background; `None` on
    /// `oversell up`.
    pub containers: Option<std::sync::Arc<crate::member::containers::Containers>>,
    sale_seq: AtomicU64,
}

impl AppState {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        resource: RedisPool,
        lock_store: LockStore,
        instance: String,
        admin_token: String,
        fleet_url: String,
        public_url: Option<String>,
        fleet: Arc<FleetSync>,
        signals: Arc<ReleaseSignals>,
        limits: Limits,
    ) -> Self {
        AppState(Arc::new(Shared {
            rooms: Arc::new(Rooms::new(resource.clone(), limits.rooms)),
            feeds: Feeds::new(limits.event_streams),
            poll: Arc::new(PollWatch::new(limits.event_streams)),
            metrics: Metrics::new(&instance),
            grading: GradingQueue::new(resource.clone(), limits.grading_slots),
            fleet_calls: FleetCalls::default(),
            resource,
            lock_store,
            instance,
            run_id: uuid::Uuid::new_v4().simple().to_string(),
            admin_token,
            fleet_url,
            public_url,
            fleet,
            locks: Locks::default(),
            signals,
            burst_buyers: Arc::new(tokio::sync::Semaphore::new(
                oversell_api::burst::MAX_BURST_BUYERS,
            )),
            burst_rooms: std::sync::Mutex::default(),
            stopping: tokio::sync::watch::channel(false).0,
            background: tokio_util::task::TaskTracker::new(),
            containers: crate::member::containers::Containers::watch(),
            sale_seq: AtomicU64::new(0),
        }))
    }

    /// The fleet's own network (namespaces, or compose's containers) and the partition in
    /// force; `None` without one (no round trip).
    pub async fn network_view(&self) -> Option<oversell_api::NetworkView> {
        let (network, _) = crate::member::fleet_network()?;
        let partition = match crate::member::cut::in_force(&self.resource).await {
            Ok(view) => view,
            Err(err) => {
                tracing::debug!(%err, "cannot read the partition in force");
                None
            }
        };
        Some(oversell_api::NetworkView {
            members: network.members.iter().map(|m| m.id.clone()).collect(),
            partition,
        })
    }

    /// A lock owner id unique to this sale: `<run>:<seq>`.
    pub fn next_owner(&self) -> String {
        let seq = self.sale_seq.fetch_add(1, Ordering::Relaxed);
        format!("{}:{seq}", self.run_id)
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The keep-alive connections an instance calls its own fleet with (a chapter's runner polls
/// `/state` every 10 ms while the fleet takes new settings): one pool per instance, cloned by
/// every run, so a class grading at once opens a few connections rather than thousands.
#[derive(Clone, Default)]
pub struct FleetCalls(oversell_client::http::Pool);

impl FleetCalls {
    /// The pool, for a client of the fleet to share.
    pub fn pool(&self) -> oversell_client::http::Pool {
        self.0.clone()
    }
}
