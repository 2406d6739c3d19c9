//! Votes: exact counts under concurrency, one vote per room per round, the codes of bad input,
//! nobody reading another's vote, and an instance restart in the middle.

use std::time::Duration;

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{assert_refused, call, counts_of, make_class, ok, open_poll, tally, vote, Seat};
use crate::helpers::{serve_args, spawn_fleet, TestApp, TOKEN};

const CHAPTER: &str = "none-race";

/// How many options the chapter's question has.
fn options() -> usize {
    workshop::scenario::question(CHAPTER).unwrap().options.len()
}

/// A class of `students` made through `base`, its poll opened on the chapter's question.
async fn class_voting(client: &reqwest::Client, base: &str, students: usize) -> Vec<Seat> {
    let seats = make_class(client, base, TOKEN, students).await;
    open_poll(client, base, CHAPTER).await;
    seats
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_rooms_vote_at_once_in_two_rounds_and_every_count_is_exact() {
    let fleet = spawn_fleet(2).await;
    let client = &fleet.client;
    let seats = make_class(client, fleet.url(0), TOKEN, 30).await;
    let admin = |method, path: &'static str, body| {
        ok(client, fleet.url(0), method, path, Some(TOKEN), body)
    };
    let opened = admin(
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "chapter": CHAPTER })),
    )
    .await;
    assert_eq!(
        (
            &opened["state"],
            &opened["round"],
            &opened["rooms"],
            &opened["voted"]
        ),
        (&json!("open"), &json!(1), &json!(30), &json!(0)),
        "{opened}"
    );
    // The admin view names the question; the question itself, as the class sees it, does not.
    assert_eq!(opened["question_id"], CHAPTER);
    assert!(opened["question"].get("chapter").is_none(), "{opened}");
    assert_eq!(opened["chapter"], Value::Null, "{opened}");
    // Its neutral number, as the presenter's picker lists it.
    let deck = admin(Method::GET, "/admin/class/deck", None).await;
    let listed = deck["questions"].as_array().cloned().unwrap_or_default();
    let number = listed
        .iter()
        .find(|q| q["id"] == CHAPTER)
        .map(|q| q["number"].clone())
        .unwrap_or_else(|| panic!("{CHAPTER} not in the deck: {deck}"));
    assert_eq!(opened["number"], number, "{opened}");
    // A claim is listed as the alternative to its chapter's question, before it, and the
    // chapter's question names it back.
    let at = |id: &Value| listed.iter().position(|q| &q["id"] == id).unwrap();
    let claims: Vec<&Value> = listed.iter().filter(|q| !q["claim"].is_null()).collect();
    assert!(!claims.is_empty(), "{deck}");
    for claim in claims {
        let own = &claim["alternative_to"];
        assert_eq!(own, &claim["chapter"], "{claim}");
        assert!(at(&claim["id"]) < at(own), "{claim} after {own}");
        let replaced = &listed[at(own)];
        assert!(replaced["alternative_to"].is_null(), "{replaced}");
        assert!(
            replaced["alternatives"]
                .as_array()
                .is_some_and(|a| a.contains(&claim["id"])),
            "{replaced} does not name {claim}"
        );
    }
    let options = opened["question"]["options"].as_array().unwrap().len();
    assert!((3..=4).contains(&options), "{opened}");

    // Round 1: every room at once, through both instances.
    let first: Vec<usize> = (0..seats.len()).map(|i| i % options).collect();
    let answers = join_all(
        seats
            .iter()
            .enumerate()
            .map(|(i, seat)| vote(client, fleet.url(i), seat, first[i])),
    )
    .await;
    let opened_at = opened["version"].as_u64().unwrap();
    let mut versions = Vec::new();
    for (i, (status, answer)) in answers.iter().enumerate() {
        assert_eq!(*status, StatusCode::OK, "{answer}");
        let version = answer["version"]
            .as_u64()
            .unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(
            answer,
            &json!({ "number": number, "round": 1, "option": first[i], "version": version })
        );
        versions.push(version);
    }
    // Each vote is one change of the poll, counted once, whichever instance took it.
    versions.sort_unstable();
    versions.dedup();
    assert_eq!(versions.len(), seats.len(), "{versions:?}");
    assert!(versions[0] > opened_at, "{versions:?} after {opened_at}");
    let view = admin(Method::GET, "/admin/class/poll", None).await;
    assert_eq!(counts_of(&view, 1), tally(&first, options), "{view}");
    assert_eq!(view["rounds"][0]["voters"], 30);

    // Round 2: every room votes again, and the first ten change their minds within the
    // round: each room's last vote counts, once.
    let view = admin(Method::POST, "/admin/class/poll/round", None).await;
    assert_eq!((&view["round"], &view["voted"]), (&json!(2), &json!(0)));
    assert_eq!(view["rounds"][0]["open"], false);
    assert_eq!(view["rounds"][1]["open"], true);
    let second: Vec<usize> = (0..seats.len())
        .map(|i| match i < 10 {
            true => (i + 2) % options,
            false => (i + 1) % options,
        })
        .collect();
    let (second, fleet_ref) = (&second, &fleet);
    join_all(seats.iter().enumerate().map(|(i, seat)| async move {
        let base = fleet_ref.url(i + 1);
        if i < 10 {
            let (status, _) = vote(client, base, seat, (i + 1) % options).await;
            assert_eq!(status, StatusCode::OK);
        }
        let (status, answer) = vote(client, base, seat, second[i]).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["round"], 2);
    }))
    .await;
    let view = admin(Method::GET, "/admin/class/poll", None).await;
    assert_eq!(counts_of(&view, 1), tally(&first, options), "{view}");
    assert_eq!(counts_of(&view, 2), tally(second, options), "{view}");
    assert_eq!(view["rounds"][1]["voters"], 30);

    // Anyone sees how many voted, not what.
    let public = ok(
        client,
        fleet.url(1),
        Method::GET,
        "/poll?room=student-01",
        None,
        None,
    )
    .await;
    assert_eq!(
        (&public["state"], &public["voted"]),
        (&json!("open"), &json!(30))
    );
    assert!(public.get("rounds").is_none(), "{public}");
    assert_eq!(
        (&public["reveal"], &public["my_vote"]),
        (&Value::Null, &Value::Null)
    );

    // Closed: a late vote is refused, and round 2 was the last.
    let view = admin(Method::POST, "/admin/class/poll/close", None).await;
    assert_eq!(view["state"], "closed");
    let late = vote(client, fleet.url(1), &seats[3], 0).await;
    assert_refused(
        &late,
        StatusCode::CONFLICT,
        "no_open_round",
        "a vote after the close",
    );
    let third = call(
        client,
        fleet.url(0),
        Method::POST,
        "/admin/class/poll/round",
        Some(TOKEN),
        None,
    )
    .await;
    assert_refused(&third, StatusCode::CONFLICT, "last_round", "a third round");
    let view = admin(Method::GET, "/admin/class/poll", None).await;
    assert_eq!(counts_of(&view, 2), tally(second, options), "{view}");
    let results = admin(Method::GET, "/admin/class/results", None).await;
    let rounds = &results["chapters"][0]["rounds"];
    assert_eq!(
        rounds[0]["counts"],
        json!(tally(&first, options)),
        "{results}"
    );
    assert_eq!(
        rounds[1]["counts"],
        json!(tally(second, options)),
        "{results}"
    );
    assert_eq!(
        results["rooms"][29]["answers"][0]["votes"],
        json!([first[29], second[29]])
    );

    // The metrics count every vote cast, per round (the ten changed minds twice), and the late
    // one refused, summed over the instances.
    let (mut per_round, mut refused) = ([0; 2], 0);
    for i in 0..2 {
        let text = fleet.metrics_of(i).await;
        let sample = |name: String| {
            text.lines()
                .find_map(|l| l.strip_prefix(&name))
                .map_or(0, |n| n.trim().parse::<u64>().unwrap())
        };
        for (r, n) in per_round.iter_mut().enumerate() {
            let round = r + 1;
            let instance = i + 1;
            *n += sample(format!(
                "oversell_votes_total{{round=\"{round}\",instance=\"app{instance}\"}} "
            ));
        }
        refused += sample(format!(
            "oversell_votes_refused_total{{reason=\"no_open_round\",instance=\"app{}\"}} ",
            i + 1
        ));
    }
    assert_eq!(per_round, [30, 40]);
    assert_eq!(refused, 1);
}

#[tokio::test]
async fn every_bad_input_gets_its_code_and_a_json_body() {
    let fleet = spawn_fleet(1).await;
    let client = &fleet.client;
    let base = fleet.url(0);
    let as_admin =
        |method, path: &'static str, body| call(client, base, method, path, Some(TOKEN), body);
    let open = Some(json!({ "chapter": CHAPTER }));
    let no_class = as_admin(Method::POST, "/admin/class/poll", open.clone()).await;
    assert_refused(
        &no_class,
        StatusCode::CONFLICT,
        "no_class",
        "a vote without a class",
    );

    let seats = make_class(client, base, TOKEN, 2).await;
    let (mine, theirs) = (&seats[0], &seats[1]);
    assert_refused(
        &vote(client, base, mine, 0).await,
        StatusCode::CONFLICT,
        "no_open_round",
        "a vote before any poll",
    );
    let idle = ok(
        client,
        base,
        Method::GET,
        "/admin/class/poll",
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(
        (&idle["state"], &idle["rooms"]),
        (&json!("idle"), &json!(2))
    );
    for (path, what) in [
        ("/admin/class/poll/round", "a round without a poll"),
        ("/admin/class/poll/close", "a close without a poll"),
    ] {
        let answer = as_admin(Method::POST, path, None).await;
        assert_refused(&answer, StatusCode::CONFLICT, "no_poll", what);
    }
    let reveal = as_admin(
        Method::POST,
        "/admin/class/poll/reveal",
        Some(json!({ "run": false })),
    )
    .await;
    assert_refused(
        &reveal,
        StatusCode::CONFLICT,
        "no_poll",
        "a reveal without a poll",
    );

    // Opening: a chapter that does not exist, no body, a room token.
    let unknown = as_admin(
        Method::POST,
        "/admin/class/poll",
        Some(json!({ "chapter": "no-such-chapter" })),
    )
    .await;
    assert_refused(
        &unknown,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "an unknown chapter",
    );
    assert!(
        unknown.1["message"].as_str().unwrap().contains(CHAPTER),
        "{}",
        unknown.1
    );
    let bodiless = as_admin(Method::POST, "/admin/class/poll", None).await;
    assert_refused(&bodiless, StatusCode::BAD_REQUEST, "bad_request", "no body");
    let by_a_room = call(
        client,
        base,
        Method::POST,
        "/admin/class/poll",
        Some(&mine.token),
        open.clone(),
    )
    .await;
    assert_refused(
        &by_a_room,
        StatusCode::FORBIDDEN,
        "forbidden",
        "a room token opening",
    );
    ok(
        client,
        base,
        Method::POST,
        "/admin/class/poll",
        Some(TOKEN),
        open,
    )
    .await;

    // Voting: who may, and what.
    let path = format!("/poll?room={}", mine.room);
    let cast = |token: Option<String>, body: Option<Value>| {
        let path = path.clone();
        async move { call(client, base, Method::POST, &path, token.as_deref(), body).await }
    };
    let one = Some(json!({ "option": 1 }));
    assert_refused(
        &cast(None, one.clone()).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "no token",
    );
    let cases = [
        (Some(theirs.token.clone()), "another room's token"),
        (Some("room-0123456789abcdef".into()), "an unknown token"),
        (Some(TOKEN.into()), "the admin token"),
    ];
    for (token, what) in cases {
        let answer = cast(token, one.clone()).await;
        assert_refused(&answer, StatusCode::FORBIDDEN, "forbidden", what);
    }
    let mine_token = Some(mine.token.clone());
    for (body, what) in [
        (json!({ "option": options() }), "an option past the last"),
        (json!({ "option": -1 }), "a negative option"),
        (json!({ "option": "b" }), "an option that is no number"),
        (json!({ "opt": 1 }), "a misspelt field"),
        (json!(1), "no object"),
    ] {
        let answer = cast(mine_token.clone(), Some(body)).await;
        assert_refused(&answer, StatusCode::BAD_REQUEST, "bad_request", what);
    }
    let answer = cast(mine_token.clone(), None).await;
    assert_refused(&answer, StatusCode::BAD_REQUEST, "bad_request", "no body");

    // A room outside the class, and a revoked token.
    let outsider = ok(
        client,
        base,
        Method::POST,
        "/admin/rooms/outsider/token",
        Some(TOKEN),
        None,
    )
    .await;
    let outsider = Seat {
        room: "outsider".into(),
        token: outsider["token"].as_str().unwrap().to_owned(),
    };
    assert_refused(
        &vote(client, base, &outsider, 0).await,
        StatusCode::FORBIDDEN,
        "forbidden",
        "a room outside the class",
    );
    let path = format!("/admin/rooms/{}/token", theirs.room);
    ok(client, base, Method::DELETE, &path, Some(TOKEN), None).await;
    assert_refused(
        &vote(client, base, theirs, 0).await,
        StatusCode::FORBIDDEN,
        "forbidden",
        "a revoked token",
    );

    // Nothing of the above was counted.
    let view = ok(
        client,
        base,
        Method::GET,
        "/admin/class/poll",
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(view["rounds"][0]["voters"], 0, "{view}");

    // Reveals without a run, rounds past the last, results in no known format.
    let no_run = as_admin(
        Method::POST,
        "/admin/class/poll/reveal",
        Some(json!({ "run": false })),
    )
    .await;
    assert_refused(
        &no_run,
        StatusCode::CONFLICT,
        "no_run",
        "a reveal before a run",
    );
    for body in [
        json!({ "run": false, "room": "default" }),
        json!({}),
        json!({ "run": 1 }),
    ] {
        let answer = as_admin(Method::POST, "/admin/class/poll/reveal", Some(body)).await;
        assert_refused(
            &answer,
            StatusCode::BAD_REQUEST,
            "bad_request",
            "a bad reveal body",
        );
    }
    ok(
        client,
        base,
        Method::POST,
        "/admin/class/poll/round",
        Some(TOKEN),
        None,
    )
    .await;
    let third = as_admin(Method::POST, "/admin/class/poll/round", None).await;
    assert_refused(&third, StatusCode::CONFLICT, "last_round", "a third round");
    let xml = as_admin(Method::GET, "/admin/class/results?format=xml", None).await;
    assert_refused(
        &xml,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "results as xml",
    );
}

#[tokio::test]
async fn a_room_token_reads_its_own_vote_and_nobody_elses() {
    let fleet = spawn_fleet(1).await;
    let client = &fleet.client;
    let base = fleet.url(0);
    let seats = class_voting(client, base, 2).await;
    let (mine, theirs) = (&seats[0], &seats[1]);
    assert_eq!(vote(client, base, mine, 2).await.0, StatusCode::OK);
    assert_eq!(vote(client, base, theirs, 0).await.0, StatusCode::OK);

    let read = |room: &str, token: Option<&str>| {
        let path = format!("/poll?room={room}");
        let token = token.map(str::to_owned);
        async move { call(client, base, Method::GET, &path, token.as_deref(), None).await }
    };
    let own = read(&mine.room, Some(&mine.token)).await;
    assert_eq!(
        (own.0, &own.1["my_vote"]),
        (StatusCode::OK, &json!(2)),
        "{}",
        own.1
    );
    assert!(own.1.get("rounds").is_none(), "{}", own.1);
    for (room, token, what) in [
        (&theirs.room, &mine.token, "another room with my token"),
        (&mine.room, &theirs.token, "my room with another's token"),
    ] {
        let answer = read(room, Some(token)).await;
        assert_refused(&answer, StatusCode::FORBIDDEN, "forbidden", what);
    }
    let anyone = read(&mine.room, None).await;
    assert_eq!(anyone.0, StatusCode::OK);
    assert_eq!(
        (&anyone.1["my_vote"], &anyone.1["voted"]),
        (&Value::Null, &json!(2))
    );
    let text = anyone.1.to_string();
    assert!(
        !text.contains("counts") && !text.contains("student-"),
        "{text}"
    );
    // The counts and every room's answers are the admin token's alone.
    for path in ["/admin/class/poll", "/admin/class/results"] {
        let answer = call(client, base, Method::GET, path, Some(&mine.token), None).await;
        assert_refused(&answer, StatusCode::FORBIDDEN, "forbidden", path);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_restarted_mid_vote_loses_nothing() {
    let mut fleet = spawn_fleet(2).await;
    let client = fleet.client.clone();
    let seats = class_voting(&client, fleet.url(0), 12).await;
    let mut choices = vec![0usize; seats.len()];
    for (i, seat) in seats.iter().enumerate().take(6) {
        choices[i] = i % options();
        assert_eq!(
            vote(&client, fleet.url(i), seat, choices[i]).await.0,
            StatusCode::OK
        );
    }
    // The first instance goes (a graceful stop: a restart's first half)…
    fleet.apps.remove(0).shut_down().await;
    for (i, seat) in seats.iter().enumerate().skip(6) {
        choices[i] = (i + 1) % options();
        assert_eq!(
            vote(&client, fleet.url(0), seat, choices[i]).await.0,
            StatusCode::OK
        );
    }
    // …and comes back as a new process would: nothing in memory.
    let again = TestApp::spawn(&serve_args(&fleet.redis.url(), "app1")).await;
    fleet.apps.push(again);
    for (i, seat) in seats.iter().enumerate().take(3) {
        choices[i] = options() - 1 - i % options();
        assert_eq!(
            vote(&client, fleet.url(1), seat, choices[i]).await.0,
            StatusCode::OK
        );
    }
    let url = fleet.url(1).to_owned();
    let view = ok(
        &client,
        &url,
        Method::GET,
        "/admin/class/poll",
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(counts_of(&view, 1), tally(&choices, options()), "{view}");
    assert_eq!(view["rounds"][0]["voters"], 12);
    // The restarted instance's stream starts from what Redis holds.
    let mut sse = crate::events::Sse::open(&client, &format!("{url}/poll/events")).await;
    let first = sse
        .next(Duration::from_secs(10))
        .await
        .expect("a first event");
    assert_eq!(first.name, "poll");
    assert_eq!(
        (&first.data["state"], &first.data["voted"]),
        (&json!("open"), &json!(12))
    );
    // And a vote through it counts beside the others.
    let last = &seats[11];
    assert_eq!(vote(&client, &url, last, 0).await.0, StatusCode::OK);
    choices[11] = 0;
    let view = ok(
        &client,
        &url,
        Method::GET,
        "/admin/class/poll",
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(counts_of(&view, 1), tally(&choices, options()), "{view}");
}
