//! The reveal runs the chapter on a real fleet (nginx, three supervised instances, a lock store
//! of its own) and lands where the question's rule says on the figures it answers; the results
//! show both rounds in JSON, CSV and Markdown; closing the class removes every key of the vote.

use std::collections::BTreeMap;

use oversell::lock_store::{LockStoreKind, Persistence};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use workshop::scenario::question;

use super::{assert_refused, call, make_class, ok, tally, vote};
use crate::scenarios::{start_fleet_with, TOKEN};

/// Fast chapters of three groups: the ladder, beyond one Redis (the lock store restarts
/// empty), and the field's failures.
const CHAPTERS: [&str; 3] = [
    "none-race",
    "restart-loses-lock",
    "unlock-after-expiry-plain-del",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reveal_runs_the_chapter_and_lands_where_its_rule_says() {
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let client = crate::helpers::http_client();
    let base = fleet.url().to_owned();
    let seats = make_class(&client, &base, TOKEN, 4).await;
    let admin = |method: Method, path: &'static str, body: Option<Value>| {
        ok(&client, &base, method, path, Some(TOKEN), body)
    };
    let mut polled = Vec::new();
    for (c, chapter) in CHAPTERS.into_iter().enumerate() {
        let question = question(chapter).unwrap_or_else(|| panic!("{chapter} has no question"));
        let options = question.options.len();
        admin(
            Method::POST,
            "/admin/class/poll",
            Some(json!({ "chapter": chapter })),
        )
        .await;
        let first: Vec<usize> = (0..seats.len()).map(|i| (i + c) % options).collect();
        let second: Vec<usize> = (0..seats.len())
            .map(|i| (i + c + i % 2) % options)
            .collect();
        for (i, seat) in seats.iter().enumerate() {
            assert_eq!(vote(&client, &base, seat, first[i]).await.0, StatusCode::OK);
        }
        admin(Method::POST, "/admin/class/poll/round", None).await;
        // The last room sits round 2 out.
        for (i, seat) in seats.iter().enumerate().take(seats.len() - 1) {
            assert_eq!(
                vote(&client, &base, seat, second[i]).await.0,
                StatusCode::OK
            );
        }
        let second = &second[..seats.len() - 1];
        // What a stream sent before the reveal: a view of the open round.
        let before = ok(&client, &base, Method::GET, "/poll", None, None).await;
        assert_eq!(before["state"], "open", "{before}");

        let reveal = admin(
            Method::POST,
            "/admin/class/poll/reveal",
            Some(json!({ "run": true })),
        )
        .await;
        assert_eq!(
            (&reveal["chapter"], &reveal["room"]),
            (&json!(chapter), &json!("default"))
        );
        let figures: BTreeMap<String, f64> =
            serde_json::from_value(reveal["figures"].clone()).unwrap();
        assert!(figures.contains_key("orders"), "{reveal}");
        let landed = question.landed(&figures);
        assert_eq!(reveal["landed"], json!(landed), "{chapter}: {reveal}");
        assert!(
            reveal["passed"].is_boolean() && reveal["expectation"] != "",
            "{reveal}"
        );
        assert!(reveal["en"] != "" && reveal["zh"] != "" && reveal["source"] != "");
        // The rung's shortest break, as the search says it, in both languages; none off the
        // ladder (`none-race` has no lock), and none in any view before the reveal.
        let tier = workshop::scenario::find(chapter).unwrap().tier;
        let searched = explore::ladder::rung_break(tier).map(|b| b.unwrap());
        assert_eq!(reveal["shortest_break"], json!(searched), "{chapter}");
        if let Some(searched) = &searched {
            let said = &reveal["shortest_break"];
            assert!(said["en"] == searched.en.as_str() && said["zh"] == searched.zh.as_str());
        }
        assert_eq!(chapter == "none-race", searched.is_none(), "{chapter}");
        assert!(before["reveal"].is_null(), "{before}");
        assert!(!before.to_string().contains("shortest"), "{before}");
        // The run's viewer, by the history id the reveal names.
        opens_the_viewer(&client, &base, &reveal).await;

        // The share right of each round, and the gain, from the counts.
        let counts = [tally(&first, options), tally(second, options)];
        let mut shares = Vec::new();
        for (r, counts) in counts.iter().enumerate() {
            let round = &reveal["rounds"][r];
            let voters = counts.iter().sum::<u64>();
            assert_eq!(round["counts"], json!(counts), "{reveal}");
            assert_eq!(round["voters"], voters);
            let share = landed.map(|l| counts[l] as f64 / voters as f64);
            assert_eq!(round["share_right"].as_f64(), share, "{reveal}");
            shares.push(share);
        }
        let gain = match (shares[0], shares[1]) {
            (Some(pre), Some(post)) if pre < 1.0 => Some((post - pre) / (1.0 - pre)),
            _ => None,
        };
        assert_eq!(reveal["gain"].as_f64(), gain, "{reveal}");

        // Everyone sees the reveal now; the vote is over. The reveal's answer is the view's
        // `reveal` and its version, above the view before it: a page that draws the answer
        // first drops that view when the stream brings it late.
        let public = ok(&client, &base, Method::GET, "/poll", None, None).await;
        assert_eq!(public["state"], "revealed");
        let version = reveal["version"]
            .as_u64()
            .unwrap_or_else(|| panic!("{reveal}"));
        assert!(
            before["version"].as_u64().unwrap() < version,
            "{before} before {reveal}"
        );
        assert_eq!(public["version"], version, "{public}");
        let mut revealed = reveal.clone();
        revealed.as_object_mut().unwrap().remove("version");
        assert_eq!(public["reveal"], revealed);
        let late = vote(&client, &base, &seats[0], 0).await;
        assert_refused(
            &late,
            StatusCode::CONFLICT,
            "no_open_round",
            "a vote after the reveal",
        );
        let again = call(
            &client,
            &base,
            Method::POST,
            "/admin/class/poll/round",
            Some(TOKEN),
            None,
        )
        .await;
        assert_refused(
            &again,
            StatusCode::CONFLICT,
            "revealed",
            "a round after the reveal",
        );
        // Revealed again without a run: the same run, and no change of the poll.
        let kept = admin(
            Method::POST,
            "/admin/class/poll/reveal",
            Some(json!({ "run": false })),
        )
        .await;
        assert_eq!(kept, reveal);
        polled.push((chapter, counts, landed, first[3]));
    }

    // The results: every chapter, both rounds, every room's answers.
    let results = admin(Method::GET, "/admin/class/results", None).await;
    let chapters = results["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), CHAPTERS.len(), "{results}");
    let rooms = results["rooms"].as_array().unwrap();
    assert_eq!(rooms.len(), seats.len());
    for (c, (result, (chapter, counts, landed, fourth))) in chapters.iter().zip(&polled).enumerate()
    {
        assert_eq!(result["chapter"], *chapter);
        assert_eq!(result["landed"], json!(landed));
        // The revealed run's viewer, for the course's report.
        assert_eq!(result["room"], "default", "{result}");
        assert!(result["history"].is_string(), "{result}");
        assert_eq!(result["rounds"][0]["counts"], json!(counts[0]));
        assert_eq!(result["rounds"][1]["counts"], json!(counts[1]));
        // The fourth room sat round 2 out.
        let answer = &rooms[3]["answers"][c];
        assert_eq!(answer["chapter"], *chapter);
        assert_eq!(answer["votes"], json!([fourth, null]), "{results}");
    }
    let text = |format: &'static str| {
        let client = client.clone();
        let url = format!("{base}/admin/class/results?format={format}");
        async move {
            let resp = client.get(url).bearer_auth(TOKEN).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
            let kind = resp.headers()["content-type"].to_str().unwrap().to_owned();
            (kind, resp.text().await.unwrap())
        }
    };
    let (kind, csv) = text("csv").await;
    assert!(kind.starts_with("text/csv"), "{kind}");
    for chapter in CHAPTERS {
        for round in [1, 2] {
            let row = format!("\n{chapter},{round},");
            assert!(csv.contains(&row), "{row} in {csv}");
        }
    }
    let (kind, md) = text("md").await;
    assert!(kind.starts_with("text/markdown"), "{kind}");
    assert!(
        CHAPTERS.iter().all(|c| md.contains(&format!("## {c}"))),
        "{md}"
    );
    assert!(md.contains("| student-04 |"), "{md}");

    // Closing the class takes the vote with it.
    let mut redis = redis::Client::open(fleet.redis_url().unwrap())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let poll_keys = |keys: Vec<String>| -> Vec<String> {
        keys.into_iter()
            .filter(|k| k.contains(":class:poll"))
            .collect()
    };
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut redis)
        .await
        .unwrap();
    assert!(!poll_keys(keys).is_empty());
    admin(Method::DELETE, "/admin/class", None).await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut redis)
        .await
        .unwrap();
    assert_eq!(poll_keys(keys), Vec::<String>::new());
    let idle = admin(Method::GET, "/admin/class/poll", None).await;
    assert_eq!(idle["state"], "idle");
    let results = admin(Method::GET, "/admin/class/results", None).await;
    assert_eq!(results["chapters"], json!([]));
    fleet.stop().await;
}

/// The viewer of the run a reveal names (`history`, in its `room`) opens with the admin token.
async fn opens_the_viewer(client: &reqwest::Client, base: &str, reveal: &Value) {
    let id = reveal["history"]
        .as_str()
        .unwrap_or_else(|| panic!("the reveal names its run's history: {reveal}"));
    let room = reveal["room"].as_str().unwrap();
    let resp = client
        .get(format!("{base}/admin/runs/{id}/view?room={room}"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{id}");
    let page = resp.text().await.unwrap();
    let chapter = reveal["chapter"].as_str().unwrap();
    assert!(
        page.contains("viewer-data") && page.contains(chapter),
        "{id}: {page:.300}"
    );
}
