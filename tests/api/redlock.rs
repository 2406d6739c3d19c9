//! Redlock over real, independent `redis-server` masters: every chapter of the curriculum's
//! Redlock debate run against a fleet from `oversell up`, a quorum lost for real, and the
//! flags that would make a quorum meaningless refused. Every figure comes from the resource
//! store, which none of the faults touches.

use std::time::{Duration, Instant};

use oversell::launch::redis_server::RedisServer;
use oversell::lock_store::{LockStoreKind, Persistence};
use oversell_api::tier::Tier;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_sale_refused, poll_until, serve_args, state, TestApp, TOKEN};
use crate::lock_store::run_scenarios;
use crate::scenarios::start_fleet_with;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redlock_fleet_shows_what_the_quorum_fixes_and_what_it_cannot() {
    let fleet = start_fleet_with(3, LockStoreKind::Redlock, Persistence::None).await;
    let masters = fleet.lock_store_processes();
    assert_eq!(masters.len(), 5, "{masters:?}");
    let failures = run_scenarios(
        &fleet,
        &[
            "redlock-minority-down",
            "redlock-majority-down",
            "redlock-restart-no-fsync",
            "redlock-clock-jump",
            "redlock-freeze",
        ],
    )
    .await;
    // The faults struck real processes: killed masters were restarted by their supervisors,
    // and the clock jump shows in the masters' own TIME.
    let restarted = fleet
        .lock_store_processes()
        .iter()
        .filter(|p| p.restarts >= 1)
        .count();
    // A master that answers the state's read late shows as down with no clock, and on a
    // loaded machine one read can miss one: wait until all five answer.
    let state = poll_until(
        Duration::from_secs(20),
        || state(fleet.url()),
        |seen| all_masters_up(seen, 5),
    )
    .await;
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
    assert!(restarted >= 3, "only {restarted} masters were restarted");
    assert!(
        all_masters_up(&state, 5),
        "a master never answered: {state}"
    );
    let nodes = state["lock_store"]["nodes"].as_array().unwrap();
    let jumped = nodes
        .iter()
        .filter(|n| n["clock_skew_ms"].as_i64().unwrap_or(0) >= 29_000)
        .count();
    assert_eq!(jumped, 3, "three masters' clocks run 30 s ahead: {nodes:?}");
}

/// Whether the state lists `count` lock-store nodes, every one of them up.
fn all_masters_up(state: &Value, count: usize) -> bool {
    state["lock_store"]["nodes"]
        .as_array()
        .is_some_and(|nodes| nodes.len() == count && nodes.iter().all(|n| n["up"] == true))
}

/// 001's lease of "a few tens of ms" against one master stopped for longer: the majority comes
/// in with no validity, the buyer gives the lock back and asks again, and one holder sells.
/// The stopped master was a real process stop: it runs again afterwards (state not `T`), and
/// the resource store counted the lapse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_master_spends_a_short_lease_and_the_lock_is_given_back_everywhere() {
    let fleet = start_fleet_with(3, LockStoreKind::Redlock, Persistence::None).await;
    let failures = run_scenarios(&fleet, &["redlock-validity-runs-out"]).await;
    let stopped: Vec<u32> = fleet
        .lock_store_processes()
        .iter()
        .filter_map(|p| p.pid)
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The state is the field after the parenthesised command name.
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('T'))
        })
        .collect();
    let state = state(fleet.url()).await;
    let restarted = fleet
        .lock_store_processes()
        .iter()
        .filter(|p| p.restarts > 0)
        .count();
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
    assert!(stopped.is_empty(), "masters left stopped: {stopped:?}");
    assert_eq!(restarted, 0, "a slow master is stopped, never killed");
    assert!(
        state["validity_lapsed"].as_i64().unwrap_or(0) >= 1,
        "{state}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redlock_masters_that_fsync_always_keep_the_lock_through_a_restart() {
    let fleet = start_fleet_with(3, LockStoreKind::Redlock, Persistence::Always).await;
    let failures = run_scenarios(&fleet, &["redlock-restart-fsync-always"]).await;
    let restarted = fleet
        .lock_store_processes()
        .iter()
        .filter(|p| p.restarts >= 1)
        .count();

    // Two masters killed and held down for a minute: sales go on, and stopping the fleet does
    // not wait for the hold-down to pass.
    let client = crate::helpers::http_client();
    let post = |path: &str, body: Value| {
        client
            .post(format!("{}{path}", fleet.url()))
            .bearer_auth(crate::scenarios::TOKEN)
            .json(&body)
            .send()
    };
    post("/admin/reset", json!({ "stock": 50 })).await.unwrap();
    let armed = post(
        "/admin/faults",
        json!({ "kind": "node-down", "ms": 60_000, "nodes": 2 }),
    )
    .await
    .unwrap();
    assert_eq!(armed.status(), StatusCode::OK);
    // The fault reaches every instance over pub/sub: sell until one has struck with it.
    let struck = poll_until(
        Duration::from_secs(10),
        || async {
            let sold = post("/sale", json!({ "buyer": "b" })).await.unwrap();
            assert_eq!(sold.status(), StatusCode::OK);
            state(fleet.url()).await["store_faults"] == 1
        },
        |struck| *struck,
    )
    .await;
    assert!(struck, "node-down never struck");
    let down = || {
        fleet
            .lock_store_processes()
            .iter()
            .filter(|p| p.pid.is_none())
            .count()
    };
    let down = poll_until(
        Duration::from_secs(5),
        || async { down() },
        |down| *down >= 2,
    )
    .await;
    let stopping = Instant::now();
    fleet.stop().await;
    let stop_took = stopping.elapsed();

    assert!(failures.is_empty(), "{failures:?}");
    // Two cut off for the acquire, one restarted after it.
    assert!(restarted >= 3, "only {restarted} masters were restarted");
    assert_eq!(down, 2, "two masters held down");
    assert!(
        stop_took < Duration::from_secs(20),
        "stop took {stop_took:?}"
    );
}

/// Three masters started by the test, one instance, no `up`: a majority lost answers a 503
/// `lock_no_quorum` within the wait deadline, and a majority back sells again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_majority_of_masters_is_a_clear_503_and_getting_it_back_sells_again() {
    let resource = RedisServer::start().unwrap();
    let mut masters: Vec<RedisServer> = (0..3).map(|_| RedisServer::start().unwrap()).collect();
    let mut args = serve_args(&resource.url(), "quorum");
    args.lock_store = LockStoreKind::Redlock;
    args.lock_redis_nodes = masters.iter().map(RedisServer::url).collect();
    args.tier = Tier::Redlock;
    args.wait_deadline_ms = 1_000;
    let app = TestApp::spawn(&args).await;
    let client = crate::helpers::http_client();
    let reset = client
        .post(format!("{}/admin/reset", app.url))
        .bearer_auth(TOKEN)
        .json(&json!({ "stock": 10 }))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);
    let sale = || async {
        let resp = client
            .post(format!("{}/sale", app.url))
            .json(&json!({ "buyer": "b" }))
            .send()
            .await
            .unwrap();
        (resp.status(), resp.json::<Value>().await.unwrap())
    };
    assert_eq!(sale().await.0, StatusCode::OK);

    // One of three down: still a majority.
    masters[2].kill();
    assert_eq!(sale().await.0, StatusCode::OK);

    // Two of three down: no majority, whatever the wait.
    masters[1].kill();
    let within = Duration::from_millis(1_000 + 1_000);
    let body = assert_sale_refused(&app.url, "lock_no_quorum", within).await;
    assert!(
        body["message"].as_str().unwrap().contains("1 of 3"),
        "{body}"
    );

    masters[1].restart().unwrap();
    let (status, body) = sale().await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["stock_left"], 7, "{body}");
    app.shut_down().await;
}

#[tokio::test]
async fn the_redlock_tier_is_refused_where_there_is_no_quorum_to_ask() {
    let redis = RedisServer::start().unwrap();
    let app = TestApp::spawn(&serve_args(&redis.url(), "single")).await;
    let resp = crate::helpers::http_client()
        .put(format!("{}/admin/config", app.url))
        .bearer_auth(TOKEN)
        .json(&json!({ "tier": "redlock" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("--lock-store redlock"),
        "{body}"
    );
    let fault = crate::helpers::http_client()
        .post(format!("{}/admin/faults", app.url))
        .bearer_auth(TOKEN)
        .json(&json!({ "kind": "clock-jump", "ms": 30000 }))
        .send()
        .await
        .unwrap();
    assert_eq!(fault.status(), StatusCode::BAD_REQUEST);
    app.shut_down().await;
}

#[test]
fn bad_redlock_flags_stop_with_one_line_naming_the_flag() {
    crate::helpers::assert_refused_in_one_line(&[
        (
            vec!["up", "--lock-store", "redlock", "--lock-nodes", "4"],
            "--lock-nodes",
        ),
        (
            vec!["up", "--lock-store", "redlock", "--lock-nodes", "11"],
            "--lock-nodes",
        ),
        (
            vec!["up", "--lock-store", "redlock", "--lock-nodes", "1"],
            "--lock-nodes",
        ),
        (vec!["up", "--lock-nodes", "3"], "--lock-nodes"),
        (vec!["up", "--tier", "redlock"], "--lock-store redlock"),
        (
            vec!["serve", "--lock-store", "redlock"],
            "--lock-redis-nodes",
        ),
    ]);
}
