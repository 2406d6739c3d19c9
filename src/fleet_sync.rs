//! What the whole fleet shares through Redis: each room's settings (tier, lease, business time,
//! wait) and armed faults, pushed to every instance over pub/sub so a change made through any
//! instance reaches all of them within one hop; the registry of live instances; and the
//! control messages that crash or freeze one instance from the admin API.
//!
//! Lock-release messages are not here: they are published in the lock store, and
//! `lock_store::LockStore::spawn_release_listener` hears them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use oversell_api::settings::{Settings, SettingsPatch};

use crate::control::Control;
use crate::faults::{self, Fault};
use crate::keys::{self, Keys, CONTROL_CHANNEL, INSTANCES};
use crate::lab::LabLock;
use crate::redis_pool::{RedisPool, StoreError};

/// How often an instance says it is alive, and how long until it counts as gone.
const HEARTBEAT: Duration = Duration::from_secs(1);
pub const ALIVE_WITHIN_MS: i64 = 3_000;

static HEARTBEAT_SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("heartbeat.lua")));
static SETTINGS_SWAP: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("settings_swap.lua")));
/// Patches re-applied after losing a race before the update gives up with a 503.
const SWAP_ATTEMPTS: usize = 16;
/// How long a change made through the admin API waits for every live instance to have read
/// the room again before it is answered. An instance that is frozen or just killed still
/// counts as live for a few seconds: past this the change is answered anyway, and logged.
const RELOAD_DEADLINE: Duration = Duration::from_secs(2);
/// How often the waiting instance looks at who has reloaded.
const RELOAD_LOOK: Duration = Duration::from_millis(5);
/// How long an acknowledgement list outlives its change.
const RELOAD_ACKS_KEPT_MS: u64 = 10_000;

/// One room as this instance knows it.
#[derive(Debug, Clone)]
pub struct RoomConfig {
    pub settings: Settings,
    /// Armed faults; shared so a sale can hold them without copying.
    pub faults: Arc<[Fault]>,
    /// A lock-store fault was claimed and has not struck yet: sales wait for it (see `sale`).
    pub store_fault_pending: bool,
    /// Whether Redis holds the room's settings; `false`: nobody created the room, these are
    /// this instance's flags.
    pub stored: bool,
    /// The room's reset generation (empty when it has none). A reset reloads the room on
    /// every instance, so a sale that began before it carries the old one and its write is
    /// refused (`sale/commit.lua`).
    pub generation: String,
    /// The room's own lock (the lab's `custom` tier), if it submitted one.
    pub lab: Option<Arc<LabLock>>,
}

/// A room as Redis holds it: settings (JSON), armed faults, whether a store fault is pending,
/// reset generation, and its own lock's source and user password.
type StoredRoom = (
    Option<String>,
    Vec<(String, String)>,
    bool,
    Option<String>,
    (Option<String>, Option<String>),
);

/// This instance's link to what the fleet shares (named apart from the launcher's
/// `local_fleet::Fleet`, the local topology of processes).
pub struct FleetSync {
    resource: RedisPool,
    instance: String,
    /// What a room starts with when Redis has no settings for it yet (from the flags).
    defaults: Settings,
    /// This instance's copy per room, with the number of the load it came from. A std
    /// `RwLock`: read on every sale, written on control messages, never held across `.await`.
    cache: RwLock<HashMap<String, (u64, RoomConfig)>>,
    /// Numbers each load as it starts. Two loads of one room can overlap (a sale's read and a
    /// reload message's); the one that started later read Redis later, so an earlier one that
    /// lands after it must not overwrite it — or a fault armed between the two reads would be
    /// lost on this instance until the next change.
    loads: AtomicU64,
}

impl FleetSync {
    pub fn new(resource: RedisPool, instance: &str, defaults: Settings) -> Self {
        FleetSync {
            resource,
            instance: instance.to_owned(),
            defaults,
            cache: RwLock::default(),
            loads: AtomicU64::new(0),
        }
    }

    /// The room's settings and faults: the cached copy, or loaded from Redis.
    pub async fn room(&self, keys: &Keys) -> Result<RoomConfig, StoreError> {
        if let Some(room) = self.cached(keys.room()) {
            return Ok(room);
        }
        self.load(keys).await
    }

    pub async fn settings(&self, keys: &Keys) -> Result<Settings, StoreError> {
        Ok(self.room(keys).await?.settings)
    }

    fn cached(&self, room: &str) -> Option<RoomConfig> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        cache.get(room).map(|(_, config)| config.clone())
    }

    /// Keeps `config` unless a load that started later has already landed.
    fn remember(&self, room: &str, load: u64, config: RoomConfig) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        match cache.get(room) {
            Some((newer, _)) if *newer > load => {}
            _ => {
                cache.insert(room.to_owned(), (load, config));
            }
        }
    }

    /// Reads the room from Redis. A read creates nothing: a room with no stored settings gets
    /// this instance's flags, and is not cached (so reading many made-up rooms costs no memory
    /// here, and the room's creation is picked up at the next read).
    async fn load(&self, keys: &Keys) -> Result<RoomConfig, StoreError> {
        let mut conn = self.resource.conn().await?;
        let load = self.loads.fetch_add(1, Ordering::Relaxed);
        let (stored, faults, pending, generation, (lab, password)): StoredRoom = redis::pipe()
            .get(keys.settings())
            .hgetall(keys.faults())
            .exists(keys.store_fault_pending())
            .get(keys.generation())
            .cmd("HMGET")
            .arg(keys.lab())
            .arg("lock")
            .arg("password")
            .query_async(&mut conn)
            .await?;
        let settings = self.settings_from(keys, stored.as_deref());
        let config = RoomConfig {
            settings,
            faults: faults::decode_all(&faults).into(),
            store_fault_pending: pending,
            stored: stored.is_some(),
            generation: generation.unwrap_or_default(),
            lab: LabLock::from_stored(keys, lab, password).map(Arc::new),
        };
        if config.stored {
            self.remember(keys.room(), load, config.clone());
        } else {
            self.forget(keys.room(), load);
        }
        Ok(config)
    }

    /// The stored settings, or this instance's defaults when none (or unreadable ones) are.
    fn settings_from(&self, keys: &Keys, stored: Option<&str>) -> Settings {
        match stored.map(serde_json::from_str::<Settings>) {
            Some(Ok(s)) if s.validate().is_ok() => s,
            None => self.defaults,
            Some(_) => {
                tracing::warn!(
                    room = keys.room(),
                    ?stored,
                    "unreadable settings in redis; using defaults"
                );
                self.defaults
            }
        }
    }

    /// Reads the room from Redis again (after a write of this instance's was refused because
    /// of a reset it had not heard of).
    pub async fn reload(&self, keys: &Keys) -> Result<RoomConfig, StoreError> {
        self.load(keys).await
    }

    fn forget(&self, room: &str, load: u64) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        if cache.get(room).is_some_and(|(newer, _)| *newer < load) {
            cache.remove(room);
        }
    }

    /// Stores this instance's flags as the room's settings unless it has some: a reset creates
    /// the room with the settings every instance will then read.
    pub async fn seed(&self, keys: &Keys) -> Result<(), StoreError> {
        let seed = serde_json::to_string(&self.defaults).map_err(|e| {
            let kind = redis::ErrorKind::Client;
            StoreError::Failed((kind, "settings do not serialize", e.to_string()).into())
        })?;
        let mut conn = self.resource.conn().await?;
        let _: Option<String> = redis::cmd("SET")
            .arg(keys.settings())
            .arg(seed)
            .arg("NX")
            .query_async(&mut conn)
            .await?;
        self.load(keys).await?;
        Ok(())
    }

    /// Applies a patch to the room's settings, stores it and tells the fleet. The inner error
    /// is a validation message for the client.
    pub async fn update(
        &self,
        keys: &Keys,
        patch: &SettingsPatch,
    ) -> Result<Result<Settings, String>, StoreError> {
        let ack = uuid::Uuid::new_v4().simple().to_string();
        let reload = Control::reload_acked(keys.room(), &ack).to_json();
        let mut conn = self.resource.conn().await?;
        for _ in 0..SWAP_ATTEMPTS {
            let stored: Option<String> = redis::cmd("GET")
                .arg(keys.settings())
                .query_async(&mut conn)
                .await?;
            let next = match self.settings_from(keys, stored.as_deref()).patched(patch) {
                Ok(next) => next,
                Err(msg) => return Ok(Err(msg)),
            };
            let json = serde_json::to_string(&next).expect("settings serialize");
            let swapped: i64 = SETTINGS_SWAP
                .key(keys.settings())
                .arg(stored.unwrap_or_default())
                .arg(json)
                .arg(CONTROL_CHANNEL)
                .arg(&reload)
                .invoke_async(&mut conn)
                .await?;
            if swapped == 1 {
                self.load(keys).await?;
                self.await_reloads(keys.room(), &ack).await?;
                return Ok(Ok(next));
            }
        }
        Err(StoreError::Unavailable(format!(
            "the room's settings changed {SWAP_ATTEMPTS} times while this patch was applied; try again"
        )))
    }

    /// Sends a control message to the fleet. A reload is applied here at once and answered
    /// when every live instance has applied it too (see [`Self::await_reloads`]).
    pub async fn broadcast(&self, message: &Control) -> Result<(), StoreError> {
        let ack = uuid::Uuid::new_v4().simple().to_string();
        let message = match message {
            Control::Reload { room, .. } => Control::reload_acked(room, &ack),
            other => other.clone(),
        };
        let mut conn = self.resource.conn().await?;
        let _: i64 = redis::cmd("PUBLISH")
            .arg(CONTROL_CHANNEL)
            .arg(message.to_json())
            .query_async(&mut conn)
            .await?;
        if let Control::Reload { room, .. } = &message {
            self.load(&Keys::for_room(room)).await?;
            self.await_reloads(room, &ack).await?;
        }
        Ok(())
    }

    /// Waits until every live instance has read the room again after the change `ack` names,
    /// so that a change answered is the one every instance sells under: a student's lock
    /// submitted and then tried, or a tier switched and then measured, never meets an
    /// instance still on the old one. Bounded by [`RELOAD_DEADLINE`].
    async fn await_reloads(&self, room: &str, ack: &str) -> Result<(), StoreError> {
        let acks = keys::reload_acks(ack);
        let deadline = tokio::time::Instant::now() + RELOAD_DEADLINE;
        let mut conn = self.resource.conn().await?;
        loop {
            let live = self.live_instances().await?;
            let reloaded: Vec<String> = redis::cmd("LRANGE")
                .arg(&acks)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await?;
            let behind: Vec<&str> = live
                .iter()
                .map(|(id, _)| id.as_str())
                .filter(|id| !reloaded.iter().any(|r| r == id))
                .collect();
            if behind.is_empty() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    room,
                    ?behind,
                    "answering a change some live instances have not read yet"
                );
                return Ok(());
            }
            tokio::time::sleep(RELOAD_LOOK).await;
        }
    }

    /// Says this instance has read the room again after the change `ack` names.
    async fn acknowledge(&self, ack: &str) -> Result<(), StoreError> {
        let acks = keys::reload_acks(ack);
        let mut conn = self.resource.conn().await?;
        let () = redis::pipe()
            .rpush(&acks, &self.instance)
            .ignore()
            .pexpire(&acks, RELOAD_ACKS_KEPT_MS as i64)
            .ignore()
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// Instance ids with a heartbeat in the last few seconds, and how long ago (ms).
    pub async fn live_instances(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let mut conn = self.resource.conn().await?;
        let (now, seen): (Vec<i64>, Vec<(String, i64)>) = redis::pipe()
            .cmd("TIME")
            .zrangebyscore_withscores(INSTANCES, "-inf", "+inf")
            .query_async(&mut conn)
            .await?;
        let now_ms =
            now.first().copied().unwrap_or(0) * 1000 + now.get(1).copied().unwrap_or(0) / 1000;
        Ok(seen
            .into_iter()
            .map(|(id, at)| (id, now_ms - at))
            .filter(|(_, ago)| *ago <= ALIVE_WITHIN_MS)
            .collect())
    }

    async fn handle(&self, message: Control) {
        match message {
            Control::Reload { room, ack } => {
                if let Err(err) = self.load(&Keys::for_room(&room)).await {
                    tracing::warn!(%err, room, "could not reload room");
                } else if let Some(ack) = ack {
                    if let Err(err) = self.acknowledge(&ack).await {
                        tracing::debug!(%err, room, "could not say the room was reloaded");
                    }
                }
            }
            Control::Crash { instance } if instance == self.instance => {
                faults::crash("admin asked this instance to crash")
            }
            Control::Freeze { instance, ms } if instance == self.instance => {
                faults::freeze(Duration::from_millis(ms))
            }
            Control::Crash { .. } | Control::Freeze { .. } => {}
        }
    }

    async fn reload_known_rooms(&self) {
        let rooms: Vec<String> = {
            let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
            cache.keys().cloned().collect()
        };
        for room in rooms {
            self.handle(Control::reload(&room)).await;
        }
    }

    /// Listens for control messages until aborted, reconnecting with backoff when Redis goes
    /// away. Rooms are reloaded after every (re)connect, because messages sent while
    /// disconnected are lost.
    pub fn spawn_subscriber(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let fleet = Arc::clone(self);
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(100);
            loop {
                match fleet.subscribe_once().await {
                    Ok(()) => {
                        tracing::warn!("pub/sub connection closed; reconnecting");
                        backoff = Duration::from_millis(100);
                    }
                    Err(err) => tracing::debug!(%err, "pub/sub connect failed; retrying"),
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        })
    }

    async fn subscribe_once(&self) -> Result<(), redis::RedisError> {
        let mut pubsub = self.resource.pubsub().await?;
        pubsub.subscribe(CONTROL_CHANNEL).await?;
        self.reload_known_rooms().await;
        let mut messages = pubsub.into_on_message();
        while let Some(msg) = messages.next().await {
            let payload: String = msg.get_payload().unwrap_or_default();
            match serde_json::from_str::<Control>(&payload) {
                Ok(message) => self.handle(message).await,
                Err(err) => tracing::warn!(%err, payload, "ignoring a bad control message"),
            }
        }
        Ok(())
    }

    /// Says "alive" every second so the admin API can list and target instances.
    pub fn spawn_heartbeat(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let fleet = Arc::clone(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(HEARTBEAT);
            loop {
                ticks.tick().await;
                if let Err(err) = fleet.beat().await {
                    tracing::debug!(%err, "heartbeat failed");
                }
            }
        })
    }

    async fn beat(&self) -> Result<(), StoreError> {
        let mut conn = self.resource.conn().await?;
        let _: i64 = HEARTBEAT_SCRIPT
            .key(INSTANCES)
            .arg(&self.instance)
            .invoke_async(&mut conn)
            .await?;
        Ok(())
    }
}
