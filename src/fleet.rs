//! Fleet-wide settings: each room's tier and run-time config live in Redis, and every instance
//! keeps a copy that a control message refreshes, so a switch made through any instance reaches
//! all of them within one pub/sub hop.
//!
//! The same subscriber connection also carries the lock-release messages that wake waiters.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::StreamExt;

use crate::keys::{Keys, CONTROL_CHANNEL, RELEASED_PATTERN};
use crate::lock::ReleaseSignals;
use crate::redis_pool::{RedisPool, StoreError};
use crate::settings::{Settings, SettingsPatch};

pub struct Fleet {
    redis: RedisPool,
    /// What a room starts with when Redis has no settings for it yet (from the flags).
    defaults: Settings,
    /// This instance's copy per room. A std `RwLock`: read on every sale, written on control
    /// messages, never held across `.await`.
    cache: RwLock<HashMap<String, Settings>>,
}

impl Fleet {
    pub fn new(redis: RedisPool, defaults: Settings) -> Self {
        Fleet {
            redis,
            defaults,
            cache: RwLock::default(),
        }
    }

    /// The room's settings: the cached copy, or loaded (and seeded if absent) from Redis.
    pub async fn settings(&self, keys: &Keys) -> Result<Settings, StoreError> {
        if let Some(settings) = self.cached(keys.room()) {
            return Ok(settings);
        }
        self.load(keys).await
    }

    fn cached(&self, room: &str) -> Option<Settings> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        cache.get(room).copied()
    }

    fn remember(&self, room: &str, settings: Settings) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        cache.insert(room.to_owned(), settings);
    }

    /// Reads the room's settings from Redis; the first instance to ask seeds them from its flags.
    async fn load(&self, keys: &Keys) -> Result<Settings, StoreError> {
        let seed = serde_json::to_string(&self.defaults).expect("settings serialize");
        let mut conn = self.redis.conn().await?;
        let (stored,): (String,) = redis::pipe()
            .cmd("SET")
            .arg(keys.settings())
            .arg(&seed)
            .arg("NX")
            .ignore()
            .get(keys.settings())
            .query_async(&mut conn)
            .await?;
        let settings = match serde_json::from_str::<Settings>(&stored) {
            Ok(s) if s.validate().is_ok() => s,
            _ => {
                tracing::warn!(room = keys.room(), %stored, "unreadable settings in redis; using defaults");
                self.defaults
            }
        };
        self.remember(keys.room(), settings);
        Ok(settings)
    }

    /// Applies a patch, stores it and tells the fleet.
    pub async fn update(
        &self,
        keys: &Keys,
        patch: &SettingsPatch,
    ) -> Result<Result<Settings, String>, StoreError> {
        let current = self.load(keys).await?;
        let next = match current.patched(patch) {
            Ok(next) => next,
            Err(msg) => return Ok(Err(msg)),
        };
        let json = serde_json::to_string(&next).expect("settings serialize");
        let mut conn = self.redis.conn().await?;
        let _: () = redis::pipe()
            .atomic()
            .set(keys.settings(), json)
            .ignore()
            .publish(CONTROL_CHANNEL, keys.room())
            .ignore()
            .query_async(&mut conn)
            .await?;
        self.remember(keys.room(), next);
        Ok(Ok(next))
    }

    async fn reload_known_rooms(&self) {
        let rooms: Vec<String> = {
            let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
            cache.keys().cloned().collect()
        };
        for room in rooms {
            if let Err(err) = self.load(&Keys::for_room(&room)).await {
                tracing::warn!(%err, room, "could not reload settings");
            }
        }
    }

    /// Listens for control and release messages until the task is aborted, reconnecting with
    /// backoff when Redis goes away. Settings are reloaded after every (re)connect, because
    /// messages sent while disconnected are lost.
    pub fn spawn_subscriber(
        self: &Arc<Self>,
        signals: Arc<ReleaseSignals>,
    ) -> tokio::task::JoinHandle<()> {
        let fleet = Arc::clone(self);
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(100);
            loop {
                match fleet.subscribe_once(&signals).await {
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

    async fn subscribe_once(&self, signals: &ReleaseSignals) -> Result<(), redis::RedisError> {
        let mut pubsub = self.redis.client().get_async_pubsub().await?;
        pubsub.subscribe(CONTROL_CHANNEL).await?;
        pubsub.psubscribe(RELEASED_PATTERN).await?;
        self.reload_known_rooms().await;
        let mut messages = pubsub.into_on_message();
        while let Some(msg) = messages.next().await {
            let channel = msg.get_channel_name();
            if channel == CONTROL_CHANNEL {
                let room: String = msg.get_payload().unwrap_or_default();
                if let Err(err) = self.load(&Keys::for_room(&room)).await {
                    tracing::warn!(%err, room, "could not reload settings");
                }
            } else if let Some(room) = Keys::room_of(channel) {
                signals.released(room);
            }
        }
        Ok(())
    }
}
