//! The database tiers against a real PostgreSQL server started by `oversell up`: every
//! database chapter of the curriculum, the server killed under a sale (a 503 naming it, nothing
//! written, sales back by themselves once it is), and the tiers refused where there is no
//! PostgreSQL. Every figure comes from the resource store.

use std::time::{Duration, Instant};

use oversell::launch::postgres_server::PID_FILE;
use oversell::launch::redis_server::RedisServer;
use oversell::member::HOLD_DOWN_FILE;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{poll_until, serve_args, state, TestApp, TOKEN};
use crate::lock_store::run_scenarios;
use crate::scenarios::start_postgres_fleet;

async fn sale(url: &str) -> (StatusCode, Option<String>, Value) {
    let resp = crate::helpers::http_client()
        .post(format!("{url}/sale"))
        .json(&json!({ "buyer": "b" }))
        .send()
        .await
        .unwrap();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (resp.status(), retry_after, resp.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lock_frees_a_dead_holders_lock_at_once_keeps_a_frozen_ones_and_a_token_stops_a_timed_out_one(
) {
    let fleet = start_postgres_fleet(3).await;
    let failures = run_scenarios(
        &fleet,
        &[
            "postgres-normal",
            "postgres-crash-holding",
            "postgres-freeze",
            "postgres-session-timeout",
            "postgres-fenced",
        ],
    )
    .await;
    let seen = state(fleet.url()).await;
    fleet.stop().await;
    assert!(failures.is_empty(), "{failures:?}");
    let postgres = &seen["lock_store"]["postgres"];
    assert_eq!(postgres["up"], true, "{seen}");
    // Nobody holds or waits for the room's lock once the chapters are over.
    assert_eq!(
        (&postgres["holding"], &postgres["waiting"]),
        (&json!(0), &json!(0))
    );
}

/// The server killed and kept down: a sale is refused at once with a 503 naming PostgreSQL
/// (and `Retry-After`), the stock untouched; once its supervisor brings it back, sales go on
/// without a reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_answers_503_and_sales_resume_when_it_is_back() {
    let fleet = start_postgres_fleet(2).await;
    let client = crate::helpers::http_client();
    let admin = |method: reqwest::Method, path: &str, body: Value| {
        client
            .request(method, format!("{}{path}", fleet.url()))
            .bearer_auth(crate::scenarios::TOKEN)
            .json(&body)
            .send()
    };
    let set = admin(
        reqwest::Method::PUT,
        "/admin/config",
        json!({ "tier": "postgres" }),
    )
    .await
    .unwrap();
    assert_eq!(set.status(), StatusCode::OK);
    let reset = admin(reqwest::Method::POST, "/admin/reset", json!({ "stock": 5 }))
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);
    assert_eq!(sale(fleet.url()).await.0, StatusCode::OK);

    let dir = fleet.run_dir().join("postgres");
    let until = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        + Duration::from_secs(4);
    std::fs::write(dir.join(HOLD_DOWN_FILE), until.as_millis().to_string()).unwrap();
    let pid: i32 = std::fs::read_to_string(dir.join(PID_FILE))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill has no memory-safety preconditions; the pid is the fleet's own server.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);

    let asked = Instant::now();
    let (status, retry_after, body) = sale(fleet.url()).await;
    let took = asked.elapsed();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "postgres_unavailable", "{body}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    // Within the buyer's wait deadline (the settings' default, 5 s), not after it.
    assert!(took < Duration::from_secs(5), "503 after {took:?}");
    let seen = state(fleet.url()).await;
    assert_eq!(
        (seen["stock"].as_i64(), seen["orders"].as_i64()),
        (Some(4), Some(1)),
        "{seen}"
    );

    // Back by itself once the hold-down ends: the next sale goes through, no reset.
    let (status, _, body) = poll_until(
        Duration::from_secs(60),
        || sale(fleet.url()),
        |(status, _, _)| *status == StatusCode::OK,
    )
    .await;
    fleet.stop().await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn the_database_tiers_are_refused_where_there_is_no_postgres() {
    let redis = RedisServer::start().unwrap();
    let app = TestApp::spawn(&serve_args(&redis.url(), "plain")).await;
    for tier in ["postgres", "postgres-fenced"] {
        let resp = crate::helpers::http_client()
            .put(format!("{}/admin/config", app.url))
            .bearer_auth(TOKEN)
            .json(&json!({ "tier": tier }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{tier}");
        let answer: Value = resp.json().await.unwrap();
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains("--postgres"), "{tier}: {answer}");
    }
    app.shut_down().await;
}

#[test]
fn a_bad_postgres_url_stops_with_one_line_naming_the_flag() {
    crate::helpers::assert_refused_in_one_line(&[(
        vec![
            "serve",
            "--lock-tier",
            "postgres",
            "--postgres",
            "postgres://u@h:notaport/db",
        ],
        "--postgres",
    )]);
}
