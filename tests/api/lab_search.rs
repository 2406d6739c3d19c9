//! The lab's "Search every schedule" against a real fleet (`POST /admin/lab/search`): the
//! room's submitted lock searched on the model through the grading line, its card beside the
//! attacks', and the sentence when only the search breaks it.

use oversell::lock_store::{LockStoreKind, Persistence};
use oversell_api::tier::Tier;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::lab::{ladder_lock, send, submit};
use crate::scenarios::{start_fleet_with, TOKEN};

fn outcomes(card: &Value) -> Vec<&str> {
    card["attacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rooms_lock_is_searched_and_a_break_no_attack_made_is_said_plainly() {
    let fleet = start_fleet_with(1, LockStoreKind::Single, Persistence::None).await;
    let search = |room: &str| format!("/admin/lab/search?room={room}");

    // No lock of its own yet: a 400 that says to submit one.
    let (status, body) = send(&fleet, Method::POST, &search("empty"), TOKEN, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "bad_request", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("submit one first"),
        "{body}"
    );

    // uuid-owner's own scripts: the attacks break it, and the card says no more than that.
    let (lock, _) = ladder_lock(Tier::UuidOwner);
    let (status, body) = submit(&fleet, "uuid", &lock).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, card) = send(&fleet, Method::POST, &search("uuid"), TOKEN, None).await;
    assert_eq!(status, StatusCode::OK, "{card}");
    let row: Vec<&str> = Tier::UuidOwner
        .facts()
        .outcomes
        .unwrap()
        .iter()
        .map(|o| o.id())
        .collect();
    assert_eq!(outcomes(&card), row, "{card}");
    assert_eq!(card["search"]["verdict"], "broken", "{card}");
    assert!(
        card["search"]["shortest"]["steps"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    assert_eq!(card["beyond"], Value::Null, "{card}");

    // A fenced lock whose release takes the lease off before it deletes: every attack holds,
    // the search finds the buyer dead between its release steps.
    let fenced = |file: &str| {
        let path = format!("{}/static/locks/fenced/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    };
    let lock = json!({
        "acquire": [fenced("acquire-1.lua")],
        "release": [
            "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end\nredis.call('PERSIST', KEYS[1])\nreturn 1",
            "redis.call('DEL', KEYS[1])\nreturn 1",
        ],
        "renew": fenced("renew.lua"),
    });
    let (status, body) = submit(&fleet, "persist", &lock).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, card) = send(&fleet, Method::POST, &search("persist"), TOKEN, None).await;
    assert_eq!(status, StatusCode::OK, "{card}");
    assert!(
        outcomes(&card)
            .iter()
            .all(|o| *o == "held" || *o == "not-applicable"),
        "{card}"
    );
    assert_eq!(card["search"]["shortest"]["property"], "deadlock", "{card}");
    let beyond = card["beyond"]["en"].as_str().unwrap();
    assert!(
        beyond.ends_with("a schedule none of the attacks made"),
        "{beyond}"
    );
    assert!(
        card["beyond"]["zh"].as_str().unwrap().contains("调度"),
        "{card}"
    );
    // Out of the line once answered: the room can search (and be graded) again at once.
    let (status, again) = send(&fleet, Method::POST, &search("persist"), TOKEN, None).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_searching_at_once_is_answered_room_by_room_and_the_sale_goes_on() {
    let fleet = start_fleet_with(2, LockStoreKind::Single, Persistence::None).await;
    let (lock, _) = ladder_lock(Tier::LuaRelease);
    let rooms: Vec<String> = (0..12).map(|i| format!("search-{i}")).collect();
    for room in &rooms {
        let (status, body) = submit(&fleet, room, &lock).await;
        assert_eq!(status, StatusCode::OK, "{room}: {body}");
    }
    let (status, body) = send(
        &fleet,
        Method::POST,
        "/admin/reset?room=shop",
        TOKEN,
        Some(json!({ "stock": 10 })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let presses = rooms.iter().map(|room| {
        let path = format!("/admin/lab/search?room={room}");
        let fleet = &fleet;
        async move { send(fleet, Method::POST, &path, TOKEN, None).await }
    });
    // A sale in another room while the class searches: the line keeps the searches to its
    // slots and off the async workers, so the sale is answered as on a quiet fleet.
    let sale = async {
        let client = crate::helpers::http_client();
        let resp = client
            .post(format!("{}/sale?room=shop", fleet.url()))
            .json(&json!({ "buyer": "during-the-searches" }))
            .timeout(std::time::Duration::from_secs(10))
            .send()
            .await
            .expect("the sale is answered while the class searches");
        resp.status()
    };
    let (answers, sold) = tokio::join!(futures_util::future::join_all(presses), sale);
    assert_eq!(sold, StatusCode::OK);
    for ((status, card), room) in answers.iter().zip(&rooms) {
        assert_eq!(*status, StatusCode::OK, "{room}: {card}");
        assert_eq!(card["room"], room.as_str(), "{card}");
        assert_eq!(card["search"]["verdict"], "broken", "{card}");
    }
    fleet.stop().await;
}
