//! A cheaper hand-off that gives nothing up: the sale's steps riding together in pipelines lose no
//! sale, even when the server loses its scripts mid-run; under `wait: cohort` (a holder hands the
//! lock to the next buyer of its instance) the ground truth stays all zero for every distributed
//! tier, a fault during a cohort still shows its defect, and no instance starves; once sold out, a
//! buyer is told so at the door.

use std::collections::HashMap;

use oversell::composed::{self, Call, Lua};
use oversell::launch::redis_server::RedisServer;
use oversell_api::{FaultKind, Tier, WaitStrategy};
use reqwest::StatusCode;
use serde_json::{json, Value};
use workshop::scenario::CATALOG;

use crate::helpers::{assert_all_zero, spawn_fleet, TestFleet};
use crate::scenarios::{start_fleet, ScenarioClient};

/// The releases, which a sale sends in one script with its write.
const RELEASES: [&str; 2] = [
    include_str!("../../static/locks/lua-release/release-1.lua"),
    include_str!("../../static/locks/reentrant-watchdog/release-1.lua"),
];

/// Locks handed on without a release, summed over the instances (`/metrics`).
async fn passes(fleet: &TestFleet, tier: &str) -> u64 {
    let mut total = 0;
    for i in 0..fleet.apps.len() {
        let text = fleet.metrics_of(i).await;
        let line = format!(
            "oversell_lock_passes_total{{tier=\"{tier}\",instance=\"app{}\"}} ",
            i + 1
        );
        let n = text
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .unwrap_or_else(|| panic!("no {line} in /metrics"));
        total += n.parse::<u64>().unwrap();
    }
    total
}

/// A burst of `buyers` at once on every instance under `tier` and `wait`; checks every 200
/// against the ledger and returns the state and the ledger.
async fn burst(
    fleet: &TestFleet,
    tier: &str,
    wait: &str,
    stock: i64,
    buyers: usize,
) -> (Value, Vec<Value>) {
    fleet
        .configure(json!({ "tier": tier, "business_ms": 2, "ttl_ms": 5000, "wait": wait }))
        .await;
    fleet.reset(stock).await;
    let results = fleet.burst(buyers).await;
    let mut acked = Vec::new();
    for (status, body) in &results {
        assert!(
            [StatusCode::OK, StatusCode::CONFLICT].contains(status),
            "{tier} {wait}: unexpected {status} {body}"
        );
        if *status == StatusCode::OK {
            acked.push(body["order_id"].as_str().unwrap().to_owned());
        }
    }
    let ledger = fleet.ledger().await;
    let mut recorded: Vec<String> = ledger
        .iter()
        .map(|e| e["order_id"].as_str().unwrap().to_owned())
        .collect();
    acked.sort();
    recorded.sort();
    assert_eq!(
        acked, recorded,
        "{tier} {wait}: every 200 is in the ledger, and only those"
    );
    for entry in &ledger {
        in_step_order(tier, wait, entry);
    }
    (fleet.state().await, ledger)
}

static PART: std::sync::LazyLock<Lua> =
    std::sync::LazyLock::new(|| Lua::new(include_str!("composed_part.lua")));

/// A locked section's times, the store's and the instance's (one clock on one host), come in
/// the order of its steps: the read in the store, its reply in the sale, the write built, the
/// write in the store.
fn in_step_order(tier: &str, wait: &str, entry: &Value) {
    let at = |name: &str| {
        entry[name]
            .as_i64()
            .unwrap_or_else(|| panic!("{tier} {wait}: no {name} in {entry}"))
    };
    let steps = [at("enter_us"), at("read_us"), at("write_us"), at("exit_us")];
    assert!(
        steps.windows(2).all(|pair| pair[0] <= pair[1]),
        "{tier} {wait}: enter, read, write, exit out of order: {entry}"
    );
}

#[tokio::test]
async fn scripts_sent_together_run_in_order_each_with_its_own_keys_and_reply_or_behind_an_acquire()
{
    let redis = RedisServer::start().unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let calls = [
        PART.call().key("a").arg("incr"),
        PART.call().key("b").arg("fail"),
        PART.call().key("list").arg("raise"),
        PART.call().key("a").arg("nil"),
        PART.call().key("a").arg("incr"),
    ];
    let calls: Vec<&Call> = calls.iter().collect();
    for round in 0..2 {
        // The second round finds the script gone, as after a restart: loaded, sent again.
        let _: () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query_async(&mut conn)
            .await
            .unwrap();
        let replies = composed::run_in_order(&mut conn, &calls).await.unwrap();
        assert_eq!(replies.len(), 5, "one reply per call");
        let first: i64 = redis::from_redis_value(replies[0].clone().unwrap()).unwrap();
        assert_eq!(first, 1 + 2 * round, "the first call ran first, on key a");
        let failed = replies[1].clone().unwrap_err();
        assert_eq!(failed.code(), Some("NOSTOCK"), "{failed}");
        let raised = replies[2].clone().unwrap_err();
        assert!(raised.to_string().contains("WRONGTYPE"), "{raised}");
        assert_eq!(replies[3].clone().unwrap(), redis::Value::Nil);
        let last: i64 = redis::from_redis_value(replies[4].clone().unwrap()).unwrap();
        assert_eq!(
            last,
            2 + 2 * round,
            "the parts after an error still ran, in order"
        );
    }
    let b: Option<String> = redis::cmd("GET")
        .arg("b")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(b, None, "a part touches only its own keys");
}

#[tokio::test]
async fn behind_an_acquire_the_parts_get_its_token_and_behind_a_held_lock_the_holders() {
    let redis = RedisServer::start().unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let echo = || PART.call().key("a").arg("echo").arg(composed::ACQUIRED);
    let texts = |replies: Vec<redis::RedisResult<redis::Value>>| -> Vec<String> {
        let as_text = |reply: redis::RedisResult<_>| redis::from_redis_value(reply.unwrap());
        replies.into_iter().map(|r| as_text(r).unwrap()).collect()
    };
    let (taken, refused) = (
        PART.call().key("a").arg("take").arg(1),
        PART.call().key("a").arg("take").arg(0),
    );
    let replies = composed::run_if_first_takes(&mut conn, &[&taken, &echo()])
        .await
        .unwrap();
    assert_eq!(
        texts(replies[1..].to_vec()),
        ["7"],
        "the token the acquire took"
    );
    let replies = composed::run_if_first_takes(&mut conn, &[&refused, &echo()])
        .await
        .unwrap();
    assert_eq!(replies[1], Ok(redis::Value::Nil), "not taken: not run");
    let (one, two) = (echo(), echo());
    let held = composed::run_holding(&mut conn, &[&one, &two], Some(9)).await;
    assert_eq!(
        texts(held.unwrap()),
        ["9", "9"],
        "the held lock's token, every part"
    );
    let alone = composed::run_holding(&mut conn, &[&one], Some(9)).await;
    assert_eq!(texts(alone.unwrap()), ["9"], "a call alone gets it too");
    let none = composed::run_holding(&mut conn, &[&one, &two], None).await;
    assert_eq!(texts(none.unwrap()), ["", ""], "no token: empty");
    let plain = composed::run_in_order(&mut conn, &[&one, &two]).await;
    assert_eq!(
        texts(plain.unwrap()),
        [composed::ACQUIRED, composed::ACQUIRED],
        "in order, as they are"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_lost_its_scripts_mid_run_loses_no_sale() {
    let fleet = spawn_fleet(1).await;
    for (tier, wait) in [
        ("lua-release", "pubsub"),
        ("reentrant-watchdog", "pubsub"),
        ("fair", "pubsub"),
        ("fenced", "pubsub"),
        ("lua-release", "cohort:4"),
        ("reentrant-watchdog", "cohort:4"),
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
            // As a restart would: every script must be loaded again.
            let _: () = redis::cmd("SCRIPT")
                .arg("FLUSH")
                .query_async(&mut conn)
                .await
                .unwrap();
            // Every other round, the releases come back first (another client loaded them):
            // a write and its release sent as two scripts could now half-run.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_distributed_tier_in_a_cohort_sells_exactly_the_stock_on_three_instances() {
    let fleet = spawn_fleet(3).await;
    let tiers = [
        "setnx",
        "setnx-expire",
        "atomic-expiry",
        "uuid-owner",
        "lua-release",
        "reentrant-watchdog",
        "fenced",
    ];
    for tier in tiers {
        let (state, ledger) = burst(&fleet, tier, "cohort:4", 100, 300).await;
        assert_all_zero(&state, tier);
        assert_eq!(state["orders"], 100, "{tier}: {state}");
        assert_eq!(state["stock"], 0, "{tier}: {state}");
        assert_eq!(
            state["lock"]["held"], false,
            "{tier} left its lock: {state}"
        );
        // Handed on in memory, and still re-entered by every sale of the reentrant tiers.
        assert!(passes(&fleet, tier).await > 0, "{tier}: no lock was passed");
        if tier == "reentrant-watchdog" || tier == "fenced" {
            assert!(ledger.iter().all(|e| e["depth"] == 2), "{tier}: {ledger:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cohort_passes_a_lock_at_most_its_passes_and_no_instance_waits_out_the_others() {
    let fleet = spawn_fleet(3).await;
    // Everyone buys: 300 buyers, 100 per instance, 300 items.
    let (state, ledger) = burst(&fleet, "fenced", "cohort:2", 300, 300).await;
    assert_all_zero(&state, "fenced cohort:2");
    assert_eq!(state["orders"], 300, "{state}");
    // A fencing token is one acquire in Redis: the sales sharing one are one cohort.
    let mut per_token: HashMap<i64, usize> = HashMap::new();
    for entry in &ledger {
        *per_token
            .entry(entry["fence"].as_i64().unwrap())
            .or_default() += 1;
    }
    let largest = per_token.values().max().copied().unwrap();
    assert!(
        largest <= 3,
        "a cohort of 2 passes sold {largest} on one acquire"
    );
    assert!(largest > 1, "no lock was ever passed: {per_token:?}");
    // The ledger is in the order of the writes: within its first third every instance has
    // sold, so none waited for the others to run out of buyers.
    let mut first_third: HashMap<&str, usize> = HashMap::new();
    for entry in &ledger[..100] {
        *first_third
            .entry(entry["instance"].as_str().unwrap())
            .or_default() += 1;
    }
    assert_eq!(
        first_third.len(),
        3,
        "instances selling early on: {first_third:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_sold_out_a_buyer_is_told_at_the_door_without_waiting_for_the_lock() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(json!({ "tier": "lua-release", "wait": "pubsub", "wait_deadline_ms": 300 }))
        .await;
    fleet.reset(1).await;
    assert_eq!(fleet.sale(0, "first").await.0, StatusCode::OK);
    // The locked read finds nothing left: the instance remembers.
    assert_eq!(fleet.sale(0, "second").await.0, StatusCode::CONFLICT);
    // Someone holds the lock far longer than any buyer waits: a buyer who queued for it would
    // get a 503; the door answers first.
    let mut conn = fleet.redis_conn().await;
    let lock = "oversell:{default}:lock";
    let _: () = redis::cmd("SET")
        .arg(lock)
        .arg("someone-else")
        .arg("PX")
        .arg(10_000)
        .query_async(&mut conn)
        .await
        .unwrap();
    let (status, body) = fleet.sale(0, "third").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["stock_left"], 0, "{body}");
    // A restock is found by the next read: the door opens, the sale takes the lock.
    fleet.reset(5).await;
    let _: () = redis::cmd("DEL")
        .arg(lock)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(fleet.sale(0, "fourth").await.0, StatusCode::OK);
    let state = fleet.state().await;
    assert_eq!(state["orders"], 1, "{state}");
    assert_eq!(state["stock"], 4, "{state}");
}

/// Every chapter of the curriculum whose tier takes a lock in Redis, run with its buyers
/// waiting in a cohort instead, on a real fleet (separate processes, so a freeze or a crash
/// is real): each must still show the outcome it shows with the articles' waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_curriculum_chapter_keeps_its_outcome_when_buyers_wait_in_a_cohort() {
    let fleet = start_fleet(3).await;
    let client = ScenarioClient::of(&fleet);
    let runner = client.runner();
    // The field chapters, and those from the trackers, are about how a buyer waits (when it
    // subscribes, what its watchdog does when it leaves, how it retries): a cohort changes
    // that on purpose.
    let chapters = CATALOG.iter().filter(|s| {
        !s.store.is_special()
            && ![Tier::None, Tier::Local, Tier::AtomicDeduct].contains(&s.tier)
            && !matches!(
                workshop::scenario::group_of(s.id),
                Some("field" | "trackers")
            )
    });
    let mut failures = Vec::new();
    let mut freezes = 0;
    for chapter in chapters {
        let mut scenario = chapter.clone();
        scenario.wait = WaitStrategy::Cohort { passes: 4 };
        let run = runner.run(&scenario).await.expect(scenario.id);
        let seen = crate::helpers::verdicts_line(&run);
        eprintln!(
            "{:<34} {}: {}",
            run.id,
            if run.passed { "PASS" } else { "FAIL" },
            seen
        );
        if !run.passed {
            failures.push(format!("{}: {}", run.id, seen));
        }
        if scenario
            .fault
            .as_ref()
            .is_some_and(|f| f.kind == FaultKind::Freeze)
        {
            freezes += 1;
        }
    }
    // reentrant-watchdog-freeze must still overlap; fenced-freeze must refuse the stale write.
    assert!(freezes >= 2, "the freeze chapters ran");
    assert!(
        failures.is_empty(),
        "chapters that changed outcome in a cohort: {failures:#?}"
    );
    fleet.stop().await;
}
