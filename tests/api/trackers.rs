//! The chapters from the trackers (`workshop/src/scenario/catalog/trackers.rs`) on real
//! fleets, three instances behind nginx on one Redis, the lagging replica's on a Sentinel
//! lock store and Curator's beside one real ZooKeeper server, each chapter judged from the
//! resource store; and the faults they brought, each seen doing what it says on the fleet.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;

use oversell::lock_store::{LockStoreKind, Persistence};

use crate::helpers::{eventually, spawn_fleet};
use crate::lock_store::{group_chapters, passes_on};
use crate::scenarios::{start_fleet, start_fleet_with, start_zookeeper_fleet};

/// The chapters of the group that need ZooKeeper (`true`) or nothing special (`false`).
fn on_zookeeper(zookeeper: bool) -> Vec<&'static str> {
    let ids = group_chapters("trackers", None);
    let store = |id: &&str| workshop::scenario::find(id).unwrap().store;
    assert!(ids.iter().all(|id| {
        let store = store(id);
        !store.is_special() || (store.zookeeper == 1 && !store.netns && !store.postgres)
    }));
    ids.into_iter()
        .filter(|id| (store(id).zookeeper > 0) == zookeeper)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chapter_from_the_trackers_shows_its_expected_outcome_on_one_redis() {
    passes_on(start_fleet(3).await, &on_zookeeper(false)).await;
}

/// Curator's chapters, in the course's order on one fleet: the lost delete's node is left to
/// the reset before the guaranteed delete's chapter, so that one also shows a reset frees a
/// room a live session's node held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_curator_chapters_from_the_trackers_show_their_expected_outcome_on_zookeeper() {
    let ids = on_zookeeper(true);
    assert_eq!(
        ids,
        [
            "zookeeper-reconnect-keeps-old-node",
            "zookeeper-reconnect-checks-owner",
            "zookeeper-release-lost-locks-out",
            "zookeeper-release-guaranteed",
        ]
    );
    passes_on(start_zookeeper_fleet(3, 1).await, &ids).await;
}

/// The lagging replica: a Sentinel lock store whose lock writes wait for the replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lagging_replica_chapter_from_the_trackers_shows_its_expected_outcome() {
    let ids = group_chapters("trackers", Some(LockStoreKind::Sentinel));
    assert_eq!(ids, ["replica-lag-blocks-synced-lock"]);
    let fleet = start_fleet_with(3, LockStoreKind::Sentinel, Persistence::None).await;
    passes_on(fleet, &ids).await;
}

/// Arms `kind` for the next holder and waits until every instance of `fleet` lists it.
async fn arm(fleet: &crate::helpers::TestFleet, fault: serde_json::Value, instances: usize) {
    fleet.admin(Method::POST, "/admin/faults", fault).await;
    for i in 0..instances {
        eventually(Duration::from_secs(5), || async {
            fleet.state_of(i).await["faults"]
                .as_array()
                .is_some_and(|f| f.len() == 1)
        })
        .await;
    }
}

/// A 300 ms lease and buyers who wait 600 ms, two leases: a buyer who times out behind a
/// holder that sold nothing waited on a lock renewed past its lease.
const RENEWED: &str = r#"{ "tier": "reentrant-watchdog", "ttl_ms": 300, "business_ms": 5,
    "wait_deadline_ms": 600 }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_dies_holding_leaves_its_watchdog_renewing_until_a_reset() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(serde_json::from_str(RENEWED).unwrap())
        .await;
    fleet.reset(10).await;
    arm(&fleet, json!({ "kind": "worker-dies" }), 1).await;
    let (status, body) = fleet.sale(0, "dies").await;
    assert_eq!(body["error"], "holder_died", "{status}: {body}");
    // Two buyers one after the other, each timing out after two leases: the lock stood four
    // leases after its holder died, so something renewed it.
    for buyer in ["b", "c"] {
        let (status, body) = fleet.sale(0, buyer).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{buyer}: {body}");
        assert_eq!(body["error"], "lock_timeout", "{buyer}: {body}");
    }
    let state = fleet.state().await;
    assert_eq!(state["orders"], 0, "{state}");
    // Only a reset ends it: it deletes the lock, and the renewal then finds nothing.
    fleet.reset(10).await;
    let (status, body) = fleet.sale(0, "after-reset").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_sent_again_after_its_reply_was_lost_holds_twice_and_leaves_a_hold() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(
            json!({ "tier": "reentrant-watchdog", "ttl_ms": 1_500, "business_ms": 5,
            "wait_deadline_ms": 500 }),
        )
        .await;
    fleet.reset(10).await;
    arm(&fleet, json!({ "kind": "acquire-reply-lost" }), 1).await;
    let (status, body) = fleet.sale(0, "twice").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ledger = fleet.ledger().await;
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    // Every sale of this tier re-enters once in a nested step (hold count 2): the retry made
    // it 3.
    assert_eq!(ledger[0]["depth"], 3, "the retry re-entered: {ledger:?}");
    // Its release gave back the holds it knew of, not the retry's: the lock stands on, for
    // nobody.
    let state = fleet.state().await;
    assert_eq!(state["lost_releases"], 0, "{state}");
    assert!(
        state["lock"]["ttl_ms"].as_i64().is_some_and(|ttl| ttl > 0),
        "{state}"
    );
    let (status, body) = fleet.sale(0, "behind").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "lock_timeout", "{body}");
}

/// Six buyers at once on the fenced tier, the first holder paused 800 ms under a 300 ms lease:
/// the others sell meanwhile with newer tokens, and its write, sent without its own, lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_sent_without_its_token_lands_however_stale_it_is() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(json!({ "tier": "fenced", "ttl_ms": 300, "business_ms": 5,
            "wait": "spin:10", "wait_deadline_ms": 5_000 }))
        .await;
    fleet.reset(10).await;
    arm(&fleet, json!({ "kind": "unchecked-write", "ms": 800 }), 1).await;
    let results = fleet.burst(6).await;
    assert!(
        results.iter().all(|(s, _)| *s == StatusCode::OK),
        "{results:?}"
    );
    let ledger = fleet.ledger().await;
    let unfenced: Vec<_> = ledger.iter().filter(|o| o["fence"].is_null()).collect();
    assert_eq!(
        unfenced.len(),
        1,
        "one write went without its token: {ledger:?}"
    );
    let state = fleet.state().await;
    assert_eq!(state["stale_writes_rejected"], 0, "{state}");
    assert!(state["lost_updates"].as_i64().unwrap() > 0, "{state}");
}

/// A 300 ms lease nothing renews, buyers who try every 10 ms: a holder paused 800 ms finds, as
/// it comes back, the lock taken and given back by the three others.
const EXTENDED: &str = r#"{ "tier": "lua-release", "ttl_ms": 300, "business_ms": 5,
    "wait": "spin:10", "wait_deadline_ms": 5000 }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extend_that_sets_a_missing_key_again_lets_a_lapsed_holder_write_unwarned() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(serde_json::from_str(EXTENDED).unwrap())
        .await;
    fleet.reset(4).await;
    arm(&fleet, json!({ "kind": "extend-retakes", "ms": 800 }), 1).await;
    let results = fleet.burst(4).await;
    assert!(
        results.iter().all(|(s, _)| *s == StatusCode::OK),
        "the extend said yes, so the paused holder sold too: {results:?}"
    );
    let state = fleet.state().await;
    assert_eq!(state["orders"], 4, "{state}");
    assert!(state["lost_updates"].as_i64().unwrap() > 0, "{state}");
    // The key it released was the one its extend had set again: nobody was told.
    assert_eq!(state["lost_releases"], 0, "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extend_of_the_holders_own_key_only_fails_after_a_lapse_and_the_holder_gives_up() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(serde_json::from_str(EXTENDED).unwrap())
        .await;
    fleet.reset(10).await;
    // Within its lease, the checked extend finds the holder's own key: it sells.
    arm(&fleet, json!({ "kind": "extend-checked", "ms": 50 }), 1).await;
    let (status, body) = fleet.sale(0, "in-time").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    fleet.reset(4).await;
    arm(&fleet, json!({ "kind": "extend-checked", "ms": 800 }), 1).await;
    let results = fleet.burst(4).await;
    let refused: Vec<_> = results
        .iter()
        .filter(|(s, _)| *s != StatusCode::OK)
        .collect();
    assert_eq!(refused.len(), 1, "{results:?}");
    let (status, body) = refused[0];
    assert_eq!(*status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "lock_lost", "{body}");
    let state = fleet.state().await;
    assert_eq!(state["orders"], 3, "{state}");
    assert_eq!(state["lost_updates"], 0, "{state}");
    // It gave up without a write, and its release found the lock gone: counted.
    assert_eq!(state["lost_releases"], 1, "{state}");
}

/// Work (150 ms) past a lease nothing renews (60 ms), buyers who try every 5 ms, all on one
/// instance: whoever releases, the lock has been taken again meanwhile by a sale of the same
/// instance.
const SHARED: &str = r#"{ "tier": "lua-release", "ttl_ms": 60, "business_ms": 150,
    "wait": "spin:5", "wait_deadline_ms": 10000 }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_kept_per_instance_releases_the_lock_of_the_sale_that_took_it_next() {
    let fleet = spawn_fleet(1).await;
    fleet.configure(serde_json::from_str(SHARED).unwrap()).await;
    fleet.reset(100).await;
    // The slot only: one sale, alone, sends its own token back and releases its own lock.
    arm(&fleet, json!({ "kind": "token-per-instance" }), 1).await;
    fleet
        .configure(json!({ "tier": "lua-release", "ttl_ms": 3000, "business_ms": 5 }))
        .await;
    let (status, body) = fleet.sale(0, "alone").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let state = fleet.state().await;
    assert_eq!(state["lock"]["held"], false, "{state}");
    assert_eq!(state["foreign_releases"], 0, "{state}");
    // The race: each release sends the token of the sale that acquired last.
    fleet.configure(serde_json::from_str(SHARED).unwrap()).await;
    let results = fleet.burst(12).await;
    assert!(
        results.iter().all(|(s, _)| *s == StatusCode::OK),
        "{results:?}"
    );
    let state = fleet.state().await;
    assert!(state["foreign_releases"].as_i64().unwrap() > 0, "{state}");
    // Still armed: it is the lock's way of keeping its token, not a one-shot event.
    assert_eq!(state["faults"].as_array().map(Vec::len), Some(1), "{state}");
}
