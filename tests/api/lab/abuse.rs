//! The lab's locks as abuse: a student's script that reaches past its room's lock, runs away,
//! or is sent from another room's token, refused with a message that names the step, the
//! resource store untouched and the other rooms selling throughout.

use std::collections::BTreeMap;
use std::time::Duration;

use oversell::launch::local_fleet::Fleet;
use oversell::lock_store::{LockStoreKind, Persistence};
use oversell_api::tier::Tier;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{ladder_lock, send, submit};
use crate::helpers::{eventually, poll_until};
use crate::scenarios::{start_fleet, start_fleet_with, TOKEN};

/// Every key of a Redis and its value (`DUMP`), to compare a store before and after.
async fn snapshot(url: &str) -> BTreeMap<String, Vec<u8>> {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut all = BTreeMap::new();
    for key in keys {
        let dumped: Vec<u8> = redis::cmd("DUMP")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        all.insert(key, dumped);
    }
    all
}

/// One sale in `room`; its status and body.
async fn sale(fleet: &Fleet, room: &str) -> (StatusCode, Value) {
    let path = format!("/sale?room={room}");
    let body = Some(json!({ "buyer": "student" }));
    send(fleet, reqwest::Method::POST, &path, "", body).await
}

/// A student's lock that misbehaves: refused by the ACL, or stopped when it runs away, with a
/// message that says which step and why; the resource store untouched by it (every key
/// compared), and another room selling on the same lock store throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_students_script_cannot_reach_past_its_rooms_lock_and_is_stopped_when_it_runs_away() {
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let lock_store = format!("redis://127.0.0.1:{}", fleet.lock_store_processes()[0].port);
    let (safe, _) = ladder_lock(Tier::LuaRelease);
    let release = safe["release"].clone();
    let fleet_ref = &fleet;
    let reset = |room: &'static str| async move {
        let path = format!("/admin/reset?room={room}");
        let stock = Some(json!({ "stock": 1000 }));
        send(fleet_ref, reqwest::Method::POST, &path, TOKEN, stock).await
    };
    // Another room sells under a built-in tier on the same lock store meanwhile.
    assert_eq!(reset("other").await.0, StatusCode::OK);
    assert_eq!(reset("student").await.0, StatusCode::OK);
    // The submission alone switches the room to its own lock.
    assert_eq!(submit(&fleet, "student", &safe).await.0, StatusCode::OK);
    assert_eq!(sale(&fleet, "student").await.0, StatusCode::OK);
    // The other room's lock is held while the student's scripts try to reach it.
    let mut locks = redis::Client::open(lock_store.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("oversell:{other}:lock")
        .arg("someone")
        .arg("PX")
        .arg(60_000)
        .query_async(&mut locks)
        .await
        .unwrap();

    let cases: &[(&str, &str)] = &[
        ("redis.call('FLUSHALL') return 1", "can't run this command"),
        (
            "return redis.call('SET', 'oversell:{student}:stock', 0)",
            "can't access at least one of the keys",
        ),
        (
            "return redis.call('GET', 'oversell:{other}:lock')",
            "can't access at least one of the keys",
        ),
        (
            "return redis.call('CONFIG', 'SET', 'maxmemory', '1')",
            "not allowed from script",
        ),
        ("redis.call('FLUSHDB') return 1", "can't run this command"),
        ("redis.call('KEYS', '*') return 1", "can't run this command"),
        ("while true do end", "SCRIPT KILL"),
        (
            "redis.call('SET', KEYS[1], ARGV[1]) while true do end",
            "restarted",
        ),
    ];
    for (acquire, said) in cases {
        let truth_before = snapshot(fleet.redis_url().expect("one resource redis")).await;
        let lock = json!({ "acquire": [acquire], "release": release });
        let (status, body) = submit(&fleet, "student", &lock).await;
        assert_eq!(status, StatusCode::OK, "{acquire}: {body}");
        let (status, body) = sale(&fleet, "student").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{acquire}: {body}");
        assert_eq!(body["error"], "lab_lock_failed", "{acquire}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("acquire step 1") && message.contains(said),
            "{acquire}: {message}"
        );
        // What the student reads back.
        let (_, shown) = send(&fleet, reqwest::Method::GET, "/lab?room=student", "", None).await;
        assert!(
            shown["last_error"].as_str().unwrap_or("").contains(said),
            "{shown}"
        );
        // The resource store: nothing but the student room's own lab record and counters.
        let truth_after = snapshot(fleet.redis_url().expect("one resource redis")).await;
        for (key, value) in &truth_before {
            let own_record = key.starts_with("oversell:{student}:")
                && ["lab", "timeline", "lock_timeouts"]
                    .iter()
                    .any(|k| key.ends_with(k));
            // The fleet's own bookkeeping: live instances, rooms' last use, viewers.
            let bookkeeping = [
                "oversell:{.fleet}:instances",
                "oversell:{.fleet}:rooms",
                "oversell:{.fleet}:viewers",
            ]
            .iter()
            .any(|k| key.starts_with(k));
            if !own_record && !bookkeeping {
                assert_eq!(truth_after.get(key), Some(value), "{acquire} changed {key}");
            }
        }
        // The other room sells on (its lock store may be restarting after a runaway).
        let _: redis::RedisResult<()> = redis::cmd("DEL")
            .arg("oversell:{other}:lock")
            .query_async(&mut locks)
            .await;
        eventually(Duration::from_secs(30), || async {
            sale(&fleet, "other").await.0 == StatusCode::OK
        })
        .await;
    }

    // Not Lua: refused at submission with Redis's own message and the line. An instance that
    // has not yet reconnected to the restarted lock store says 503 (try again), as it should.
    let broken = json!({ "acquire": ["return 1", "local x = \n\nif then"], "release": release });
    let (status, body) = poll_until(
        Duration::from_secs(30),
        || submit(&fleet, "student", &broken),
        |(status, _)| *status != StatusCode::SERVICE_UNAVAILABLE,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("acquire step 2") && message.contains("user_script:3"),
        "{message}"
    );
    fleet.stop().await;
}

/// A room token submits and grades in its own room only; a fleet whose locks share the stock's
/// server refuses the lab, naming the flag that gives it one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lab_lock_is_its_rooms_alone_and_needs_a_lock_store_apart() {
    let fleet = start_fleet(1).await;
    let (lock, _) = ladder_lock(Tier::LuaRelease);
    let (status, body) = submit(&fleet, "alice", &lock).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("--lab"),
        "{body}"
    );
    fleet.stop().await;

    let fleet = start_fleet_with(1, LockStoreKind::Single, Persistence::None).await;
    let (status, class) = send(
        &fleet,
        reqwest::Method::POST,
        "/admin/class",
        TOKEN,
        Some(json!({ "students": 2 })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{class}");
    let token = class["rooms"][0]["token"].as_str().unwrap().to_owned();
    let own = class["rooms"][0]["room"].as_str().unwrap().to_owned();
    let theirs = class["rooms"][1]["room"].as_str().unwrap().to_owned();
    for (method, path, body) in [
        (reqwest::Method::PUT, "/admin/lab", Some(lock.clone())),
        (reqwest::Method::POST, "/admin/lab/grade", None),
    ] {
        let (status, answer) = send(
            &fleet,
            method.clone(),
            &format!("{path}?room={theirs}"),
            &token,
            body.clone(),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {answer}");
        assert_eq!(answer["error"], "forbidden");
    }
    // The room sells under a built-in tier until its own lock is submitted, then under that.
    let (status, answer) = send(
        &fleet,
        reqwest::Method::PUT,
        &format!("/admin/tier?room={own}"),
        &token,
        Some(json!({ "tier": "lua-release" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = send(
        &fleet,
        reqwest::Method::PUT,
        &format!("/admin/lab?room={own}"),
        &token,
        Some(lock),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["tier"], "custom", "{answer}");
    let (_, state) = send(
        &fleet,
        reqwest::Method::GET,
        &format!("/state?room={own}"),
        "",
        None,
    )
    .await;
    assert_eq!(state["tier"], "custom", "{state}");
    // Malformed: a clear 400 naming what is wrong.
    let (status, answer) = send(
        &fleet,
        reqwest::Method::PUT,
        &format!("/admin/lab?room={own}"),
        &token,
        Some(json!({ "acquire": [], "release": ["return 1"] })),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(answer["message"]
        .as_str()
        .unwrap()
        .contains("acquire must have"));
    fleet.stop().await;
}
