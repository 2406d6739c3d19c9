//! `oversell up`'s per-client limits, end to end through its nginx: an address holding more
//! streams than its share is refused with a JSON 429 while the host's own are not, and
//! `--client-rate 0` turns the limits off.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::up::Up;

fn from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(Some(ip.parse().unwrap()))
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn start(args: &[&str]) -> (Up, String) {
    let port = oversell::launch::redis_server::free_port()
        .unwrap()
        .to_string();
    let mut all = vec!["--instances", "2", "--port", &port];
    all.extend_from_slice(args);
    let up = Up::spawn(&all);
    let url = format!("http://127.0.0.1:{port}");
    up.line(&format!("ready: {url}"), Duration::from_secs(90))
        .await;
    (up, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_holding_more_streams_than_its_share_gets_a_json_429() {
    let (_up, url) = start(&["--client-conns", "2"]).await;
    let student = from("127.0.0.5");
    let mut open = Vec::new();
    for _ in 0..2 {
        let stream = student.get(format!("{url}/events")).send().await.unwrap();
        assert_eq!(stream.status(), StatusCode::OK);
        open.push(stream);
    }
    let third = student.get(format!("{url}/events")).send().await.unwrap();
    assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(third.headers()["retry-after"], "1");
    let body: Value = third.json().await.unwrap();
    assert_eq!(body["error"], "too_many_requests", "{body}");
    // Its other requests too, while both streams are open; another student is not affected.
    let state = student.get(format!("{url}/state")).send().await.unwrap();
    assert_eq!(state.status(), StatusCode::TOO_MANY_REQUESTS);
    let other = from("127.0.0.6").get(format!("{url}/state")).send().await;
    assert_eq!(other.unwrap().status(), StatusCode::OK);
    // The host itself (127.0.0.1) holds as many as it likes.
    let host = from("127.0.0.1");
    let mut mine = Vec::new();
    for _ in 0..4 {
        let stream = host.get(format!("{url}/events")).send().await.unwrap();
        assert_eq!(stream.status(), StatusCode::OK);
        mine.push(stream);
    }
    // A stream closed is a connection given back.
    drop(open.pop());
    crate::helpers::eventually(Duration::from_secs(10), || async {
        student
            .get(format!("{url}/state"))
            .send()
            .await
            .is_ok_and(|r| r.status() == StatusCode::OK)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_rate_zero_turns_the_limits_off() {
    let (up, url) = start(&["--client-rate", "0"]).await;
    let run_dir = up.banner("run dir").await.0;
    let conf = std::fs::read_to_string(format!("{run_dir}/nginx.conf")).unwrap();
    assert!(!conf.contains("limit_req"), "{conf}");
    let student = from("127.0.0.7");
    for _ in 0..150 {
        let status = student
            .get(format!("{url}/health"))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::OK);
    }
}
