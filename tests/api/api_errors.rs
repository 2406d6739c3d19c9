//! Bad input gets a precise status and a JSON error, and changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::{spawn_fleet, TOKEN};

enum Auth {
    None,
    Wrong,
    Right,
}

struct Case {
    method: Method,
    path: &'static str,
    auth: Auth,
    body: &'static str,
    status: StatusCode,
    error: &'static str,
}

fn case(
    method: Method,
    path: &'static str,
    auth: Auth,
    body: &'static str,
    status: u16,
    error: &'static str,
) -> Case {
    Case {
        method,
        path,
        auth,
        body,
        status: StatusCode::from_u16(status).unwrap(),
        error,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_precise_status_and_json_error_and_lose_nothing() {
    use Auth::*;
    let fleet = spawn_fleet(1).await;
    fleet.reset(10).await;
    // A valid order padded past the 64 KiB the API reads: refused for its size alone.
    let oversized: &'static str = format!("{{\"qty\":1}}{}", " ".repeat(64 * 1024)).leak();
    let cases = [
        case(
            Method::POST,
            "/sale",
            None,
            oversized,
            413,
            "payload_too_large",
        ),
        case(
            Method::PUT,
            "/admin/config",
            Right,
            oversized,
            413,
            "payload_too_large",
        ),
        case(Method::POST, "/sale", None, "{", 400, "bad_request"),
        case(Method::POST, "/sale", None, "[1,2]", 400, "bad_request"),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"qty":"one"}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"qty":0}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"qty":11}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"qty":-3}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"qty":1.5}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"buyer":42}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"buyer":""}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale",
            None,
            r#"{"price":1}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/sale?room=no%20spaces",
            None,
            "",
            400,
            "bad_request",
        ),
        case(Method::GET, "/sale", None, "", 405, "method_not_allowed"),
        case(
            Method::DELETE,
            "/state",
            None,
            "",
            405,
            "method_not_allowed",
        ),
        case(
            Method::GET,
            "/admin/reset",
            Right,
            "",
            405,
            "method_not_allowed",
        ),
        case(Method::GET, "/no/such/page", None, "", 404, "not_found"),
        case(Method::GET, "/ledger?limit=0", None, "", 400, "bad_request"),
        case(
            Method::POST,
            "/admin/reset",
            None,
            r#"{"stock":5}"#,
            401,
            "unauthorized",
        ),
        case(
            Method::POST,
            "/admin/reset",
            Wrong,
            r#"{"stock":5}"#,
            401,
            "unauthorized",
        ),
        case(Method::POST, "/admin/reset", Right, "", 400, "bad_request"),
        case(
            Method::POST,
            "/admin/reset",
            Right,
            r#"{"stock":-1}"#,
            400,
            "bad_request",
        ),
        case(
            Method::POST,
            "/admin/reset",
            Right,
            r#"{"stock":"5"}"#,
            400,
            "bad_request",
        ),
        case(
            Method::PUT,
            "/admin/tier",
            None,
            r#"{"tier":"none"}"#,
            401,
            "unauthorized",
        ),
        case(
            Method::PUT,
            "/admin/tier",
            Right,
            r#"{"tier":"redlock"}"#,
            400,
            "bad_request",
        ),
        case(
            Method::PUT,
            "/admin/tier",
            Right,
            r#"{"tier":7}"#,
            400,
            "bad_request",
        ),
        case(
            Method::PUT,
            "/admin/config",
            Right,
            r#"{"ttl_ms":0}"#,
            400,
            "bad_request",
        ),
        case(
            Method::PUT,
            "/admin/config",
            Right,
            r#"{"wait":"poll"}"#,
            400,
            "bad_request",
        ),
        case(
            Method::PUT,
            "/admin/config",
            Right,
            r#"{"colour":"red"}"#,
            400,
            "bad_request",
        ),
        case(
            Method::PUT,
            "/admin/config",
            Wrong,
            r#"{"ttl_ms":100}"#,
            401,
            "unauthorized",
        ),
    ];
    let before = fleet.state().await;
    for c in &cases {
        let mut req = fleet
            .client
            .request(c.method.clone(), format!("{}{}", fleet.url(0), c.path))
            .body(c.body);
        match c.auth {
            Auth::None => {}
            Auth::Wrong => req = req.bearer_auth("not-the-token"),
            Auth::Right => req = req.bearer_auth(TOKEN),
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        let shown: String = c.body.chars().take(60).collect();
        let label = format!("{} {} {shown} ({} bytes)", c.method, c.path, c.body.len());
        assert_eq!(status, c.status, "{label}: {body}");
        assert_eq!(body["error"], c.error, "{label}: {body}");
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{label}: {body}"
        );
    }
    let after = fleet.state().await;
    assert_eq!(before, after, "bad requests changed nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tier_error_lists_the_valid_ids() {
    let fleet = spawn_fleet(1).await;
    let resp = fleet
        .client
        .put(format!("{}/admin/tier", fleet.url(0)))
        .bearer_auth(TOKEN)
        .body(r#"{"tier":"chubby"}"#)
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    for id in [
        "none",
        "local",
        "setnx-expire",
        "reentrant-watchdog",
        "atomic-deduct",
    ] {
        assert!(message.contains(id), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sold_out_sale_is_a_409_with_the_stock_left() {
    let fleet = spawn_fleet(1).await;
    fleet.reset(0).await;
    let (status, body) = fleet.sale(0, "late").await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "sold_out");
    assert_eq!(body["stock_left"], 0);
    assert_eq!(fleet.state().await["orders"], 0);
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_and_a_wrong_token_is_a_401() {
    let fleet = spawn_fleet(1).await;
    let reset = |authorization: String| {
        fleet
            .client
            .post(format!("{}/admin/reset", fleet.url(0)))
            .header("authorization", authorization)
            .body(r#"{"stock":3}"#)
            .send()
    };
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let resp = reset(format!("{scheme} {TOKEN}")).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{scheme}");
    }
    for wrong in [
        format!("bearer {TOKEN}x"),
        format!("bearer {}", &TOKEN[1..]),
        format!("Basic {TOKEN}"),
        "bearer".to_owned(),
    ] {
        let resp = reset(wrong.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{wrong}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "unauthorized", "{wrong}");
    }
}

/// Through nginx, every 405 names the path's methods in `Allow` (RFC 9110) and is the API's
/// JSON, TRACE included, which nginx refuses itself before any location.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_405_through_nginx_names_the_allowed_methods() {
    let fleet = crate::scenarios::start_fleet(1).await;
    let client = crate::helpers::http_client();
    for (method, path, allow) in [
        ("TRACE", "/sale", "POST"),
        ("TRACE", "/state", "GET,HEAD"),
        ("PATCH", "/sale", "POST"),
        ("DELETE", "/state", "GET,HEAD"),
    ] {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let url = format!("{}{path}", fleet.url());
        let response = client.request(method.clone(), url).send().await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        let allowed = response.headers().get("allow").cloned();
        assert_eq!(
            allowed.as_ref().map(|v| v.to_str().unwrap()),
            Some(allow),
            "{method} {path}"
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body["error"], "method_not_allowed",
            "{method} {path}: {body}"
        );
    }
    fleet.stop().await;
}
