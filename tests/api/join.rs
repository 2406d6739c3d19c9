//! Joining a class from a phone: `up --class 60` writes a page of slips, each with a QR code
//! of its own room's join link (decoded here) and a short code; the projector's pages and the
//! banner hold no token; a student who lost the tab gets back in by the code through nginx,
//! a wrong code is a JSON 404, and attempts past the limits (per address, for the fleet) a
//! JSON 429.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::class::decode_qr_svg;
use crate::up::Up;

/// One slip of the slips page: its room, QR code's text, join code and printed link.
#[derive(Debug, PartialEq)]
pub(crate) struct Slip {
    pub(crate) room: String,
    pub(crate) qr: String,
    pub(crate) code: String,
    pub(crate) link: String,
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    let start = text
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in {text}"))
        + open.len();
    let len = text[start..].find(close).unwrap();
    &text[start..start + len]
}

/// Every slip of a slips page, its QR code decoded as a camera would read it.
pub(crate) fn slips(html: &str) -> Vec<Slip> {
    html.split("<section class=\"slip\" data-room=\"")
        .skip(1)
        .map(|part| {
            let svg = format!("<svg{}</svg>", between(part, "<svg", "</svg>"));
            Slip {
                room: part[..part.find('"').unwrap()].to_owned(),
                qr: decode_qr_svg(&svg),
                code: between(part, "<p class=\"code\">", "</p>").to_owned(),
                link: between(part, "<a href=\"", "\"").replace("&amp;", "&"),
            }
        })
        .collect()
}

async fn start(students: &str) -> (Up, String) {
    let port = oversell_client::ports::free_port().unwrap().to_string();
    let up = Up::spawn(&["--instances", "2", "--port", &port, "--class", students]);
    let url = format!("http://127.0.0.1:{port}");
    up.line(&format!("ready: {url}"), Duration::from_secs(90))
        .await;
    (up, url)
}

/// A client sending from `ip` (127.0.0.2, .3 … are loopback too, but no exempt host: nginx
/// counts each as a student's address and names it to the instances).
fn from(ip: &str) -> reqwest::Client {
    crate::helpers::http_client_builder()
        .local_address(Some(ip.parse().unwrap()))
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn whoami(client: &reqwest::Client, url: &str, token: &str) -> Value {
    let answer = client
        .get(format!("{url}/admin/whoami"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    answer.json().await.unwrap()
}

async fn join(client: &reqwest::Client, url: &str, code: &str) -> (StatusCode, Value, String) {
    let answer = client
        .post(format!("{url}/join/session"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    let status = answer.status();
    let retry = answer
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, answer.json().await.unwrap_or(Value::Null), retry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_class_60_writes_60_slips_whose_qr_codes_each_open_their_own_room() {
    let (up, url) = start("60").await;
    let file = up.banner("slips file").await.0;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{file}");
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.contains("@page { size: A4"), "a print stylesheet, A4");
    let slips = slips(&html);
    assert_eq!(slips.len(), 60);
    let table = up.room_tokens().await;
    let client = from("127.0.0.2");
    for (slip, [room, token, link]) in slips.iter().zip(&table) {
        assert_eq!(&slip.room, room);
        assert_eq!(&slip.qr, link, "the QR code is the room's own join link");
        assert_eq!(&slip.link, link, "the printed link is the QR code's");
        assert_eq!(*link, format!("{url}/?room={room}#token={token}"));
        assert!(slip.code.len() == 9 && &slip.code[4..5] == "-", "{slip:?}");
        // The link's token opens this room and no other.
        let who = whoami(&client, &url, token).await;
        assert_eq!(who, json!({ "scope": "room", "room": room }));
    }
    let distinct = |f: fn(&Slip) -> &str| slips.iter().map(f).collect::<BTreeSet<_>>().len();
    assert_eq!(distinct(|s| &s.qr), 60, "60 distinct QR codes");
    assert_eq!(distinct(|s| &s.code), 60, "60 distinct codes");
    // What the projector may show holds no token: the banner, the pages, the join address.
    let banner = up.output().join("\n");
    assert!(
        banner.contains(&format!("the projector shows {url}/join only")),
        "{banner}"
    );
    for page in ["/class", "/present.html", "/join", "/"] {
        let text = client
            .get(format!("{url}{page}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for [_, token, _] in &table {
            assert!(!text.contains(token.as_str()), "{page} holds a token");
        }
    }
    for [_, token, _] in &table {
        assert!(
            !banner.contains(token.as_str()),
            "the banner prints a token"
        );
    }
    // A slip's code gets its room back.
    let (status, session, _) = join(&client, &url, &slips[41].code).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert_eq!(session["room"], slips[41].room.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_tab_gets_back_in_by_its_code_and_guesses_meet_the_limits() {
    let (up, url) = start("2").await;
    let admin = up.admin_token().await;
    let html = std::fs::read_to_string(up.banner("slips file").await.0).unwrap();
    let slips = slips(&html);
    let student = from("127.0.0.2");

    // Typed as a phone types it: lower case, no dash.
    let typed = slips[0].code.to_lowercase().replace('-', "");
    let (status, session, _) = join(&student, &url, &typed).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert_eq!(session["room"], "student-01");
    let token = session["token"].as_str().unwrap();
    assert_eq!(
        session["dashboard"],
        format!("/?room=student-01#token={token}")
    );
    assert_eq!(
        whoami(&student, &url, token).await,
        json!({ "scope": "room", "room": "student-01" })
    );
    let tier = |room: &str, bearer: &str| {
        student
            .put(format!("{url}/admin/tier?room={room}"))
            .bearer_auth(bearer.to_owned())
            .json(&json!({ "tier": "none" }))
            .send()
    };
    assert_eq!(
        tier("student-01", token).await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        tier("student-02", token).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    // The slip's own link keeps working beside the session.
    let slip_token = slips[0].link.split("#token=").nth(1).unwrap();
    assert_eq!(
        whoami(&student, &url, slip_token).await["room"],
        "student-01"
    );

    // A code no room has: a JSON 404; one that is no code at all: a JSON 400 naming the field.
    let (status, body, _) = join(&student, &url, "ZZZZ-ZZZZ").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_code")),
        "{body}"
    );
    let (status, body, _) = join(&student, &url, "not a code!").await;
    assert_eq!(
        (status, body["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("code")),
        "{body}"
    );

    // A new token for the room ends the old code and the session it gave, with the token.
    let rotated: Value = student
        .post(format!("{url}/admin/rooms/student-01/token"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let gone = student
        .get(format!("{url}/admin/whoami"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        join(&student, &url, &slips[0].code).await.0,
        StatusCode::NOT_FOUND
    );
    let (status, again, _) = join(&student, &url, rotated["code"].as_str().unwrap()).await;
    assert_eq!(
        (status, again["room"].as_str()),
        (StatusCode::OK, Some("student-01"))
    );
    let mut counted = 4; // the fleet's attempts so far: 2 joined, 2 unknown (a 400 is not one)

    // One address: 20 attempts a minute, then a JSON 429 with Retry-After.
    let guesser = from("127.0.0.3");
    for n in 0..20 {
        let (status, body, _) = join(&guesser, &url, &format!("ZZZZ-ZZ{n:02}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "attempt {n}: {body}");
    }
    counted += 20;
    let (status, body, retry) = join(&guesser, &url, "ZZZZ-ZZZ0").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"], "too_many_requests", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("join codes"),
        "{body}"
    );
    let retry: u64 = retry.parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    // Even the right code is refused from there until the minute is over.
    let right = rotated["code"].as_str().unwrap();
    assert_eq!(
        join(&guesser, &url, right).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );

    // Another address has its own 20; the whole fleet stops at 120, whatever the addresses.
    let mut first_refused = None;
    'addresses: for last in 10..30 {
        let neighbour = from(&format!("127.0.0.{last}"));
        for n in 0..20 {
            let (status, body, _) = join(&neighbour, &url, &format!("ZZZZ-Z{n:03}")).await;
            match status {
                StatusCode::NOT_FOUND => counted += 1,
                StatusCode::TOO_MANY_REQUESTS => {
                    assert!(
                        body["message"].as_str().unwrap().contains("whole fleet"),
                        "{body}"
                    );
                    first_refused = Some(counted);
                    break 'addresses;
                }
                other => panic!("{other}: {body}"),
            }
        }
    }
    assert_eq!(
        first_refused,
        Some(120),
        "the fleet's 120 attempts a minute"
    );
}
