//! The locks in a Redis Cluster (three masters, a replica each, made by `oversell up
//! --lock-store cluster`): every safe tier sells exactly the stock with its lock on one shard,
//! that shard's master failing over loses the lock (and `WAIT` keeps it), and while the
//! master owning the room's slot does not answer, buyers are told `redis_unavailable` within
//! their deadline and nothing is sold twice. Every figure is read from the resource store.
//!
//! Then the stock itself on a cluster (`oversell up --resource-store cluster`, the locks on
//! it too): many rooms sold out at once, each exactly, their keys spread over the three
//! masters; one master silent refuses its own rooms' buyers (503) while the others sell.

use std::time::Duration;

use oversell::launch::local_fleet::Fleet;
use oversell::lock_store::{LockStoreKind, Persistence};
use serde_json::{json, Value};

use crate::helpers::{assert_refused_in_one_line, eventually, eventually_sells, state};
use crate::lock_store::{admin, run_scenarios};
use crate::scenarios::{start_cluster_resource_fleet, start_fleet_with};

/// The address of a node serving `key`'s slot, as `CLUSTER SLOTS` lists it: `which` 0 is the
/// master, 1 its first replica (`[start, end, master, replica…]`, each node `[ip, port, id, …]`).
async fn serving(fleet: &Fleet, key: &str, which: usize) -> Option<(String, i64)> {
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
    ranges.iter().find_map(|range| {
        let bound = |i: usize| redis::from_redis_value::<i64>(range[i].clone()).unwrap();
        let redis::Value::Array(node) = range.get(2 + which)? else {
            return None;
        };
        let ip: String = redis::from_redis_value(node[0].clone()).unwrap();
        let port: i64 = redis::from_redis_value(node[1].clone()).unwrap();
        (bound(0)..=bound(1)).contains(&slot).then_some((ip, port))
    })
}

/// The address of the master owning `key`'s slot, and its pid, as the cluster says.
async fn master_of(fleet: &Fleet, key: &str) -> (String, u32) {
    let (ip, port) = serving(fleet, key, 0)
        .await
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

/// The address of a replica of the master owning `key`'s slot, as the cluster says.
async fn replica_of(fleet: &Fleet, key: &str) -> String {
    let (ip, port) = serving(fleet, key, 1)
        .await
        .expect("the master owning the slot has a replica");
    format!("{ip}:{port}")
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
    let view = state(fleet.url()).await;
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
        let truth = state(fleet.url()).await;
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
    let resp = crate::helpers::http_client()
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
    let truth = state(fleet.url()).await;
    assert_eq!(truth["oversold"], 0, "after {addr} stopped: {truth}");
    assert_eq!(truth["orders"], 1, "{truth}");
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn bad_resource_store_flags_stop_with_one_line_naming_the_flag() {
    assert_refused_in_one_line(&[
        (
            vec!["serve", "--resource-store", "cluster"],
            "--redis-cluster",
        ),
        (
            vec!["serve", "--redis-cluster", "127.0.0.1:7000"],
            "--redis-cluster",
        ),
        (
            vec!["serve", "--resource-store", "sharded"],
            "--resource-store",
        ),
        (
            vec![
                "up",
                "--resource-store",
                "cluster",
                "--lock-store",
                "single",
            ],
            "--lock-store",
        ),
        (vec!["up", "--resource-store", "cluster", "--lab"], "--lab"),
        (
            vec!["up", "--resource-store", "cluster", "--redis-port", "7000"],
            "--redis-port",
        ),
    ]);
}

const ROOMS: usize = 30;
const STOCK: i64 = 10;

/// One sale in `room` through nginx: its status, Retry-After and body.
async fn sale_in(fleet: &Fleet, room: &str) -> (reqwest::StatusCode, Option<String>, Value) {
    let resp = crate::helpers::http_client()
        .post(format!("{}/sale?room={room}", fleet.url()))
        .json(&json!({ "buyer": format!("{room}-late") }))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

async fn state_in(fleet: &Fleet, room: &str) -> Value {
    reqwest::get(format!("{}/state?room={room}", fleet.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Every room configured and stocked with `stock`, all at once.
async fn stock_rooms(fleet: &Fleet, rooms: &[String], config: Value, stock: i64) {
    futures_util::future::join_all(rooms.iter().map(|room| {
        let config = config.clone();
        async move {
            admin(
                fleet,
                reqwest::Method::PUT,
                &format!("/admin/config?room={room}"),
                config,
            )
            .await;
            admin(
                fleet,
                reqwest::Method::POST,
                &format!("/admin/reset?room={room}"),
                json!({ "stock": stock }),
            )
            .await;
        }
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_on_a_cluster_resource_store_spread_over_the_masters_and_sell_exactly() {
    let fleet = start_cluster_resource_fleet(3).await;
    let rooms: Vec<String> = (1..=ROOMS).map(|n| format!("shard-{n:02}")).collect();
    stock_rooms(
        &fleet,
        &rooms,
        json!({ "tier": "lua-release", "business_ms": 1, "wait_deadline_ms": 20_000 }),
        STOCK,
    )
    .await;

    // Every room sold out at once, twice as many buyers as items in each.
    let reports = futures_util::future::join_all(rooms.iter().map(|room| {
        let path = format!("/admin/burst?room={room}");
        let fleet = &fleet;
        async move {
            let buyers = json!({ "buyers": 2 * STOCK, "via": "fleet" });
            admin(fleet, reqwest::Method::POST, &path, buyers).await
        }
    }))
    .await;
    for (room, report) in rooms.iter().zip(&reports) {
        assert_eq!(report["ok"], STOCK, "{room}: {report}");
        let truth = state_in(&fleet, room).await;
        for (figure, expected) in [
            ("stock", 0),
            ("orders", STOCK),
            ("items_sold", STOCK),
            ("oversold", 0),
            ("lost_updates", 0),
            ("overlaps", 0),
        ] {
            assert_eq!(truth[figure], expected, "{room} {figure}: {truth}");
        }
    }

    // Where the stock lives: each room's stock key on the master owning its slot, asked
    // directly (a node answers only for its own slots), and every master holding some.
    let mut per_master: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for room in &rooms {
        let key = format!("oversell:{{{room}}}:stock");
        let (addr, _) = master_of(&fleet, &key).await;
        let client = redis::Client::open(format!("redis://{addr}")).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let held: i64 = redis::cmd("EXISTS")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(held, 1, "{room}'s stock is not on {addr}");
        per_master.entry(addr).or_default().push(room);
    }
    assert_eq!(per_master.len(), 3, "rooms per master: {per_master:?}");
    // The registry is one key, on one master, in the fleet's slot.
    let (fleet_master, _) = master_of(&fleet, "oversell:{.fleet}:rooms").await;
    let client = redis::Client::open(format!("redis://{fleet_master}")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let registered: usize = redis::cmd("ZCARD")
        .arg("oversell:{.fleet}:rooms")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(registered, ROOMS);
    // A room nobody stocked: its status reads a room key and the fleet's epoch, on two
    // masters, and says so.
    let (status, _, body) = sale_in(&fleet, "never-stocked").await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "not_stocked", "{body}");

    // A master that does not hold the fleet's slot stops answering (SIGSTOP), its replica
    // told not to take over yet (`cluster-replica-no-failover`: a failover within the buyer's
    // wait would let it sell instead): its rooms' buyers are told `redis_unavailable`, the
    // other masters' rooms sell on; once the replica may take over, the cluster promotes it
    // and its rooms sell again.
    stock_rooms(
        &fleet,
        &rooms,
        json!({ "business_ms": 0, "wait_deadline_ms": 1_000 }),
        5,
    )
    .await;
    let (victim, victims) = per_master
        .iter()
        .find(|(addr, _)| **addr != fleet_master)
        .map(|(addr, rooms)| (addr.clone(), rooms.clone()))
        .expect("two masters do not hold the fleet's slot");
    let bystanders: Vec<&str> = rooms
        .iter()
        .map(String::as_str)
        .filter(|room| !victims.contains(room))
        .collect();
    let victim_key = format!("oversell:{{{}}}:stock", victims[0]);
    let (_, pid) = master_of(&fleet, &victim_key).await;
    let replica = replica_of(&fleet, &victim_key).await;
    let set_no_failover = |yes: &'static str| {
        let replica = replica.clone();
        async move {
            let client = redis::Client::open(format!("redis://{replica}")).unwrap();
            let mut conn = client.get_multiplexed_async_connection().await.unwrap();
            let () = redis::cmd("CONFIG")
                .arg("SET")
                .arg("cluster-replica-no-failover")
                .arg(yes)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
    };
    set_no_failover("yes").await;
    signal(pid, "-STOP");
    let asked = std::time::Instant::now();
    let (status, retry, refused) = sale_in(&fleet, victims[0]).await;
    let took = asked.elapsed();
    assert_eq!(
        status,
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "after {took:?}: {refused}"
    );
    assert_eq!(retry.as_deref(), Some("1"));
    assert_eq!(refused["error"], "redis_unavailable", "{refused}");
    assert!(took < Duration::from_secs(10), "503 after {took:?}");
    for room in bystanders.iter().take(3) {
        eventually(Duration::from_secs(10), || async {
            sale_in(&fleet, room).await.0 == reqwest::StatusCode::OK
        })
        .await;
    }
    set_no_failover("no").await;
    eventually(Duration::from_secs(30), || async {
        sale_in(&fleet, victims[0]).await.0 == reqwest::StatusCode::OK
    })
    .await;
    signal(pid, "-CONT");
    assert_ne!(
        master_of(&fleet, &victim_key).await.1,
        pid,
        "the stopped master was replaced"
    );

    // Nothing sold twice anywhere: every acknowledged sale took an item of its own room.
    for room in &rooms {
        let truth = state_in(&fleet, room).await;
        assert_eq!(
            truth["oversold"], 0,
            "{room} after {victim} stopped: {truth}"
        );
        assert_eq!(truth["lost_updates"], 0, "{room}: {truth}");
        let sold = truth["orders"].as_i64().unwrap_or(-1);
        assert_eq!(
            sold + truth["stock"].as_i64().unwrap_or(-1),
            5,
            "{room}: {truth}"
        );
    }
    fleet.stop().await;
}
