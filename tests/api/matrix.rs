//! `loadtest matrix` against a real fleet (three instances, one Redis): the unsafe tiers
//! oversell, the safe ones do not, and the buyers' own count of 200s equals the ledger's order
//! count for every tier; every tier's hand-offs are read from the ledger (none where sections
//! overlapped) and its acquires per client add up to its sales. `loadtest run` says the same of
//! one tier, and draws it.

use oversell_api::Tier;
use serde_json::Value;

use crate::helpers::{spawn_fleet, TOKEN};

const STOCK: i64 = 100;
const BUYERS: u64 = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_matrix_shows_unsafe_tiers_overselling_and_safe_tiers_holding_the_stock() {
    let fleet = spawn_fleet(3).await;
    let mut args: Vec<String> = vec!["loadtest".into(), "matrix".into()];
    for app in &fleet.apps {
        args.extend(["--url".into(), app.url.clone()]);
    }
    let (stock, buyers) = (STOCK.to_string(), BUYERS.to_string());
    args.extend(
        [
            "--tiers",
            "all",
            "--stock",
            &stock,
            "--buyers",
            &buyers,
            // A short business step inside the critical section makes races visible.
            "--business-ms",
            "5",
            "--token",
            TOKEN,
            "--json",
        ]
        .map(String::from),
    );

    let out = loadtest::run_cli(args).await.expect("the matrix runs");
    let report: Value = serde_json::from_str(&out).expect("--json prints JSON");

    let rows = report["rows"].as_array().expect("rows");
    let tiers: Vec<&str> = rows.iter().map(|r| r["tier"].as_str().unwrap()).collect();
    // This fleet has neither Redlock masters nor ZooKeeper: those tiers are skipped, each
    // with the `oversell up` flags that would run it.
    let needs_more: Vec<Tier> = Tier::built_in()
        .filter(|t| t.up_flags().is_some())
        .collect();
    let runnable: Vec<&str> = Tier::built_in()
        .filter(|t| !needs_more.contains(t))
        .map(Tier::id)
        .collect();
    assert_eq!(tiers, runnable);
    let skipped = report["skipped"].as_array().expect("skipped");
    assert_eq!(skipped.len(), needs_more.len(), "{skipped:?}");
    assert!(
        skipped
            .iter()
            .all(|s| s.as_str().unwrap().contains("oversell up --")),
        "{skipped:?}"
    );
    for row in rows {
        let tier = row["tier"].as_str().unwrap();
        let int = |k: &str| {
            row[k]
                .as_i64()
                .unwrap_or_else(|| panic!("{tier}: no {k} in {row}"))
        };
        assert_eq!(int("sent"), BUYERS as i64, "{tier}: {row}");
        assert_eq!(int("errors"), 0, "{tier}: {row}");
        assert_eq!(
            int("ok"),
            int("ledger_orders"),
            "{tier}: every 200 the buyers got is in the ledger, and nothing else is: {row}"
        );
        let hand_off = &row["hand_off"];
        let fairness = &row["fairness"];
        assert_eq!(
            hand_off["sections"], row["ledger_orders"],
            "{tier}: every sale of the run is read from the ledger: {row}"
        );
        assert_eq!(fairness["clients"], BUYERS, "one client per buyer: {row}");
        let acquires: i64 = fairness["clients_by_acquires"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| pair[0].as_i64().unwrap() * pair[1].as_i64().unwrap())
            .sum();
        assert_eq!(acquires, int("ok"), "{tier}: {row}");
        let per_instance: i64 = fairness["per_instance"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_i64().unwrap())
            .sum();
        assert_eq!(per_instance, int("ledger_orders"), "{tier}: {row}");
        match tier {
            "none" | "local" => {
                assert!(int("oversold") > 0, "{tier} must oversell: {row}");
                // Sections ran at the same time: no number, the counts of those that did.
                assert!(hand_off["ms"].is_null(), "{tier}: {row}");
                assert!(
                    hand_off["overlapping"].as_u64().unwrap() > 0
                        || hand_off["overlaps"].as_i64().unwrap() > 0,
                    "{tier}: {row}"
                );
            }
            _ => {
                assert_eq!(int("oversold"), 0, "{tier} must not oversell: {row}");
                assert_eq!(int("lost_updates"), 0, "{tier}: {row}");
                assert_eq!((int("ok"), int("final_stock")), (STOCK, 0), "{tier}: {row}");
                // One lock: each sale after the first is one hand-off, none overlapping.
                assert_eq!(hand_off["overlapping"], 0, "{tier}: {row}");
                assert_eq!(hand_off["hand_offs"], STOCK - 1, "{tier}: {row}");
                let ms = &hand_off["ms"];
                assert!(
                    ms["p50"].as_f64().unwrap() <= ms["p99.9"].as_f64().unwrap()
                        && ms["p99.9"].as_f64().unwrap() <= ms["max"].as_f64().unwrap(),
                    "{tier}: {row}"
                );
            }
        }
    }
}

/// `loadtest run` against a locked tier: every sale it got answered is a section in the
/// ledger, each after the first one hand-off; the acquires of its clients add up to its 200s;
/// the chart is written; `loadtest hand-off` reads the same ledger after the fact. Against
/// `none` with work inside, no hand-off figure.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sale_run_reports_its_hand_offs_and_how_evenly_its_clients_acquired() {
    let fleet = spawn_fleet(2).await;
    let charts = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args: Vec<String> = [
            "loadtest", "run", "-c", "8", "-n", "400", "--json", "--quiet",
        ]
        .map(String::from)
        .to_vec();
        for app in &fleet.apps {
            args.extend(["--url".into(), app.url.clone()]);
        }
        args.extend(extra.iter().map(|a| a.to_string()));
        async move {
            let out = loadtest::run_cli(args).await.expect("the run runs");
            serde_json::from_str::<Value>(&out).expect("--json prints JSON")
        }
    };

    fleet
        .configure(serde_json::json!({ "tier": "lua-release", "business_ms": 0, "wait": "pubsub" }))
        .await;
    fleet.reset(1_000_000).await;
    // A sale before the run is not the run's: the ledger is read from where the run began.
    assert_eq!(fleet.sale(0, "before").await.0, reqwest::StatusCode::OK);
    let report = run(&["--charts", charts.path().to_str().unwrap()]).await;
    assert_eq!(report["stats"]["ok"], 400, "{report}");
    assert_eq!(report["settings"]["tier"], "lua-release");
    let hand_off = &report["hand_off"];
    assert_eq!(
        (
            &hand_off["sections"],
            &hand_off["hand_offs"],
            &hand_off["overlapping"]
        ),
        (&Value::from(400), &Value::from(399), &Value::from(0)),
        "{report}"
    );
    assert!(hand_off["ms"]["p99.9"].as_f64().is_some(), "{report}");
    let fairness = &report["fairness"];
    assert_eq!(fairness["clients"], 8, "{report}");
    let acquires: u64 = fairness["clients_by_acquires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair[0].as_u64().unwrap() * pair[1].as_u64().unwrap())
        .sum();
    assert_eq!(acquires, 400, "every 200 is one client's acquire: {report}");
    let jain = fairness["jain"].as_f64().unwrap();
    assert!(jain > 0.0 && jain <= 1.0, "{report}");
    let instances = fairness["per_instance"].as_object().unwrap();
    assert_eq!(
        instances.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
        400,
        "{report}"
    );
    let chart = std::fs::read_to_string(charts.path().join("lua-release-pubsub.svg")).unwrap();
    assert!(chart.contains("Hand-off and fairness: lua-release, wait pubsub"));
    // `loadtest hand-off` reads the ledger as it stands: every sale since the reset.
    let ledger: Value = serde_json::from_str(
        &loadtest::run_cli(["loadtest", "hand-off", "--json", "--url", fleet.url(1)])
            .await
            .expect("hand-off reads the ledger"),
    )
    .unwrap();
    assert_eq!(
        (
            &ledger["hand_off"]["sections"],
            &ledger["hand_off"]["hand_offs"]
        ),
        (&Value::from(401), &Value::from(400)),
        "{ledger}"
    );

    fleet
        .configure(serde_json::json!({ "tier": "none", "business_ms": 5 }))
        .await;
    fleet.reset(1_000_000).await;
    let report = run(&[]).await;
    assert!(report["hand_off"]["ms"].is_null(), "{report}");
    assert!(
        report["hand_off"]["overlapping"].as_u64().unwrap() > 0,
        "8 clients, 5 ms of work each and no lock: {report}"
    );
    let report = run(&["--no-hand-off"]).await;
    assert_eq!(report["hand_off_unmeasured"], "--no-hand-off", "{report}");
    assert_eq!(report["fairness"]["clients"], 8, "{report}");
}

/// 001's first drawback of a Redis lock, counted by the stores: with 64 buyers on one lock and
/// 5 ms of work, the spinning buyers try the `SET NX PX` again and again, pub/sub waiters far
/// less, and a ZooKeeper waiter never (it is told by its watch). The counts come from the lock
/// store's own `INFO commandstats` and ZooKeeper's `mntr`; the shared store is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_matrix_counts_what_spinning_costs_the_lock_store_beside_pubsub_and_a_watch() {
    use crate::scenarios::{start_fleet, start_fleet_full_for_counts, TOKEN as FLEET_TOKEN};

    let shared = start_fleet(1).await;
    let refused = loadtest::run_cli(counts_args(shared.url(), FLEET_TOKEN, "lua-release", 1))
        .await
        .unwrap_err()
        .to_string();
    shared.stop().await;
    assert!(refused.contains("--lock-store single"), "{refused}");

    let fleet = start_fleet_full_for_counts().await;
    let redis = loadtest::run_cli(counts_args(fleet.url(), FLEET_TOKEN, "lua-release", 3)).await;
    let zookeeper = loadtest::run_cli(counts_args(fleet.url(), FLEET_TOKEN, "zookeeper", 3)).await;
    fleet.stop().await;

    let rows = |out: anyhow::Result<String>| -> Vec<Value> {
        let report: Value = serde_json::from_str(&out.expect("the matrix runs")).unwrap();
        report["rows"].as_array().unwrap().clone()
    };
    let redis = rows(redis);
    let tries = |r: &Value| r["acquire_tries_per_sale"].as_f64().unwrap();
    let (spin, pubsub) = (&redis[0], &redis[1]);
    assert_eq!(
        (spin["wait"].as_str(), pubsub["wait"].as_str()),
        (Some("spin:20"), Some("pubsub"))
    );
    assert!(
        spin["ledger_orders"] == 200 && pubsub["ledger_orders"] == 200,
        "{redis:?}"
    );
    // Every sale took at least its one successful SET; spinning buyers many more.
    assert!(tries(pubsub) >= 1.0, "{redis:?}");
    assert!(tries(spin) > tries(pubsub), "{redis:?}");
    let zookeeper = rows(zookeeper);
    assert!(
        zookeeper[0]["acquire_tries_per_sale"].is_null(),
        "{zookeeper:?}"
    );
    assert!(zookeeper[0]["lock_requests_per_sale"].as_f64().unwrap() > 0.0);
}

fn counts_args(url: &str, token: &str, tier: &str, instances: usize) -> Vec<String> {
    [
        "loadtest",
        "matrix",
        "--url",
        url,
        "--instances",
        &instances.to_string(),
        "--tiers",
        tier,
        "--waits",
        "spin:20,pubsub",
        "--store-counts",
        "--business-ms",
        "5",
        "--stock",
        "200",
        "--buyers",
        "200",
        // What is counted is the tries each sale took, not whether a buyer gives up: on a
        // loaded CI machine a spinning buyer once waited past the default 5 s and one sale of
        // 200 was a 503.
        "--wait-deadline-ms",
        "60000",
        "-c",
        "64",
        "--token",
        token,
        "--json",
        "--quiet",
    ]
    .map(String::from)
    .to_vec()
}
