//! The ZooKeeper tiers against real ZooKeeper servers started by `oversell up`: every
//! ZooKeeper chapter of the curriculum, on one server and on an ensemble of three, ZooKeeper
//! unreachable, and the flags that make no sense refused. Every figure comes from the
//! resource store.

use std::time::Duration;

use oversell::launch::redis_server::RedisServer;
use oversell_api::tier::Tier;
use oversell_client::ports::free_port;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_sale_refused, poll_until, serve_args, state, TestApp, TOKEN};
use crate::lock_store::run_scenarios;
use crate::scenarios::start_zookeeper_fleet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_on_one_server_frees_a_dead_holders_lock_and_only_a_token_stops_a_paused_one() {
    let fleet = start_zookeeper_fleet(3, 1).await;
    assert_eq!(fleet.zookeeper_processes().len(), 1);
    let failures = run_scenarios(
        &fleet,
        &[
            "zookeeper-normal",
            "zookeeper-crash-holding",
            "zookeeper-session-expiry",
            "zookeeper-fenced",
        ],
    )
    .await;
    let seen = state(fleet.url()).await;
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
    let servers = &seen["lock_store"]["zookeeper"]["servers"];
    assert_eq!(servers[0]["mode"], "standalone", "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zookeeper_ensemble_sells_with_one_server_down_and_refuses_without_a_quorum() {
    let fleet = start_zookeeper_fleet(3, 3).await;
    let failures = run_scenarios(&fleet, &["zookeeper-node-down", "zookeeper-quorum-lost"]).await;
    let restarted = fleet
        .zookeeper_processes()
        .iter()
        .filter(|p| p.restarts >= 1)
        .count();
    // The two servers held down come back after their hold-down, and the ensemble elects.
    let modes = |seen: &Value| -> Vec<String> {
        seen["lock_store"]["zookeeper"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["mode"].as_str().map(str::to_owned))
            .collect()
    };
    let seen = poll_until(
        Duration::from_secs(30),
        || state(fleet.url()),
        |seen| modes(seen).len() >= 3,
    )
    .await;
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
    // One server killed, then two: each came back under its supervisor.
    assert!(restarted >= 2, "only {restarted} servers were restarted");
    let modes = modes(&seen);
    assert_eq!(modes.len(), 3, "{seen}");
    assert_eq!(
        modes.iter().filter(|m| *m == "leader").count(),
        1,
        "{modes:?}"
    );
}

#[tokio::test]
async fn unreachable_zookeeper_answers_503_within_the_wait_deadline() {
    let redis = RedisServer::start().unwrap();
    let mut args = serve_args(&redis.url(), "no-zookeeper");
    // Nothing listens there.
    args.zookeeper = Some(format!("127.0.0.1:{}", free_port().unwrap()));
    args.tier = Tier::Zookeeper;
    args.wait_deadline_ms = 1_500;
    let app = TestApp::spawn(&args).await;
    let client = crate::helpers::http_client();
    let reset = client
        .post(format!("{}/admin/reset", app.url))
        .bearer_auth(TOKEN)
        .json(&json!({ "stock": 5 }))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);
    let within = Duration::from_millis(1_500 + 1_000);
    assert_sale_refused(&app.url, "zookeeper_unavailable", within).await;
    // The stock is untouched: nothing half-written.
    let seen = state(&app.url).await;
    assert_eq!(
        (seen["stock"].as_i64(), seen["orders"].as_i64()),
        (Some(5), Some(0))
    );
    app.shut_down().await;
}

#[tokio::test]
async fn the_zookeeper_tiers_and_fault_are_refused_where_there_is_no_zookeeper() {
    let redis = RedisServer::start().unwrap();
    let app = TestApp::spawn(&serve_args(&redis.url(), "plain")).await;
    let client = crate::helpers::http_client();
    for (path, body) in [
        ("/admin/config", json!({ "tier": "zookeeper-fenced" })),
        (
            "/admin/faults",
            json!({ "kind": "zk-node-down", "ms": 1000 }),
        ),
    ] {
        let method = match path {
            "/admin/config" => reqwest::Method::PUT,
            _ => reqwest::Method::POST,
        };
        let resp = client
            .request(method, format!("{}{path}", app.url))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{path}");
        let answer: Value = resp.json().await.unwrap();
        assert!(
            answer["message"].as_str().unwrap().contains("ZooKeeper"),
            "{path}: {answer}"
        );
    }
    app.shut_down().await;
}

#[test]
fn bad_zookeeper_flags_stop_with_one_line_naming_the_flag() {
    crate::helpers::assert_refused_in_one_line(&[
        (vec!["up", "--zookeeper-nodes", "2"], "--zookeeper-nodes"),
        (vec!["up", "--zookeeper-nodes", "5"], "--zookeeper-nodes"),
        (
            vec!["serve", "--zookeeper-session-ms", "100"],
            "--zookeeper-session-ms",
        ),
    ]);
}
