//! Who runs the class's rooms after a reveal in every room: the holder of a lease in the
//! resource store, renewed while it runs them. An instance killed outright (`SIGKILL`, a lost
//! machine) says nothing and renews nothing: its lease lapses, and another instance, looking
//! for a lapsed lease every [`LOOK_EVERY`], takes the rooms still without an outcome and runs
//! them. Without it those rooms would read "not run yet" for good, with nobody left to run them.
//!
//! The lease outlasts the room's own scenario guard (`scenario_guard`, 10 s): by the time the
//! lease of a dead runner lapses, the guard of the room it was running has lapsed too, so the
//! taker finds that room free and runs it again from the start.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::keys::{poll_room_runs, POLL, POLL_ROOMS_LEASE, POLL_RUNS};
use crate::redis_pool::{RedisPool, StoreError};

/// The lease: long enough for a runner stopped by a chapter's own freeze to keep it, renewed
/// every fifth so a renewal lost to a slow store is not the end of it.
pub const LEASE: Duration = Duration::from_secs(15);
/// How often a runner renews its lease.
pub const RENEW_EVERY: Duration = Duration::from_secs(3);
/// How often every instance looks for rooms whose runner's lease lapsed.
pub const LOOK_EVERY: Duration = Duration::from_secs(2);

static CLAIM: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("room_run_lease/claim.lua")));
static RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("room_run_lease/renew.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("room_run_lease/release.lua")));

/// The rooms a lease was taken for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub chapter: String,
    /// The reveal's run id.
    pub run_id: String,
    pub rooms: Vec<String>,
    /// What the lease holds: the run id and the holder.
    value: String,
}

/// Takes the lease on the rooms left of the reveal `run_id` of `chapter` (`None`: whatever
/// reveal of the poll's chapter is current) for `holder`, unique to this taking; `None` when
/// there is nothing to take or the lease is held.
pub async fn claim(
    resource: &RedisPool,
    chapter: Option<&str>,
    run_id: Option<&str>,
    holder: &str,
) -> Result<Option<Claimed>, StoreError> {
    let mut conn = resource.conn().await?;
    let chapter = match chapter {
        Some(chapter) => chapter.to_owned(),
        None => {
            let chapter: Option<String> = redis::cmd("HGET")
                .arg(POLL)
                .arg("chapter")
                .query_async(&mut conn)
                .await?;
            let Some(chapter) = chapter else {
                return Ok(None);
            };
            chapter
        }
    };
    let mut taken: Vec<String> = CLAIM
        .key(POLL)
        .key(POLL_RUNS)
        .key(poll_room_runs(&chapter))
        .key(POLL_ROOMS_LEASE)
        .arg(&chapter)
        .arg(run_id.unwrap_or(""))
        .arg(holder)
        .arg(LEASE.as_millis() as u64)
        .invoke_async(&mut conn)
        .await?;
    if taken.is_empty() {
        return Ok(None);
    }
    let rooms = taken.split_off(1);
    let run_id = taken.remove(0);
    Ok(Some(Claimed {
        value: format!("{run_id}\n{holder}"),
        chapter,
        run_id,
        rooms,
    }))
}

/// Extends the lease; `false` when it is no longer this holder's (it lapsed and was taken).
pub async fn renew(resource: &RedisPool, claimed: &Claimed) -> Result<bool, StoreError> {
    let mut conn = resource.conn().await?;
    let renewed: i64 = RENEW
        .key(POLL_ROOMS_LEASE)
        .arg(&claimed.value)
        .arg(LEASE.as_millis() as u64)
        .invoke_async(&mut conn)
        .await?;
    Ok(renewed == 1)
}

/// Gives the lease back once the rooms are run (or left): only the holder's own goes.
pub async fn release(resource: &RedisPool, claimed: &Claimed) {
    let released = async {
        let mut conn = resource.conn().await?;
        let _: i64 = RELEASE
            .key(POLL_ROOMS_LEASE)
            .arg(&claimed.value)
            .invoke_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(())
    };
    if let Err(err) = released.await {
        tracing::warn!(%err, "class vote: the rooms' lease not given back; it lapses");
    }
}
