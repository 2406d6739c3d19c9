//! `GET /events`: the dashboard's SSE feed sends the room's state and the window of its lock
//! timeline that the page draws: whole, never wider than asked, whatever the sale rate.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{spawn_fleet, TOKEN};

/// An open SSE response, parsed event by event (the class vote's stream is read with it too).
pub(crate) struct Sse {
    resp: reqwest::Response,
    buf: String,
    /// Why the stream stopped, once it has (its end or a read error): a failure then says
    /// so, rather than that no event came in time.
    ended: Option<String>,
}

/// A stream is read for as long as a test waits on it (each read has its own deadline): the
/// fleet client's whole-request timeout would cut a long-lived stream, not a slow answer.
const STREAM_TIMEOUT: Duration = Duration::from_secs(900);

/// One parsed event: its name, JSON data and size on the wire.
#[derive(Debug)]
pub(crate) struct Ev {
    pub name: String,
    pub data: Value,
    pub bytes: usize,
}

impl Sse {
    pub async fn open(client: &reqwest::Client, url: &str) -> Sse {
        let req = client
            .get(url)
            .header("accept", "text/event-stream")
            .timeout(STREAM_TIMEOUT);
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let ctype = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ctype.starts_with("text/event-stream"), "{ctype}");
        Sse {
            resp,
            buf: String::new(),
            ended: None,
        }
    }

    /// The next event, or `None` when the deadline passes first.
    pub async fn next(&mut self, within: Duration) -> Option<Ev> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut name, mut data) = (String::new(), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data += v.trim_start();
                    }
                }
                if name.is_empty() {
                    continue; // a keep-alive comment
                }
                let bytes = block.len();
                let data = serde_json::from_str(&data).unwrap_or(Value::Null);
                return Some(Ev { name, data, bytes });
            }
            if self.ended.is_some() {
                return None;
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk()).await;
            match chunk {
                Ok(Ok(Some(bytes))) => self.buf += &String::from_utf8_lossy(&bytes),
                Ok(Ok(None)) => {
                    self.ended = Some("the server ended the stream".into());
                    return None;
                }
                Ok(Err(err)) => {
                    self.ended = Some(format!("the stream broke: {err:?}"));
                    return None;
                }
                Err(_) => return None,
            }
        }
    }

    /// Reads events until `pick` returns something, failing after `within`.
    pub async fn until<T>(
        &mut self,
        within: Duration,
        mut pick: impl FnMut(&Ev) -> Option<T>,
    ) -> T {
        let deadline = tokio::time::Instant::now() + within;
        // The last event seen, for the failure's message: what the stream said instead.
        let mut last: Option<String> = None;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(ev) = self.next(left).await else {
                match &self.ended {
                    Some(why) => panic!("{why} before a matching event; the last one: {last:?}"),
                    None => panic!("no matching event within {within:?}; the last one: {last:?}"),
                }
            };
            if let Some(found) = pick(&ev) {
                return found;
            }
            last = Some(format!("{} {}", ev.name, ev.data));
        }
    }
}

#[tokio::test]
async fn events_stream_state_and_the_lock_timeline_of_a_sale() {
    let fleet = spawn_fleet(1).await;
    let base = fleet.url(0).to_owned();
    let client = &fleet.client;
    let reset = client
        .post(format!("{base}/admin/reset?room=ev"))
        .bearer_auth(TOKEN)
        .json(&json!({ "stock": 5 }))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);

    let url = format!("{base}/events?room=ev");
    let mut sse = Sse::open(client, &url).await;
    let first = sse
        .until(Duration::from_secs(5), |ev| {
            (ev.name == "state").then(|| ev.data.clone())
        })
        .await;
    assert_eq!(first["room"], "ev");
    assert_eq!(first["stock"], 5);
    assert_eq!(first["orders"], 0);
    assert!(first["settings"]["ttl_ms"].is_u64(), "{first}");

    let sold = client
        .post(format!("{base}/sale?room=ev"))
        .json(&json!({ "buyer": "sse" }))
        .send()
        .await
        .unwrap();
    assert_eq!(sold.status(), StatusCode::OK);

    // The window shows the sale's critical section: one bar, closed, "sold", at the stock it
    // read. Rows: [owner, instance, enter, exit, took, outcome, stock, …], times after
    // base_us, `took` the ms from the sale's start on its instance to its write.
    let window = sse
        .until(Duration::from_secs(10), |ev| {
            let section = ev.data["sections"].get(0)?;
            (ev.name == "timeline" && section[5] == "sold").then(|| ev.data.clone())
        })
        .await;
    let section = &window["sections"][0];
    assert_eq!(window["sections"].as_array().unwrap().len(), 1, "{window}");
    assert!(section[2].as_i64().unwrap() <= section[3].as_i64().unwrap());
    assert!(section[4].as_f64().is_some_and(|ms| ms >= 0.0), "{window}");
    assert_eq!(section[6], 5, "{window}");
    let state = sse
        .until(Duration::from_secs(5), |ev| {
            (ev.name == "state" && ev.data["orders"] == 1).then(|| ev.data.clone())
        })
        .await;
    assert_eq!(state["stock"], 4);
    assert_eq!(state["oversold"], 0);
    let instance = state["instance"].as_str().unwrap();
    assert_eq!(
        window["instances"][section[1].as_u64().unwrap() as usize],
        instance
    );
    assert_eq!(state["per_instance"][instance]["orders"], 1, "{state}");
    drop(sse);

    // A page that opens later gets the window whole at once, without waiting for a sale.
    let mut again = Sse::open(client, &format!("{url}&draw=20")).await;
    let window = again
        .until(Duration::from_secs(5), |ev| {
            (ev.name == "timeline").then(|| ev.data.clone())
        })
        .await;
    assert_eq!(window["sections"].as_array().unwrap().len(), 1, "{window}");
}

/// A burst of 300 sales in one room: each stream receives the window its page draws (20 or
/// 100 sections), never the hundreds of entries the burst wrote, and ends with the newest.
#[tokio::test]
async fn a_stream_receives_the_window_its_page_draws_whatever_the_rate() {
    let fleet = spawn_fleet(1).await;
    fleet
        .configure(json!({ "tier": "lua-release", "business_ms": 0 }))
        .await;
    fleet.reset(1_000).await;
    let base = fleet.url(0).to_owned();
    let mut narrow = Sse::open(&fleet.client, &format!("{base}/events?draw=20")).await;
    let mut wide = Sse::open(&fleet.client, &format!("{base}/events")).await;
    let statuses = fleet.burst(300).await;
    assert!(statuses.iter().all(|(s, _)| *s == StatusCode::OK));

    for (sse, draw) in [(&mut narrow, 20), (&mut wide, 100)] {
        let mut windows = 0;
        let last = sse
            .until(Duration::from_secs(20), |ev| {
                if ev.name != "timeline" {
                    return None;
                }
                windows += 1;
                let sections = ev.data["sections"].as_array().unwrap();
                assert!(
                    sections.len() <= draw,
                    "{} sections, draws {draw}",
                    sections.len()
                );
                // The last sale read stock 701: the window ends with it once it is whole.
                sections
                    .last()
                    .filter(|s| s[6] == 701 && s[5] == "sold")
                    .map(|_| (sections.len(), ev.bytes))
            })
            .await;
        assert_eq!(last.0, draw, "a full window after 300 sales");
        // About 40 bytes a section: far below the ~200 bytes of each of its entries.
        assert!(
            last.1 < draw * 60 + 400,
            "{} bytes for {draw} sections",
            last.1
        );
        assert!(windows >= 1);
    }
    let bad = fleet
        .client
        .get(format!("{base}/events?draw=7"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let body: Value = bad.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("draw"), "{body}");
}

#[tokio::test]
async fn events_refuse_a_bad_room() {
    let fleet = spawn_fleet(1).await;
    let resp = fleet
        .client
        .get(format!("{}/events?room=no%20spaces", fleet.url(0)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "bad_request");
}

/// An open SSE stream must not hold a graceful shutdown hostage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_shutdown_ends_open_event_streams() {
    let redis = oversell::launch::redis_server::RedisServer::start().unwrap();
    let args = crate::helpers::serve_args(&redis.url(), "app1");
    let app = crate::helpers::TestApp::spawn(&args).await;
    let mut stream = reqwest::get(format!("{}/events", app.url)).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await;
    assert!(matches!(first, Ok(Ok(Some(_)))), "the stream is open");
    tokio::time::timeout(Duration::from_secs(10), app.shut_down())
        .await
        .expect("shutdown finishes while a stream is open");
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await;
    assert!(rest.is_ok(), "the stream ended");
}

/// Every command Redis has run so far (INFO commandstats), INFO itself included.
async fn redis_calls(conn: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .filter_map(|line| line.split("calls=").nth(1))
        .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
        .sum()
}

/// Reads `n` more `state` events from the stream.
async fn states(sse: &mut Sse, n: usize) {
    for _ in 0..n {
        sse.until(Duration::from_secs(10), |ev| {
            (ev.name == "state").then_some(())
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_streams_on_a_room_share_one_poller() {
    let fleet = spawn_fleet(1).await;
    fleet.reset(100).await;
    for _ in 0..5 {
        assert_eq!(fleet.sale(0, "b").await.0, StatusCode::OK);
    }
    let url = format!("{}/events", fleet.url(0));
    let mut conn = fleet.redis_conn().await;
    const TICKS: usize = 8;

    let mut first = Sse::open(&fleet.client, &url).await;
    states(&mut first, 2).await;
    let before = redis_calls(&mut conn).await;
    states(&mut first, TICKS).await;
    let one_stream = redis_calls(&mut conn).await - before;

    let mut others = Vec::new();
    for _ in 0..19 {
        let mut sse = Sse::open(&fleet.client, &url).await;
        states(&mut sse, 1).await;
        others.push(sse);
    }
    let before = redis_calls(&mut conn).await;
    states(&mut first, TICKS).await;
    let twenty_streams = redis_calls(&mut conn).await - before;
    // The same reads per tick whether one dashboard watches or twenty (a little slack for
    // the heartbeat and the INFO calls themselves).
    assert!(
        twenty_streams <= one_stream + one_stream / 2 + 10,
        "{TICKS} ticks: {one_stream} commands with 1 stream, {twenty_streams} with 20"
    );
    // And every stream sees the same figures.
    let state = others[18]
        .until(Duration::from_secs(10), |ev| {
            (ev.name == "state").then(|| ev.data.clone())
        })
        .await;
    assert_eq!(state["orders"], 5);
    assert_eq!(state["per_instance"]["app1"]["orders"], 5, "{state}");
}

#[tokio::test]
async fn a_stream_past_the_instance_limit_is_a_503_json_error() {
    let fleet = crate::helpers::spawn_fleet_with(1, |args| args.max_event_streams = 2).await;
    let url = format!("{}/events", fleet.url(0));
    let open = |room: &'static str| {
        fleet
            .client
            .get(format!("{url}?room={room}"))
            .header("accept", "text/event-stream")
            .send()
    };
    let first = open("a").await.unwrap();
    let second = open("b").await.unwrap();
    assert_eq!(
        (first.status(), second.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    let third = open("a").await.unwrap();
    assert_eq!(third.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = third.json().await.unwrap();
    assert_eq!(body["error"], "too_many_streams", "{body}");
    assert!(body["message"].as_str().unwrap().contains('2'), "{body}");
    // A closed stream frees its place.
    drop(first);
    crate::helpers::eventually(Duration::from_secs(10), || async {
        open("a").await.unwrap().status() == StatusCode::OK
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_stream_says_when_the_store_lost_the_room() {
    let mut fleet = spawn_fleet(1).await;
    fleet.reset(10).await;
    assert_eq!(fleet.state().await["status"], "live");
    let mut sse = Sse::open(&fleet.client, &format!("{}/events", fleet.url(0))).await;
    states(&mut sse, 1).await;
    fleet.redis.restart().expect("restart redis empty");
    let lost = sse
        .until(Duration::from_secs(20), |ev| {
            (ev.name == "state_lost").then(|| ev.data.clone())
        })
        .await;
    assert_eq!(lost["error"], "state_lost", "{lost}");
}

/// `poll=1`: one stream carries the room's feed and the class vote, the vote as it opens (a
/// phone holds this stream alone); any other value is a JSON 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_stream_carries_the_feed_and_the_class_vote_with_poll_1() {
    let fleet = spawn_fleet(2).await;
    let made = fleet
        .admin(
            reqwest::Method::POST,
            "/admin/class",
            json!({ "students": 2, "stock": 10 }),
        )
        .await;
    let room = made["rooms"][0]["room"].as_str().unwrap().to_owned();
    let url = format!("{}/events?room={room}&draw=20&poll=1", fleet.url(1));
    let mut sse = Sse::open(&fleet.client, &url).await;
    let seen = |name: &'static str| move |ev: &Ev| (ev.name == name).then(|| ev.data.clone());
    let state = sse.until(Duration::from_secs(10), seen("state")).await;
    assert_eq!(state["room"], room.as_str(), "{state}");
    // The vote as it is on connect (none open), then the one the teacher opens, on the same
    // stream.
    sse.until(Duration::from_secs(10), seen("poll")).await;
    fleet
        .admin(
            reqwest::Method::POST,
            "/admin/class/poll",
            json!({ "question": "none-race" }),
        )
        .await;
    let open = sse
        .until(Duration::from_secs(10), |ev| {
            (ev.name == "poll" && ev.data["state"] == "open").then(|| ev.data.clone())
        })
        .await;
    assert!(open["number"].as_u64().is_some(), "{open}");
    // And the feed goes on beside it.
    sse.until(Duration::from_secs(10), seen("state")).await;
    for bad in ["0", "yes", "2"] {
        let resp = fleet
            .client
            .get(format!("{}/events?room={room}&poll={bad}", fleet.url(0)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "poll={bad}");
        let body: Value = resp.json().await.unwrap();
        assert!(
            body["message"].as_str().unwrap().contains("poll must be 1"),
            "{body}"
        );
    }
}
