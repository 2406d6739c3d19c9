//! A room's life: created by admin writes under `--max-rooms`, read without leaving a key,
//! expired when idle, and reported lost (503 `state_lost`, never 409) when the store restarts
//! empty.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{
    assert_all_zero, eventually, poll_until, spawn_fleet, spawn_fleet_with, TestFleet,
};

async fn reset(fleet: &TestFleet, i: usize, room: &str, stock: i64) -> (StatusCode, Value) {
    let path = format!("/admin/reset?room={room}");
    fleet
        .call(i, Method::POST, &path, true, json!({ "stock": stock }))
        .await
}

async fn sale(fleet: &TestFleet, i: usize, room: &str) -> (StatusCode, Value) {
    let path = format!("/sale?room={room}");
    fleet.call(i, Method::POST, &path, false, json!({})).await
}

async fn state(fleet: &TestFleet, i: usize, room: &str) -> (StatusCode, Value) {
    let path = format!("/state?room={room}");
    fleet.call(i, Method::GET, &path, false, Value::Null).await
}

#[tokio::test]
async fn the_room_limit_refuses_a_new_room_with_a_409_and_keeps_the_existing_ones() {
    let fleet = spawn_fleet_with(2, |args| args.max_rooms = 3).await;
    for room in ["r1", "r2", "r3"] {
        assert_eq!(reset(&fleet, 0, room, 5).await.0, StatusCode::OK, "{room}");
    }
    // A fourth room, by any admin write and through any instance, is refused.
    let (status, body) = reset(&fleet, 1, "r4", 5).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "room_limit", "{body}");
    assert!(body["message"].as_str().unwrap().contains('3'), "{body}");
    let (status, body) = fleet
        .call(
            0,
            Method::PUT,
            "/admin/tier?room=r4",
            true,
            json!({ "tier": "none" }),
        )
        .await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::CONFLICT, &json!("room_limit"))
    );
    // The existing rooms still work, and can be reset again.
    assert_eq!(reset(&fleet, 1, "r2", 7).await.0, StatusCode::OK);
    assert_eq!(sale(&fleet, 0, "r2").await.0, StatusCode::OK);
    // The refused room left nothing behind.
    assert!(
        !fleet.all_keys().await.iter().any(|k| k.contains("{r4}")),
        "{:?}",
        fleet.all_keys().await
    );
}

#[tokio::test]
async fn reads_and_refused_sales_create_no_key() {
    let fleet = spawn_fleet(1).await;
    // The instance registry is the one key a fleet writes on its own.
    eventually(Duration::from_secs(5), || async {
        fleet.all_keys().await == ["oversell:{.fleet}:instances"]
    })
    .await;
    let before = fleet.all_keys().await;
    let (status, body) = state(&fleet, 0, "nobody-made-this").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "absent");
    assert_eq!(body["stock"], 0);
    let (status, _) = fleet
        .call(
            0,
            Method::GET,
            "/ledger?room=nobody-made-this",
            false,
            Value::Null,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // A sale in a room nobody stocked is refused as such, not as "sold out".
    let (status, body) = sale(&fleet, 0, "nobody-made-this").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "not_stocked", "{body}");
    // A dashboard stream reads the room for a while.
    let mut events = fleet
        .client
        .get(format!("{}/events?room=nobody-made-this", fleet.url(0)))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let mut seen = String::new();
    while seen.matches("event: state").count() < 3 {
        let chunk = tokio::time::timeout(Duration::from_secs(10), events.chunk())
            .await
            .expect("state events keep coming")
            .unwrap()
            .expect("the stream stays open");
        seen += &String::from_utf8_lossy(&chunk);
    }
    drop(events);
    // Nothing of the room; the instance's count of viewers per room (for the class page)
    // expires a few seconds after its last stream closed.
    crate::helpers::eventually(Duration::from_secs(10), || async {
        fleet.all_keys().await == before
    })
    .await;
}

async fn room_keys(fleet: &TestFleet, room: &str) -> Vec<String> {
    let tag = format!("{{{room}}}");
    let keys = fleet.all_keys().await;
    keys.into_iter().filter(|k| k.contains(&tag)).collect()
}

#[tokio::test]
async fn an_idle_room_expires_with_all_its_keys_and_a_used_one_does_not() {
    let fleet = spawn_fleet_with(1, |args| args.room_ttl_secs = 2).await;
    assert_eq!(reset(&fleet, 0, "busy", 1_000_000).await.0, StatusCode::OK);
    assert_eq!(reset(&fleet, 0, "idle", 10).await.0, StatusCode::OK);
    assert_eq!(sale(&fleet, 0, "idle").await.0, StatusCode::OK);
    assert!(
        room_keys(&fleet, "idle").await.len() >= 5,
        "{:?}",
        room_keys(&fleet, "idle").await
    );
    // Selling in "busy" for longer than the TTL keeps it alive, while "idle" goes.
    let started = Instant::now();
    let mut sold = 0;
    while started.elapsed() < Duration::from_secs(3) || !room_keys(&fleet, "idle").await.is_empty()
    {
        let (status, body) = sale(&fleet, 0, "busy").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        sold += 1;
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "idle keys left: {:?}",
            room_keys(&fleet, "idle").await
        );
    }
    let (status, body) = state(&fleet, 0, "busy").await;
    assert_eq!((status, &body["status"]), (StatusCode::OK, &json!("live")));
    assert_eq!(body["orders"], sold, "{body}");
    // The expired room is a room with no stock, not a lost one.
    let (status, body) = sale(&fleet, 0, "idle").await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::CONFLICT, &json!("not_stocked"))
    );
    assert_eq!(state(&fleet, 0, "idle").await.1["status"], "absent");
    // Every key the busy room has carries a TTL.
    let mut conn = fleet.redis_conn().await;
    for key in room_keys(&fleet, "busy").await {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(ttl > 0, "{key} has no TTL ({ttl})");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_restarted_empty_answers_503_state_lost_until_a_reset() {
    let mut fleet = spawn_fleet(2).await;
    assert_eq!(reset(&fleet, 0, "class", 50).await.0, StatusCode::OK);
    for i in 0..2 {
        assert_eq!(sale(&fleet, i, "class").await.0, StatusCode::OK);
        assert_eq!(state(&fleet, i, "class").await.1["status"], "live");
    }

    fleet.redis.restart().expect("restart redis empty");
    for i in 0..2 {
        // Once the instance reaches the new Redis, the answer is that the state is lost.
        let (status, body) = poll_until(
            Duration::from_secs(10),
            || sale(&fleet, i, "class"),
            |(_, body)| body["error"] != "redis_unavailable",
        )
        .await;
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "app{}: {body}",
            i + 1
        );
        assert_eq!(body["error"], "state_lost", "{body}");
        let (status, body) = state(&fleet, i, "class").await;
        assert_eq!(
            (status, &body["error"]),
            (StatusCode::SERVICE_UNAVAILABLE, &json!("state_lost"))
        );
    }
    // A room that never existed is not "lost".
    let (status, body) = sale(&fleet, 1, "never").await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::CONFLICT, &json!("not_stocked"))
    );

    // A reset brings sales back, on every instance.
    assert_eq!(reset(&fleet, 1, "class", 5).await.0, StatusCode::OK);
    for i in 0..2 {
        assert_eq!(sale(&fleet, i, "class").await.0, StatusCode::OK);
    }
    let (status, body) = state(&fleet, 0, "class").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["orders"].clone(), body["stock"].clone()),
        (json!(2), json!(3))
    );
}

/// A reset while sales are under way: one read the old stock, so its write (n-1 of the old
/// stock) must not land on the new one, nor its exit or release (the reset deleted its lock) be
/// counted against the new figures: it answers 409 `room_reset`. Another waited for the lock
/// across the reset and had read nothing: it starts again in the reset room and sells, its old
/// fencing token counted nowhere. A sale begun after the reset sells too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sale_under_way_when_the_room_is_reset_writes_and_counts_nothing() {
    let fleet = spawn_fleet(1).await;
    for tier in ["setnx", "lua-release", "reentrant-watchdog", "fenced"] {
        fleet
            .configure(json!({ "tier": tier, "business_ms": 800, "ttl_ms": 5000 }))
            .await;
        fleet.reset(100).await;
        let before = fleet.timeline_len().await;
        let buy = || fleet.client.post(format!("{}/sale", fleet.url(0))).send();
        let reading = tokio::spawn(buy());
        // Under way once it has read (the enter is on the timeline), for 800 ms of business.
        eventually(Duration::from_secs(10), || async {
            fleet.timeline_len().await > before
        })
        .await;
        // A second buyer waits for the lock (Redis has seen it try): it will read only after
        // the reset.
        fleet.note_commands().await;
        assert!(
            !fleet.lock_tried().await,
            "{tier}: the holder is in its business"
        );
        let waiting = tokio::spawn(buy());
        eventually(Duration::from_secs(10), || fleet.lock_tried()).await;
        fleet.reset(50).await;
        let answer = reading.await.unwrap().unwrap();
        assert_eq!(answer.status(), StatusCode::CONFLICT, "{tier}");
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body["error"], "room_reset", "{tier}: {body}");
        // The waiting sale had read nothing: it starts again in the reset room, and sells.
        let answer = waiting.await.unwrap().unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{tier}: waited across");
        // So does a sale begun after the reset (its fencing token is not taken for stale).
        let after = buy().await.unwrap();
        assert_eq!(after.status(), StatusCode::OK, "{tier}");
        let state = fleet.state().await;
        assert_eq!(state["stock"], 48, "{tier}: {state}");
        assert_eq!(state["orders"], 2, "{tier}: {state}");
        assert_all_zero(&state, tier);
        assert_eq!(state["stale_writes_rejected"], 0, "{tier}: {state}");
    }
}

#[tokio::test]
async fn a_class_too_big_for_the_room_limit_is_refused_whole_and_the_old_class_keeps_working() {
    let fleet = spawn_fleet_with(1, |args| args.max_rooms = 4).await;
    let made = fleet
        .admin(Method::POST, "/admin/class", json!({ "students": 2 }))
        .await;
    let token = made["rooms"][0]["token"].as_str().unwrap().to_owned();
    let room = made["rooms"][0]["room"].as_str().unwrap().to_owned();
    let keys_before = fleet.all_keys().await;
    // Five rooms cannot fit under four: refused before a room, a token or a vote is touched.
    let (status, body) = fleet
        .call(
            0,
            Method::POST,
            "/admin/class",
            true,
            json!({ "students": 5 }),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "room_limit", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("5 rooms") && message.contains("at most 4"),
        "{message}"
    );
    assert_eq!(fleet.all_keys().await, keys_before);
    // The class made before still stands: its token still acts in its room.
    let resp = fleet
        .client
        .post(format!("{}/admin/reset?room={room}", fleet.url(0)))
        .bearer_auth(&token)
        .json(&json!({ "stock": 3 }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // A class that fits (its own two rooms counted once) is made.
    let (status, body) = fleet
        .call(
            0,
            Method::POST,
            "/admin/class",
            true,
            json!({ "students": 4 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
