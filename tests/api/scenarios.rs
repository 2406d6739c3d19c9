//! The whole curriculum against a real fleet: a private redis-server, three `oversell serve`
//! processes (supervised, so a crashed one comes back) and nginx in front — every scenario's
//! expectation checked from the ground truth.

use loadtest::scenario::{Runner, CATALOG};
use loadtest::{Admin, Targets};
use oversell::lock_store::{LockStoreKind, Persistence};
use oversell::tier::Tier;
use oversell::up::fleet::{Fleet, FleetConfig};

pub const TOKEN: &str = "curriculum-token";

pub async fn start_fleet(instances: usize) -> Fleet {
    start_fleet_with(instances, LockStoreKind::Shared, Persistence::None).await
}

/// A fleet whose locks live in a store of their own.
pub async fn start_fleet_with(
    instances: usize,
    lock_store: LockStoreKind,
    lock_persistence: Persistence,
) -> Fleet {
    Fleet::start(FleetConfig {
        instances,
        port: 0,
        host: "127.0.0.1".parse().unwrap(),
        redis_port: None,
        redis_dir: None,
        tier: Tier::LuaRelease,
        lock_store,
        lock_persistence,
        lock_nodes: 5,
        admin_token: TOKEN.into(),
        static_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/static").into(),
        program: env!("CARGO_BIN_EXE_oversell").into(),
    })
    .await
    .expect("start the fleet")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_of_the_curriculum_shows_its_expected_outcome() {
    let fleet = start_fleet(3).await;
    let targets = Targets::parse(&[fleet.url()], None).unwrap();
    let admin = Admin::new(&targets, Some(TOKEN.into()));
    let runner = Runner {
        targets: &targets,
        admin: &admin,
        instances: 3,
        spare: None,
    };
    let mut failures = Vec::new();
    // The lock-store chapters need fleets of their own (tests/api/lock_store.rs).
    for scenario in CATALOG.iter().filter(|s| s.store.lock_store.is_none()) {
        let run = runner.run(scenario).await.expect(scenario.id);
        let seen: Vec<String> = run
            .verdicts
            .iter()
            .map(|v| {
                format!(
                    "{} [{}] {}",
                    v.check,
                    v.seen,
                    if v.held { "ok" } else { "FAILED" }
                )
            })
            .collect();
        eprintln!(
            "{:<34} {} ({:.0} ms): {}",
            run.id,
            if run.passed { "PASS" } else { "FAIL" },
            run.elapsed_ms,
            seen.join("; ")
        );
        if !run.passed {
            failures.push(format!("{}: {}", run.id, seen.join("; ")));
        }
    }
    // Crashes were real: the supervisor brought the instances back.
    assert!(fleet.instances().iter().any(|i| i.restarts > 0));
    fleet.stop().await;
    assert!(
        failures.is_empty(),
        "scenarios failed:\n{}",
        failures.join("\n")
    );
}

/// The dashboard runs scenarios through one instance: a crash scenario must strike another one,
/// or the answer would die with the instance giving it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_scenario_run_from_the_server_side_answers_with_its_verdict() {
    let fleet = start_fleet(3).await;
    let client = reqwest::Client::new();
    for id in ["setnx-crash", "setnx-expire-crash-after"] {
        let resp = client
            .post(format!("{}/admin/scenario", fleet.url()))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({ "id": id }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::OK, "{id}");
        let run: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(run["passed"], true, "{id}: {run}");
    }
    fleet.stop().await;
}
