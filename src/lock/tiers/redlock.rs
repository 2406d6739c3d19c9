//! `redlock` — Redlock, as its author published it, over N independent Redis masters.
//!
//! 1. Take a unique value (this sale's owner id) and note the time.
//! 2. `SET lock value NX PX ttl` on every master at once, each bounded by a short per-node
//!    timeout ([`NODE_TIMEOUT`]), so a dead or hung master costs little.
//! 3. The lock is acquired only if a majority (N/2 + 1) granted it *and* time is left:
//!    validity = ttl − elapsed − drift allowance (1% of the ttl + 2 ms).
//! 4. Otherwise give it back on every master (compare-and-delete, also where the SET seemed to
//!    fail: its answer may have been lost) and retry after a random delay, so contenders that
//!    split the vote do not collide again. A majority that came in with no validity left is
//!    given back the same way, and counted (`validity_lapsed`): a master slow to answer
//!    (`node-slow`) makes the whole acquire slow, and a lease of the order of the per-node
//!    timeout is spent before the votes are in. That is why the lease is seconds and the
//!    per-node timeout tens of ms; 001 (line 101) gives the lease "a few tens of ms", which
//!    is the timeout's size.
//! 5. Release: compare-and-delete on every master.
//! 6. While the holder works, extend: every lease/3 a compare-and-`PEXPIRE` on every master
//!    (the published algorithm's extension, Redisson's `RedissonRedLock` watchdog), which
//!    stops once fewer than a majority still hold the value. `lease: fixed` extends nothing.
//!
//! # Guarantee
//! One master failing — killed, restarted, failed over — no longer loses the lock: the others
//! still hold a majority of the votes. A minority down, sales go on; a majority down, nobody
//! can be granted it, and buyers get a 503 `lock_no_quorum`.
//!
//! # What breaks it (the debate, run for real by the faults)
//! - A master that granted the lock restarts without it (no fsync): with the lock on a bare
//!   majority, a second holder wins a majority too (`node-restart`). The algorithm's own answer
//!   is fsync, or restarting a crashed master only after a ttl.
//! - A master's wall clock jumps: the key expires there early, and with a majority of those a
//!   second holder gets in (`clock-jump`). Redis expires keys by wall clock.
//! - A holder pauses longer than the validity (`freeze`): the quorum expires, a second holder
//!   gets in, and the first one's write lands anyway. Redlock hands out no fencing token the
//!   resource could check, so nothing refuses it.
//! - A client that skips step 3's validity check (`validity-unchecked`) and works under a
//!   majority that came in late: the lease has run out on the masters that granted first, a
//!   second holder wins them, and both work at once.
//! - A holder cut off from the masters (`partition`) extends nothing: its lease runs out there
//!   while it works, a second holder wins a majority, and the first one's write lands anyway.
//!
//! # Redisson
//! 001 (lines 239–250) recommends Redisson's `RedissonRedLock`. Redisson deprecated it in
//! 3.12.5: its `RLock` now waits for the replicas after each lock write (the `sync_replicas`
//! setting here), and its `RFencedLock` hands out a fencing token (the `fenced` tier here).
//!
//! # Why not the `rslock` crate
//! rslock runs the same algorithm, but generates its own lock value (the ground truth needs
//! the sale's owner id in the lock to tell holders apart), hides which masters granted (the
//! `node-restart` and `clock-jump` faults strike exactly those, and the dashboard shows them),
//! reports nothing from `unlock` (a release that finds the lock gone is the lesson of
//! `lost_releases`), and has no per-node timeout (a hung master would hang the acquire).
//!
//! Not a step list: each step goes to N masters at once and is read as a vote, counted
//! against a majority and the time left, not one reply of one server.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redis::Script;

use super::lua_release::COMPARE_AND_DELETE;
use crate::faults::{Fault, FaultKind};
use crate::ground_truth::record;
use crate::lock::renewals::Renewals;
use crate::lock::{Attempt, Held, Lock, LockCx};
use crate::lock_store::node_faults as store;
use crate::lock_store::quorum::{QuorumNodes, LOOK_TIMEOUT};
use crate::redis_pool::StoreError;
use oversell_api::settings::LeaseMode;
use oversell_api::tier::Tier;

/// Clock drift allowance, as a share of the ttl (the published 1%), plus 2 ms.
const DRIFT_FACTOR: f64 = 0.01;
/// A failed vote is retried after a random delay of at most this much.
const RETRY_JITTER_MS: u64 = 50;
/// `node-restart`: how long the minority stays cut off (down) around the holder's acquire.
const CUT_OFF: Duration = Duration::from_millis(1_000);

/// The extension on one master; also the owner-checked extend of the `extend-checked` fault
/// (`faulty/extend.rs`), on a single Redis.
pub(in crate::lock) static EXTEND: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("redlock_extend.lua")));

/// The tier this file locks for.
pub(in crate::lock) fn locks() -> Vec<(Tier, crate::lock::TierLock)> {
    vec![(Tier::Redlock, crate::lock::TierLock::Own(Box::new(Redlock)))]
}

pub struct Redlock;

/// How one master answered the `SET NX`.
enum Vote {
    Granted,
    /// Someone holds it there: their value and its lease left (ms; -1: none).
    Refused {
        holder: String,
        lease_left: i64,
    },
    /// No answer within the node timeout, or an error.
    Silent,
}

#[async_trait]
impl Lock for Redlock {
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError> {
        let masters = quorum_of(cx)?;
        let started = Instant::now();
        let votes = vote(cx, masters).await;
        let elapsed = started.elapsed();

        let granted = votes.iter().filter(|v| matches!(v, Vote::Granted)).count();
        let answered = votes.iter().filter(|v| !matches!(v, Vote::Silent)).count();
        let ttl = Duration::from_millis(cx.settings.ttl_ms);
        let drift = ttl.mul_f64(DRIFT_FACTOR) + Duration::from_millis(2);
        let validity = ttl.saturating_sub(elapsed + drift);
        // A client that never checks keeps any majority (`validity-unchecked`, while the fault
        // is still this sale's to strike).
        let unchecked = cx
            .hook
            .and_then(|hook| hook.claimed_store_fault())
            .is_some_and(|f| f.kind == FaultKind::ValidityUnchecked);
        if granted >= masters.quorum() && (!validity.is_zero() || unchecked) {
            tracing::debug!(owner = cx.owner, granted, ?validity, "redlock acquired");
            return Ok(Attempt::Acquired(match cx.settings.lease {
                LeaseMode::Watchdog => Held::renewed_by(extensions(cx)),
                LeaseMode::Fixed => Held::plain(),
            }));
        }

        // No majority, or no time left: give back whatever was taken, everywhere.
        let released = unlock_all(cx, masters).await;
        if granted >= masters.quorum() {
            // A majority, but the asking ate the lease: a holder now would hold a lock that
            // may already be expiring on the masters that granted first. The resource store
            // keeps the count, so a chapter can show it happened and that nobody held on.
            tracing::debug!(
                owner = cx.owner,
                ?elapsed,
                released,
                "redlock validity lapsed"
            );
            let recorded = record::validity_lapsed(
                cx.resource,
                cx.keys,
                cx.generation,
                cx.instance,
                cx.owner,
                elapsed.as_millis(),
                released,
            )
            .await;
            if let Err(err) = recorded {
                tracing::warn!(%err, "validity lapse not recorded");
            }
        }
        if answered < masters.quorum() {
            return Err(StoreError::NoQuorum {
                answered,
                nodes: masters.len(),
                quorum: masters.quorum(),
            });
        }
        Ok(Attempt::Busy {
            lease_left: Some(retry_after(&votes, masters.quorum())),
        })
    }

    async fn release(&self, cx: &LockCx<'_>, _held: Held) -> Result<(), StoreError> {
        let masters = quorum_of(cx)?;
        let deleted = unlock_all(cx, masters).await;
        // Fewer than a majority still had our value: the lock had been lost (expired, a
        // master restarted empty, a clock jumped) before this release.
        if deleted < masters.quorum() {
            cx.lost_release().await?;
        }
        Ok(())
    }
}

fn quorum_of<'a>(cx: &LockCx<'a>) -> Result<&'a QuorumNodes, StoreError> {
    let masters = cx.store.quorum();
    match masters.is_empty() {
        false => Ok(masters),
        true => Err(StoreError::Failed(redis::RedisError::from((
            redis::ErrorKind::Client,
            "the redlock tier needs a Redlock lock store",
            "start the fleet with: oversell up --lock-store redlock".to_owned(),
        )))),
    }
}

/// Step 2: `SET NX PX` on every master at once. `GET` in the same command tells who holds it
/// where it is refused (Redis ≥ 7.0), and `PTTL` for how long.
async fn vote(cx: &LockCx<'_>, masters: &QuorumNodes) -> Vec<Vote> {
    let (key, owner, ttl) = (cx.keys.lock(), cx.owner, cx.settings.ttl_ms);
    let answers = masters
        .each(|mut conn| {
            let key = key.clone();
            async move {
                redis::pipe()
                    .cmd("SET")
                    .arg(&key)
                    .arg(owner)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl)
                    .arg("GET")
                    .pttl(&key)
                    .query_async::<(Option<String>, i64)>(&mut conn)
                    .await
            }
        })
        .await;
    answers
        .into_iter()
        .map(|answer| match answer {
            Ok((None, _)) => Vote::Granted,
            Ok((Some(holder), lease_left)) => Vote::Refused { holder, lease_left },
            Err(_) => Vote::Silent,
        })
        .collect()
}

/// The published algorithm's extension, on the watchdog's schedule (every lease/3, as
/// Redisson's `RedissonRedLock` renews): a new lease on every master that still holds our
/// value, and the renewals stop once fewer than a majority did. A holder cut off from the
/// masters extends nothing, and its lease runs out there while it works.
fn extensions(cx: &LockCx<'_>) -> Renewals {
    let store = cx.store.clone();
    let (key, owner, ttl) = (cx.keys.lock(), cx.owner.to_owned(), cx.settings.ttl_ms);
    Renewals::every_third_of(ttl, move || {
        let (store, key, owner) = (store.clone(), key.clone(), owner.clone());
        async move {
            let masters = store.quorum();
            let extended = masters
                .each(|mut conn| {
                    let (key, owner) = (key.clone(), owner.clone());
                    async move {
                        EXTEND
                            .key(&key)
                            .arg(&owner)
                            .arg(ttl)
                            .invoke_async::<i64>(&mut conn)
                            .await
                    }
                })
                .await
                .into_iter()
                .filter(|extended| matches!(extended, Ok(1)))
                .count();
            extended >= masters.quorum()
        }
    })
}

/// Steps 4 and 5: compare-and-delete on every master; how many still held our value.
async fn unlock_all(cx: &LockCx<'_>, masters: &QuorumNodes) -> usize {
    let (key, owner, channel) = (cx.keys.lock(), cx.owner, cx.keys.released_channel());
    let ttl_ms = cx.settings.ttl_ms;
    masters
        .each(|mut conn| {
            let (key, channel) = (key.clone(), channel.clone());
            async move {
                // The `lua-release` rung's compare-and-delete (`static/locks/lua-release/`).
                COMPARE_AND_DELETE
                    .call()
                    .key(&key)
                    .arg(owner)
                    .arg(ttl_ms)
                    .arg(&channel)
                    .invoke::<i64, _>(&mut conn)
                    .await
            }
        })
        .await
        .into_iter()
        .filter(|deleted| matches!(deleted, Ok(1)))
        .count()
}

/// How long to wait before the next try. When one other holder has a majority, until its lease
/// ends (a release wakes the wait sooner); otherwise the vote was split, or a holder's majority
/// is gone: a random delay, as the algorithm says.
fn retry_after(votes: &[Vote], quorum: usize) -> Duration {
    let mut holders: Vec<(&str, i64)> = votes
        .iter()
        .filter_map(|v| match v {
            Vote::Refused { holder, lease_left } => Some((holder.as_str(), *lease_left)),
            _ => None,
        })
        .collect();
    holders.sort_unstable();
    let majority_lease = holders
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|same| same.len() >= quorum)
        .filter_map(|same| same.iter().map(|h| h.1).filter(|ms| *ms > 0).min())
        .min();
    match majority_lease {
        Some(ms) => Duration::from_millis(ms as u64),
        None => Duration::from_millis(jitter_ms(RETRY_JITTER_MS)),
    }
}

/// A random number in 1..=max, from the clock's nanoseconds (good enough to desynchronise
/// retries; no RNG crate needed).
fn jitter_ms(max: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    1 + nanos % max
}

// ---- where the Redlock faults strike (called around the acquire by the fault layer, `lock/faulty/`) ----

/// Before an attempt of the sale that claimed the fault. Returns what struck, if anything.
pub(in crate::lock) async fn strike_before(cx: &LockCx<'_>, fault: &Fault) -> Option<String> {
    let masters = cx.store.quorum();
    let (n, quorum) = (masters.len(), masters.quorum());
    let (victims, down_for) = match fault.kind {
        // The last `nodes` masters (default: a minority), so node 1 (the other tiers' store)
        // stays up as long as it can.
        FaultKind::NodeDown => {
            let count = match fault.nodes {
                0 => n - quorum,
                k => k as usize,
            };
            (n - count.min(n)..n, Duration::from_millis(fault.ms))
        }
        // The minority is cut off during the acquire: the lock then stands on a bare majority.
        FaultKind::NodeRestart => (quorum..n, CUT_OFF),
        // The last `nodes` masters (default 1) answer late: every vote waits for the slowest.
        FaultKind::NodeSlow | FaultKind::ValidityUnchecked => {
            let count = (fault.nodes.max(1) as usize).min(n);
            let stop_for = Duration::from_millis(fault.ms);
            let mut slowed = Vec::new();
            for node in &masters.nodes()[n - count..] {
                match store::stop_node_for(node, stop_for).await {
                    Ok(what) => slowed.push(what),
                    Err(err) => tracing::warn!(%err, "fault: master not slowed"),
                }
            }
            return (!slowed.is_empty())
                .then(|| format!("stopped for {stop_for:?}: {}", slowed.join(", ")));
        }
        _ => return None,
    };
    let mut struck = Vec::new();
    for i in victims {
        match store::kill_node(&masters.nodes()[i], Some(down_for)).await {
            Ok(what) => struck.push(what),
            // Already down (cut off by an earlier attempt of this sale): nothing to do.
            Err(err) => tracing::debug!(%err, "fault: master not killed"),
        }
    }
    (!struck.is_empty()).then(|| format!("down for {down_for:?}: {}", struck.join(", ")))
}

/// Right after the claimant's acquire: strikes the masters that granted it.
pub(in crate::lock) async fn strike_after(
    cx: &LockCx<'_>,
    fault: &Fault,
) -> Result<String, StoreError> {
    let masters = cx.store.quorum();
    let granting = granting(cx, masters).await;
    match fault.kind {
        FaultKind::NodeRestart => {
            let first = granting.first().ok_or_else(nobody_granted)?;
            store::kill_node(&masters.nodes()[*first], None).await
        }
        FaultKind::ClockJump => {
            let count = match fault.nodes {
                0 => masters.quorum(),
                k => k as usize,
            };
            let mut moved = Vec::new();
            for i in granting.iter().take(count) {
                moved.push(store::jump_clock(&masters.nodes()[*i], fault.ms as i64).await?);
            }
            Ok(moved.join(", "))
        }
        _ => Ok(String::new()),
    }
}

/// The masters (by index) that hold this sale's value now: a look, not a vote, so a master
/// slow to answer on a busy machine is waited for rather than left out of the strike.
async fn granting(cx: &LockCx<'_>, masters: &QuorumNodes) -> Vec<usize> {
    let key = cx.keys.lock();
    let values = masters
        .look_each(|mut conn| {
            let key = key.clone();
            async move {
                redis::cmd("GET")
                    .arg(&key)
                    .query_async::<Option<String>>(&mut conn)
                    .await
            }
        })
        .await;
    values
        .into_iter()
        .enumerate()
        .filter(|(_, v)| matches!(v, Ok(Some(holder)) if holder == cx.owner))
        .map(|(i, _)| i)
        .collect()
}

fn nobody_granted() -> StoreError {
    StoreError::Unavailable(format!(
        "no master holds the lock just taken (each had {LOOK_TIMEOUT:?} to answer)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(holder: &str, lease_left: i64) -> Vote {
        Vote::Refused {
            holder: holder.into(),
            lease_left,
        }
    }

    #[test]
    fn a_holder_with_a_majority_is_waited_for_until_its_lease_ends() {
        let votes = [
            refused("a", 900),
            refused("a", 800),
            refused("a", 850),
            Vote::Silent,
            Vote::Granted,
        ];
        assert_eq!(retry_after(&votes, 3), Duration::from_millis(800));
    }

    #[test]
    fn a_split_vote_retries_after_a_short_random_delay() {
        let votes = [
            refused("a", 900),
            refused("a", 900),
            refused("b", 900),
            Vote::Granted,
            Vote::Granted,
        ];
        let wait = retry_after(&votes, 3);
        assert!(wait >= Duration::from_millis(1) && wait <= Duration::from_millis(RETRY_JITTER_MS));
    }
}
