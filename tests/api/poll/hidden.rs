//! While the class votes, nothing but the admin token names the chapter or explains it (its
//! id may name the outcome); after the reveal everything is back. A vote carries how sure the
//! student is and one line of why, which the presenter reads as a sample per option and the
//! results keep against whether the run proved the voter right; the reveal leads with the
//! figures the question's rule read. On a real fleet: the reveal runs the chapter.

use std::collections::BTreeMap;

use oversell::lock_store::{LockStoreKind, Persistence};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use workshop::scenario::{find, question};

use super::{assert_refused, call, make_class, ok};
use crate::scenarios::{start_fleet_with, TOKEN};

const CHAPTER: &str = "none-race";
const HOSTILE: &str = "<img src=x onerror=alert(1)> \"=1+1\"";

/// The catalog entry of `CHAPTER` in `GET /scenarios` as `token` gets it.
async fn listed(client: &reqwest::Client, base: &str, token: Option<&str>) -> (Value, String) {
    let list = ok(client, base, Method::GET, "/scenarios", token, None).await;
    let at = workshop::scenario::CATALOG
        .iter()
        .position(|s| s.id == CHAPTER)
        .unwrap();
    (list["scenarios"][at].clone(), list.to_string())
}

/// The number the class votes on `CHAPTER` under, as the presenter's deck lists it.
async fn find_number(client: &reqwest::Client, base: &str) -> u64 {
    let deck = ok(
        client,
        base,
        Method::GET,
        "/admin/class/deck",
        Some(TOKEN),
        None,
    )
    .await;
    deck["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == CHAPTER)
        .and_then(|q| q["number"].as_u64())
        .unwrap_or_else(|| panic!("{CHAPTER} is not in the deck: {deck}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_polled_chapter_stays_unnamed_until_the_reveal_and_votes_carry_sure_and_why() {
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let client = crate::helpers::http_client();
    let base = fleet.url().to_owned();
    let seats = make_class(&client, &base, TOKEN, 4).await;
    let scenario = find(CHAPTER).unwrap();
    let asked = question(CHAPTER).unwrap();
    let number = find_number(&client, &base).await;
    let admin = |method: Method, path: &'static str, body: Option<Value>| {
        ok(&client, &base, method, path, Some(TOKEN), body)
    };

    // Before any vote: everyone gets the chapter and its explanation.
    let (entry, _) = listed(&client, &base, None).await;
    assert_eq!(
        (&entry["id"], &entry["en"]),
        (&json!(CHAPTER), &json!(scenario.en))
    );

    admin(
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "question": CHAPTER })),
    )
    .await;
    let room = &seats[0];
    let room_path = |path: &str| format!("{path}?room={}", room.room);
    for token in [None, Some(room.token.as_str())] {
        // No list at all: one with the chapter left out would name it by its place.
        let (_, all) = listed(&client, &base, token).await;
        assert_eq!(
            all,
            json!({ "scenarios": [], "withheld": true }).to_string(),
            "{token:?}"
        );
        let view = ok(
            &client,
            &base,
            Method::GET,
            &room_path("/poll"),
            token,
            None,
        )
        .await;
        let text = view.to_string();
        assert!(
            !text.contains(CHAPTER) && !text.contains(scenario.en),
            "{text}"
        );
        assert_eq!(view["number"], number, "{view}");
    }
    let (entry, _) = listed(&client, &base, Some(TOKEN)).await;
    assert_eq!(entry["en"], scenario.en, "the admin token still sees it");
    // A room may not run the chapter the class votes on: the run is the answer.
    let run = call(
        &client,
        &base,
        Method::POST,
        &room_path("/admin/scenario"),
        Some(&room.token),
        Some(json!({ "id": CHAPTER })),
    )
    .await;
    assert_refused(
        &run,
        StatusCode::CONFLICT,
        "polled",
        "a room running the polled chapter",
    );

    // Votes with how sure, and why: at most 140 characters (not bytes), one line.
    let post = |seat: usize, body: Value| {
        let seat = &seats[seat];
        let path = format!("/poll?room={}", seat.room);
        let token = seat.token.clone();
        let client = client.clone();
        let base = base.clone();
        async move {
            call(
                &client,
                &base,
                Method::POST,
                &path,
                Some(&token),
                Some(body),
            )
            .await
        }
    };
    let long = "x".repeat(141);
    let refused = post(0, json!({ "option": 0, "why": long })).await;
    assert_refused(
        &refused,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "a why of 141",
    );
    assert_eq!(refused.1["field"], "why", "{}", refused.1);
    let refused = post(0, json!({ "option": 0, "why": "one\nline" })).await;
    assert_eq!(
        (refused.0, &refused.1["field"]),
        (StatusCode::BAD_REQUEST, &json!("why"))
    );
    let refused = post(0, json!({ "option": 0, "sure": "yes" })).await;
    assert_eq!(refused.0, StatusCode::BAD_REQUEST, "{}", refused.1);
    let wide = "锁".repeat(140);
    let answer = post(1, json!({ "option": 1, "sure": false, "why": wide })).await;
    assert_eq!(
        answer.0,
        StatusCode::OK,
        "140 Chinese characters: {}",
        answer.1
    );
    let answer = post(0, json!({ "option": 0, "sure": true, "why": HOSTILE })).await;
    assert_eq!(answer.0, StatusCode::OK, "{}", answer.1);
    assert_eq!(
        (&answer.1["sure"], &answer.1["number"]),
        (&json!(true), &json!(number))
    );
    assert!(answer.1.get("chapter").is_none(), "{}", answer.1);
    assert_eq!(
        post(2, json!({ "option": 0, "sure": false })).await.0,
        StatusCode::OK
    );
    assert_eq!(post(3, json!({ "option": 2 })).await.0, StatusCode::OK);

    // The room reads its own vote and note back; the presenter, the sure counts and reasons.
    let mine = ok(
        &client,
        &base,
        Method::GET,
        &room_path("/poll"),
        Some(&room.token),
        None,
    )
    .await;
    assert_eq!(
        mine["my_note"],
        json!({ "sure": true, "why": HOSTILE }),
        "{mine}"
    );
    let view = admin(Method::GET, "/admin/class/poll", None).await;
    let round = &view["rounds"][0];
    assert_eq!(round["sure"][0], 1, "{view}");
    assert_eq!(round["reasons"][0][0]["why"], HOSTILE, "{view}");
    assert_eq!(round["reasons"][1][0]["why"], json!(wide), "{view}");
    assert_eq!(view["question_id"], CHAPTER);

    let reveal = admin(
        Method::POST,
        "/admin/class/poll/reveal",
        Some(json!({ "run": true })),
    )
    .await;
    // The reveal leads with what decided it: the figures the rule read, in its order.
    let decided: Vec<&str> = reveal["decided_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(decided, asked.reads, "{reveal}");
    let figures: BTreeMap<String, f64> = serde_json::from_value(reveal["figures"].clone()).unwrap();
    for f in reveal["decided_by"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        assert_eq!(f["value"].as_f64(), figures.get(name).copied(), "{reveal}");
    }
    assert!(
        reveal.get("svg").is_some(),
        "a place for the history's picture: {reveal}"
    );

    // After the reveal, everything is back for everyone.
    for token in [None, Some(room.token.as_str())] {
        let (entry, _) = listed(&client, &base, token).await;
        assert_eq!(
            (&entry["id"], &entry["en"]),
            (&json!(CHAPTER), &json!(scenario.en))
        );
        let view = ok(
            &client,
            &base,
            Method::GET,
            &room_path("/poll"),
            token,
            None,
        )
        .await;
        assert_eq!(view["chapter"], CHAPTER, "{view}");
        assert_eq!(view["reveal"]["en"], scenario.en, "{view}");
    }

    // The results: confidence against correctness, and every reason, as typed.
    let results = admin(Method::GET, "/admin/class/results", None).await;
    let chapter = &results["chapters"][0];
    let landed = reveal["landed"].as_u64().map(|l| l as usize);
    let reasons = chapter["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 2, "{results}");
    let hostile = reasons
        .iter()
        .find(|r| r["room"] == room.room.as_str())
        .unwrap();
    assert_eq!(hostile["why"], HOSTILE);
    if let Some(landed) = landed {
        let c = &chapter["confidence"][0];
        let sure_wrong = usize::from(landed != 0);
        assert_eq!(c["sure_wrong"], sure_wrong, "{results}");
        assert_eq!(c["sure_right"], 1 - sure_wrong, "{results}");
        let unsure = c["unsure_right"].as_u64().unwrap() + c["unsure_wrong"].as_u64().unwrap();
        assert_eq!(unsure, 2, "{results}");
        assert_eq!(hostile["right"], landed == 0);
    }
    let text = |format: &'static str| {
        let client = client.clone();
        let url = format!("{base}/admin/class/results?format={format}");
        async move {
            let resp = client.get(url).bearer_auth(TOKEN).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
            resp.text().await.unwrap()
        }
    };
    let csv = text("reasons").await;
    assert!(
        csv.contains("\"<img src=x onerror=alert(1)> \"\"=1+1\"\"\""),
        "{csv}"
    );
    let md = text("md").await;
    assert!(!md.replace("\\<", "").contains("<img"), "{md}");
    assert!(md.contains(r"\<img src\=x onerror\=alert\(1\)\>"), "{md}");
    fleet.stop().await;
}
