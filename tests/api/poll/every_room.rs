//! Run & reveal in every room, on a real fleet (nginx, three supervised instances): the reveal
//! answers with the instructor's room's figures at once, then each room of the class runs the
//! chapter in the background and the reveal's tally fills in until every room is counted, in
//! the public view and in the results.

use std::time::Duration;

use oversell::lock_store::{LockStoreKind, Persistence};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{assert_refused, call, make_class, ok, vote};
use crate::helpers::poll_until;
use crate::scenarios::{start_fleet_with, TOKEN};

const CHAPTER: &str = "none-race";

/// The rooms' outcomes in a tally: (landed in an option, in none, failed, pending).
fn outcomes(tally: &Value) -> (u64, u64, u64, u64) {
    let landed = tally["landed"]
        .as_array()
        .unwrap_or_else(|| panic!("no landed: {tally}"))
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    (
        landed,
        tally["landed_none"].as_u64().unwrap(),
        tally["failed"].as_array().unwrap().len() as u64,
        tally["pending"].as_u64().unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reveal_in_every_room_counts_where_each_rooms_run_landed() {
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let client = crate::helpers::http_client();
    let base = fleet.url().to_owned();
    let seats = make_class(&client, &base, TOKEN, 3).await;
    let admin = |method: Method, path: &'static str, body: Option<Value>| {
        ok(&client, &base, method, path, Some(TOKEN), body)
    };
    admin(
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "chapter": CHAPTER })),
    )
    .await;
    for seat in &seats {
        assert_eq!(vote(&client, &base, seat, 0).await.0, StatusCode::OK);
    }

    // Every room goes with a run only; the vote is still open after the refusal.
    let refused = call(
        &client,
        &base,
        Method::POST,
        "/admin/class/poll/reveal",
        Some(TOKEN),
        Some(json!({ "run": false, "every_room": true })),
    )
    .await;
    assert_refused(
        &refused,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "every_room without a run",
    );

    let reveal = admin(
        Method::POST,
        "/admin/class/poll/reveal",
        Some(json!({ "run": true, "every_room": true })),
    )
    .await;
    // The figures are the instructor's room's; the class's three rooms come after.
    assert_eq!(reveal["room"], "default", "{reveal}");
    let tally = &reveal["every_room"];
    assert_eq!(tally["rooms"], 3, "{reveal}");
    let (landed, none, failed, pending) = outcomes(tally);
    assert_eq!(landed + none + failed + pending, 3, "{reveal}");

    // The tally fills in, in the view everyone reads, until no room is left to run.
    let view = poll_until(
        Duration::from_secs(120),
        || ok(&client, &base, Method::GET, "/poll", None, None),
        |view| view["reveal"]["every_room"]["pending"] == 0,
    )
    .await;
    let tally = &view["reveal"]["every_room"];
    assert_eq!(tally["pending"], 0, "rooms still to run: {view}");
    assert_eq!(tally["failed"], json!([]), "{view}");
    let (landed, none, _, _) = outcomes(tally);
    assert_eq!(landed + none, 3, "{view}");
    let options = view["question"]["options"].as_array().unwrap().len();
    assert_eq!(tally["landed"].as_array().unwrap().len(), options, "{view}");
    // The main figures are still the instructor's room's.
    assert_eq!(view["reveal"]["figures"], reveal["figures"]);
    // Each room's outcome kept is a change of the poll: one version each, after the answer's.
    let version = |v: &Value| v["version"].as_u64().unwrap_or_else(|| panic!("{v}"));
    assert!(
        version(&view) >= version(&reveal) + pending,
        "{view} after {reveal}"
    );

    // Each room's own ground truth shows its run: its orders are the chapter's buyers' sales.
    for seat in &seats {
        let state = ok(
            &client,
            &base,
            Method::GET,
            &format!("/state?room={}", seat.room),
            None,
            None,
        )
        .await;
        assert!(
            state["orders"].as_i64().unwrap() > 0,
            "{}: {state}",
            seat.room
        );
    }

    // The results keep the tally with the chapter, and the Markdown says it.
    let results = admin(Method::GET, "/admin/class/results", None).await;
    assert_eq!(results["chapters"][0]["every_room"], *tally, "{results}");
    let md = client
        .get(format!("{base}/admin/class/results?format=md"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(md.contains("3 of 3 rooms ran it"), "{md}");

    // Opened again, the chapter starts from nothing: no tally of the run before.
    let reopened = admin(
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "chapter": CHAPTER })),
    )
    .await;
    assert_eq!(reopened["reveal"], Value::Null);
    let results = admin(Method::GET, "/admin/class/results", None).await;
    assert_eq!(
        results["chapters"][0]["every_room"],
        Value::Null,
        "{results}"
    );
    fleet.stop().await;
}

/// An instance running the class's rooms that is stopped (SIGTERM: a restart, a scale-down)
/// keeps, before it exits, that the rooms it leaves failed and why; the tally ends with no
/// room "not run yet" for good, and the rooms that did run keep their outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_left_by_a_stopping_instance_say_so_instead_of_waiting_for_good() {
    const ROOMS: u64 = 8;
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let client = crate::helpers::http_client();
    let base = fleet.url().to_owned();
    let seats = make_class(&client, &base, TOKEN, ROOMS as usize).await;
    ok(
        &client,
        &base,
        Method::POST,
        "/admin/class/poll",
        Some(TOKEN),
        Some(json!({ "chapter": CHAPTER })),
    )
    .await;
    assert_eq!(vote(&client, &base, &seats[0], 0).await.0, StatusCode::OK);
    let reveal = ok(
        &client,
        &base,
        Method::POST,
        "/admin/class/poll/reveal",
        Some(TOKEN),
        Some(json!({ "run": true, "every_room": true })),
    )
    .await;
    assert_eq!(reveal["every_room"]["rooms"], ROOMS, "{reveal}");

    // Eight rooms of a run each, two at a time, have only begun: every instance is stopped,
    // the one running them among them (nginx chose it), and its supervisor starts it again.
    let stopped: Vec<(String, u32)> = fleet
        .instances()
        .iter()
        .filter_map(|i| i.pid.map(|pid| (i.id.clone(), pid)))
        .collect();
    assert_eq!(stopped.len(), 3, "{:?}", fleet.instances());
    for (_, pid) in &stopped {
        assert_eq!(unsafe { libc::kill(*pid as i32, libc::SIGTERM) }, 0);
    }

    // Back up (not asked while none is: nginx would log every refusal).
    let back = poll_until(
        Duration::from_secs(60),
        || async { fleet.instances() },
        |now| now.iter().all(|i| i.restarts >= 1 && i.pid.is_some()),
    )
    .await;
    assert!(
        back.iter().all(|i| i.restarts >= 1 && i.pid.is_some()),
        "not all back: {back:?}"
    );
    let view = poll_until(
        Duration::from_secs(120),
        || call(&client, &base, Method::GET, "/poll", None, None),
        |(status, view)| *status == StatusCode::OK && view["reveal"]["every_room"]["pending"] == 0,
    )
    .await
    .1;
    let tally = &view["reveal"]["every_room"];
    assert_eq!(tally["pending"], 0, "rooms still 'not run yet': {view}");
    let (landed, none, failed, _) = outcomes(tally);
    assert_eq!(landed + none + failed, ROOMS, "{view}");
    let failures = tally["failed"].as_array().unwrap();
    assert!(!failures.is_empty(), "no room was left by the stop: {view}");
    for failure in failures {
        let error = failure["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("stopped before this room's run ended")
                && stopped.iter().any(|(id, _)| error.contains(id.as_str())),
            "a room left must name the instance that stopped: {failure}"
        );
    }
    fleet.stop().await;
}

/// The instance running the class's rooms, killed outright (`SIGKILL`: it says nothing), leaves
/// no room "not run yet": its lease on the rooms lapses, another instance takes the rooms left
/// and runs them, and every room ends with a run of its own (none failed, none pending).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_left_by_a_killed_runner_are_taken_over_by_another_instance() {
    const ROOMS: u64 = 6;
    const LEASE_KEY: &str = "oversell:{.fleet}:class:poll:rooms-lease";
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let client = crate::helpers::http_client();
    let base = fleet.url().to_owned();
    let seats = make_class(&client, &base, TOKEN, ROOMS as usize).await;
    ok(
        &client,
        &base,
        Method::POST,
        "/admin/class/poll",
        Some(TOKEN),
        Some(json!({ "chapter": CHAPTER })),
    )
    .await;
    assert_eq!(vote(&client, &base, &seats[0], 0).await.0, StatusCode::OK);
    let reveal = ok(
        &client,
        &base,
        Method::POST,
        "/admin/class/poll/reveal",
        Some(TOKEN),
        Some(json!({ "run": true, "every_room": true })),
    )
    .await;
    assert_eq!(reveal["every_room"]["rooms"], ROOMS, "{reveal}");

    // The lease names its holder, `<instance>:<process run>:<n>`: the runner to kill.
    let redis = redis::Client::open(fleet.redis_url().unwrap()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let lease = |mut conn: redis::aio::MultiplexedConnection| async move {
        let value: Option<String> = redis::cmd("GET")
            .arg(LEASE_KEY)
            .query_async(&mut conn)
            .await
            .unwrap();
        value.and_then(|v| v.split_once('\n').map(|(_, holder)| holder.to_owned()))
    };
    let runner = poll_until(
        Duration::from_secs(10),
        || lease(conn.clone()),
        Option::is_some,
    )
    .await
    .expect("no lease on the class's rooms after the reveal");
    let runner_id = runner.split(':').next().unwrap().to_owned();
    let victim = fleet
        .instances()
        .into_iter()
        .find(|i| i.id == runner_id)
        .unwrap_or_else(|| panic!("{runner}: no such instance in {:?}", fleet.instances()));
    let view = ok(&client, &base, Method::GET, "/poll", None, None).await;
    let pending = view["reveal"]["every_room"]["pending"].as_u64().unwrap();
    assert!(pending >= 2, "the rooms should still be running: {view}");
    assert_eq!(
        unsafe { libc::kill(victim.pid.unwrap() as i32, libc::SIGKILL) },
        0
    );

    // Another holder within the lease (15 s) and a look (2 s), with room for a loaded machine.
    let taker = poll_until(
        Duration::from_secs(40),
        || lease(conn.clone()),
        |holder| holder.as_ref().is_some_and(|h| *h != runner),
    )
    .await;
    assert!(
        taker.as_ref().is_some_and(|h| *h != runner),
        "the rooms of {runner} (killed) were not taken: lease {taker:?}"
    );

    let view = poll_until(
        Duration::from_secs(240),
        || call(&client, &base, Method::GET, "/poll", None, None),
        |(status, view)| *status == StatusCode::OK && view["reveal"]["every_room"]["pending"] == 0,
    )
    .await
    .1;
    let tally = &view["reveal"]["every_room"];
    assert_eq!(tally["pending"], 0, "rooms still 'not run yet': {view}");
    assert_eq!(
        tally["failed"],
        json!([]),
        "every room left is run again: {view}"
    );
    let (landed, none, _, _) = outcomes(tally);
    assert_eq!(landed + none, ROOMS, "{view}");
    for seat in &seats {
        let path = format!("/state?room={}", seat.room);
        let state = ok(&client, &base, Method::GET, &path, None, None).await;
        assert!(
            state["orders"].as_i64().unwrap() > 0,
            "{}: {state}",
            seat.room
        );
    }
    // The lease goes with the last room: nothing is left to take.
    let left: Option<String> = redis::cmd("GET")
        .arg(LEASE_KEY)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, None);
    fleet.stop().await;
}
