//! `GET /poll/events`: the public view on connect and on each change made through any
//! instance, about two a second at most, whatever the votes' rate.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{make_class, ok, vote};
use crate::events::Sse;
use crate::helpers::{spawn_fleet, TOKEN};

// A deadline, not a pace: CI runs many fleets at once on two cores.
const WITHIN: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_sends_the_open_question_on_connect_and_every_change() {
    let fleet = spawn_fleet(2).await;
    let client = &fleet.client;
    let seats = make_class(client, fleet.url(0), TOKEN, 3).await;
    // Watching through the second instance; everything is done through the first, so the
    // second learns it over pub/sub.
    let events = format!("{}/poll/events?room={}", fleet.url(1), seats[0].room);
    let mut early = Sse::open(client, &events).await;
    let first = early.next(WITHIN).await.expect("a first event");
    assert_eq!(
        (first.name.as_str(), &first.data["state"]),
        ("poll", &json!("idle"))
    );
    // The second instance learns of the new class when it next reads the poll: the first
    // view may already count its rooms (a read fell between the class and the stream's
    // start) or come from before it, then the stream catches up. Either is right; waiting for
    // a second view when the first already counts them would wait for a change that never
    // comes.
    let idle = match first.data["rooms"] == 3 {
        true => first.data.clone(),
        false => {
            early
                .until(WITHIN, |ev| {
                    (ev.data["rooms"] == 3).then(|| ev.data.clone())
                })
                .await
        }
    };
    assert_eq!(idle["state"], "idle", "{idle}");

    let admin =
        |path: &'static str, body| ok(client, fleet.url(0), Method::POST, path, Some(TOKEN), body);
    admin("/admin/class/poll", Some(json!({ "chapter": "none-race" }))).await;
    let question = early
        .until(WITHIN, |ev| {
            (ev.data["state"] == "open").then(|| ev.data.clone())
        })
        .await;
    // A neutral number, never the chapter's id, until the reveal.
    assert!(question["question"].get("chapter").is_none(), "{question}");
    assert_eq!(question["chapter"], Value::Null, "{question}");
    assert!(!question.to_string().contains("none-race"), "{question}");
    assert!(question["number"].as_u64().is_some(), "{question}");
    assert!(
        question["question"]["options"][0]["zh"].is_string(),
        "{question}"
    );
    assert!(question.get("my_vote").is_none() && question.get("rounds").is_none());

    // A burst of changed minds: the stream folds them, about two events a second.
    let started = Instant::now();
    for i in 0..60 {
        let (status, _) = vote(client, fleet.url(0), &seats[i % 3], i % 2).await;
        assert_eq!(status, StatusCode::OK);
    }
    let mut sent = 0;
    early
        .until(WITHIN, |ev| {
            sent += 1;
            (ev.data["voted"] == 3).then_some(())
        })
        .await;
    let quiet = Instant::now() + Duration::from_secs(1);
    while let Some(ev) = early
        .next(quiet.saturating_duration_since(Instant::now()))
        .await
    {
        assert_eq!(ev.name, "poll");
        sent += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    // One event per 500 ms at most.
    assert!(
        f64::from(sent) <= secs * 2.0 + 1.0,
        "{sent} events in {secs:.1} s"
    );

    admin("/admin/class/poll/close", None).await;
    early
        .until(WITHIN, |ev| (ev.data["state"] == "closed").then_some(()))
        .await;
    // A student who joins late, or reloads, is sent the poll as it is.
    let mut late = Sse::open(client, &events).await;
    let now = late.next(WITHIN).await.expect("a first event");
    assert_eq!(
        (&now.data["state"], &now.data["voted"]),
        (&json!("closed"), &json!(3))
    );
}
