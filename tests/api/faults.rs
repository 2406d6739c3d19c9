//! The fault admin API, and the faults that need no process of their own.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{eventually, spawn_fleet, TOKEN};

/// The timing, forced: the first holder works 400 ms, its GET sees its own value at 400 ms, and
/// the gap holds its DEL until 850 ms. The lease ends at 600 ms; a spinning buyer takes the lock
/// by ~605 ms and works until ~1000 ms, so the DEL at 850 ms lands on that buyer's lock.
const GAP_TIMING: &str =
    r#"{ "tier": "uuid-owner", "ttl_ms": 600, "business_ms": 400, "wait": "spin:5" }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_between_get_and_del_deletes_the_next_holders_lock() {
    let fleet = spawn_fleet(3).await;
    fleet
        .configure(serde_json::from_str(GAP_TIMING).unwrap())
        .await;
    fleet.reset(100).await;
    fleet
        .admin(
            Method::POST,
            "/admin/faults",
            json!({ "kind": "release-gap", "ms": 450 }),
        )
        .await;
    for i in 0..3 {
        eventually(Duration::from_secs(5), || async {
            fleet.state_of(i).await["faults"]
                .as_array()
                .is_some_and(|f| f.len() == 1)
        })
        .await;
    }
    let results = fleet.burst(4).await;
    assert!(results.iter().all(|(s, _)| *s == StatusCode::OK));
    let state = fleet.state().await;
    assert_eq!(state["foreign_releases"], 1, "{state}");
    assert_eq!(
        state["faults"],
        json!([]),
        "the fault fired once and is spent: {state}"
    );
    // Deleting the next holder's lock let a third buyer in beside it.
    assert!(state["overlaps"].as_i64().unwrap() > 0, "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_pause_without_the_fault_releases_nothing_foreign() {
    let fleet = spawn_fleet(3).await;
    fleet
        .configure(serde_json::from_str(GAP_TIMING).unwrap())
        .await;
    fleet.reset(100).await;
    fleet.burst(4).await;
    let state = fleet.state().await;
    assert_eq!(state["foreign_releases"], 0, "{state}");
    assert_eq!(state["overlaps"], 0, "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_validated_listed_targeted_and_cleared_by_reset() {
    let fleet = spawn_fleet(2).await;
    eventually(Duration::from_secs(5), || async {
        let body = fleet.get_json(0, "/instances").await;
        body["instances"].as_array().is_some_and(|l| l.len() == 2)
    })
    .await;

    let post = |body: Value| {
        fleet
            .client
            .post(format!("{}/admin/faults", fleet.url(0)))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
    };
    for (body, status) in [
        (json!({ "kind": "explode" }), 400),
        (json!({ "kind": "freeze" }), 400),
        (json!({ "kind": "freeze", "ms": 0 }), 400),
        (json!({ "kind": "crash-holding", "instance": "app9" }), 404),
        // The gap of a late subscription, the stall of a starved CPU: both need their length.
        (json!({ "kind": "late-subscriber" }), 400),
        (json!({ "kind": "subscribe-gap", "ms": 0 }), 400),
        (json!({ "kind": "cpu-starve" }), 400),
        // Strikes Redlock masters: this fleet's locks are on its one Redis.
        (json!({ "kind": "validity-unchecked", "ms": 80 }), 400),
        (
            json!({ "kind": "late-subscriber", "ms": 600, "nodes": 1 }),
            400,
        ),
    ] {
        let resp = post(body.clone()).await.unwrap();
        assert_eq!(resp.status().as_u16(), status, "{body}");
        let err: Value = resp.json().await.unwrap();
        assert!(err["message"].as_str().is_some(), "{err}");
    }
    let resp = post(json!({ "kind": "freeze", "ms": 1500, "instance": "app2" }))
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    eventually(Duration::from_secs(5), || async {
        fleet.state_of(1).await["faults"]
            == json!([{ "kind": "freeze", "ms": 1500, "instance": "app2" }])
    })
    .await;

    fleet.reset(10).await;
    fleet
        .admin(Method::DELETE, "/admin/faults", json!({}))
        .await;
    eventually(Duration::from_secs(5), || async {
        fleet.state_of(1).await["faults"] == json!([])
    })
    .await;

    let unknown = fleet
        .client
        .post(format!("{}/admin/instances/app9/crash", fleet.url(0)))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let body: Value = unknown.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("app1"), "{body}");
}

/// Work longer than a fixed lease: the holder's compare-and-delete finds its lock gone. No
/// fault needed; the release is counted as lost in the ground truth and in the instance's
/// metrics, per tier (Redisson would throw `IllegalMonitorStateException` here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_after_the_lease_ran_out_is_counted_as_lost() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(json!({ "tier": "lua-release", "ttl_ms": 30, "business_ms": 150 }))
        .await;
    fleet.reset(10).await;
    for buyer in ["a", "b"] {
        let (status, body) = fleet.sale(0, buyer).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let state = fleet.state().await;
    assert_eq!(state["lost_releases"], 2, "{state}");
    let metrics = fleet.metrics_of(0).await;
    let line = metrics
        .lines()
        .find(|l| l.starts_with("oversell_lost_releases_total{tier=\"lua-release\""))
        .expect("the lost-release counter");
    assert!(line.ends_with(" 2"), "{line}");
}
