//! nginx's own answers, before any instance sees a request: its refusals in the API's error
//! shape and its per-client limits, on the template (`oversell::launch::topology`) rendered
//! alone, with one upstream where nothing listens.

use std::time::Duration;

use oversell::launch::topology::{ClientLimits, NginxValues};
use oversell_client::ports::free_port;

/// nginx itself refuses some requests before any instance sees them (too large, unreadable, no
/// instance to pass them to): it must answer those in the API's error shape (JSON `error` and
/// `message`), not with its HTML pages. Here the
/// template's own rendering, with one upstream where nothing listens.
#[tokio::test]
async fn nginx_answers_its_own_refusals_in_the_api_error_shape() {
    let (_nginx, url) = NginxAlone::start(None).await;
    let client = crate::helpers::http_client();
    let cases = [
        (
            client
                .post(format!("{url}/sale"))
                .body(vec![b' '; 100 * 1024]),
            413,
            "payload_too_large",
        ),
        (
            client
                .get(format!("{url}/state"))
                .header("x-big", "a".repeat(20 * 1024)),
            400,
            "bad_request",
        ),
        (
            client.get(format!("{url}/state?x={}", "a".repeat(9 * 1024))),
            414,
            "uri_too_long",
        ),
        (client.get(format!("{url}/state")), 502, "no_instance"),
        (client.post(format!("{url}/sale")), 502, "no_instance"),
    ];
    for (request, status, error) in cases {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status);
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(kind, "application/json", "{error}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"], error, "{body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

/// The template's own rendering, with one upstream where nothing listens: every request that
/// passes nginx is a 502 `no_instance`.
struct NginxAlone {
    _stop: StopNginx,
    dir: tempfile::TempDir,
    /// The fleet's own port (`FLEET_URL`), which no per-client limit counts.
    fleet_url: String,
}

impl NginxAlone {
    async fn start(limits: Option<ClientLimits>) -> (NginxAlone, String) {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().to_string_lossy().into_owned();
        let port = free_port().unwrap();
        let nobody = free_port().unwrap();
        let fleet_port = free_port().unwrap();
        let values = NginxValues {
            listen: vec![format!("127.0.0.1:{port}")],
            fleet_listen: vec![format!("127.0.0.1:{fleet_port}")],
            fleet_port,
            upstreams: vec![format!("127.0.0.1:{nobody}")],
            run_dir: run.clone(),
            error_log: format!("{run}/error.log"),
            access_log: format!("{run}/access.log"),
            limits,
        };
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, values.render()).unwrap();
        let binary = ["/usr/sbin/nginx", "nginx"]
            .into_iter()
            .find(|b| std::process::Command::new(b).arg("-v").output().is_ok())
            .expect("nginx is installed (apt-get install nginx)");
        let child = std::process::Command::new(binary)
            .args([
                "-p",
                &run,
                "-e",
                &values.error_log,
                "-g",
                "daemon off;",
                "-c",
            ])
            .arg(&conf)
            .spawn()
            .unwrap();
        let stop = StopNginx(child);
        let mut listening = false;
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                listening = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let log = std::fs::read_to_string(&values.error_log).unwrap_or_default();
        assert!(listening, "nginx did not listen on {port}: {log}");
        let alone = NginxAlone {
            _stop: stop,
            dir,
            fleet_url: format!("http://127.0.0.1:{fleet_port}"),
        };
        (alone, format!("http://127.0.0.1:{port}"))
    }
}

/// Per-client limits: an address over its burst gets JSON 429s with `Retry-After`, another
/// address at the same moment does not, and loopback's 127.0.0.1 (the host's own tools) is
/// never limited, nor is any address on the fleet's own port. 127.0.0.2, .3 … are loopback
/// too, seen by nginx as other clients. The refusals are answered, not logged.
#[tokio::test]
async fn a_client_over_its_fair_share_gets_a_json_429_and_the_others_do_not() {
    let limits = ClientLimits {
        rate: "1".into(),
        burst: "5".into(),
        conns: "100".into(),
        exempt: vec!["127.0.0.1/32".into()],
    };
    let (nginx, url) = NginxAlone::start(Some(limits)).await;
    let from = |ip: &str| {
        crate::helpers::http_client_builder()
            .local_address(Some(ip.parse().unwrap()))
            .build()
            .unwrap()
    };
    // `n` requests at once, each one's status and time: a refusal on a connection that asked
    // before is held for a second, so one after the other the requests would be paced under
    // the rate by the refusals themselves.
    let timed_at = |url: &str, client: reqwest::Client, n: usize| {
        let url = url.to_owned();
        async move {
            let requests = (0..n).map(|_| async {
                let sent = std::time::Instant::now();
                let response = client.get(format!("{url}/state")).send().await.unwrap();
                let status = response.status().as_u16();
                if status == 429 {
                    assert_eq!(response.headers()["retry-after"], "1");
                    assert_eq!(response.headers()["content-type"], "application/json");
                    let body: serde_json::Value = response.json().await.unwrap();
                    assert_eq!(body["error"], "too_many_requests", "{body}");
                    assert!(body["message"].as_str().unwrap().contains("--client-rate"));
                }
                (status, sent.elapsed())
            });
            futures_util::future::join_all(requests).await
        }
    };
    let statuses_at = |url: &str, client: reqwest::Client, n: usize| {
        let timed = timed_at(url, client, n);
        async move {
            timed
                .await
                .into_iter()
                .map(|(status, _)| status)
                .collect::<Vec<_>>()
        }
    };
    let statuses = |client, n| statuses_at(&url, client, n);
    let count = |seen: &[u16], status: u16| seen.iter().filter(|s| **s == status).count();

    // 20 at once from one address, each on a new connection: the first and a burst of 5
    // pass (a few more if the machine is slow enough for the rate to refill), the rest are
    // refused, at once.
    let flooder = from("127.0.0.2");
    let flood = statuses(flooder.clone(), 20).await;
    assert!(
        (6..=9).contains(&count(&flood, 502)),
        "passed to the (absent) instance: {flood:?}"
    );
    assert_eq!(count(&flood, 502) + count(&flood, 429), 20, "{flood:?}");
    // Again at once, on the connections now open: the refusals are held for the second they
    // ask the client to wait.
    let again = timed_at(&url, flooder, 20).await;
    let held: Vec<_> = again.iter().filter(|(status, _)| *status == 429).collect();
    assert!(!held.is_empty(), "none refused: {again:?}");
    assert!(
        held.iter()
            .all(|(_, took)| *took >= Duration::from_millis(900)),
        "a refusal on a connection that asked before was answered at once: {again:?}"
    );
    // Another address is not refused for the first one's flood.
    let other = statuses(from("127.0.0.3"), 3).await;
    assert_eq!(other, [502, 502, 502]);
    // 127.0.0.1 is exempt: never a 429.
    let host = statuses(from("127.0.0.1"), 30).await;
    assert_eq!(count(&host, 429), 0, "{host:?}");
    // The flooding address itself, on the fleet's own port: never a 429 either.
    let fleet = statuses_at(&nginx.fleet_url, from("127.0.0.2"), 30).await;
    assert_eq!(count(&fleet, 429), 0, "{fleet:?}");
    // Not one line per refusal in either log (a flood's lines cost more than its answers).
    for log in ["error.log", "access.log"] {
        let text = std::fs::read_to_string(nginx.dir.path().join(log)).unwrap_or_default();
        assert!(
            !text.contains("limiting") && !text.contains(" 429 "),
            "{log}: {text}"
        );
    }
}

/// Stops nginx's master gracefully, so that it takes its workers with it.
struct StopNginx(std::process::Child);

impl Drop for StopNginx {
    fn drop(&mut self) {
        // SAFETY: a plain kill(2) of our own child.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}
