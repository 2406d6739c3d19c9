//! A run's whole history, recorded from a real fleet: what `loadtest scenario --history`
//! writes, what the fleet keeps of the runs it made itself (`GET /admin/runs/{id}/history`),
//! and that both say what the ground truth says, read independently of the checker.

use oversell_api::history::{Line, Outcome, Request, Section};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::scenarios::{start_fleet, TOKEN};

/// The lines of a history in JSON Lines, each a known `type`.
fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}: {line}", i + 1))
        })
        .collect()
}

fn requests(lines: &[Line]) -> Vec<&Request> {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Request(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn sections(lines: &[Line]) -> Vec<&Section> {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Section(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Two closed sections whose times intersect, found by brute force: an independent reading.
fn an_overlapping_pair<'a>(sections: &[&'a Section]) -> Option<(&'a Section, &'a Section)> {
    let closed: Vec<&Section> = sections
        .iter()
        .copied()
        .filter(|s| s.exit_us.is_some_and(|exit| exit > s.enter_us))
        .collect();
    for (i, a) in closed.iter().enumerate() {
        for b in &closed[i + 1..] {
            let (ae, be) = (a.exit_us.unwrap_or(0), b.exit_us.unwrap_or(0));
            if a.enter_us < be && b.enter_us < ae {
                return Some((a, b));
            }
        }
    }
    None
}

#[tokio::test]
async fn a_chapter_run_with_history_writes_every_request_and_section_it_had() {
    let fleet = start_fleet(3).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none-race.jsonl");
    let out = workshop::run_cli([
        "loadtest",
        "scenario",
        "none-race",
        "--url",
        fleet.url(),
        "--token",
        TOKEN,
        "--lang",
        "en",
        "--history",
        path.to_str().unwrap(),
    ])
    .await
    .expect("the chapter runs");
    assert!(out.contains("PASS  none-race"), "{out}");
    let lines = parse(&std::fs::read_to_string(&path).unwrap());
    let Some(Line::Run(run)) = lines.first() else {
        panic!("the first line is the run: {:?}", lines.first());
    };
    assert_eq!((run.v, run.chapter.as_deref()), (2, Some("none-race")));
    assert_eq!(run.tier, "none");
    let Some(Line::End(end)) = lines.last() else {
        panic!("the last line is the end: {:?}", lines.last());
    };
    let state = crate::helpers::state(fleet.url()).await;
    assert_eq!(end.stock, state["stock"].as_i64());
    let scenario = workshop::scenario::find("none-race").unwrap();
    let requests = requests(&lines);
    assert_eq!(requests.len(), scenario.buyers, "one line per buyer");
    let sections = sections(&lines);
    let sold: Vec<&&Section> = sections
        .iter()
        .filter(|s| s.outcome == Outcome::Sold)
        .collect();
    assert_eq!(
        sold.len() as i64,
        state["orders"].as_i64().unwrap(),
        "a sold section per ledger order"
    );
    // Every acknowledged sale is a sold section carrying its order id and buyer.
    for r in requests.iter().filter(|r| r.status == 200) {
        let order = r.order_id.as_deref().expect("a 200 names its order");
        let s = sold
            .iter()
            .find(|s| s.order_id.as_deref() == Some(order))
            .unwrap_or_else(|| panic!("order {order} has no sold section"));
        assert_eq!(s.buyer.as_deref(), Some(r.buyer.as_str()));
        assert_eq!(s.read.map(|read| read - 1), s.wrote, "{s:?}");
        assert!(r.call_us <= r.return_us);
    }
    assert!(
        state["overlaps"].as_i64().unwrap() > 0,
        "no lock: sections overlapped"
    );
    let (a, b) = an_overlapping_pair(&sections).expect("the history shows an overlapping pair");
    assert_ne!(a.owner, b.owner);
}

#[tokio::test]
async fn the_fleet_keeps_the_history_of_a_run_it_made_for_its_room_only() {
    let fleet = start_fleet(3).await;
    let client = crate::helpers::http_client();
    let call = |method: Method, path: &str, token: Option<&str>, body: Option<Value>| {
        let mut req = client.request(method, format!("{}{path}", fleet.url()));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        req.send()
    };
    let ran: Value = call(
        Method::POST,
        "/admin/scenario",
        Some(TOKEN),
        Some(json!({ "id": "fenced-freeze" })),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let id = ran["run_id"].as_str().unwrap_or_else(|| panic!("{ran}"));
    let listed: Value = call(Method::GET, "/admin/runs", Some(TOKEN), None)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["runs"][0]["id"], id, "{listed}");
    assert_eq!(listed["runs"][0]["chapter"], "fenced-freeze");
    let answer = call(
        Method::GET,
        &format!("/admin/runs/{id}/history"),
        Some(TOKEN),
        None,
    )
    .await
    .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let lines = parse(&answer.text().await.unwrap());
    let faults = lines
        .iter()
        .filter(|l| matches!(l, Line::Fault(f) if f.kind == "freeze" && f.to_us > Some(f.from_us)))
        .count();
    assert_eq!(faults, 1, "the freeze as it struck, with its length");
    let refused = sections(&lines)
        .iter()
        .filter(|s| s.outcome == Outcome::StaleRefused)
        .count() as i64;
    let state = crate::helpers::state(fleet.url()).await;
    assert_eq!(refused, state["stale_writes_rejected"].as_i64().unwrap());
    assert!(refused > 0, "the frozen holder's write was refused");
    // An unknown run: a 404 naming it; no token: 401.
    let unknown = call(Method::GET, "/admin/runs/nope/history", Some(TOKEN), None)
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let body: Value = unknown.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap_or("").contains("nope"),
        "{body}"
    );
    let anonymous = call(
        Method::GET,
        &format!("/admin/runs/{id}/history"),
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    // The viewer of that run, under the pages' policy: the fleet's own script, the run as a
    // JSON block the browser never runs, every operation of the history in it.
    let view = call(
        Method::GET,
        &format!("/admin/runs/{id}/view?lang=zh"),
        Some(TOKEN),
        None,
    )
    .await
    .unwrap();
    assert_eq!(view.status(), StatusCode::OK);
    let policy = view.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"));
    let page = view.text().await.unwrap();
    assert!(page.contains(r#"<script src="/viewer.js"></script>"#));
    assert_eq!(
        page.matches("<script").count(),
        2,
        "the data block and /viewer.js, no inline script"
    );
    let open = r#"<script type="application/json" id="viewer-data">"#;
    let data = &page[page.find(open).unwrap() + open.len()..];
    let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
    let operations = lines
        .iter()
        .filter(|l| {
            matches!(
                l,
                Line::Request(_) | Line::Section(_) | Line::Lease(_) | Line::Fault(_)
            )
        })
        .count();
    assert_eq!(data["runs"][0]["ops"].as_array().unwrap().len(), operations);
    assert_eq!(data["lang"], "zh");
    let script = call(Method::GET, "/viewer.js", None, None).await.unwrap();
    assert_eq!(script.status(), StatusCode::OK);
    let unknown_beside = call(
        Method::GET,
        &format!("/admin/runs/{id}/view?beside=nope"),
        Some(TOKEN),
        None,
    )
    .await
    .unwrap();
    assert_eq!(unknown_beside.status(), StatusCode::NOT_FOUND);
    // Another room's token reads nothing of this room's runs.
    let class: Value = call(
        Method::POST,
        "/admin/class",
        Some(TOKEN),
        Some(json!({ "students": 1, "stock": 10 })),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let other = class["rooms"][0]["token"].as_str().unwrap().to_owned();
    let refused = call(
        Method::GET,
        &format!("/admin/runs/{id}/history"),
        Some(&other),
        None,
    )
    .await
    .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let refused = call(
        Method::GET,
        &format!("/admin/runs/{id}/view"),
        Some(&other),
        None,
    )
    .await
    .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}
