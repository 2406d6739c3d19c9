//! The lock-store faults: claimed before the acquire, and struck at the two moments they
//! strike the sale that claimed one: just before each acquire attempt, and right after the
//! attempt that takes the lock. The Redlock masters' faults are in `redlock.rs`, beside the
//! algorithm they strike. The ZooKeeper servers' fault is here: it needs nothing of the
//! ZooKeeper tiers but where the servers are.

use std::time::{Duration, Instant};

use super::super::tiers::redlock;
use super::super::LockCx;
use super::FaultLayer;
use crate::faults::{self, Fault, FaultKind};
use crate::ground_truth::record;
use crate::lock_store::node_faults as store;
use crate::redis_pool::StoreError;

/// Claims a lock-store fault armed for this sale's acquire, if any (no round trip when none
/// is armed).
///
/// The fault is meant for the next holder. A sale that finds one armed but loses the claim
/// waits until the claimant has struck (or `faults::STORE_FAULT_PENDING` has passed): the
/// claimant spends a few round trips holding the replicas off, and on a busy machine another
/// buyer would otherwise take the lock first, normally replicated, and the fault would strike
/// whoever came after.
pub(super) async fn claim(layer: &FaultLayer<'_>, cx: &LockCx<'_>) -> Option<Fault> {
    let points = layer.points(cx);
    let mut lost = false;
    let store_faults = FaultKind::ALL
        .into_iter()
        .filter(|k| k.strikes_lock_store());
    for kind in store_faults {
        if !points.is_armed(kind) {
            continue;
        }
        match points.claim(kind).await {
            // The claim marked it pending, in the same step.
            Some(fault) => return Some(fault),
            None => lost = true,
        }
    }
    // `lost`: this sale tried to claim and another won. Or the claim was already known when
    // the sale began: the claimant's reload reached this instance first.
    if lost || layer.strike_pending {
        let until = Instant::now() + faults::STORE_FAULT_PENDING;
        while Instant::now() < until && strike_pending(cx).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    None
}

/// How long `replica-lag` waits for the primary to list a replica it can hold off.
const REPLICA_BACK_WITHIN: Duration = Duration::from_secs(5);

/// Holds off the primary's replicas for `lag`, once it lists at least one: a replica held off
/// before (by the last lag, or a failover's hold) was cut from the primary and comes back
/// through a resync, and until then the primary lists none, so a hold would stop nothing.
/// Their helpers resume them at `lag` too: a helper left from a longer hold would resume a
/// later one early.
async fn hold_a_replica(cx: &LockCx<'_>, lag: Duration) -> Result<store::HeldReplicas, StoreError> {
    let until = Instant::now() + REPLICA_BACK_WITHIN;
    loop {
        let held = store::hold_replicas_for(cx.store.pool(), &cx.keys.lock(), lag).await?;
        if held.count() > 0 || Instant::now() >= until {
            return Ok(held);
        }
        drop(held);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether a claimed lock-store fault has yet to strike (a store error counts as no).
async fn strike_pending(cx: &LockCx<'_>) -> bool {
    let asked = async {
        let mut conn = cx.resource.conn().await?;
        let pending: bool = redis::cmd("EXISTS")
            .arg(cx.keys.store_fault_pending())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(pending)
    };
    asked.await.unwrap_or(false)
}

/// Before each attempt of the sale that claimed a lock-store fault.
///
/// `failover`: hold the primary's replicas off, so the lock written by this attempt stays on
/// the primary alone; they resume when the returned guard is dropped, after the attempt.
/// `replica-lag` holds them off for its `ms`, from a task of its own, and is done.
/// `node-down` and `lock-store-down` strike here and are done (the attempt then finds the
/// store gone), as does `node-slow` (the attempt then waits for a stopped master's late
/// vote); `node-restart` cuts the minority off (see `redlock.rs`).
pub(super) async fn before_attempt(
    layer: &FaultLayer<'_>,
    cx: &LockCx<'_>,
    fault: &Fault,
) -> Option<store::HeldReplicas> {
    match fault.kind {
        FaultKind::Failover => match store::hold_replicas(cx.store.pool(), &cx.keys.lock()).await {
            Ok(held) => {
                tracing::debug!(replicas = held.count(), "fault: replicas held off");
                Some(held)
            }
            Err(err) => {
                tracing::warn!(%err, "fault: could not hold the replicas off");
                None
            }
        },
        FaultKind::ReplicaLag => {
            // It strikes once, here: the replicas stay stopped for the lag whatever the
            // attempts then do, and every buyer meanwhile meets them.
            layer.claimed().take();
            let lag = Duration::from_millis(fault.ms);
            match hold_a_replica(cx, lag).await {
                Ok(held) => {
                    let what = format!("{} replicas stopped for {lag:?}", held.count());
                    tokio::spawn(async move {
                        tokio::time::sleep(lag).await;
                        drop(held);
                    });
                    struck(cx, fault, &what).await;
                }
                Err(err) => tracing::error!(%err, "fault: replica-lag could not strike"),
            }
            None
        }
        FaultKind::NodeDown => {
            // It strikes once, here, whatever the attempt then does.
            layer.claimed().take();
            match redlock::strike_before(cx, fault).await {
                Some(what) => struck(cx, fault, &what).await,
                None => tracing::error!("fault: node-down found no master to kill"),
            }
            None
        }
        FaultKind::NodeSlow => {
            layer.claimed().take();
            match redlock::strike_before(cx, fault).await {
                Some(what) => struck(cx, fault, &what).await,
                None => tracing::error!("fault: node-slow found no master to stop"),
            }
            None
        }
        // Slowed here but not yet struck: the attempt it slows skips the validity check while
        // the fault is still the sale's (`redlock.rs`), and the strike is recorded once that
        // attempt has taken the lock, so the other buyers wait until the votes are in.
        FaultKind::ValidityUnchecked => {
            if redlock::strike_before(cx, fault).await.is_none() {
                tracing::error!("fault: validity-unchecked found no master to stop");
            }
            None
        }
        FaultKind::LockStoreDown => {
            layer.claimed().take();
            let down_for = std::time::Duration::from_millis(fault.ms);
            match store::kill_store_for(cx.store.pool(), down_for).await {
                Ok(what) => struck(cx, fault, &format!("down for {down_for:?}: {what}")).await,
                Err(err) => tracing::error!(%err, "fault: lock-store-down could not strike"),
            }
            None
        }
        FaultKind::ZkNodeDown => {
            layer.claimed().take();
            match zk_node_down(cx, fault).await {
                Ok(what) => struck(cx, fault, &what).await,
                Err(err) => tracing::error!(%err, "fault: zk-node-down could not strike"),
            }
            None
        }
        FaultKind::NodeRestart => {
            if let Some(what) = redlock::strike_before(cx, fault).await {
                tracing::warn!(%what, "fault: minority cut off for the acquire");
            }
            None
        }
        _ => None,
    }
}

/// How long a failover's primary stays down: past Sentinel's `down-after-milliseconds` (1 s)
/// or a cluster's `cluster-node-timeout` (1 s), and the election. Back sooner, and empty, it would still be the primary and Sentinel would
/// never fail over: a supervisor that restarts what exits at once (a compose store's) would
/// turn the failover into a restart.
const FAILOVER_DOWN: std::time::Duration = std::time::Duration::from_secs(5);

/// Right after the claimant's acquire succeeds.
///
/// `failover` and `lock-store-restart`: kill the lock store's primary at once (SIGKILL), with
/// the lock just taken on it. For a failover it stays down as a crashed machine would
/// ([`FAILOVER_DOWN`]) while Sentinel promotes the replica; the single Redis of a restart is
/// brought back at once with its persistence setting. `node-restart` and `clock-jump` strike
/// the Redlock masters that granted the lock. `validity-unchecked` struck before the attempt
/// and is only recorded now, with the lock kept. `renewal-outage` and `renewal-gives-up` kill
/// the store for their `ms` under the hold just taken, whose watchdog then meets the outage.
pub(super) async fn after_acquire(cx: &LockCx<'_>, fault: &Fault) {
    let done = match fault.kind {
        FaultKind::Failover => {
            store::kill_primary(cx.store.pool(), &cx.keys.lock(), Some(FAILOVER_DOWN)).await
        }
        FaultKind::LockStoreRestart => {
            store::kill_primary(cx.store.pool(), &cx.keys.lock(), None).await
        }
        FaultKind::NodeRestart | FaultKind::ClockJump => redlock::strike_after(cx, fault).await,
        FaultKind::ValidityUnchecked => Ok("a majority kept without checking its validity".into()),
        // Struck inside the ZooKeeper recipe's acquire (`tiers/zookeeper.rs`), recorded now.
        FaultKind::ReconnectKeepsNode | FaultKind::ReconnectChecksOwner => Ok(format!(
            "the session given up for a new one as the buyer queued; the old one lived {} ms \
             more on the servers",
            fault.ms
        )),
        FaultKind::RenewalOutage | FaultKind::RenewalGivesUp => {
            let down_for = std::time::Duration::from_millis(fault.ms);
            store::kill_store_for(cx.store.pool(), down_for)
                .await
                .map(|what| format!("down for {down_for:?}, the hold just taken: {what}"))
        }
        _ => return,
    };
    match done {
        Ok(what) => struck(cx, fault, &what).await,
        Err(err) => tracing::error!(%err, fault = %fault.kind, "fault: could not strike"),
    }
}

/// Records what the fault did in the resource store, clears the pending mark and tells every
/// instance to reload the room, so their sales stop waiting for a strike that has happened.
async fn struck(cx: &LockCx<'_>, fault: &Fault, what: &str) {
    tracing::warn!(fault = %fault.kind, %what, "fault: lock store struck");
    let recorded = record::store_fault(
        cx.resource,
        cx.keys,
        cx.instance,
        cx.owner,
        fault.kind.id(),
        what,
    )
    .await;
    if let Err(err) = recorded {
        tracing::warn!(%err, "store fault not recorded");
    }
    if let Err(err) = clear_pending(cx).await {
        tracing::warn!(%err, "store fault still marked pending");
    }
}

async fn clear_pending(cx: &LockCx<'_>) -> Result<(), StoreError> {
    let mut conn = cx.resource.conn().await?;
    // Two commands, not a pipeline: a Redis Cluster client routes PUBLISH by the channel's
    // slot, which is not the room's.
    let () = redis::cmd("DEL")
        .arg(cx.keys.store_fault_pending())
        .query_async(&mut conn)
        .await?;
    let () = redis::cmd("PUBLISH")
        .arg(crate::keys::CONTROL_CHANNEL)
        .arg(crate::control::Control::reload(cx.keys.room()).to_json())
        .query_async(&mut conn)
        .await?;
    Ok(())
}

/// `zk-node-down`: the last `nodes` servers of the connect string (default one) are killed
/// and held down for `ms`. With one of three down the ensemble keeps its quorum; with two it
/// has none, and buyers get a 503 at their deadline.
async fn zk_node_down(cx: &LockCx<'_>, fault: &Fault) -> Result<String, StoreError> {
    let zookeeper = cx.store.zookeeper().ok_or_else(|| {
        StoreError::ZooKeeper("this instance was given no ZooKeeper (--zookeeper)".to_owned())
    })?;
    let servers: Vec<&str> = zookeeper.connect_string().split(',').collect();
    let count = (fault.nodes.max(1) as usize).min(servers.len());
    let down_for = std::time::Duration::from_millis(fault.ms);
    // Every victim found first: once one is killed the others may stop serving (an election,
    // or no quorum), and a server that does not serve does not say where it lives.
    let mut victims = Vec::new();
    for addr in &servers[servers.len() - count..] {
        victims.push(store::find_zookeeper(addr).await?);
    }
    let mut struck = Vec::new();
    for server in &victims {
        struck.push(store::kill_zookeeper(server, down_for).await?);
    }
    Ok(format!("down for {down_for:?}: {}", struck.join(", ")))
}
