//! `oversell up`'s per-client limits, end to end: through its nginx, an address holding more
//! streams than its share is refused with a JSON 429 while the host's own are not, and
//! `--client-rate 0` turns the limits off; behind it, each instance's own limit holds a client
//! pointed straight at it, keyed by its own address, and never the fleet's own traffic, and
//! counts each of its refusals in its `/metrics`.

use std::time::Duration;

use oversell::launch::topology::NginxValues;
use reqwest::StatusCode;
use serde_json::Value;

use crate::up::Up;

fn from(ip: &str) -> reqwest::Client {
    crate::helpers::http_client_builder()
        .local_address(Some(ip.parse().unwrap()))
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn start(args: &[&str]) -> (Up, String) {
    let port = oversell_client::ports::free_port().unwrap().to_string();
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

/// The statuses of up to `n` GETs of `url` by `client` (with `headers`), stopping at the first
/// 429, which is returned with its body; every 429 must be the API's JSON with Retry-After.
async fn until_refused(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    n: usize,
) -> (Vec<StatusCode>, Option<Value>) {
    let mut seen = Vec::new();
    for _ in 0..n {
        let mut request = client.get(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        seen.push(response.status());
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            let retry_after: u64 = response.headers()["retry-after"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(retry_after >= 1, "Retry-After {retry_after}");
            assert_eq!(response.headers()["content-type"], "application/json");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "too_many_requests", "{body}");
            return (seen, Some(body));
        }
        assert_eq!(response.status(), StatusCode::OK, "{seen:?}");
    }
    (seen, None)
}

/// A fleet whose limits are easy to reach (1 request/s, bursts of 5), and the URL of its
/// first instance.
async fn strict_fleet() -> (Up, String, String) {
    let (up, url) = start(&["--client-rate", "1", "--client-burst", "5"]).await;
    let app1 = up.banner("app1").await.0;
    (up, url, app1)
}

/// What instance `base`'s own limit has refused so far, from its `/metrics` (`instance`:
/// its id), read from the host, which the limit never counts.
async fn refused_by(base: &str, instance: &str) -> u64 {
    let response = from("127.0.0.1")
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    let series = format!("oversell_client_limit_refused_total{{instance=\"{instance}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .map(|n| n.trim().parse().unwrap())
        .unwrap_or_else(|| panic!("no {series}in\n{text}"))
}

fn refusals(seen: &[StatusCode]) -> u64 {
    seen.iter()
        .filter(|&&s| s == StatusCode::TOO_MANY_REQUESTS)
        .count() as u64
}

/// Straight at an instance, past its burst: the instance's own JSON 429 with Retry-After,
/// counted against the peer whatever `X-Real-IP` it sends; another address has its own share
/// and cannot spend someone else's by naming them. Each 429 the instance sent is counted in
/// its `/metrics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_straight_at_an_instance_past_its_burst_gets_the_instances_429() {
    let (_up, _url, app1) = strict_fleet().await;
    let before = refused_by(&app1, "app1").await;
    let state = format!("{app1}/state");
    let student = from("127.0.0.2");
    let (seen, refused) = until_refused(&student, &state, &[], 60).await;
    let mut sent_429 = refusals(&seen);
    let body = refused.unwrap_or_else(|| panic!("never refused: {seen:?}"));
    assert!(seen.len() > 5, "the burst of 5 is served first: {seen:?}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("this instance") && message.contains("--client-rate"),
        "{body}"
    );
    // Naming another client does not give it a fresh share: the key is the peer's.
    let forged = [("x-real-ip", "203.0.113.9")];
    let (seen, refused) = until_refused(&student, &state, &forged, 10).await;
    assert!(
        refused.is_some(),
        "a forged X-Real-IP bought a fresh share: {seen:?}"
    );
    sent_429 += refusals(&seen);
    // Nor can another address spend this one's share by naming it.
    let other = from("127.0.0.3");
    let naming_student = [("x-real-ip", "127.0.0.2")];
    let answer = other
        .get(&state)
        .headers(header_map(&naming_student))
        .send();
    assert_eq!(answer.await.unwrap().status(), StatusCode::OK);
    // Counted before the 429 is written: the counter has moved once the client has it.
    assert_eq!(refused_by(&app1, "app1").await - before, sent_429);
}

/// Through nginx from a student's address, the same flood meets nginx's 429 first: the
/// instances, each seeing its share of what nginx lets through, never refuse it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_nginx_the_first_429_is_nginxs() {
    let (_up, url, _) = strict_fleet().await;
    let student = from("127.0.0.4");
    for _ in 0..3 {
        let (seen, refused) = until_refused(&student, &format!("{url}/state"), &[], 60).await;
        let body = refused.unwrap_or_else(|| panic!("never refused: {seen:?}"));
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("of the fleet"),
            "not nginx's refusal: {body}"
        );
    }
}

/// The fleet's own requests are never the instances' to limit: nginx's fleet port (the
/// grader's and the bursts' way in) from any address, a burst of many buyers, and the host
/// through the public port even naming a client in a header of its own (nginx drops it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleets_own_traffic_is_never_limited_by_an_instance() {
    let (up, url, _) = strict_fleet().await;
    let run_dir = up.banner("run dir").await.0;
    let conf = std::fs::read_to_string(format!("{run_dir}/nginx.conf")).unwrap();
    let fleet_port = conf
        .lines()
        .filter_map(|l| l.trim().strip_prefix("listen "))
        .nth(1)
        .and_then(|l| l.trim_end_matches(';').rsplit(':').next())
        .expect("nginx listens on the fleet port second")
        .to_owned();
    let fleet = format!("http://127.0.0.1:{fleet_port}/state");
    let (seen, refused) = until_refused(&from("127.0.0.6"), &fleet, &[], 40).await;
    assert!(refused.is_none(), "the fleet port was limited: {seen:?}");
    let forged = [("x-real-ip", "127.0.0.6")];
    let host = from("127.0.0.1");
    let (seen, refused) = until_refused(&host, &format!("{url}/state"), &forged, 40).await;
    assert!(refused.is_none(), "the host was limited: {seen:?}");
    // A burst's buyers reach the fleet through its own port: all of them sell.
    let token = up.admin_token().await;
    let admin = |path: &str, body: Value| {
        host.post(format!("{url}{path}"))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let reset = admin(
        "/admin/reset?room=limits",
        serde_json::json!({"stock": 1000}),
    );
    assert_eq!(reset.await.unwrap().status(), StatusCode::OK);
    let burst = admin(
        "/admin/burst?room=limits",
        serde_json::json!({"buyers": 60}),
    );
    let report: Value = burst.await.unwrap().json().await.unwrap();
    assert_eq!(report["ok"], 60, "{report}");
}

fn header_map(pairs: &[(&str, &str)]) -> reqwest::header::HeaderMap {
    pairs
        .iter()
        .map(|(name, value)| (name.parse().unwrap(), value.parse().unwrap()))
        .collect()
}

/// nginx names the client to the instances on every location it proxies, the streams' too:
/// `X-Real-IP` is set once for the server, and no location sets a header of its own (nginx
/// would then pass that location none of the server's). Without limits, a client's own
/// `X-Real-IP` is still dropped.
#[test]
fn every_proxied_location_names_the_client_to_the_instances() {
    let values = NginxValues::compose();
    let limited = values.render();
    let unlimited = NginxValues {
        limits: None,
        ..values
    }
    .render();
    for (conf, set) in [
        (&limited, "proxy_set_header X-Real-IP $oversell_real_ip;"),
        (&unlimited, "proxy_set_header X-Real-IP \"\";"),
    ] {
        let mut in_location = false;
        let mut server_sets = false;
        let mut locations = 0;
        for line in conf.lines().map(str::trim) {
            if line.starts_with("location ") {
                in_location = true;
                locations += 1;
            } else if line == "}" {
                in_location = false;
            } else if line.starts_with("proxy_set_header") {
                assert!(!in_location, "a location sets its own headers: {line}");
                server_sets |= line == set;
            }
        }
        assert!(
            server_sets && locations >= 4,
            "{set} for the server:\n{conf}"
        );
    }
}
