//! Rooms: two experiments on one fleet at the same time, with different tiers and stock, never
//! see each other's orders, settings or counters.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{eventually, spawn_fleet, TestFleet};

async fn admin(fleet: &TestFleet, method: reqwest::Method, path: &str, room: &str, body: Value) {
    fleet
        .admin(method, &format!("{path}?room={room}"), body)
        .await;
}

async fn get(fleet: &TestFleet, i: usize, path: &str) -> Value {
    fleet.get_json(i, path).await
}

/// `buyers` concurrent sales in `room`, round robin over the instances, buyers named
/// `<room>-<i>`; returns the statuses.
async fn burst(fleet: &TestFleet, room: &str, buyers: usize) -> Vec<StatusCode> {
    let sales = (0..buyers).map(|i| async move {
        fleet
            .client
            .post(format!("{}/sale?room={room}", fleet.url(i)))
            .json(&json!({ "buyer": format!("{room}-{i}") }))
            .send()
            .await
            .unwrap()
            .status()
    });
    futures_util::future::join_all(sales).await
}

#[tokio::test]
async fn two_rooms_at_once_keep_their_own_orders() {
    let fleet = spawn_fleet(2).await;
    admin(
        &fleet,
        reqwest::Method::PUT,
        "/admin/config",
        "alpha",
        json!({ "tier": "none", "business_ms": 20 }),
    )
    .await;
    admin(
        &fleet,
        reqwest::Method::PUT,
        "/admin/config",
        "beta",
        json!({ "tier": "lua-release", "business_ms": 1 }),
    )
    .await;
    admin(
        &fleet,
        reqwest::Method::POST,
        "/admin/reset",
        "alpha",
        json!({ "stock": 10 }),
    )
    .await;
    admin(
        &fleet,
        reqwest::Method::POST,
        "/admin/reset",
        "beta",
        json!({ "stock": 25 }),
    )
    .await;
    for i in 0..2 {
        eventually(Duration::from_secs(5), || async {
            get(&fleet, i, "/state?room=alpha").await["tier"] == "none"
                && get(&fleet, i, "/state?room=beta").await["tier"] == "lua-release"
        })
        .await;
    }

    // Both rooms under load at the same time.
    let (alpha, beta) = tokio::join!(burst(&fleet, "alpha", 40), burst(&fleet, "beta", 40));
    assert!(
        alpha
            .iter()
            .all(|s| s.is_success() || *s == StatusCode::CONFLICT),
        "{alpha:?}"
    );
    assert!(
        beta.iter()
            .all(|s| s.is_success() || *s == StatusCode::CONFLICT),
        "{beta:?}"
    );
    let beta_ok = beta.iter().filter(|s| s.is_success()).count();
    assert_eq!(beta_ok, 25, "lua-release sells exactly the stock");

    for (room, other, acked) in [
        (
            "alpha",
            "beta",
            alpha.iter().filter(|s| s.is_success()).count(),
        ),
        ("beta", "alpha", beta_ok),
    ] {
        let ledger = get(&fleet, 1, &format!("/ledger?room={room}&limit=10000")).await;
        let orders = ledger["orders"].as_array().unwrap();
        assert_eq!(
            orders.len(),
            acked,
            "{room}: every acknowledged sale, no other"
        );
        for order in orders {
            let buyer = order["buyer"].as_str().unwrap();
            assert!(
                buyer.starts_with(&format!("{room}-")),
                "{room} has {other}'s order {order}"
            );
        }
        let state = get(&fleet, 1, &format!("/state?room={room}")).await;
        assert_eq!(state["room"], room);
        assert_eq!(state["orders"], acked);
    }
    let alpha_state = get(&fleet, 0, "/state?room=alpha").await;
    let beta_state = get(&fleet, 0, "/state?room=beta").await;
    assert_eq!(alpha_state["initial_stock"], 10);
    assert_eq!(alpha_state["settings"]["business_ms"], 20);
    assert_eq!(beta_state["initial_stock"], 25);
    assert_eq!(beta_state["stock"], 0);
    assert_eq!(beta_state["oversold"], 0);
    assert_eq!(beta_state["overlaps"], 0);

    // The default room (no ?room) saw none of it.
    let default = get(&fleet, 0, "/state").await;
    assert_eq!(default["room"], "default");
    assert_eq!(default["orders"], 0);
    assert_eq!(get(&fleet, 0, "/ledger").await["orders"], json!([]));

    // Resetting one room leaves the other's ledger alone.
    admin(
        &fleet,
        reqwest::Method::POST,
        "/admin/reset",
        "alpha",
        json!({ "stock": 3 }),
    )
    .await;
    assert_eq!(get(&fleet, 0, "/state?room=alpha").await["orders"], 0);
    assert_eq!(get(&fleet, 0, "/state?room=beta").await["orders"], 25);
}
