//! Calling a room to explain: the room called always voted the option asked, every such room
//! is called in time, and each refusal has its code.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::{assert_refused, call, make_class, ok, open_poll, vote};
use crate::helpers::{spawn_fleet, TOKEN};

const CHAPTER: &str = "none-race";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_room_called_always_voted_the_option_and_every_such_room_is_called() {
    let fleet = spawn_fleet(1).await;
    let (client, base) = (&fleet.client, fleet.url(0));
    let call_for = |body: Option<serde_json::Value>, token: Option<&'static str>| {
        call(
            client,
            base,
            Method::POST,
            "/admin/class/poll/call",
            token,
            body,
        )
    };
    let seats = make_class(client, base, TOKEN, 3).await;
    assert_refused(
        &call_for(Some(json!({ "option": 1 })), Some(TOKEN)).await,
        StatusCode::CONFLICT,
        "no_poll",
        "before any vote",
    );
    open_poll(client, base, CHAPTER).await;
    // Two of the three rooms vote B (1), the third A (0).
    for (seat, option) in seats.iter().zip([1, 1, 0]) {
        let (status, answer) = vote(client, base, seat, option).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    assert_refused(
        &call_for(Some(json!({ "option": 1 })), Some(TOKEN)).await,
        StatusCode::CONFLICT,
        "round_open",
        "while the round is open",
    );
    ok(
        client,
        base,
        Method::POST,
        "/admin/class/poll/close",
        Some(TOKEN),
        None,
    )
    .await;

    let voted_b: BTreeSet<&str> = [seats[0].room.as_str(), seats[1].room.as_str()].into();
    let mut called = BTreeSet::new();
    for _ in 0..60 {
        let (status, answer) = call_for(Some(json!({ "option": 1 })), Some(TOKEN)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let room = answer["room"].as_str().unwrap().to_owned();
        assert!(
            voted_b.contains(room.as_str()),
            "{room} did not vote B: {answer}"
        );
        assert_eq!((&answer["round"], &answer["of"]), (&json!(1), &json!(2)));
        called.insert(room);
    }
    // Each of the two a half of the time: one never called in 60 is a chance of 2^-59.
    assert_eq!(called.len(), 2, "{called:?}");
    assert!(!called.contains(&seats[2].room));
    let a = ok(
        client,
        base,
        Method::POST,
        "/admin/class/poll/call",
        Some(TOKEN),
        Some(json!({ "option": 0 })),
    )
    .await;
    assert_eq!((&a["room"], &a["of"]), (&json!(seats[2].room), &json!(1)));

    assert_refused(
        &call_for(Some(json!({ "option": 2 })), Some(TOKEN)).await,
        StatusCode::CONFLICT,
        "no_room_voted",
        "an option nobody voted",
    );
    let options = workshop::scenario::question(CHAPTER).unwrap().options.len();
    let past = call_for(Some(json!({ "option": options })), Some(TOKEN)).await;
    assert_refused(
        &past,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "past the options",
    );
    assert_eq!(past.1["field"], "option", "{}", past.1);
    assert_refused(
        &call_for(None, Some(TOKEN)).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "no body",
    );
    assert_refused(
        &call_for(Some(json!({ "option": "B" })), Some(TOKEN)).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "a letter, not an index",
    );
    let (status, _) = call_for(Some(json!({ "option": 1 })), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // A room's token calls nobody: the call is the instructor's.
    let as_room = call(
        client,
        base,
        Method::POST,
        "/admin/class/poll/call",
        Some(&seats[0].token),
        Some(json!({ "option": 1 })),
    )
    .await;
    assert_eq!(as_room.0, StatusCode::FORBIDDEN, "{}", as_room.1);
}
