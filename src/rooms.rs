//! The life of a room: created by an admin write under a fleet-wide limit, kept alive by use,
//! expired when idle, and told apart when the resource store lost it.
//!
//! # Created by writes, never by reads
//! A room comes into being with the first admin write that names it (`/admin/reset`,
//! `/admin/config`, `/admin/tier`, `/admin/faults`). That write registers it in [`ROOMS`], a
//! sorted set of room by expiry time, refused past `--max-rooms` (409 `room_limit`). `GET
//! /state`, `/ledger` and `/events` only read: a room nobody created answers with the
//! instance's default settings and no stock, and leaves no key behind.
//!
//! # Idle rooms expire
//! Every key of a room carries the room's time to live (`--room-ttl-secs`). A reset or an
//! admin write gives all of them the full TTL; the sale scripts give the keys they write the
//! stock's remaining TTL (and keep the stock's own); and an instance selling in a room renews
//! them all at most every [`Rooms::touch_every`]. A room nobody sells in or configures is gone
//! after between 0.9 and 1 TTL, keys and registration alike.
//!
//! # Never stocked, expired, or lost?
//! The stock key is the room's heartbeat: the sale scripts refuse to run without it (a missing
//! stock is unknown, not zero). When it is missing, the room was never stocked, expired, or
//! the store restarted empty. The last case is told apart by [`STORE_EPOCH`], a random id
//! written once into the store: each instance remembers under which epoch it saw each room
//! stocked. Same epoch, stock gone → the room expired (or never was): 409 `not_stocked`.
//! Another epoch, or none → the store lost it: the instance marks the room lost in Redis
//! (`Keys::lost`, so every instance answers alike) and it answers 503 `state_lost` until an
//! admin resets it. An instance that never saw the room stocked before the loss cannot know,
//! and says `not_stocked` until another instance has marked it.
//!
//! # On a Redis Cluster
//! The registry and the epoch live in the fleet's hash slot, on one master; a room's keys in
//! its own slot, on whichever master owns it. No script or pipeline spans the two. So the
//! epoch tells that the *fleet slot's* master came back empty: every room whose stock then
//! went with it reads `state_lost`. A room on another master that came back empty (its
//! replica lost too, since a killed master is replaced by its replica, data and all) reads
//! `not_stocked`, as if it had expired: one epoch per fleet, not per master.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use redis::Script;

use crate::error::AppError;
use crate::keys::{Keys, ROOMS, STORE_EPOCH};
use crate::redis_pool::{RedisPool, StoreError};

static CREATE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("rooms/create.lua")));
static TOUCH: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("rooms/touch.lua")));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("rooms/renew.lua")));
static LIVE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("rooms/live.lua")));

pub use oversell_api::RoomStatus;

/// The answer a sale gets in a room that is not live.
pub fn sale_error(status: RoomStatus) -> Option<AppError> {
    match status {
        RoomStatus::Live => None,
        RoomStatus::Absent => Some(AppError::NotStocked),
        RoomStatus::Lost => Some(AppError::StateLost),
    }
}

/// Limits of the room registry, from the flags.
#[derive(Debug, Clone, Copy)]
pub struct RoomLimits {
    pub max_rooms: usize,
    pub ttl: Duration,
}

/// What this instance knows of one room it saw stocked.
#[derive(Debug, Clone)]
struct Seen {
    /// The store epoch the room was stocked under.
    epoch: String,
    /// When this instance last renewed the room's TTL.
    touched: Instant,
}

pub struct Rooms {
    resource: RedisPool,
    limits: RoomLimits,
    /// Rooms this instance saw stocked. A std `Mutex`: short critical sections, never held
    /// across `.await`. Bounded by `--max-rooms` per epoch, since only created rooms get here.
    seen: Mutex<HashMap<String, Seen>>,
}

impl Rooms {
    pub fn new(resource: RedisPool, limits: RoomLimits) -> Self {
        Rooms {
            resource,
            limits,
            seen: Mutex::default(),
        }
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.limits.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// How often a room in use has its TTL renewed by an instance: a tenth of the TTL, at most
    /// a minute, so an idle room goes between 0.9 and 1 TTL after its last use.
    pub fn touch_every(&self) -> Duration {
        (self.limits.ttl / 10).min(Duration::from_secs(60))
    }

    /// Registers the room before an admin write, unless the fleet already holds
    /// `--max-rooms` others.
    pub async fn create(&self, keys: &Keys) -> Result<(), AppError> {
        let mut conn = self.resource.conn().await?;
        let candidate = uuid::Uuid::new_v4().simple().to_string();
        let (created, _count): (bool, i64) = CREATE
            .key(ROOMS)
            .key(STORE_EPOCH)
            .arg(keys.room())
            .arg(self.limits.max_rooms)
            .arg(self.ttl_ms())
            .arg(candidate)
            .invoke_async(&mut conn)
            .await
            .map_err(StoreError::from)?;
        match created {
            true => Ok(()),
            false => Err(AppError::RoomLimit {
                max: self.limits.max_rooms,
            }),
        }
    }

    /// Whether all of `wanted` fit under `--max-rooms` beside the other rooms live now (those
    /// of `wanted` already registered count once), before a class writes any of them: a class
    /// too big for the fleet is refused whole, never half made. Concurrent creations may still
    /// take the last places; [`Rooms::create`] refuses each room past the limit then.
    pub async fn fit(&self, wanted: &[String]) -> Result<(), AppError> {
        let mut conn = self.resource.conn().await?;
        let live: Vec<String> = LIVE
            .key(ROOMS)
            .invoke_async(&mut conn)
            .await
            .map_err(StoreError::from)?;
        let wanted_set: std::collections::HashSet<&str> =
            wanted.iter().map(String::as_str).collect();
        let others = live
            .iter()
            .filter(|r| !wanted_set.contains(r.as_str()))
            .count();
        match others + wanted_set.len() <= self.limits.max_rooms {
            true => Ok(()),
            false => Err(AppError::ClassRoomLimit {
                rooms: wanted_set.len(),
                others,
                max: self.limits.max_rooms,
            }),
        }
    }

    /// Gives every key of the room the full TTL and renews its registration (after an admin
    /// write, and now and then while it sells); never creates a key.
    ///
    /// Two scripts, sent at once: one over the room's keys (its slot), one over the registry
    /// (the fleet's slot); a Redis Cluster refuses one script over both. Nothing
    /// needs them together: a room whose registration was renewed a moment before its keys (or
    /// after) lives the same TTL.
    pub async fn touch(&self, keys: &Keys) -> Result<(), StoreError> {
        let conn = self.resource.conn().await?;
        let mut script = TOUCH.prepare_invoke();
        // `Keys::all` starts with the stock.
        for key in keys.all() {
            script.key(key);
        }
        script.arg(self.ttl_ms());
        let mut renew = RENEW.prepare_invoke();
        renew
            .key(ROOMS)
            .key(STORE_EPOCH)
            .arg(keys.room())
            .arg(self.ttl_ms());
        let (mut room_conn, mut fleet_conn) = (conn.clone(), conn);
        let room = script.invoke_async::<bool>(&mut room_conn);
        let registry = renew.invoke_async::<String>(&mut fleet_conn);
        let (stocked, epoch) = tokio::try_join!(room, registry)?;
        if stocked && !epoch.is_empty() {
            self.remember(keys.room(), epoch);
        }
        Ok(())
    }

    /// Why a sale cannot happen in a room nobody created (or that expired), before any lock is
    /// taken for it; `None` when the room is on sale (its TTL renewed when due). A created
    /// room (`stored`) costs nothing here: its missing stock, if it goes missing, is found by
    /// the sale scripts.
    pub async fn not_on_sale(
        self: &std::sync::Arc<Self>,
        keys: &Keys,
        stored: bool,
    ) -> Result<Option<AppError>, StoreError> {
        if !stored {
            if let Some(err) = sale_error(self.status(keys).await?) {
                return Ok(Some(err));
            }
        }
        self.touch_if_due(keys);
        Ok(None)
    }

    /// Renews the room's TTL in the background when this instance has not done so for
    /// [`Rooms::touch_every`]; costs nothing on the sale path otherwise.
    pub fn touch_if_due(self: &std::sync::Arc<Self>, keys: &Keys) {
        let due = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            match seen.get_mut(keys.room()) {
                Some(s) if s.touched.elapsed() < self.touch_every() => false,
                Some(s) => {
                    s.touched = Instant::now();
                    true
                }
                // Not seen stocked here yet: the status read that follows will tell.
                None => true,
            }
        };
        if due {
            let rooms = std::sync::Arc::clone(self);
            let keys = keys.clone();
            tokio::spawn(async move {
                if let Err(err) = rooms.touch(&keys).await {
                    tracing::debug!(%err, room = keys.room(), "could not renew the room's TTL");
                }
            });
        }
    }

    fn remember(&self, room: &str, epoch: String) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.insert(
            room.to_owned(),
            Seen {
                epoch,
                touched: Instant::now(),
            },
        );
    }

    /// The room's status, read from Redis (one round trip; two when the stock is missing).
    pub async fn status(&self, keys: &Keys) -> Result<RoomStatus, StoreError> {
        let conn = self.resource.conn().await?;
        let (stocked, epoch) = room_and_epoch(conn, keys.stock()).await?;
        if stocked {
            if let Some(epoch) = epoch {
                let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
                if seen.get(keys.room()).is_none_or(|s| s.epoch != epoch) {
                    seen.insert(
                        keys.room().to_owned(),
                        Seen {
                            epoch,
                            // Not renewed by this instance yet: due at its first sale.
                            touched: Instant::now()
                                .checked_sub(self.touch_every())
                                .unwrap_or_else(Instant::now),
                        },
                    );
                }
            }
            return Ok(RoomStatus::Live);
        }
        self.missing_stock(keys).await
    }

    /// The status of a room whose ground truth was just read (`stocked`: its stock key
    /// exists). A stocked room costs a round trip only the first time this instance sees it.
    pub async fn judge(&self, keys: &Keys, stocked: bool) -> Result<RoomStatus, StoreError> {
        if !stocked {
            return self.missing_stock(keys).await;
        }
        let known = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.contains_key(keys.room())
        };
        if known {
            Ok(RoomStatus::Live)
        } else {
            // Learns the epoch the room lives under, to recognise its loss later.
            self.status(keys).await
        }
    }

    /// The stock key is missing: absent (never stocked, or expired) or lost (the store
    /// restarted empty under a room this instance saw stocked).
    pub async fn missing_stock(&self, keys: &Keys) -> Result<RoomStatus, StoreError> {
        let conn = self.resource.conn().await?;
        let (marked, epoch) = room_and_epoch(conn.clone(), keys.lost()).await?;
        if marked {
            return Ok(RoomStatus::Lost);
        }
        let seen = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.remove(keys.room())
        };
        match seen {
            None => Ok(RoomStatus::Absent),
            Some(seen) if Some(&seen.epoch) == epoch.as_ref() => Ok(RoomStatus::Absent),
            Some(seen) => {
                tracing::warn!(
                    room = keys.room(),
                    seen_epoch = seen.epoch,
                    store_epoch = epoch.as_deref().unwrap_or("none"),
                    "the resource store lost this room's state (it restarted empty?)"
                );
                let candidate = uuid::Uuid::new_v4().simple().to_string();
                let (mut room_conn, mut fleet_conn) = (conn.clone(), conn);
                let mut mark = redis::cmd("SET");
                mark.arg(keys.lost())
                    .arg(&seen.epoch)
                    .arg("PX")
                    .arg(self.ttl_ms());
                // A store that restarted empty gets a new identity, so rooms stocked from now
                // on are told apart from those it lost. Its own command: the epoch is in the
                // fleet's slot, the mark in the room's.
                let mut identity = redis::cmd("SET");
                identity.arg(STORE_EPOCH).arg(candidate).arg("NX");
                tokio::try_join!(
                    mark.query_async::<()>(&mut room_conn),
                    identity.query_async::<()>(&mut fleet_conn)
                )?;
                Ok(RoomStatus::Lost)
            }
        }
    }
}

/// Whether the room's `key` exists, and the store epoch: two commands sent at once on one
/// connection (one round trip on one Redis), not one pipeline, since on a Redis Cluster the
/// room's slot and the fleet's may be on different masters.
async fn room_and_epoch(
    conn: crate::redis_pool::Conn,
    key: String,
) -> Result<(bool, Option<String>), redis::RedisError> {
    let (mut room_conn, mut fleet_conn) = (conn.clone(), conn);
    let (mut exists, mut epoch) = (redis::cmd("EXISTS"), redis::cmd("GET"));
    exists.arg(key);
    epoch.arg(STORE_EPOCH);
    tokio::try_join!(
        exists.query_async::<bool>(&mut room_conn),
        epoch.query_async::<Option<String>>(&mut fleet_conn)
    )
}
