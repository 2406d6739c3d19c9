//! The whole curriculum against a real fleet: a private redis-server, three `oversell serve`
//! processes (supervised, so a crashed one comes back) and nginx in front — every scenario's
//! expectation checked from the ground truth.

use oversell::config::ResourceStoreKind;
use oversell::launch::local_fleet::{Fleet, FleetConfig};
use oversell::launch::up::NetworkKind;
use oversell::lock_store::{LockStoreKind, Persistence};
use oversell_api::tier::Tier;
use oversell_client::{AdminClient, Targets};
use workshop::scenario::{Runner, Scenario, CATALOG};

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
    start_fleet_full(instances, lock_store, lock_persistence, None).await
}

/// A fleet with ZooKeeper (1 or 3 servers) beside a shared lock store.
pub async fn start_zookeeper_fleet(instances: usize, zookeeper_nodes: usize) -> Fleet {
    start_fleet_full(
        instances,
        LockStoreKind::Shared,
        Persistence::None,
        Some(zookeeper_nodes),
    )
    .await
}

/// A fleet whose locks live in a Redis of their own, with one ZooKeeper server beside it: the
/// lock store's counts are then the lock's traffic only.
pub async fn start_fleet_full_for_counts() -> Fleet {
    start_fleet_full(3, LockStoreKind::Single, Persistence::None, Some(1)).await
}

async fn start_fleet_full(
    instances: usize,
    lock_store: LockStoreKind,
    lock_persistence: Persistence,
    zookeeper_nodes: Option<usize>,
) -> Fleet {
    start_fleet_on(
        NetworkKind::Loopback,
        instances,
        lock_store,
        lock_persistence,
        zookeeper_nodes,
    )
    .await
}

/// A fleet on loopback, or with a network namespace per process (`--network netns`: root).
pub async fn start_fleet_on(
    network: NetworkKind,
    instances: usize,
    lock_store: LockStoreKind,
    lock_persistence: Persistence,
    zookeeper_nodes: Option<usize>,
) -> Fleet {
    Fleet::start(config_on(
        network,
        instances,
        lock_store,
        lock_persistence,
        zookeeper_nodes,
    ))
    .await
    .expect("start the fleet")
}

/// A fleet with PostgreSQL beside a shared lock store, for the database tiers.
pub async fn start_postgres_fleet(instances: usize) -> Fleet {
    start_postgres_fleet_on(NetworkKind::Loopback, instances).await
}

/// The same, on loopback or with a network namespace per process (`--network netns`: root).
pub async fn start_postgres_fleet_on(network: NetworkKind, instances: usize) -> Fleet {
    let config = FleetConfig {
        postgres: true,
        ..config_on(
            network,
            instances,
            LockStoreKind::Shared,
            Persistence::None,
            None,
        )
    };
    Fleet::start(config).await.expect("start the fleet")
}

fn config_on(
    network: NetworkKind,
    instances: usize,
    lock_store: LockStoreKind,
    lock_persistence: Persistence,
    zookeeper_nodes: Option<usize>,
) -> FleetConfig {
    FleetConfig {
        instances,
        worker_threads: None,
        port: 0,
        host: "127.0.0.1".parse().unwrap(),
        redis_port: None,
        redis_dir: None,
        tier: Tier::LuaRelease,
        lock_store,
        lock_persistence,
        lock_nodes: 5,
        zookeeper_nodes,
        postgres: false,
        admin_token: TOKEN.into(),
        public_url: None,
        client_limits: None,
        static_dir: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/static").into()),
        program: env!("CARGO_BIN_EXE_oversell").into(),
        network,
        resource_store: ResourceStoreKind::Single,
        // The chapters measure locks, not the disk. What `written` (the default of
        // `oversell up`) promises has its own test, on `start_durable_fleet`.
        resource_persistence: Persistence::Everysec,
    }
}

/// A fleet whose resource store keeps what `oversell up` keeps by default: every write in
/// its append-only file before the reply (`written`).
pub async fn start_durable_fleet(instances: usize) -> Fleet {
    let config = FleetConfig {
        resource_persistence: Persistence::Written,
        ..config_on(
            NetworkKind::Loopback,
            instances,
            LockStoreKind::Shared,
            Persistence::None,
            None,
        )
    };
    Fleet::start(config).await.expect("start the fleet")
}

/// A fleet whose resource store is a Redis Cluster (three masters, a replica each), the
/// locks on it too (`shared`).
pub async fn start_cluster_resource_fleet(instances: usize) -> Fleet {
    let config = FleetConfig {
        resource_store: ResourceStoreKind::Cluster,
        ..config_on(
            NetworkKind::Loopback,
            instances,
            LockStoreKind::Shared,
            Persistence::None,
            None,
        )
    };
    Fleet::start(config).await.expect("start the fleet")
}

/// What a test needs to run catalog scenarios against a fleet from the client side: its URL
/// through nginx and the admin token.
pub struct ScenarioClient {
    targets: Targets,
    pub admin: AdminClient,
    instances: usize,
}

impl ScenarioClient {
    pub fn of(fleet: &Fleet) -> ScenarioClient {
        let targets = Targets::parse(&[fleet.url()], None).unwrap();
        let admin = AdminClient::new(&targets, Some(TOKEN.into()));
        ScenarioClient {
            targets,
            admin,
            instances: fleet.instances().len(),
        }
    }

    pub fn runner(&self) -> Runner<'_> {
        Runner {
            targets: &self.targets,
            admin: &self.admin,
            instances: self.instances,
            spare: None,
            step: Default::default(),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_of_the_curriculum_shows_its_expected_outcome() {
    let fleet = start_fleet(3).await;
    // The lock-store and ZooKeeper chapters need fleets of their own (tests/api/lock_store.rs,
    // redlock.rs, zookeeper_tiers.rs); the field chapters run in tests/api/field.rs, those
    // from the trackers in tests/api/trackers.rs. A timing-sensitive chapter gets a second
    // try, as there.
    let here = |s: &&Scenario| {
        !s.store.is_special()
            && !matches!(
                workshop::scenario::group_of(s.id),
                Some("field" | "trackers")
            )
    };
    let chapters: Vec<&Scenario> = CATALOG.iter().filter(here).collect();
    let failures = crate::lock_store::run_chapters(&fleet, &chapters).await;
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
/// or the answer would die with the instance giving it. `setnx-crash` must also pass (its lock
/// stays forever); `setnx-expire-crash-after` must answer with its verdicts, whose outcome the
/// client-side curriculum test checks: pinned to one instance, its crash may strike a holder
/// that no buyer is left waiting behind on a loaded machine, and nobody then waits a lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_scenario_run_from_the_server_side_answers_with_its_verdict() {
    let fleet = start_fleet(3).await;
    let client = crate::helpers::http_client();
    for (id, must_pass) in [("setnx-crash", true), ("setnx-expire-crash-after", false)] {
        let resp = client
            .post(format!("{}/admin/scenario", fleet.url()))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({ "id": id }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::OK, "{id}");
        let run: serde_json::Value = resp.json().await.unwrap();
        assert!(
            run["verdicts"].as_array().is_some_and(|v| !v.is_empty()),
            "{id}: {run}"
        );
        if must_pass {
            assert_eq!(run["passed"], true, "{id}: {run}");
        }
    }
    // Both crashes were real, on instances other than the one answering.
    assert!(fleet.instances().iter().map(|i| i.restarts).sum::<u32>() >= 2);
    fleet.stop().await;
}

/// Two instances asked to run a scenario in the same room at once: the guard is a lock in
/// Redis, so exactly one runs and the other answers 409 `busy`, whichever instance it is; once
/// the first is done the room is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_scenario_at_a_time_per_room_across_instances() {
    let fleet = start_fleet(2).await;
    let client = crate::helpers::http_client();
    let ports: Vec<u16> = fleet.instances().iter().map(|i| i.port).collect();
    // Straight to each instance, past nginx: two instances, one room.
    let run = |port: u16| {
        let client = client.clone();
        async move {
            let resp = client
                .post(format!("http://127.0.0.1:{port}/admin/scenario"))
                .bearer_auth(TOKEN)
                .json(&serde_json::json!({ "id": "none-race" }))
                .send()
                .await
                .unwrap();
            (
                resp.status(),
                resp.json::<serde_json::Value>().await.unwrap(),
            )
        }
    };
    let (a, b) = tokio::join!(run(ports[0]), run(ports[1]));
    let mut statuses = [a.0, b.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [reqwest::StatusCode::OK, reqwest::StatusCode::CONFLICT],
        "{a:?} {b:?}"
    );
    let refused = if a.0 == reqwest::StatusCode::CONFLICT {
        &a.1
    } else {
        &b.1
    };
    assert_eq!(refused["error"], "busy", "{refused}");
    // Given back before the first run answered: the room is free at once, on the other
    // instance too.
    let again = run(ports[1]).await;
    fleet.stop().await;
    assert_eq!(again.0, reqwest::StatusCode::OK, "{again:?}");
}
