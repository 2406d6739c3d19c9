//! The class page's data (orders, stock, viewers and tokens per room), the join link's QR
//! code, and bad class requests as 400s that say why.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{call, decode_qr_svg, make_class, token_of};
use crate::helpers::{eventually, spawn_fleet, TOKEN};

#[tokio::test]
async fn the_class_page_data_counts_orders_and_viewers_per_room() {
    let fleet = spawn_fleet(2).await;
    make_class(&fleet, 3).await;
    for buyer in ["a", "b", "c"] {
        let (status, _) = call(
            &fleet,
            1,
            Method::POST,
            "/sale?room=student-02",
            None,
            json!({ "buyer": buyer }),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    // Two dashboards on student-03, one on each instance.
    let mut streams = Vec::new();
    for i in 0..2 {
        let resp = fleet
            .client
            .get(format!("{}/events?room=student-03", fleet.url(i)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        streams.push(resp);
    }
    eventually(Duration::from_secs(10), || async {
        let overview = fleet.get_admin_class().await;
        overview["rooms"][2]["viewers"] == 2
    })
    .await;
    let overview = fleet.get_admin_class().await;
    assert_eq!(overview["prefix"], "student");
    let rooms = overview["rooms"].as_array().unwrap();
    let column = |name: &str| rooms.iter().map(|r| r[name].clone()).collect::<Vec<_>>();
    assert_eq!(
        column("room"),
        [
            json!("student-01"),
            json!("student-02"),
            json!("student-03")
        ]
    );
    assert_eq!(column("orders"), [json!(0), json!(3), json!(0)]);
    assert_eq!(column("stock"), [json!(50), json!(47), json!(50)]);
    assert_eq!(column("viewers"), [json!(0), json!(0), json!(2)]);
    assert_eq!(column("has_token"), vec![json!(true); 3]);
    // Dashboards that leave stop counting (each instance republishes every second).
    drop(streams);
    eventually(Duration::from_secs(10), || async {
        fleet.get_admin_class().await["rooms"][2]["viewers"] == 0
    })
    .await;
}

#[tokio::test]
async fn the_qr_code_decodes_to_the_join_link() {
    let fleet = spawn_fleet(1).await;
    let tickets = make_class(&fleet, 1).await;
    let join_url = tickets[0]["join_url"].as_str().unwrap();
    let host = fleet.url(0).trim_start_matches("http://");
    let token = token_of(&tickets[0]);
    assert_eq!(
        join_url,
        format!("http://{host}/?room=student-01#token={token}")
    );
    let decoded = decode_qr_svg(tickets[0]["qr_svg"].as_str().unwrap());
    assert_eq!(decoded, join_url);
}

#[tokio::test]
async fn bad_class_requests_are_400s_that_say_why() {
    let fleet = spawn_fleet(1).await;
    for (body, says) in [
        (json!({ "students": 0 }), "students must be 1..=400"),
        (json!({ "students": 401 }), "students must be 1..=400"),
        (json!({ "students": "ten" }), "invalid type"),
        (json!({ "students": 2, "prefix": "a b" }), "invalid prefix"),
        (json!({ "students": 2, "stock": -1 }), "stock must be"),
        (json!({ "students": 2, "extra": 1 }), "extra"),
    ] {
        let (status, answer) = call(
            &fleet,
            0,
            Method::POST,
            "/admin/class",
            Some(TOKEN),
            body.clone(),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    let (status, answer) = call(
        &fleet,
        0,
        Method::POST,
        "/admin/rooms/no%20such/token",
        Some(TOKEN),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // No class yet: an empty overview, not an error; the join page's address all the same.
    let overview = fleet.get_admin_class().await;
    assert_eq!(
        (&overview["prefix"], &overview["rooms"]),
        (&Value::Null, &json!([]))
    );
    assert!(
        overview["join_page"].as_str().unwrap().ends_with("/join"),
        "{overview}"
    );
}
