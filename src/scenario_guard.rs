//! One scenario at a time per room, across the whole fleet: a scenario resets the room's stock
//! and settings, so two at once — started on two instances behind nginx — would wreck each
//! other's figures.
//!
//! The guard is the project's own lesson applied to itself: a lock in the resource store with
//! a unique value, a short lease renewed by a watchdog while the scenario runs (so an instance
//! that dies mid-run frees the room within [`LEASE`]), and a compare-and-delete release. It
//! lives in the resource store, not the lock store: the scenarios' faults strike the lock
//! store, and the guard must outlive them.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use tokio::task::AbortHandle;

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

/// The guard's lease; renewed every third of it while the scenario runs.
const LEASE: Duration = Duration::from_secs(10);

static RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scenario_guard/renew.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scenario_guard/release.lua")));

/// The room's scenario guard, held. [`ScenarioGuard::release`] gives it back before the
/// answer leaves, so the next scenario finds the room free; dropping it (a caller that went
/// away mid-run) gives it back a moment later.
pub struct ScenarioGuard {
    resource: RedisPool,
    key: String,
    holder: String,
    renewals: AbortHandle,
    released: bool,
}

impl ScenarioGuard {
    /// Takes the room's guard for `holder`; `None` when a scenario already runs in the room
    /// (on any instance).
    pub async fn try_take(
        resource: &RedisPool,
        keys: &Keys,
        holder: &str,
    ) -> Result<Option<ScenarioGuard>, StoreError> {
        let key = keys.scenario_guard();
        let mut conn = resource.conn().await?;
        let taken: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(holder)
            .arg("NX")
            .arg("PX")
            .arg(LEASE.as_millis() as u64)
            .query_async(&mut conn)
            .await?;
        if taken.is_none() {
            return Ok(None);
        }
        let renewals = tokio::spawn(renew(resource.clone(), key.clone(), holder.to_owned()));
        Ok(Some(ScenarioGuard {
            resource: resource.clone(),
            key,
            holder: holder.to_owned(),
            renewals: renewals.abort_handle(),
            released: false,
        }))
    }

    /// Stops the renewals and gives the guard back, waiting for Redis to say so.
    pub async fn release(mut self) {
        self.renewals.abort();
        self.released = true;
        give_back(self.resource.clone(), self.key.clone(), self.holder.clone()).await;
    }
}

/// Gives back the room's guard if `holder` still holds it: for a run cut short (its future
/// dropped, whose guard's own release then runs on its own, maybe after the process has
/// gone), so that whoever waits for the run's answer finds the room free once it is given.
pub async fn give_back_cut(resource: &RedisPool, keys: &Keys, holder: &str) {
    give_back(resource.clone(), keys.scenario_guard(), holder.to_owned()).await;
}

/// Compare-and-delete: only the holder's own guard goes. Were it lost, the lease ends it.
async fn give_back(resource: RedisPool, key: String, holder: String) {
    let released = async {
        let mut conn = resource.conn().await?;
        let _: i64 = RELEASE
            .key(&key)
            .arg(&holder)
            .invoke_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(())
    };
    if let Err(err) = released.await {
        tracing::warn!(%err, "scenario guard not released; its lease will end it");
    }
}

/// Extends the lease every third of it until aborted or the guard is found lost.
async fn renew(resource: RedisPool, key: String, holder: String) {
    let mut every = tokio::time::interval(LEASE / 3);
    every.tick().await;
    loop {
        every.tick().await;
        let renewed = async {
            let mut conn = resource.conn().await?;
            let renewed: i64 = RENEW
                .key(&key)
                .arg(&holder)
                .arg(LEASE.as_millis() as u64)
                .invoke_async(&mut conn)
                .await?;
            Ok::<_, StoreError>(renewed)
        };
        match renewed.await {
            Ok(1) => {}
            Ok(_) => {
                tracing::warn!(%key, "scenario guard lost; no longer renewing");
                return;
            }
            // The resource store is down: the scenario fails on its own; try again next tick.
            Err(err) => tracing::warn!(%err, "scenario guard not renewed"),
        }
    }
}

impl Drop for ScenarioGuard {
    fn drop(&mut self) {
        self.renewals.abort();
        if !self.released {
            // Drop cannot wait: the release runs on its own.
            tokio::spawn(give_back(
                self.resource.clone(),
                self.key.clone(),
                self.holder.clone(),
            ));
        }
    }
}
