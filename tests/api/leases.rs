//! The lock store's own leases in a recorded history, and the clocks' bound measured during the
//! run: a chapter run on a real fleet (a shared store, where the Redis tiers stamp each grant,
//! renewal and release in the step's own script), its history checked by `loadtest check`.

use oversell_api::history::{LeaseSource, Line, Run};
use reqwest::StatusCode;
use serde_json::Value;

use crate::scenarios::{start_fleet, TOKEN};

/// Runs `chapter` with `--history` on `fleet` and returns the history's lines, and what
/// `loadtest check` printed with its exit status.
async fn recorded(url: &str, chapter: &str) -> (Vec<Line>, u8, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{chapter}.jsonl"));
    let path = path.to_str().unwrap();
    let args = [
        "loadtest",
        "scenario",
        chapter,
        "--url",
        url,
        "--token",
        TOKEN,
        "--lang",
        "en",
        "--history",
        path,
    ];
    workshop::run_cli(args).await.expect("the chapter runs");
    let text = std::fs::read_to_string(path).unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (code, out) = match workshop::run_cli(["loadtest", "check", path]).await {
        Ok(out) => (0, out),
        Err(err) => match err.downcast::<workshop::history::command::Exit>() {
            Ok(exit) => (exit.code, format!("{}{}", exit.stdout, exit.message)),
            Err(err) => panic!("loadtest check failed: {err:#}"),
        },
    };
    (lines, code, out)
}

fn run_of(lines: &[Line]) -> &Run {
    match lines.first() {
        Some(Line::Run(run)) => run,
        other => panic!("the first line is the run: {other:?}"),
    }
}

/// Every section that took the lock has the lease the store stamped for its owner.
fn every_section_has_a_stamped_lease(lines: &[Line]) {
    let stamped: std::collections::HashSet<&str> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Lease(l) if l.source == LeaseSource::Store => Some(l.owner.as_str()),
            _ => None,
        })
        .collect();
    assert!(!stamped.is_empty(), "the store stamped no lease");
    for line in lines {
        match line {
            Line::Lease(l) => assert_eq!(l.source, LeaseSource::Store, "{l:?}"),
            Line::Section(s) if !s.owner.starts_with("order-") => {
                assert!(
                    stamped.contains(s.owner.as_str()),
                    "no stamped lease: {s:?}"
                )
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_lease_lapsed_under_a_working_holder_is_said_from_the_stores_own_deadlines() {
    let fleet = start_fleet(3).await;
    let (lines, code, out) = recorded(fleet.url(), "lua-release-slow-business").await;
    let run = run_of(&lines);
    assert_eq!(run.v, 2);
    assert!(
        run.clocks.bound_us.is_some(),
        "the bound was measured: {run:?}"
    );
    assert!(
        run.clocks.lease.contains("stamped by the lock store"),
        "{run:?}"
    );
    every_section_has_a_stamped_lease(&lines);
    // Work of 150 ms under a 60 ms lease: the late releases find the lock gone or another's,
    // and the store says so; each lease's deadline is the one the store set, 60 ms on.
    let leases: Vec<_> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Lease(l) => Some(l),
            _ => None,
        })
        .collect();
    assert!(
        leases.iter().any(|l| l.refused_release_us.is_some()),
        "{leases:?}"
    );
    for l in &leases {
        let lease = l.deadline_us.expect("lua-release sets a lease") - l.granted_us;
        assert!((58_000..=61_000).contains(&lease), "a 60 ms lease: {l:?}");
    }
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the lease lapsed under a working holder"),
        "{out}"
    );
    assert!(!out.contains("the lock is wrong"), "{out}");
}

#[tokio::test]
async fn a_lapse_the_fence_contained_passes_named_from_the_stores_own_deadlines() {
    let fleet = start_fleet(3).await;
    let (lines, code, out) = recorded(fleet.url(), "fenced-freeze").await;
    assert_eq!(run_of(&lines).v, 2);
    every_section_has_a_stamped_lease(&lines);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("exclusion lapsed"), "{out}");
    assert!(out.contains("the fence refused the stale write"), "{out}");
}

/// A holder whose work outlasts its lease holds only by its watchdog's renewals: each one the
/// store stamps. (fenced-freeze renews only when a holder happens to hold past a third of its
/// lease — the frozen one is stopped whole — so its renewals are the machine's load, not the
/// chapter's.)
#[tokio::test]
async fn a_watchdogs_renewals_are_stamped_by_the_store() {
    let fleet = start_fleet(3).await;
    let (lines, code, out) = recorded(fleet.url(), "reentrant-watchdog-slow-business").await;
    every_section_has_a_stamped_lease(&lines);
    let renewed = lines
        .iter()
        .any(|l| matches!(l, Line::Lease(l) if !l.renewals.is_empty()));
    assert!(renewed, "no renewal stamped");
    assert_eq!(code, 0, "{out}");
}

#[tokio::test]
async fn the_clocks_route_reads_each_stores_time_between_two_of_the_instances() {
    let fleet = start_fleet(1).await;
    let client = crate::helpers::http_client();
    let url = format!("{}/admin/clocks", fleet.url());
    let answer = client.get(&url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let body: Value = answer.json().await.unwrap();
    let stores = body["stores"].as_array().expect("stores");
    assert_eq!(
        stores.len(),
        1,
        "a shared lock store is the resource store: {body}"
    );
    assert_eq!(stores[0]["store"], "resource");
    let at = |name: &str| stores[0][name].as_i64().unwrap();
    assert!(
        at("instance_before_us") <= at("instance_after_us"),
        "{body}"
    );
    // One host: the store's clock is the instance's, read between the two readings.
    assert!(at("instance_before_us") <= at("store_us") + 1, "{body}");
    assert!(at("store_us") <= at("instance_after_us") + 1, "{body}");
    let anonymous = client.get(&url).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let body: Value = anonymous.json().await.unwrap();
    assert!(
        body["error"].is_string() && body["message"].is_string(),
        "{body}"
    );
}

#[tokio::test]
async fn a_lab_lock_that_grants_inside_a_valid_lease_is_the_lock_being_wrong() {
    use oversell::lock_store::{LockStoreKind, Persistence};
    use reqwest::Method;
    let fleet =
        crate::scenarios::start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let release = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("static/locks/lua-release/release-1.lua"),
    )
    .unwrap();
    // lua-release's lock without its NX: it takes the lock whoever holds it, and says so.
    let broken = serde_json::json!({
        "acquire": ["redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\nreturn 1"],
        "release": [release],
    });
    for (method, path, body) in [
        (
            Method::POST,
            "/admin/reset",
            serde_json::json!({ "stock": 100 }),
        ),
        (
            Method::PUT,
            "/admin/config",
            serde_json::json!({ "ttl_ms": 5000, "business_ms": 40 }),
        ),
        (Method::PUT, "/admin/lab", broken),
    ] {
        let (status, answer) = crate::lab::send(&fleet, method, path, TOKEN, Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.jsonl");
    let path = path.to_str().unwrap();
    let args = [
        "loadtest",
        "run",
        "--url",
        fleet.url(),
        "-c",
        "6",
        "-n",
        "30",
        "--history",
        path,
    ];
    workshop::run_cli(args).await.expect("the run runs");
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Line> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(run_of(&lines).tier, "custom");
    assert!(
        run_of(&lines).clocks.lease.contains("the lock store's"),
        "{:?}",
        run_of(&lines)
    );
    every_section_has_a_stamped_lease(&lines);
    let (code, out) = match workshop::run_cli(["loadtest", "check", path]).await {
        Ok(out) => (0, out),
        Err(err) => {
            let exit = err.downcast::<workshop::history::command::Exit>().unwrap();
            (exit.code, format!("{}{}", exit.stdout, exit.message))
        }
    };
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the lock is wrong"), "{out}");
    assert!(!out.contains("lapsed under a working holder"), "{out}");
}
