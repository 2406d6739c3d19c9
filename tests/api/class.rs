//! The class: a room token acts in its own room on every room route and nowhere else, stops
//! on every instance the moment it is rotated or revoked, is stored only as a digest, and its
//! join link's QR code decodes to the link.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{eventually, spawn_fleet, TestFleet, TOKEN};

/// A request through instance `i` with `token` (none: no `Authorization`).
async fn call(
    fleet: &TestFleet,
    i: usize,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut req = fleet
        .client
        .request(method, format!("{}{path}", fleet.url(i)))
        .json(&body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// `POST /admin/class` with the admin token: the tickets, by room.
async fn make_class(fleet: &TestFleet, students: usize) -> Vec<Value> {
    let made = fleet
        .admin(
            Method::POST,
            "/admin/class",
            json!({ "students": students, "stock": 50 }),
        )
        .await;
    made["rooms"].as_array().unwrap().clone()
}

fn token_of(ticket: &Value) -> String {
    ticket["token"].as_str().unwrap().to_owned()
}

/// Every room-scoped admin route, with a body it accepts.
fn room_routes() -> Vec<(Method, &'static str, Value)> {
    vec![
        (Method::POST, "/admin/reset", json!({ "stock": 7 })),
        (Method::PUT, "/admin/tier", json!({ "tier": "none" })),
        (Method::PUT, "/admin/config", json!({ "business_ms": 3 })),
        (Method::POST, "/admin/burst", json!({ "buyers": 3 })),
        (
            Method::POST,
            "/admin/faults",
            json!({ "kind": "release-gap", "ms": 50 }),
        ),
        (Method::DELETE, "/admin/faults", json!({})),
    ]
}

/// What another room's token must not change: settings, stock and orders.
async fn room_facts(fleet: &TestFleet, room: &str) -> Value {
    let state = fleet.get_json(0, &format!("/state?room={room}")).await;
    json!({
        "settings": state["settings"],
        "stock": state["stock"],
        "orders": state["orders"],
        "faults": state["faults"],
    })
}

#[tokio::test]
async fn a_room_token_acts_in_its_own_room_and_gets_403_everywhere_else() {
    let fleet = spawn_fleet(2).await;
    let tickets = make_class(&fleet, 2).await;
    assert_eq!(tickets[0]["room"], "student-01");
    assert_eq!(tickets[1]["room"], "student-02");
    let mine = token_of(&tickets[0]);

    // A sale in the other room, so "unchanged" covers orders too.
    let (status, _) = call(
        &fleet,
        0,
        Method::POST,
        "/sale?room=student-02",
        None,
        json!({ "buyer": "b" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let before = room_facts(&fleet, "student-02").await;

    // In its own room, every room route answers as for the admin token.
    for (i, (method, path, body)) in room_routes().into_iter().enumerate() {
        let path = format!("{path}?room=student-01");
        let (status, answer) = call(&fleet, i, method, &path, Some(&mine), body).await;
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    }
    // A scenario passes the token check (an unknown id is the next thing refused).
    let (status, answer) = call(
        &fleet,
        0,
        Method::POST,
        "/admin/scenario?room=student-01",
        Some(&mine),
        json!({ "id": "no-such-scenario" }),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let whoami = call(
        &fleet,
        1,
        Method::GET,
        "/admin/whoami",
        Some(&mine),
        json!({}),
    )
    .await;
    assert_eq!(
        whoami,
        (
            StatusCode::OK,
            json!({ "scope": "room", "room": "student-01" })
        )
    );

    // In the other room, every room route is a 403 with a JSON body that names both rooms.
    let mut routes = room_routes();
    routes.push((
        Method::POST,
        "/admin/scenario",
        json!({ "id": "none-race" }),
    ));
    for (i, (method, path, body)) in routes.into_iter().enumerate() {
        let path = format!("{path}?room=student-02");
        let (status, answer) = call(&fleet, i, method, &path, Some(&mine), body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {answer}");
        assert_eq!(answer["error"], "forbidden", "{path}: {answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(
            message.contains("student-01") && message.contains("student-02"),
            "{message}"
        );
    }
    // The default room is another room too.
    let (status, _) = call(
        &fleet,
        0,
        Method::POST,
        "/admin/reset",
        Some(&mine),
        json!({ "stock": 1 }),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(room_facts(&fleet, "student-02").await, before);

    // Whatever reaches past the room is the instructor's alone, even asked in its own room.
    // Instances are named app1, app2… (see `spawn_fleet`).
    let id = "app2";
    let beyond = [
        (
            Method::POST,
            "/admin/faults?room=student-01".to_owned(),
            json!({ "kind": "freeze", "ms": 100 }),
        ),
        (
            Method::POST,
            "/admin/faults?room=student-01".to_owned(),
            json!({ "kind": "crash-holding" }),
        ),
        (
            Method::POST,
            "/admin/scenario?room=student-01".to_owned(),
            json!({ "id": "setnx-crash" }),
        ),
        (
            Method::POST,
            format!("/admin/instances/{id}/crash"),
            json!({}),
        ),
        (
            Method::POST,
            format!("/admin/instances/{id}/freeze"),
            json!({ "ms": 100 }),
        ),
        (
            Method::POST,
            "/admin/class".to_owned(),
            json!({ "students": 1 }),
        ),
        (Method::GET, "/admin/class".to_owned(), json!({})),
        (Method::DELETE, "/admin/class".to_owned(), json!({})),
        (
            Method::POST,
            "/admin/rooms/student-01/token".to_owned(),
            json!({}),
        ),
        (
            Method::DELETE,
            "/admin/rooms/student-02/token".to_owned(),
            json!({}),
        ),
    ];
    for (method, path, body) in beyond {
        let (status, answer) = call(&fleet, 0, method, &path, Some(&mine), body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {answer}");
        assert_eq!(answer["error"], "forbidden", "{path}: {answer}");
    }
    // Both instances still sell (nothing crashed or froze), and the other room kept its token.
    for i in 0..2 {
        let (status, _) = call(
            &fleet,
            i,
            Method::POST,
            "/sale?room=student-01",
            None,
            json!({ "buyer": format!("after-{i}") }),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    let theirs = token_of(&tickets[1]);
    let (status, _) = call(
        &fleet,
        0,
        Method::GET,
        "/admin/whoami",
        Some(&theirs),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // No token or a made-up one: 401, whatever the room.
    for token in [None, Some("room-0123456789abcdef0123456789abcdef")] {
        let (status, answer) = call(
            &fleet,
            0,
            Method::POST,
            "/admin/reset?room=student-01",
            token,
            json!({ "stock": 1 }),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert_eq!(answer["error"], "unauthorized", "{answer}");
    }
}

#[tokio::test]
async fn a_rotated_or_revoked_token_stops_on_every_instance_at_once() {
    let fleet = spawn_fleet(3).await;
    let tickets = make_class(&fleet, 2).await;
    let old = token_of(&tickets[0]);
    let whoami = |token: String| {
        let fleet = &fleet;
        async move {
            let mut statuses = Vec::new();
            for i in 0..3 {
                let token = Some(token.as_str());
                statuses.push(
                    call(fleet, i, Method::GET, "/admin/whoami", token, json!({}))
                        .await
                        .0,
                );
            }
            statuses
        }
    };
    assert_eq!(whoami(old.clone()).await, [StatusCode::OK; 3]);

    // Stored as digests: no key, field or value in Redis holds a token.
    let mut conn = fleet.redis_conn().await;
    let dump: Vec<String> = redis::cmd("HGETALL")
        .arg("oversell:{.fleet}:room-tokens")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(dump.len(), 4, "two rooms, digest → room: {dump:?}");
    for ticket in &tickets {
        let token = token_of(ticket);
        assert!(dump.iter().all(|s| !s.contains(&token)), "{dump:?}");
        assert!(fleet.all_keys().await.iter().all(|k| !k.contains(&token)));
    }

    // Rotation: the next request to any instance refuses the old token (no cache to expire).
    let rotated = fleet
        .admin(Method::POST, "/admin/rooms/student-01/token", json!({}))
        .await;
    let new = token_of(&rotated);
    assert_ne!(new, old);
    assert!(rotated["join_url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("#token={new}")));
    assert_eq!(whoami(old).await, [StatusCode::UNAUTHORIZED; 3]);
    assert_eq!(whoami(new.clone()).await, [StatusCode::OK; 3]);

    // Revocation of one room leaves the other's token working…
    let revoked = fleet
        .admin(Method::DELETE, "/admin/rooms/student-01/token", json!({}))
        .await;
    assert_eq!(revoked["revoked"], true);
    assert_eq!(whoami(new).await, [StatusCode::UNAUTHORIZED; 3]);
    let other = token_of(&tickets[1]);
    assert_eq!(whoami(other.clone()).await, [StatusCode::OK; 3]);

    // …and closing the class stops every token.
    let closed = fleet.admin(Method::DELETE, "/admin/class", json!({})).await;
    assert_eq!(closed["revoked"], 1);
    assert_eq!(whoami(other).await, [StatusCode::UNAUTHORIZED; 3]);
    let overview = fleet.get_admin_class().await;
    let rooms = overview["rooms"].as_array().unwrap();
    assert!(rooms.iter().all(|r| r["has_token"] == false), "{overview}");
}

#[tokio::test]
async fn the_class_page_data_counts_orders_and_viewers_per_room() {
    let fleet = spawn_fleet(2).await;
    make_class(&fleet, 3).await;
    for buyer in ["a", "b", "c"] {
        let (status, _) = call(
            &fleet,
            1,
            Method::POST,
            "/sale?room=student-02",
            None,
            json!({ "buyer": buyer }),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    // Two dashboards on student-03, one on each instance.
    let mut streams = Vec::new();
    for i in 0..2 {
        let resp = fleet
            .client
            .get(format!("{}/events?room=student-03", fleet.url(i)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        streams.push(resp);
    }
    eventually(Duration::from_secs(10), || async {
        let overview = fleet.get_admin_class().await;
        overview["rooms"][2]["viewers"] == 2
    })
    .await;
    let overview = fleet.get_admin_class().await;
    assert_eq!(overview["prefix"], "student");
    let rooms = overview["rooms"].as_array().unwrap();
    let column = |name: &str| rooms.iter().map(|r| r[name].clone()).collect::<Vec<_>>();
    assert_eq!(
        column("room"),
        [
            json!("student-01"),
            json!("student-02"),
            json!("student-03")
        ]
    );
    assert_eq!(column("orders"), [json!(0), json!(3), json!(0)]);
    assert_eq!(column("stock"), [json!(50), json!(47), json!(50)]);
    assert_eq!(column("viewers"), [json!(0), json!(0), json!(2)]);
    assert_eq!(column("has_token"), vec![json!(true); 3]);
    // Dashboards that leave stop counting (each instance republishes every second).
    drop(streams);
    eventually(Duration::from_secs(10), || async {
        fleet.get_admin_class().await["rooms"][2]["viewers"] == 0
    })
    .await;
}

#[tokio::test]
async fn the_qr_code_decodes_to_the_join_link() {
    let fleet = spawn_fleet(1).await;
    let tickets = make_class(&fleet, 1).await;
    let join_url = tickets[0]["join_url"].as_str().unwrap();
    let host = fleet.url(0).trim_start_matches("http://");
    let token = token_of(&tickets[0]);
    assert_eq!(
        join_url,
        format!("http://{host}/?room=student-01#token={token}")
    );
    let decoded = decode_qr_svg(tickets[0]["qr_svg"].as_str().unwrap());
    assert_eq!(decoded, join_url);
}

#[tokio::test]
async fn bad_class_requests_are_400s_that_say_why() {
    let fleet = spawn_fleet(1).await;
    for (body, says) in [
        (json!({ "students": 0 }), "students must be 1..=400"),
        (json!({ "students": 401 }), "students must be 1..=400"),
        (json!({ "students": "ten" }), "invalid type"),
        (json!({ "students": 2, "prefix": "a b" }), "invalid prefix"),
        (json!({ "students": 2, "stock": -1 }), "stock must be"),
        (json!({ "students": 2, "extra": 1 }), "extra"),
    ] {
        let (status, answer) = call(
            &fleet,
            0,
            Method::POST,
            "/admin/class",
            Some(TOKEN),
            body.clone(),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    let (status, answer) = call(
        &fleet,
        0,
        Method::POST,
        "/admin/rooms/no%20such/token",
        Some(TOKEN),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // No class yet: an empty overview, not an error; the join page's address all the same.
    let overview = fleet.get_admin_class().await;
    assert_eq!(
        (&overview["prefix"], &overview["rooms"]),
        (&Value::Null, &json!([]))
    );
    assert!(
        overview["join_page"].as_str().unwrap().ends_with("/join"),
        "{overview}"
    );
}

impl TestFleet {
    async fn get_admin_class(&self) -> Value {
        let (status, body) =
            call(self, 0, Method::GET, "/admin/class", Some(TOKEN), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }
}

/// The text of a QR code drawn by `qrcode`'s SVG renderer: its `M{x} {y}h{w}v{h}H{x}V{y}`
/// rectangles painted into a bitmap, which `rqrr` reads as a camera image would be read.
pub(crate) fn decode_qr_svg(svg: &str) -> String {
    let number = |s: &str, after: &str| -> usize {
        let start = s.find(after).unwrap() + after.len();
        let digits: String = s[start..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    let (width, height) = (number(svg, "width=\""), number(svg, "height=\""));
    let mut dark = vec![false; width * height];
    let path = &svg[svg.find(" d=\"").unwrap() + 4..];
    let path = &path[..path.find('"').unwrap()];
    for rect in path.split('M').filter(|r| !r.is_empty()) {
        // `x y h w v h H x V y`
        let values: Vec<usize> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        let (x, y, w, h) = (values[0], values[1], values[2], values[3]);
        for row in y..y + h {
            for col in x..x + w {
                dark[row * width + col] = true;
            }
        }
    }
    let mut image = rqrr::PreparedImage::prepare_from_greyscale(width, height, |x, y| {
        if dark[y * width + x] {
            0
        } else {
            255
        }
    });
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    grids[0].decode().unwrap().1
}

/// `up --class 2` through nginx: the tokens are in files only their owner may read, the
/// banner names the files and prints no token; the instances (logging at debug) and nginx's
/// access log never see one, used or refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_keeps_the_class_tokens_in_files_and_no_log_ever_holds_a_token() {
    use std::os::unix::fs::PermissionsExt;

    use crate::up::Up;
    let port = oversell_client::ports::free_port().unwrap().to_string();
    let up = Up::spawn_with_env(
        &["--instances", "2", "--port", &port, "--class", "2"],
        &[("RUST_LOG", "oversell=debug,tower_http=debug")],
    );
    let url = format!("http://127.0.0.1:{port}");
    up.line(&format!("ready: {url}"), Duration::from_secs(90))
        .await;
    let run_dir = std::path::PathBuf::from(up.banner("run dir").await.0);
    // Beside the class, where the presenter's view is.
    let presenter = up.banner("presenter's view").await.0;
    assert_eq!(presenter, format!("{url}/present.html"));
    let table = up.room_tokens().await;
    assert_eq!(table.len(), 2, "{table:?}");
    let tokens: Vec<String> = table.iter().map(|row| row[1].clone()).collect();
    for row in &table {
        assert_eq!(row[2], format!("{url}/?room={}#token={}", row[0], row[1]));
    }
    let admin_token = up.admin_token().await;
    for file in [
        up.banner("admin token file").await.0,
        up.banner("room tokens file").await.0,
    ] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{file}");
    }

    let client = crate::helpers::http_client();
    let send = |method: Method, path: &str, token: &str, body: Value| {
        client
            .request(method, format!("{url}{path}"))
            .bearer_auth(token)
            .json(&body)
            .send()
    };
    let status = |resp: reqwest::Response| resp.status();
    let reset = json!({ "stock": 5 });
    let mine = &tokens[0];
    let asked = [
        (Method::GET, "/admin/whoami", StatusCode::OK),
        (Method::POST, "/admin/reset?room=student-01", StatusCode::OK),
        (
            Method::POST,
            "/admin/reset?room=student-02",
            StatusCode::FORBIDDEN,
        ),
        (Method::GET, "/admin/class", StatusCode::FORBIDDEN),
    ];
    for (method, path, expected) in asked {
        let resp = send(method, path, mine, reset.clone()).await.unwrap();
        assert_eq!(status(resp), expected, "{path}");
    }
    let wrong = format!("{}x", tokens[1]);
    let resp = send(Method::GET, "/admin/whoami", &wrong, json!({})).await;
    assert_eq!(status(resp.unwrap()), StatusCode::UNAUTHORIZED);
    // The join link as a browser follows it: the fragment stays on the client.
    let resp = client.get(&table[0][2]).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);

    // nginx writes a request's line once the answer has gone: wait for the last one.
    let log = run_dir.join("access.log");
    eventually(Duration::from_secs(10), || async {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("/?room=student-01 "))
    })
    .await;
    let access_log = std::fs::read_to_string(&log).unwrap();
    assert!(access_log.contains("/admin/whoami"), "{access_log}");
    // Instances log their requests at debug: there is something to search.
    eventually(Duration::from_secs(10), || async {
        up.output().iter().any(|l| l.contains("/admin/reset"))
    })
    .await;
    let output = up.output();
    for token in tokens.iter().chain([&wrong, &admin_token]) {
        let bare = token.trim_start_matches("room-");
        assert!(!access_log.contains(bare), "token in nginx's access log");
        let printed: Vec<&String> = output.iter().filter(|l| l.contains(bare)).collect();
        assert!(printed.is_empty(), "a token on the screen: {printed:?}");
    }
}

/// `--show-tokens`: the banner prints the admin token and the class's table as well as naming
/// their files, for a terminal nobody else reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_with_show_tokens_prints_the_tokens_beside_their_files() {
    use crate::up::Up;
    let up = Up::spawn(&[
        "--instances",
        "1",
        "--port",
        "0",
        "--class",
        "1",
        "--show-tokens",
    ]);
    up.line("ready: ", Duration::from_secs(90)).await;
    let printed = up.banner("admin token").await.0;
    assert_eq!(printed, up.admin_token().await);
    let [room, token, link] = up.room_tokens().await.remove(0);
    let row = up.line(&format!("{room} "), Duration::from_secs(1)).await;
    let row: Vec<&str> = row.split_whitespace().take(3).collect();
    assert_eq!(row, [room.as_str(), token.as_str(), link.as_str()]);
}
