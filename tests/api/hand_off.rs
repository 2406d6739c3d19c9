//! The cost of a hand-off (issue 12) without giving anything up: the sale's steps riding
//! together in pipelines lose no sale and keep the ground truth at zero, even when the server
//! loses its scripts mid-run.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::spawn_fleet;

/// The scripts a pipeline sends last (by hash).
const RELEASES: [&str; 2] = [
    include_str!("../../src/lock/lua_release.lua"),
    include_str!("../../src/lock/reentrant_release.lua"),
];

fn assert_all_zero(state: &Value, what: &str) {
    for figure in [
        "oversold",
        "lost_updates",
        "overlaps",
        "foreign_releases",
        "lost_releases",
    ] {
        assert_eq!(state[figure], 0, "{what} {figure}: {state}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_lost_its_scripts_mid_run_loses_no_sale() {
    let fleet = spawn_fleet(1).await;
    for (tier, wait) in [
        ("lua-release", "pubsub"),
        ("reentrant-watchdog", "pubsub"),
        ("fenced", "pubsub"),
    ] {
        fleet
            .configure(json!({ "tier": tier, "wait": wait, "business_ms": 0 }))
            .await;
        fleet.reset(40).await;
        let mut conn = fleet.redis_conn().await;
        for round in 0..4 {
            let buyers: Vec<String> = (0..5).map(|i| format!("b{round}-{i}")).collect();
            let sales = buyers.iter().map(|b| fleet.sale(0, b));
            for (status, body) in futures_util::future::join_all(sales).await {
                assert_eq!(status, StatusCode::OK, "{tier} {wait}: {body}");
            }
            // As a restart would: every pipelined script must be sent again, or loaded.
            let _: () = redis::cmd("SCRIPT")
                .arg("FLUSH")
                .query_async(&mut conn)
                .await
                .unwrap();
            // Every other round, the releases come back first (another client loaded them):
            // a write sent by hash would now be refused while the release after it ran.
            if round % 2 == 1 {
                for release in RELEASES {
                    let _: String = redis::cmd("SCRIPT")
                        .arg("LOAD")
                        .arg(release)
                        .query_async(&mut conn)
                        .await
                        .unwrap();
                }
            }
        }
        let state = fleet.state().await;
        assert_all_zero(&state, &format!("{tier} {wait}"));
        assert_eq!(state["orders"], 20, "{tier} {wait}: {state}");
        assert_eq!(state["stock"], 20, "{tier} {wait}: {state}");
        assert_eq!(state["lock"]["held"], false, "{tier} {wait}: {state}");
        let ledger = fleet.ledger().await;
        if tier != "lua-release" {
            assert!(ledger.iter().all(|e| e["depth"] == 2), "{tier}: {ledger:?}");
        }
    }
}
