//! `loadtest matrix` against a real fleet (three instances, one Redis): the unsafe tiers
//! oversell, the safe ones do not, and the buyers' own count of 200s equals the ledger's order
//! count for every tier.

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
        match tier {
            "none" | "local" => assert!(int("oversold") > 0, "{tier} must oversell: {row}"),
            _ => {
                assert_eq!(int("oversold"), 0, "{tier} must not oversell: {row}");
                assert_eq!(int("lost_updates"), 0, "{tier}: {row}");
                assert_eq!((int("ok"), int("final_stock")), (STOCK, 0), "{tier}: {row}");
            }
        }
    }
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
