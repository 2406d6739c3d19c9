//! Tier and config switches made through one instance reach the whole fleet.

use std::time::{Duration, Instant};

use oversell_api::Tier;
use reqwest::Method;
use serde_json::json;

use crate::helpers::spawn_fleet;

/// A switch is answered once every live instance sells under it: read straight after the
/// answer, each instance already reports the new tier (a student's lock submitted and then
/// tried, or a tier switched and then measured, never meets an instance on the old one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tier_switch_through_one_instance_is_in_force_on_every_instance_when_answered() {
    let fleet = spawn_fleet(3).await;
    for round in 0..5 {
        for tier in ["setnx", "fenced", "none"] {
            let sent = Instant::now();
            fleet
                .admin(Method::PUT, "/admin/tier", json!({ "tier": tier }))
                .await;
            let answered = sent.elapsed();
            for i in 0..3 {
                let state = fleet.state_of(i).await;
                assert_eq!(state["tier"], tier, "round {round}, instance {i}: {state}");
            }
            eprintln!("tier {tier} in force on all 3 instances when answered, {answered:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_time_config_is_shared_and_validated() {
    let fleet = spawn_fleet(2).await;
    fleet
        .configure(
            json!({ "ttl_ms": 750, "business_ms": 9, "wait": "spin:20", "wait_deadline_ms": 1234 }),
        )
        .await;
    let settings = &fleet.state_of(1).await["settings"];
    assert_eq!(settings["ttl_ms"], 750);
    assert_eq!(settings["wait"], "spin:20");
    assert_eq!(settings["wait_deadline_ms"], 1234);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_sales_per_tier_and_instance() {
    let fleet = spawn_fleet(1).await;
    fleet.reset(1).await;
    fleet.sale(0, "a").await;
    fleet.sale(0, "b").await;
    let text = fleet.metrics_of(0).await;
    assert!(
        text.contains(r#"oversell_sales_total{tier="lua-release",instance="app1"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"oversell_sold_out_total{tier="lua-release",instance="app1"} 1"#));
    assert!(text.contains("oversell_lock_wait_seconds_bucket"));
}

/// `oversell_oversold_items_total`, summed over the instances, is the ground truth's oversold:
/// each sale's write counts what it took beyond the initial stock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oversold_metric_adds_up_to_the_ground_truth() {
    let fleet = spawn_fleet(3).await;
    fleet
        .configure(serde_json::json!({ "tier": "none", "business_ms": 20 }))
        .await;
    fleet.reset(5).await;
    fleet.burst(60).await;
    let state = fleet.state().await;
    let oversold = state["oversold"].as_i64().unwrap();
    assert!(oversold > 0, "no race to count: {state}");
    let mut counted = 0;
    for i in 0..3 {
        let line = format!(
            "oversell_oversold_items_total{{tier=\"none\",instance=\"app{}\"}} ",
            i + 1
        );
        let text = fleet.metrics_of(i).await;
        let n = text.lines().find_map(|l| l.strip_prefix(&line));
        counted += n
            .unwrap_or_else(|| panic!("no {line}"))
            .parse::<i64>()
            .unwrap();
    }
    assert_eq!(counted, oversold, "{state}");
}

/// The dashboard builds its tier picker from `GET /tiers`: every tier of the API crate, in
/// the ladder's order, with what the dashboard marks (a lease that runs out by itself).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tier_list_is_served_from_the_one_written_in_the_api_crate() {
    let fleet = spawn_fleet(1).await;
    let listed: serde_json::Value = fleet
        .client
        .get(format!("{}/tiers", fleet.url(0)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tiers = listed["tiers"].as_array().expect("tiers");
    let ids: Vec<&str> = tiers.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, Tier::ALL.map(Tier::id));
    for (tier, listed) in Tier::ALL.iter().zip(tiers) {
        assert_eq!(listed["leased"], tier.leased(), "{tier}");
        assert_eq!(listed["up_flags"], json!(tier.up_flags()), "{tier}");
    }
    assert_eq!(tiers[0]["excludes_across_instances"], false);
}

/// Two patches of different fields sent at once (the class page's "every room" tier beside a
/// student's lease change) both land: neither overwrites the other with what it read before.
#[tokio::test]
async fn patches_sent_at_once_to_two_instances_both_land() {
    let fleet = spawn_fleet(2).await;
    let tiers = [Tier::Fenced, Tier::LuaRelease];
    for round in 0..30u64 {
        let tier = tiers[round as usize % 2];
        let business_ms = 10 + round;
        let (a, b) = tokio::join!(
            fleet.call(0, Method::PUT, "/admin/tier", true, json!({ "tier": tier })),
            fleet.call(
                1,
                Method::PUT,
                "/admin/config",
                true,
                json!({ "business_ms": business_ms })
            ),
        );
        assert_eq!((a.0.as_u16(), b.0.as_u16()), (200, 200), "{a:?} {b:?}");
        // Every instance comes to hold both (a lost patch never arrives).
        let both = (json!(tier), json!(business_ms));
        for i in 0..2 {
            let holds = || async {
                let settings = fleet.state_of(i).await["settings"].clone();
                (settings["tier"].clone(), settings["business_ms"].clone()) == both
            };
            if tokio::time::timeout(Duration::from_secs(5), async {
                while !holds().await {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await
            .is_err()
            {
                let settings = fleet.state_of(i).await["settings"].clone();
                panic!("round {round}: instance {i} holds {settings}, not {both:?}: one patch overwrote the other");
            }
        }
    }
}
