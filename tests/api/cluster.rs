//! The locks in a Redis Cluster (three masters, a replica each, made by `oversell up
//! --lock-store cluster`): every safe tier sells exactly the stock with its lock on one shard,
//! that shard's master failing over loses the lock (and `WAIT` keeps it), and while the
//! master owning the room's slot does not answer, buyers are told `redis_unavailable` within
//! their deadline and nothing is sold twice. Every figure is read from the resource store.

use std::time::Duration;

use oversell::launch::local_fleet::Fleet;
use oversell::lock_store::{LockStoreKind, Persistence};
use serde_json::{json, Value};

use crate::helpers::eventually_sells;
use crate::lock_store::{admin, run_scenarios, state};
use crate::scenarios::start_fleet_with;

/// The address of the master owning `key`'s slot, and its pid, as the cluster says.
async fn master_of(fleet: &Fleet, key: &str) -> (String, u32) {
    let node = &fleet.lock_store_processes()[0];
    let client = redis::Client::open(format!("redis://{}:{}", node.ip, node.port)).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let slot: i64 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(&mut conn)
        .await
        .unwrap();
    let ranges: Vec<Vec<redis::Value>> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut conn)
        .await
        .unwrap();
    // `[start, end, [ip, port, id, …], replicas…]`
    let (ip, port) = ranges
        .iter()
        .find_map(|range| {
            let bound = |i: usize| redis::from_redis_value::<i64>(range[i].clone()).unwrap();
            let redis::Value::Array(master) = &range[2] else {
                panic!("CLUSTER SLOTS: {range:?}")
            };
            let ip: String = redis::from_redis_value(master[0].clone()).unwrap();
            let port: i64 = redis::from_redis_value(master[1].clone()).unwrap();
            (bound(0)..=bound(1)).contains(&slot).then_some((ip, port))
        })
        .expect("a master owns the slot");
    let addr = format!("{ip}:{port}");
    let pid = fleet
        .lock_store_processes()
        .into_iter()
        .find(|p| p.port as i64 == port)
        .and_then(|p| p.pid)
        .expect("the master is one of the fleet's nodes");
    (addr, pid)
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_lock_store_sells_exactly_and_fails_over_one_shard_at_a_time() {
    let fleet = start_fleet_with(3, LockStoreKind::Cluster, Persistence::None).await;
    let view = state(&fleet).await;
    let roles: Vec<&str> = view["lock_store"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["role"].as_str())
        .collect();
    assert_eq!(roles.len(), 6, "{view}");
    assert_eq!(
        roles.iter().filter(|r| **r == "primary").count(),
        3,
        "{roles:?}"
    );

    // Every tier that claims exclusion on one Redis keeps it on a shard of the cluster.
    for tier in [
        "lua-release",
        "reentrant-watchdog",
        "fair",
        "fenced",
        "atomic-deduct",
    ] {
        admin(
            &fleet,
            reqwest::Method::PUT,
            "/admin/config",
            json!({ "tier": tier, "business_ms": 2, "wait_deadline_ms": 10_000 }),
        )
        .await;
        admin(
            &fleet,
            reqwest::Method::POST,
            "/admin/reset",
            json!({ "stock": 30 }),
        )
        .await;
        let report = admin(
            &fleet,
            reqwest::Method::POST,
            "/admin/burst",
            json!({ "buyers": 60, "via": "fleet" }),
        )
        .await;
        let truth = state(&fleet).await;
        assert_eq!(report["ok"], 30, "{tier}: {report}");
        for (figure, expected) in [
            ("stock", 0),
            ("orders", 30),
            ("oversold", 0),
            ("overlaps", 0),
        ] {
            assert_eq!(truth[figure], expected, "{tier} {figure}: {truth}");
        }
    }

    let failures = run_scenarios(
        &fleet,
        &[
            "cluster-failover-loses-lock",
            "cluster-failover-sync-replicas",
        ],
    )
    .await;

    // The master owning the room's slot stops answering (SIGSTOP): a buyer is told
    // `redis_unavailable` within its deadline; once the cluster has promoted the replica (or
    // the master answers again), sales come back by themselves.
    admin(
        &fleet,
        reqwest::Method::PUT,
        "/admin/config",
        json!({ "tier": "lua-release", "business_ms": 0, "wait_deadline_ms": 1_000 }),
    )
    .await;
    admin(
        &fleet,
        reqwest::Method::POST,
        "/admin/reset",
        json!({ "stock": 10 }),
    )
    .await;
    let (addr, pid) = master_of(&fleet, "oversell:{default}:lock").await;
    signal(pid, "-STOP");
    let asked = std::time::Instant::now();
    let resp = reqwest::Client::new()
        .post(format!("{}/sale", fleet.url()))
        .json(&json!({ "buyer": "while-silent" }))
        .send()
        .await
        .unwrap();
    let took = asked.elapsed();
    signal(pid, "-CONT");
    assert_eq!(resp.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(resp.headers()["retry-after"], "1");
    let refused: Value = resp.json().await.unwrap();
    assert_eq!(refused["error"], "redis_unavailable", "{refused}");
    // The deadline (1 s) plus one answer's limit (2 s) at most, with room for a loaded machine.
    assert!(took < Duration::from_secs(10), "503 after {took:?}");
    eventually_sells(fleet.url(), Duration::from_secs(30)).await;
    let truth = state(&fleet).await;
    assert_eq!(truth["oversold"], 0, "after {addr} stopped: {truth}");
    assert_eq!(truth["orders"], 1, "{truth}");
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
}
