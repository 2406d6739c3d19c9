//! The poll's version: every view and answer carries it, it grows with every change of the
//! poll made through any instance (and only then), and a view read before a change has a
//! smaller one than any read after, so a page tells a stale view from a new one; the stream's
//! views come in the order of their versions; a store that restarted empty goes on above.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{make_class, ok, vote};
use crate::events::Sse;
use crate::helpers::{spawn_fleet, TOKEN};

// A deadline, not a pace: CI runs many fleets at once on two cores.
const WITHIN: Duration = Duration::from_secs(30);

fn version(view: &Value) -> u64 {
    view["version"]
        .as_u64()
        .unwrap_or_else(|| panic!("no version: {view}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_gives_a_larger_version_and_a_stale_view_shows_it() {
    let fleet = spawn_fleet(2).await;
    let client = &fleet.client;
    let seats = make_class(client, fleet.url(0), TOKEN, 2).await;
    let admin = |i: usize, method: Method, path: &'static str, body: Option<Value>| {
        ok(client, fleet.url(i), method, path, Some(TOKEN), body)
    };
    let public = |i: usize| ok(client, fleet.url(i), Method::GET, "/poll", None, None);
    // Watching through the second instance; the changes go through both.
    let events = format!("{}/poll/events?room={}", fleet.url(1), seats[0].room);
    let mut stream = Sse::open(client, &events).await;

    let idle = public(0).await;
    assert_eq!(idle["state"], "idle", "{idle}");
    // Each step: what it answered, and the view read just before it, which is stale after it.
    let mut steps: Vec<(&str, u64)> = vec![("class made", version(&idle))];
    let mut step = |what: &'static str, answer: &Value, before: &Value| {
        assert!(
            version(before) < version(answer),
            "{what}: the view before it ({before}) is not older than its answer ({answer})"
        );
        steps.push((what, version(answer)));
    };

    let before = public(1).await;
    let opened = admin(
        0,
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "chapter": "none-race" })),
    )
    .await;
    assert_eq!(opened["state"], "open", "{opened}");
    step("opened", &opened, &before);

    let before = public(0).await;
    assert_eq!(
        version(&before),
        version(&opened),
        "nothing changed: {before}"
    );
    let (status, voted) = vote(client, fleet.url(1), &seats[0], 1).await;
    assert_eq!(status, StatusCode::OK, "{voted}");
    step("a vote", &voted, &before);
    // The same vote again changes nothing: the same version.
    let (status, again) = vote(client, fleet.url(0), &seats[0], 1).await;
    assert_eq!((status, version(&again)), (StatusCode::OK, version(&voted)));
    // The view read after the vote is at its version, and counts it.
    let after = public(0).await;
    assert_eq!(
        (version(&after), &after["voted"]),
        (version(&voted), &json!(1))
    );
    let (status, changed) = vote(client, fleet.url(0), &seats[0], 2).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    step("a changed mind", &changed, &after);

    let before = public(1).await;
    let closed = admin(1, Method::POST, "/admin/class/poll/close", None).await;
    assert_eq!(closed["state"], "closed", "{closed}");
    step("closed", &closed, &before);
    // Closed again: already closed, no change.
    let still = admin(0, Method::POST, "/admin/class/poll/close", None).await;
    assert_eq!(version(&still), version(&closed), "{still}");

    let before = public(0).await;
    let round = admin(0, Method::POST, "/admin/class/poll/round", None).await;
    assert_eq!(round["round"], 2, "{round}");
    step("round 2", &round, &before);

    let before = public(1).await;
    let (status, voted) = vote(client, fleet.url(1), &seats[1], 0).await;
    assert_eq!(status, StatusCode::OK, "{voted}");
    step("a vote in round 2", &voted, &before);
    let read = admin(1, Method::GET, "/admin/class/poll", None).await;
    assert_eq!(version(&read), version(&voted), "{read}");

    // The stream's views come in the order of their versions, each at most the newest
    // answer's, and end at the last change's.
    let newest = version(&voted);
    let mut seen = Vec::new();
    stream
        .until(WITHIN, |ev| {
            let v = version(&ev.data);
            assert!(v <= newest, "{} beyond {newest}", ev.data);
            seen.push(v);
            (v == newest).then_some(())
        })
        .await;
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");

    // A new poll, and the class closed: changes as well.
    let before = public(1).await;
    let reopened = admin(
        0,
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "chapter": "none-race" })),
    )
    .await;
    step("opened again", &reopened, &before);
    let before = public(0).await;
    admin(1, Method::DELETE, "/admin/class", None).await;
    let gone = public(0).await;
    assert_eq!(gone["state"], "idle", "{gone}");
    step("class closed", &gone, &before);

    // The store restarts empty: the count is lost, and starts again above every version given
    // out before, so no page takes the new views for stale ones.
    let mut redis = redis::Client::open(fleet.redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let () = redis::cmd("FLUSHALL")
        .query_async(&mut redis)
        .await
        .unwrap();
    let before = gone;
    let empty = public(1).await;
    assert!(version(&empty) > version(&before), "{empty} after {before}");
    // Read from the store's clock: a read writes no key.
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*poll*")
        .query_async(&mut redis)
        .await
        .unwrap();
    assert_eq!(keys, Vec::<String>::new());
    let seats = make_class(client, fleet.url(0), TOKEN, 2).await;
    assert_eq!(seats.len(), 2);
    let made = public(0).await;
    step("a store that restarted empty, a class made", &made, &empty);

    let versions: Vec<u64> = steps.iter().map(|(_, v)| *v).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
}
