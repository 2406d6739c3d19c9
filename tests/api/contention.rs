//! Every tier under the same concurrent load: which ones oversell, measured in Redis.

use std::collections::HashMap;

use oversell_api::burst::MAX_BURST_BUYERS;
use oversell_api::tier::Tier;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{spawn_fleet, TestFleet, TOKEN};

const STOCK: i64 = 100;
const BUYERS: usize = 300;

/// Fires a burst under `tier` and checks the ledger against the 200s; returns the state.
async fn run_tier(fleet: &TestFleet, tier: &str) -> Value {
    fleet
        .configure(json!({ "tier": tier, "business_ms": 5, "ttl_ms": 5000, "wait": "pubsub" }))
        .await;
    fleet.reset(STOCK).await;
    let results = fleet.burst(BUYERS).await;

    let mut acked: HashMap<String, usize> = HashMap::new();
    for (status, body) in &results {
        assert!(
            [StatusCode::OK, StatusCode::CONFLICT].contains(status),
            "{tier}: unexpected {status} {body}"
        );
        if *status == StatusCode::OK {
            *acked
                .entry(body["order_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    let ledger = fleet.ledger().await;
    let mut recorded: HashMap<String, usize> = HashMap::new();
    for entry in &ledger {
        assert_eq!(entry["tier"], tier, "{entry}");
        *recorded
            .entry(entry["order_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(
        acked, recorded,
        "{tier}: every 200 is in the ledger exactly once, and only those"
    );
    assert!(recorded.values().all(|n| *n == 1));

    let state = fleet.state().await;
    eprintln!(
        "{tier:>20}: orders {} stock {} oversold {} lost {} overlaps {} foreign {}",
        state["orders"],
        state["stock"],
        state["oversold"],
        state["lost_updates"],
        state["overlaps"],
        state["foreign_releases"]
    );
    assert_eq!(state["orders"], json!(ledger.len()), "{tier}: {state}");
    let served: std::collections::HashSet<&str> = ledger
        .iter()
        .filter_map(|e| e["instance"].as_str())
        .collect();
    assert!(
        served.len() > 1,
        "{tier}: sales spread over the instances: {served:?}"
    );
    state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_lock_and_local_locks_oversell_across_three_instances() {
    let fleet = spawn_fleet(3).await;
    for tier in ["none", "local"] {
        let state = run_tier(&fleet, tier).await;
        assert!(
            state["oversold"].as_i64().unwrap() > 0,
            "{tier} oversold: {state}"
        );
        assert!(
            state["lost_updates"].as_i64().unwrap() > 0,
            "{tier}: {state}"
        );
        assert!(state["overlaps"].as_i64().unwrap() > 0, "{tier}: {state}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_distributed_tier_sells_exactly_the_stock_under_contention() {
    let fleet = spawn_fleet(3).await;
    // Redlock and ZooKeeper need fleets of their own: their contention is in their chapters
    // (redlock-minority-down, zookeeper-normal: every item sold once to 300 buyers).
    let distributed = Tier::built_in()
        .filter(|t| ![Tier::None, Tier::Local].contains(t))
        .filter(|t| {
            t.misfit(
                oversell::lock_store::LockStoreKind::Shared,
                oversell_api::Beside::NOTHING,
            )
            .is_none()
        });
    for tier in distributed.map(Tier::id) {
        let state = run_tier(&fleet, tier).await;
        for figure in ["oversold", "lost_updates", "overlaps", "foreign_releases"] {
            assert_eq!(state[figure], 0, "{tier} {figure}: {state}");
        }
        assert_eq!(state["orders"], STOCK, "{tier}: {state}");
        assert_eq!(state["stock"], 0, "{tier}: {state}");
        assert_eq!(
            state["lock"]["held"], false,
            "{tier} left its lock: {state}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reentrant_tiers_take_the_lock_again_in_the_nested_step() {
    let fleet = spawn_fleet(1).await;
    for tier in ["reentrant-watchdog", "fair", "fenced"] {
        fleet.configure(json!({ "tier": tier })).await;
        fleet.reset(5).await;
        for i in 0..3 {
            assert_eq!(
                fleet.sale(0, &format!("b{i}")).await.0,
                StatusCode::OK,
                "{tier}"
            );
        }
        let ledger = fleet.ledger().await;
        assert_eq!(ledger.len(), 3);
        assert!(ledger.iter().all(|e| e["depth"] == 2), "{tier}: {ledger:?}");
    }
    let fences: Vec<i64> = fleet
        .ledger()
        .await
        .iter()
        .map(|e| e["fence"].as_i64().unwrap())
        .collect();
    assert!(
        fences.windows(2).all(|w| w[0] < w[1]),
        "fencing tokens grow: {fences:?}"
    );
}

/// Business time longer than the lease: the fixed lease lets a second holder in, the
/// watchdog's renewals do not. A 300 ms lease is renewed every 100 ms: only a holder stalled
/// past 200 ms loses it (with 60 ms, a 40 ms stall of a loaded machine did).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_shorter_than_the_work_overlaps_unless_the_watchdog_renews_it() {
    let fleet = spawn_fleet(3).await;
    let slow = |tier: &str| {
        json!({ "tier": tier, "ttl_ms": 300, "business_ms": 450, "wait": "spin:5",
                "wait_deadline_ms": 20_000 })
    };

    fleet.configure(slow("lua-release")).await;
    fleet.reset(STOCK).await;
    fleet.burst(12).await;
    let state = fleet.state().await;
    assert!(
        state["overlaps"].as_i64().unwrap() > 0,
        "lua-release: {state}"
    );
    assert_eq!(
        state["foreign_releases"], 0,
        "lua-release never deletes another's lock: {state}"
    );

    fleet.configure(slow("reentrant-watchdog")).await;
    fleet.reset(STOCK).await;
    fleet.burst(12).await;
    let state = fleet.state().await;
    assert_eq!(state["overlaps"], 0, "reentrant-watchdog: {state}");
    assert_eq!(state["orders"], 12, "reentrant-watchdog: {state}");
    assert_eq!(state["lost_updates"], 0, "reentrant-watchdog: {state}");
}

/// The other half of the `local` lesson: with every buyer on one instance, its mutex suffices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_lock_never_oversells_when_one_instance_serves_every_buyer() {
    let fleet = spawn_fleet(3).await;
    fleet
        .configure(json!({ "tier": "local", "business_ms": 5 }))
        .await;
    fleet.reset(STOCK).await;
    let report = fleet
        .admin(
            reqwest::Method::POST,
            "/admin/burst",
            json!({ "buyers": BUYERS }),
        )
        .await;
    assert_eq!(report["ok"], STOCK, "{report}");
    assert_eq!(report["sold_out"], BUYERS as i64 - STOCK, "{report}");
    let state = fleet.state().await;
    for figure in ["oversold", "lost_updates", "overlaps"] {
        assert_eq!(state[figure], 0, "{figure}: {state}");
    }
}

/// Server-side bursts share one bound per instance on the buyers they have out (each one a
/// socket or a task): while a full burst runs, another burst on the same instance is refused
/// at once with a 409, and accepted again once the first has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_past_the_instances_buyers_in_flight_is_refused_until_the_others_end() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(json!({ "tier": "none", "business_ms": 1_000 }))
        .await;
    fleet.reset(1_000_000).await;
    let burst_in = |room: &'static str, buyers: usize| {
        fleet
            .client
            .post(format!("{}/admin/burst?room={room}", fleet.url(0)))
            .bearer_auth(TOKEN)
            .json(&json!({ "buyers": buyers, "via": "instance" }))
            .send()
    };
    // The full burst is running once its first sales have entered (the timeline grows); a
    // small burst sent before that would take its share first and the full one be refused.
    let before = fleet.timeline_len().await;
    let burst = |buyers: usize| burst_in("default", buyers);
    let full = tokio::spawn(burst(MAX_BURST_BUYERS));
    crate::helpers::eventually(std::time::Duration::from_secs(30), || async {
        fleet.timeline_len().await > before
    })
    .await;
    // Another room: the instance has no buyer left to give.
    let refused = burst_in("other", 1).await.unwrap();
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(refused["error"], "bursts_busy", "{refused}");
    // The same room: one burst at a time, whatever its size.
    let refused = burst(1).await.unwrap();
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(refused["error"], "burst_running", "{refused}");
    let full = full.await.unwrap().unwrap();
    assert_eq!(full.status(), StatusCode::OK);
    let report: Value = full.json().await.unwrap();
    // Every buyer has an answer: a sale, or (on a loaded machine, thousands of buyers waiting
    // on one pool) a clear 503 — never a lost or failed one.
    let answered = report["ok"].as_u64().unwrap() + report["unavailable"].as_u64().unwrap();
    assert_eq!(answered, MAX_BURST_BUYERS as u64, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert!(report["ok"].as_u64().unwrap() > 0, "{report}");
    let after = burst(1).await.unwrap();
    assert_eq!(after.status(), StatusCode::OK, "the bound is given back");
}
