//! The generator against a tiny in-test HTTP/1.1 server: exact request budgets, bursts that
//! open every connection before releasing, open-loop schedules, timeouts, round robin, and the
//! one-line errors.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loadtest::{fire, run_cli, Load, Model, RequestSpec, Silent, Stop};
use oversell_client::Targets;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the stub answers.
#[derive(Clone)]
struct Answer {
    status: u16,
    content_type: &'static str,
    body: String,
    /// Never answer (to provoke timeouts).
    hang: bool,
    /// Send these bytes as the whole answer instead.
    raw: Option<&'static str>,
}

impl Answer {
    fn json(status: u16, body: &str) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body: body.to_owned(),
            hang: false,
            raw: None,
        }
    }
}

type Route = dyn Fn(&str, &str) -> Answer + Send + Sync;

/// What the stub saw.
#[derive(Default)]
struct Seen {
    connections: usize,
    /// Method, path and body of every request.
    requests: Vec<(String, String, String)>,
    /// Requests carried by each connection, by accept order.
    per_connection: Vec<usize>,
}

struct Stub {
    url: String,
    seen: Arc<Mutex<Seen>>,
}

impl Stub {
    async fn start(route: impl Fn(&str, &str) -> Answer + Send + Sync + 'static) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let route: Arc<Route> = Arc::new(route);
        let shared = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let id = {
                    let mut seen = shared.lock().unwrap();
                    seen.connections += 1;
                    seen.per_connection.push(0);
                    seen.connections - 1
                };
                tokio::spawn(serve(stream, id, Arc::clone(&route), Arc::clone(&shared)));
            }
        });
        Stub { url, seen }
    }

    fn requests(&self) -> Vec<(String, String, String)> {
        self.seen.lock().unwrap().requests.clone()
    }
}

/// A minimal keep-alive HTTP/1.1 server: request line, headers, `content-length` body.
async fn serve(mut stream: TcpStream, id: usize, route: Arc<Route>, seen: Arc<Mutex<Seen>>) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).to_string();
        buf.drain(..head_end + length);
        let mut parts = head.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        {
            let mut seen = seen.lock().unwrap();
            seen.per_connection[id] += 1;
            seen.requests
                .push((method.to_owned(), path.to_owned(), body.clone()));
        }
        let answer = route(method, path);
        if answer.hang {
            // Keep the socket open, never answer.
            let _ = stream.read(&mut [0u8; 1]).await;
            return;
        }
        let reply = answer.raw.map(str::to_owned).unwrap_or_else(|| {
            format!(
                "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n{}",
                answer.status,
                answer.content_type,
                answer.body.len(),
                answer.body
            )
        });
        if stream.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn load(model: Model, connections: usize) -> Load {
    Load {
        model,
        connections,
        request: RequestSpec::sale(1),
        timeout: Duration::from_secs(5),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_loop_sends_exactly_the_request_budget_over_its_connections() {
    let stub = Stub::start(|_, _| Answer::json(409, r#"{"error":"sold_out"}"#)).await;
    let targets = Targets::parse(&[&stub.url], None).unwrap();
    let model = Model::Closed {
        stop: Stop::Requests(500),
    };
    let stats = fire(&targets, &load(model, 8), &Silent).await.unwrap();
    assert_eq!((stats.sent(), stats.status(409)), (500, 500));
    assert_eq!(stats.latency.len(), 500);
    // Workers connect lazily and share the budget, so a worker that starts late may find it
    // spent and never connect: at most one connection per worker, never one per request.
    let connections = stub.seen.lock().unwrap().connections;
    assert!(
        (1..=8).contains(&connections),
        "keep-alive: at most one connection per worker, got {connections}"
    );
    assert_eq!(stub.requests().len(), 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_gives_every_buyer_a_connection_and_one_request() {
    let stub = Stub::start(|_, _| Answer::json(200, r#"{"order_id":"x"}"#)).await;
    let targets = Targets::parse(&[&stub.url], Some("flash")).unwrap();
    let stats = loadtest::burst(&targets, 200, &Default::default())
        .await
        .unwrap();
    assert_eq!(stats.status(200), 200);
    let seen = stub.seen.lock().unwrap();
    assert_eq!(seen.connections, 200);
    assert!(
        seen.per_connection.iter().all(|n| *n == 1),
        "one request per connection"
    );
    let buyers: HashSet<&str> = seen.requests.iter().map(|(_, _, b)| b.as_str()).collect();
    assert_eq!(buyers.len(), 200, "every buyer id is unique");
    assert!(seen
        .requests
        .iter()
        .all(|(m, p, b)| m == "POST" && p == "/sale?room=flash" && b.contains(r#""qty":1"#)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_sends_one_request_per_due_time_until_the_deadline() {
    let stub = Stub::start(|_, _| Answer::json(200, "{}")).await;
    let targets = Targets::parse(&[&stub.url], None).unwrap();
    let model = Model::Open {
        rate: 200.0,
        stop: Stop::After(Duration::from_millis(500)),
    };
    let stats = fire(&targets, &load(model, 4), &Silent).await.unwrap();
    assert_eq!(stats.status(200), 100);
    assert!(
        stats.elapsed >= Duration::from_millis(495),
        "{:?}",
        stats.elapsed
    );
}

fn raw(reply: &'static str) -> Answer {
    Answer {
        raw: Some(reply),
        ..Answer::json(200, "")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_answers_are_read_to_the_end_and_the_connection_reused() {
    let stub = Stub::start(|_, _| {
        raw("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 409 Conflict\r\ntransfer-encoding: chunked\r\n\r\n4\r\nsold\r\n4;x=1\r\n out\r\n0\r\ntrailer: t\r\n\r\n")
    })
    .await;
    let targets = Targets::parse(&[&stub.url], None).unwrap();
    let model = Model::Closed {
        stop: Stop::Requests(50),
    };
    let stats = fire(&targets, &load(model, 2), &Silent).await.unwrap();
    assert_eq!((stats.status(409), stats.conn_errors), (50, 0));
    // Reused: 50 answers over at most the 2 workers' connections (a late worker may find the
    // budget spent and never connect).
    let connections = stub.seen.lock().unwrap().connections;
    assert!((1..=2).contains(&connections), "{connections} connections");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_with_connection_close_makes_the_worker_reconnect() {
    let stub = Stub::start(|_, _| {
        raw("HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\nok")
    })
    .await;
    let targets = Targets::parse(&[&stub.url], None).unwrap();
    let model = Model::Closed {
        stop: Stop::Requests(10),
    };
    let stats = fire(&targets, &load(model, 1), &Silent).await.unwrap();
    assert_eq!((stats.status(200), stats.conn_errors), (10, 0));
    assert_eq!(stub.seen.lock().unwrap().connections, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_an_answer_time_out_and_the_run_still_ends() {
    let stub = Stub::start(|_, _| Answer {
        hang: true,
        ..Answer::json(200, "")
    })
    .await;
    let targets = Targets::parse(&[&stub.url], None).unwrap();
    let mut slow = load(
        Model::Closed {
            stop: Stop::Requests(4),
        },
        2,
    );
    slow.timeout = Duration::from_millis(100);
    let stats = fire(&targets, &slow, &Silent).await.unwrap();
    assert_eq!((stats.timeouts, stats.responses()), (4, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_spread_round_robin_over_the_urls() {
    let a = Stub::start(|_, _| Answer::json(200, "{}")).await;
    let b = Stub::start(|_, _| Answer::json(200, "{}")).await;
    let targets = Targets::parse(&[&a.url, &b.url], None).unwrap();
    let stats = loadtest::burst(&targets, 10, &Default::default())
        .await
        .unwrap();
    assert_eq!(stats.status(200), 10);
    assert_eq!((a.requests().len(), b.requests().len()), (5, 5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_prints_json_with_counts_and_percentiles() {
    let stub = Stub::start(|_, _| Answer::json(200, "pong")).await;
    let out = run_cli([
        "loadtest", "run", "--url", &stub.url, "-m", "GET", "--path", "/ping", "-c", "4", "-n",
        "1k", "--json",
    ])
    .await
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["stats"]["sent"], 1000);
    assert_eq!(json["stats"]["statuses"]["200"], 1000);
    assert!(json["stats"]["latency_ms"]["p99.9"].as_f64().unwrap() > 0.0);
    assert!(stub
        .requests()
        .iter()
        .all(|(m, p, b)| m == "GET" && p == "/ping" && b.is_empty()));
}

#[tokio::test]
async fn an_unreachable_url_stops_with_one_line() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let err = run_cli(["loadtest", "run", "--url", &url, "-n", "5"])
        .await
        .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!("cannot reach {url}: connection refused")
    );
}

#[tokio::test]
async fn a_state_that_is_not_json_stops_the_matrix_with_one_line() {
    let stub = Stub::start(|_, _| Answer {
        content_type: "text/html",
        ..Answer::json(200, "<html>welcome to nginx</html>")
    })
    .await;
    let err = run_cli(["loadtest", "matrix", "--url", &stub.url, "--token", "t"])
        .await
        .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!("{}/state did not return JSON", stub.url)
    );
}

/// A `/state` document as a fresh oversell instance answers it.
const FRESH_STATE: &str = r#"{"instance":"a","room":"default","status":"live","tier":"none",
    "settings":{"tier":"none","ttl_ms":3000,"business_ms":5,"wait":"pubsub",
    "wait_deadline_ms":5000},"faults":[],"stock":0,"initial_stock":0,"orders":0,
    "items_sold":0,"oversold":0,"lost_updates":0,"overlaps":0,"foreign_releases":0,
    "lost_releases":0,"store_faults":0,"stale_writes_rejected":0,"lock_timeouts":0,
    "lock":{"held":false,"ttl_ms":null},"lock_store":{"kind":"shared","nodes":[],"sentinels":[]}}"#;

#[tokio::test]
async fn a_rejected_token_stops_the_matrix_with_a_hint() {
    let stub = Stub::start(|_, path| match path.starts_with("/admin") {
        true => Answer::json(401, r#"{"error":"unauthorized"}"#),
        false => Answer::json(200, FRESH_STATE),
    })
    .await;
    let err = run_cli(["loadtest", "matrix", "--url", &stub.url, "--token", "bad"])
        .await
        .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "admin token rejected (401) — pass --token or OVERSELL_ADMIN_TOKEN"
    );
}

#[tokio::test]
async fn a_state_from_something_else_stops_the_matrix_naming_it() {
    let stub = Stub::start(|_, _| Answer::json(200, r#"{"instance":"a"}"#)).await;
    let err = run_cli(["loadtest", "matrix", "--url", &stub.url, "--token", "t"])
        .await
        .unwrap_err();
    let err = format!("{err:#}");
    assert!(
        err.starts_with("/state is not what oversell answers (missing field `room`)"),
        "{err}"
    );
}

/// A stub answering 503 to the first `busy` requests, then `FRESH_STATE`.
async fn busy_for(busy: usize) -> Stub {
    busy_with("redis_unavailable", busy).await
}

/// Answers 503 with the error `code` to the first `busy` requests, then the state.
async fn busy_with(code: &'static str, busy: usize) -> Stub {
    let asked = std::sync::atomic::AtomicUsize::new(0);
    Stub::start(
        move |_, _| match asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < busy {
            true => Answer::json(503, &format!(r#"{{"error":"{code}"}}"#)),
            false => Answer::json(200, FRESH_STATE),
        },
    )
    .await
}

#[tokio::test]
async fn a_slow_store_is_asked_again_where_twice_changes_nothing() {
    let admin = |stub: &Stub| {
        oversell_client::AdminClient::new(&Targets::parse(&[&stub.url], None).unwrap(), None)
    };
    // Busy twice, then answered: the state comes back on the third ask.
    let stub = busy_for(2).await;
    let state = admin(&stub).state().await.expect("the third answer");
    assert_eq!(state.instance, "a");
    assert_eq!(stub.requests().len(), 3);
    // Busy past the call's own timeout: asked a few times, then the 503 is the answer.
    let stub = busy_for(usize::MAX).await;
    let err = admin(&stub)
        .with_timeout(std::time::Duration::from_secs(1))
        .state()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("503"), "{err}");
    let asked = stub.requests().len();
    assert!((2..=5).contains(&asked), "asked {asked} times within 1 s");
    // A 503 that will say the same again is the answer at once.
    let stub = busy_with("grading_lost", 1).await;
    let err = admin(&stub).state().await.unwrap_err();
    assert!(err.to_string().contains("503"), "{err}");
    assert_eq!(stub.requests().len(), 1);
    // A PUT and a reset to a given stock: twice is once, so asked again.
    let stub = busy_for(1).await;
    let client = admin(&stub);
    let put = client
        .request(http::Method::PUT, "/admin/config", None)
        .await;
    put.expect("the second answer");
    assert_eq!(stub.requests().len(), 2);
    let stub = busy_for(1).await;
    admin(&stub).reset(100).await.expect("the second answer");
    assert_eq!(stub.requests().len(), 2);
    // Any other write refused once is not sent again: it may have half happened.
    let stub = busy_for(1).await;
    let err = admin(&stub)
        .request(http::Method::POST, "/admin/faults", None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("503"), "{err}");
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn bad_flags_come_back_as_errors_with_the_usage() {
    let err = run_cli(["loadtest", "run", "-n", "ten"]).await.unwrap_err();
    assert!(err.to_string().contains("invalid count `ten`"), "{err}");
}
