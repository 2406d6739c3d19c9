//! The lab against a real fleet: a resource store, a lock store of its own (`single`), three
//! supervised instances and nginx. Students' locks are the ladder's own scripts
//! (`static/locks/`) and scripts that misbehave on purpose.

use std::path::Path;
use std::time::Duration;

use oversell::launch::local_fleet::Fleet;
use oversell::lock_store::{LockStoreKind, Persistence};
use oversell_api::tier::Tier;
use oversell_client::{AdminClient, Targets};
use reqwest::StatusCode;
use serde_json::{json, Value};
use workshop::lab::{self, Outcome, Shape, LADDER};
use workshop::scenario::Runner;

use crate::helpers::eventually;
use crate::scenarios::{start_fleet_with, TOKEN};

mod abuse;

/// The ladder's scripts for `tier` as a lab lock, and its shape.
pub(crate) fn ladder_lock(tier: Tier) -> (Value, Shape) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("static/locks")
        .join(tier.facts().preset.expect("a rung with a preset"));
    let read = |name: String| std::fs::read_to_string(dir.join(name)).ok();
    let steps = |what: &str| -> Vec<String> {
        (1..=3)
            .map_while(|i| read(format!("{what}-{i}.lua")))
            .collect()
    };
    let (acquire, release, renew) = (steps("acquire"), steps("release"), read("renew.lua".into()));
    let shape = Shape {
        acquire_steps: acquire.len(),
        release_steps: release.len(),
        renew: renew.is_some(),
        failover: false,
    };
    let mut lock = json!({ "acquire": acquire, "release": release });
    if let Some(renew) = renew {
        lock["renew"] = json!(renew);
    }
    (lock, shape)
}

pub(crate) async fn send(
    fleet: &Fleet,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = crate::helpers::http_client()
        .request(method, format!("{}{path}", fleet.url()))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let resp = request.send().await.unwrap();
    let status = resp.status();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, body)
}

pub(crate) async fn submit(fleet: &Fleet, room: &str, lock: &Value) -> (StatusCode, Value) {
    let path = format!("/admin/lab?room={room}");
    send(
        fleet,
        reqwest::Method::PUT,
        &path,
        TOKEN,
        Some(lock.clone()),
    )
    .await
}

/// A client-side runner for one room of the fleet.
struct RoomRunner {
    targets: Targets,
    admin: AdminClient,
    instances: usize,
}

impl RoomRunner {
    fn of(fleet: &Fleet, room: &str) -> RoomRunner {
        let targets = Targets::parse(&[fleet.url()], Some(room)).unwrap();
        let admin = AdminClient::new(&targets, Some(TOKEN.into()));
        RoomRunner {
            targets,
            admin,
            instances: fleet.instances().len(),
        }
    }

    fn runner(&self) -> Runner<'_> {
        Runner {
            targets: &self.targets,
            admin: &self.admin,
            instances: self.instances,
            spare: None,
            step: Default::default(),
        }
    }
}

fn outcomes(card: &Value) -> Vec<String> {
    card["attacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap().to_owned())
        .collect()
}

fn ids(outcomes: &[Outcome]) -> Vec<String> {
    outcomes.iter().map(|o| o.id().to_owned()).collect()
}

/// The grader's calibration: each rung of the ladder, graded twice — its built-in tier, and
/// its scripts submitted as the room's own lock — must get the outcomes the ladder says, and
/// so the same report card. The custom side runs none of the tier's Rust code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ladders_own_scripts_are_graded_as_their_built_in_tiers() {
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let mut wrong = Vec::new();
    // Every tier the table says the grader grades: the ladder's rungs, and their twins.
    let graded: Vec<Tier> = Tier::ALL
        .into_iter()
        .filter(|t| t.facts().graded_as.is_some())
        .collect();
    let rungs = LADDER.iter().map(|(tier, _)| *tier);
    assert!(rungs.into_iter().all(|rung| graded.contains(&rung)));
    for tier in &graded {
        // A twin's card names the rung the attacks cannot tell it from.
        let (rung, expected) = lab::ladder_outcomes(*tier).expect("a rung of the ladder");
        let room = format!("lab-{tier}");
        let (lock, shape) = ladder_lock(*tier);
        let (status, body) = submit(&fleet, &room, &lock).await;
        assert_eq!(status, StatusCode::OK, "{tier}: {body}");
        let path = format!("/admin/lab/grade?room={room}");
        let (status, card) = send(&fleet, reqwest::Method::POST, &path, TOKEN, None).await;
        assert_eq!(status, StatusCode::OK, "{tier}: {card}");
        let custom = outcomes(&card);

        let room = format!("tier-{tier}");
        let client = RoomRunner::of(&fleet, &room);
        let built_in = lab::grade(&client.runner(), shape, *tier, None, || async { Ok(None) })
            .await
            .unwrap_or_else(|e| panic!("{tier}: grading the built-in tier: {e:#}"));
        let built_in = ids(&built_in.outcomes());
        eprintln!(
            "{tier:<20} custom {custom:?}\n{:<20} tier   {built_in:?}",
            ""
        );
        let mut expected = ids(expected);
        expected.push("not-applicable".into()); // the failover: a single lock store here
        if custom != expected || built_in != expected {
            wrong.push(format!(
                "{tier}: ladder {expected:?}, custom {custom:?}, built-in {built_in:?}"
            ));
        }
        if card["matches"] != json!(rung) {
            wrong.push(format!("{tier}: the card matches {}", card["matches"]));
        }
    }
    fleet.stop().await;
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The command line a student uses: a lock from a folder or from files, shown back, graded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_student_submits_shows_and_grades_a_lock_from_the_command_line() {
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let locks = concat!(env!("CARGO_MANIFEST_DIR"), "/static/locks");
    let cli = |args: &[&str]| {
        let mut all = vec!["loadtest", "lab"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--url", fleet.url(), "--room", "cli", "--token", TOKEN]);
        let all: Vec<String> = all.into_iter().map(str::to_owned).collect();
        async move { workshop::run_cli(all).await }
    };
    // The room starts on a built-in tier, so the switch below is the submission's doing.
    let path = "/admin/tier?room=cli";
    let tier = Some(json!({ "tier": "lua-release" }));
    let (status, answer) = send(&fleet, reqwest::Method::PUT, path, TOKEN, tier).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let acquire = format!("{locks}/setnx-expire/acquire-1.lua");
    let expire = format!("{locks}/setnx-expire/acquire-2.lua");
    let release = format!("{locks}/setnx-expire/release-1.lua");
    let said = cli(&[
        "submit",
        "--acquire",
        &acquire,
        "--acquire",
        &expire,
        "--release",
        &release,
    ])
    .await
    .unwrap();
    assert!(said.contains("2 acquire, 1 release"), "{said}");
    assert!(
        said.contains("the room now sells under tier custom on every instance"),
        "{said}"
    );
    // As on the dashboard and the lab page: the room switched to its own lock.
    let state: Value = reqwest::get(format!("{}/state?room=cli", fleet.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state["tier"], "custom", "{state}");
    let shown = cli(&["show"]).await.unwrap();
    assert!(shown.contains("PEXPIRE"), "{shown}");

    let folder = format!("{locks}/setnx");
    let said = cli(&["submit", "--from", &folder]).await.unwrap();
    assert!(said.contains("1 acquire, 1 release"), "{said}");
    let card = cli(&["grade", "--lang", "en"]).await.unwrap();
    assert!(
        card.contains("holder-dies                  DEADLOCK"),
        "{card}"
    );
    assert!(card.contains("Matches the ladder's rung: setnx"), "{card}");
    // A file that is not there: said, before anything is sent.
    let err = cli(&["submit", "--acquire", "/nowhere.lua", "--release", &release])
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("cannot read /nowhere.lua"),
        "{err}"
    );
    fleet.stop().await;
}

/// A lab lock on a lock store behind Sentinel: the grader's failover attack (admin token only,
/// it strikes every room's locks) finds what `failover-loses-lock` shows of the ladder: the
/// lock lived on a primary that died before its replica had it, and a second buyer got in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_failover_attack_loses_a_lab_lock_and_only_the_admin_may_order_it() {
    let fleet = start_fleet_with(3, LockStoreKind::Sentinel, Persistence::None).await;
    let (status, class) = send(
        &fleet,
        reqwest::Method::POST,
        "/admin/class",
        TOKEN,
        Some(json!({ "students": 1 })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{class}");
    let room = class["rooms"][0]["room"].as_str().unwrap().to_owned();
    let student = class["rooms"][0]["token"].as_str().unwrap().to_owned();
    let (lock, _) = ladder_lock(Tier::LuaRelease);
    assert_eq!(submit(&fleet, &room, &lock).await.0, StatusCode::OK);
    let path = format!("/admin/lab/grade?room={room}");
    let only = Some(json!({ "only": "failover" }));

    let (status, card) = send(&fleet, reqwest::Method::POST, &path, &student, only.clone()).await;
    assert_eq!(status, StatusCode::OK, "{card}");
    assert_eq!(outcomes(&card), ["not-applicable"], "{card}");
    assert!(card["attacks"][0]["note"]
        .as_str()
        .unwrap()
        .contains("admin token"));

    let (status, card) = send(&fleet, reqwest::Method::POST, &path, TOKEN, only).await;
    assert_eq!(status, StatusCode::OK, "{card}");
    assert_eq!(outcomes(&card), ["overlap"], "{card}");
    fleet.stop().await;
}

/// A class pressing "Attack my lock" together: more rooms than the fleet grades at once. Every
/// room gets its card; those behind are answered at once with their place in the one line of
/// the fleet (202), and a room pressing again keeps its place and its job instead of queuing
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_grading_at_once_wait_their_turn_and_all_get_their_cards() {
    let fleet = start_fleet_with(2, LockStoreKind::Single, Persistence::None).await;
    // SETNX and DEL: no lease to run out on a loaded machine, so the plain contention holds
    // whatever the timing (a lease-based lock starved of CPU past its lease can overlap).
    let (lock, _) = ladder_lock(Tier::Setnx);
    let rooms: Vec<String> = (0..oversell::config::DEFAULT_GRADING_SLOTS + 2)
        .map(|n| format!("class-{n}"))
        .collect();
    for room in &rooms {
        let (status, body) = submit(&fleet, room, &lock).await;
        assert_eq!(status, StatusCode::OK, "{room}: {body}");
    }
    // One attack each keeps the test short; the line is the same for a whole suite.
    let press = |room: String| {
        let fleet = &fleet;
        async move {
            let path = format!("/admin/lab/grade?room={room}");
            let only = Some(json!({ "only": "contention" }));
            (
                room,
                send(fleet, reqwest::Method::POST, &path, TOKEN, only).await,
            )
        }
    };
    let answers = futures_util::future::join_all(rooms.iter().cloned().map(press)).await;
    let queued: Vec<(String, Value)> = answers
        .iter()
        .filter(|(_, (status, _))| *status == StatusCode::ACCEPTED)
        .map(|(room, (_, body))| (room.clone(), body.clone()))
        .collect();
    assert!(
        !queued.is_empty(),
        "more rooms than slots, yet none waited: {answers:?}"
    );
    for (room, place) in &queued {
        assert_eq!(place["state"], "queued", "{room}: {place}");
        assert!(place["place"].as_u64().unwrap() >= 1, "{place}");
        assert!(place["estimate_s"].as_u64().unwrap() >= 1, "{place}");
    }
    // Pressed again while it waits: the same job, no place further back.
    let (again_room, first) = &queued[queued.len() - 1];
    let path = format!("/admin/lab/grade?room={again_room}");
    let (status, again) = send(&fleet, reqwest::Method::POST, &path, TOKEN, None).await;
    if status == StatusCode::ACCEPTED && again["state"] == "queued" {
        assert_eq!(again["job"], first["job"], "{again} against {first}");
        assert!(
            again["place"].as_u64() <= first["place"].as_u64(),
            "{again}"
        );
    }
    // Every room's card, the waiting ones' from the status route.
    for (room, (status, body)) in &answers {
        let card = match *status {
            StatusCode::OK => body.clone(),
            StatusCode::ACCEPTED => {
                let path = format!("/admin/lab/grade?room={room}");
                let card = std::sync::Mutex::new(Value::Null);
                eventually(Duration::from_secs(240), || {
                    let (fleet, path, card) = (&fleet, &path, &card);
                    async move {
                        let (status, body) =
                            send(fleet, reqwest::Method::GET, path, TOKEN, None).await;
                        *card.lock().unwrap() = body;
                        status != StatusCode::ACCEPTED
                    }
                })
                .await;
                card.into_inner().unwrap()
            }
            other => panic!("{room}: {other} {body}"),
        };
        assert_eq!(outcomes(&card), ["held"], "{room}: {card}");
    }
    fleet.stop().await;
}
