//! Redis going away mid-run: clear 503s, an honest /health, and recovery without a restart.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{eventually, spawn_fleet};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sales_answer_503_while_redis_is_down_and_resume_when_it_returns() {
    let mut fleet = spawn_fleet(2).await;
    fleet.configure(json!({ "wait_deadline_ms": 2000 })).await;
    fleet.reset(50).await;
    assert_eq!(fleet.sale(0, "before").await.0, StatusCode::OK);

    fleet.redis.kill();
    for i in 0..2 {
        let asked = Instant::now();
        let resp = fleet
            .client
            .post(format!("{}/sale", fleet.url(i)))
            .send()
            .await
            .unwrap();
        let took = asked.elapsed();
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(resp.headers().contains_key("retry-after"));
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "redis_unavailable", "{body}");
        // Within the wait deadline: the buyer is never left hanging.
        assert!(took < Duration::from_millis(2000), "503 after {took:?}");

        let health = fleet
            .client
            .get(format!("{}/health", fleet.url(i)))
            .send()
            .await
            .unwrap();
        assert_eq!(health.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body: serde_json::Value = health.json().await.unwrap();
        assert_eq!(body["redis"], "down");
    }

    fleet.redis.restart().expect("restart redis");
    for i in 0..2 {
        eventually(Duration::from_secs(10), || async {
            let url = format!("{}/health", fleet.url(i));
            fleet
                .client
                .get(url)
                .send()
                .await
                .is_ok_and(|r| r.status() == StatusCode::OK)
        })
        .await;
    }
    // The restarted Redis is empty: stock it again and sell through both instances.
    fleet.reset(10).await;
    for i in 0..2 {
        eventually(Duration::from_secs(10), || async {
            fleet.sale(i, "after").await.0 == StatusCode::OK
        })
        .await;
    }
    let state = fleet.state().await;
    assert_eq!(state["orders"], 2, "{state}");
    assert_eq!(state["oversold"], 0);
}
