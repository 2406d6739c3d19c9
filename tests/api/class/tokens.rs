//! A room token acts in its own room on every room route and gets a 403 everywhere else;
//! rotated or revoked, it stops on every instance at once; it is stored only as a digest.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{call, make_class, token_of};
use crate::helpers::{spawn_fleet, TestFleet};

/// Every room-scoped admin route, with a body it accepts.
fn room_routes() -> Vec<(Method, &'static str, Value)> {
    vec![
        (Method::POST, "/admin/reset", json!({ "stock": 7 })),
        (Method::PUT, "/admin/tier", json!({ "tier": "none" })),
        (Method::PUT, "/admin/config", json!({ "business_ms": 3 })),
        (Method::POST, "/admin/burst", json!({ "buyers": 3 })),
        (
            Method::POST,
            "/admin/faults",
            json!({ "kind": "release-gap", "ms": 50 }),
        ),
        (Method::DELETE, "/admin/faults", json!({})),
    ]
}

/// What another room's token must not change: settings, stock and orders.
async fn room_facts(fleet: &TestFleet, room: &str) -> Value {
    let state = fleet.get_json(0, &format!("/state?room={room}")).await;
    json!({
        "settings": state["settings"],
        "stock": state["stock"],
        "orders": state["orders"],
        "faults": state["faults"],
    })
}

#[tokio::test]
async fn a_room_token_acts_in_its_own_room_and_gets_403_everywhere_else() {
    let fleet = spawn_fleet(2).await;
    let tickets = make_class(&fleet, 2).await;
    assert_eq!(tickets[0]["room"], "student-01");
    assert_eq!(tickets[1]["room"], "student-02");
    let mine = token_of(&tickets[0]);

    // A sale in the other room, so "unchanged" covers orders too.
    let (status, _) = call(
        &fleet,
        0,
        Method::POST,
        "/sale?room=student-02",
        None,
        json!({ "buyer": "b" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let before = room_facts(&fleet, "student-02").await;

    // In its own room, every room route answers as for the admin token.
    for (i, (method, path, body)) in room_routes().into_iter().enumerate() {
        let path = format!("{path}?room=student-01");
        let (status, answer) = call(&fleet, i, method, &path, Some(&mine), body).await;
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    }
    // A scenario passes the token check (an unknown id is the next thing refused).
    let (status, answer) = call(
        &fleet,
        0,
        Method::POST,
        "/admin/scenario?room=student-01",
        Some(&mine),
        json!({ "id": "no-such-scenario" }),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let whoami = call(
        &fleet,
        1,
        Method::GET,
        "/admin/whoami",
        Some(&mine),
        json!({}),
    )
    .await;
    assert_eq!(
        whoami,
        (
            StatusCode::OK,
            json!({ "scope": "room", "room": "student-01" })
        )
    );

    // In the other room, every room route is a 403 with a JSON body that names both rooms.
    let mut routes = room_routes();
    routes.push((
        Method::POST,
        "/admin/scenario",
        json!({ "id": "none-race" }),
    ));
    for (i, (method, path, body)) in routes.into_iter().enumerate() {
        let path = format!("{path}?room=student-02");
        let (status, answer) = call(&fleet, i, method, &path, Some(&mine), body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {answer}");
        assert_eq!(answer["error"], "forbidden", "{path}: {answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(
            message.contains("student-01") && message.contains("student-02"),
            "{message}"
        );
    }
    // The default room is another room too.
    let (status, _) = call(
        &fleet,
        0,
        Method::POST,
        "/admin/reset",
        Some(&mine),
        json!({ "stock": 1 }),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(room_facts(&fleet, "student-02").await, before);

    // Whatever reaches past the room is the instructor's alone, even asked in its own room.
    // Instances are named app1, app2… (see `spawn_fleet`).
    let id = "app2";
    let beyond = [
        (
            Method::POST,
            "/admin/faults?room=student-01".to_owned(),
            json!({ "kind": "freeze", "ms": 100 }),
        ),
        (
            Method::POST,
            "/admin/faults?room=student-01".to_owned(),
            json!({ "kind": "crash-holding" }),
        ),
        (
            Method::POST,
            "/admin/scenario?room=student-01".to_owned(),
            json!({ "id": "setnx-crash" }),
        ),
        (
            Method::POST,
            format!("/admin/instances/{id}/crash"),
            json!({}),
        ),
        (
            Method::POST,
            format!("/admin/instances/{id}/freeze"),
            json!({ "ms": 100 }),
        ),
        (
            Method::POST,
            "/admin/class".to_owned(),
            json!({ "students": 1 }),
        ),
        (Method::GET, "/admin/class".to_owned(), json!({})),
        (Method::DELETE, "/admin/class".to_owned(), json!({})),
        (
            Method::POST,
            "/admin/rooms/student-01/token".to_owned(),
            json!({}),
        ),
        (
            Method::DELETE,
            "/admin/rooms/student-02/token".to_owned(),
            json!({}),
        ),
    ];
    for (method, path, body) in beyond {
        let (status, answer) = call(&fleet, 0, method, &path, Some(&mine), body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {answer}");
        assert_eq!(answer["error"], "forbidden", "{path}: {answer}");
    }
    // Both instances still sell (nothing crashed or froze), and the other room kept its token.
    for i in 0..2 {
        let (status, _) = call(
            &fleet,
            i,
            Method::POST,
            "/sale?room=student-01",
            None,
            json!({ "buyer": format!("after-{i}") }),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    let theirs = token_of(&tickets[1]);
    let (status, _) = call(
        &fleet,
        0,
        Method::GET,
        "/admin/whoami",
        Some(&theirs),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // No token or a made-up one: 401, whatever the room.
    for token in [None, Some("room-0123456789abcdef0123456789abcdef")] {
        let (status, answer) = call(
            &fleet,
            0,
            Method::POST,
            "/admin/reset?room=student-01",
            token,
            json!({ "stock": 1 }),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert_eq!(answer["error"], "unauthorized", "{answer}");
    }
}

#[tokio::test]
async fn a_rotated_or_revoked_token_stops_on_every_instance_at_once() {
    let fleet = spawn_fleet(3).await;
    let tickets = make_class(&fleet, 2).await;
    let old = token_of(&tickets[0]);
    let whoami = |token: String| {
        let fleet = &fleet;
        async move {
            let mut statuses = Vec::new();
            for i in 0..3 {
                let token = Some(token.as_str());
                statuses.push(
                    call(fleet, i, Method::GET, "/admin/whoami", token, json!({}))
                        .await
                        .0,
                );
            }
            statuses
        }
    };
    assert_eq!(whoami(old.clone()).await, [StatusCode::OK; 3]);

    // Stored as digests: no key, field or value in Redis holds a token.
    let mut conn = fleet.redis_conn().await;
    let dump: Vec<String> = redis::cmd("HGETALL")
        .arg("oversell:{.fleet}:room-tokens")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(dump.len(), 4, "two rooms, digest → room: {dump:?}");
    for ticket in &tickets {
        let token = token_of(ticket);
        assert!(dump.iter().all(|s| !s.contains(&token)), "{dump:?}");
        assert!(fleet.all_keys().await.iter().all(|k| !k.contains(&token)));
    }

    // Rotation: the next request to any instance refuses the old token (no cache to expire).
    let rotated = fleet
        .admin(Method::POST, "/admin/rooms/student-01/token", json!({}))
        .await;
    let new = token_of(&rotated);
    assert_ne!(new, old);
    assert!(rotated["join_url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("#token={new}")));
    assert_eq!(whoami(old).await, [StatusCode::UNAUTHORIZED; 3]);
    assert_eq!(whoami(new.clone()).await, [StatusCode::OK; 3]);

    // Revocation of one room leaves the other's token working…
    let revoked = fleet
        .admin(Method::DELETE, "/admin/rooms/student-01/token", json!({}))
        .await;
    assert_eq!(revoked["revoked"], true);
    assert_eq!(whoami(new).await, [StatusCode::UNAUTHORIZED; 3]);
    let other = token_of(&tickets[1]);
    assert_eq!(whoami(other.clone()).await, [StatusCode::OK; 3]);

    // …and closing the class stops every token.
    let closed = fleet.admin(Method::DELETE, "/admin/class", json!({})).await;
    assert_eq!(closed["revoked"], 1);
    assert_eq!(whoami(other).await, [StatusCode::UNAUTHORIZED; 3]);
    let overview = fleet.get_admin_class().await;
    let rooms = overview["rooms"].as_array().unwrap();
    assert!(rooms.iter().all(|r| r["has_token"] == false), "{overview}");
}
