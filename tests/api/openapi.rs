//! `GET /openapi.json`: the document names every route the router has, and says of each what
//! the contract is (its tokens, its errors, the event stream as a stream).

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::spawn_fleet;

const METHODS: [&str; 5] = ["get", "post", "put", "delete", "patch"];

/// `(method, path)` of every operation in the document.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if item.get(method).is_some() {
                ops.insert((method.to_owned(), path.clone()));
            }
        }
    }
    ops
}

/// The router's routes as `routes/mod.rs` registers them: every one through `routes!`, which
/// adds its entry to the document. A route added any other way would have none.
#[test]
fn the_router_registers_routes_only_with_their_entries() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/routes");
    for file in std::fs::read_dir(dir).unwrap() {
        let path = file.unwrap().path();
        let source = std::fs::read_to_string(&path).unwrap();
        for call in [
            ".route(",
            ".route_service(",
            ".nest(",
            ".nest_service(",
            ".merge(",
        ] {
            assert!(
                !source.contains(call),
                "{}: `{call}` adds a route without an OpenAPI entry; register it with `routes!`",
                path.display()
            );
        }
    }
}

#[tokio::test]
async fn the_document_names_every_route_and_only_routes_the_router_has() {
    let fleet = spawn_fleet(1).await;
    let (status, doc) = fleet
        .call(0, Method::GET, "/openapi.json", false, Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let ops = operations(&doc);
    for required in [
        "/sale",
        "/state",
        "/events",
        "/admin/reset",
        "/openapi.json",
    ] {
        assert!(ops.iter().any(|(_, p)| p == required), "{required} missing");
    }
    let paths: BTreeSet<&String> = ops.iter().map(|(_, p)| p).collect();
    for path in paths {
        let url = format!(
            "{}{}",
            fleet.url(0),
            path.replace("{id}", "x").replace("{room}", "x")
        );
        for method in METHODS {
            let documented = ops.contains(&(method.to_owned(), path.clone()));
            let resp = fleet
                .client
                .request(method.to_uppercase().parse().unwrap(), &url)
                .send()
                .await
                .unwrap();
            let status = resp.status();
            // Headers only: `/events` and `/poll/events` are streams that never end.
            let body = if status == StatusCode::OK && path.ends_with("/events") {
                Value::Null
            } else {
                resp.json().await.unwrap_or(Value::Null)
            };
            if documented {
                // Answered by the route, not by the dashboard's fallback or the 405.
                assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
                assert_ne!(body["error"], "not_found", "{method} {path}: {body}");
            } else {
                assert_eq!(
                    status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {path} is not documented: {body}"
                );
            }
        }
    }
}

/// The document as an instance serves it.
async fn served_document() -> Value {
    let fleet = spawn_fleet(1).await;
    let (status, doc) = fleet
        .call(0, Method::GET, "/openapi.json", false, Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    doc
}

#[tokio::test]
async fn each_operation_says_who_may_call_it_and_how_it_fails() {
    let doc = served_document().await;
    let schemes = &doc["components"]["securitySchemes"];
    for scheme in ["admin_token", "room_token"] {
        assert_eq!(schemes[scheme]["type"], "http", "{scheme}");
        assert_eq!(schemes[scheme]["scheme"], "bearer", "{scheme}");
    }
    let names = |op: &Value| -> BTreeSet<String> {
        op["security"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|alt| alt.as_object().unwrap().keys().cloned())
            .collect()
    };
    let both: BTreeSet<String> = ["admin_token".into(), "room_token".into()].into();
    let admin: BTreeSet<String> = ["admin_token".into()].into();
    assert_eq!(names(&doc["paths"]["/admin/reset"]["post"]), both);
    assert_eq!(names(&doc["paths"]["/admin/class"]["delete"]), admin);
    assert_eq!(
        names(&doc["paths"]["/admin/instances/{id}/crash"]["post"]),
        admin
    );
    assert!(names(&doc["paths"]["/sale"]["post"]).is_empty());

    let reset = &doc["paths"]["/admin/reset"]["post"]["responses"];
    for code in ["200", "400", "401", "403", "409", "413", "429", "503"] {
        assert!(reset.get(code).is_some(), "POST /admin/reset has no {code}");
    }
    for code in ["429", "503"] {
        assert!(
            reset[code]["headers"].get("Retry-After").is_some(),
            "{code} without Retry-After"
        );
        let schema = &reset[code]["content"]["application/json"]["schema"]["$ref"];
        assert_eq!(schema, "#/components/schemas/ErrorBody");
    }
    // Every operation answers errors in the one shape.
    for (method, path) in operations(&doc) {
        let responses = doc["paths"][&path][&method]["responses"]
            .as_object()
            .unwrap();
        let errors = responses.iter().filter(|(code, _)| code.as_str() >= "400");
        for (code, answer) in errors {
            assert!(
                answer["content"]["application/json"]["schema"].is_object(),
                "{method} {path} {code}: no JSON body"
            );
        }
    }
    let events = &doc["paths"]["/events"]["get"]["responses"]["200"]["content"];
    assert!(events.get("text/event-stream").is_some(), "{events}");
    let sale = &doc["paths"]["/sale"]["post"]["responses"]["200"]["content"]["application/json"];
    assert_eq!(sale["schema"]["$ref"], "#/components/schemas/Sold");
}

/// Every `$ref` in the document, with where it stands.
fn refs<'a>(at: &str, value: &'a Value, found: &mut Vec<(String, &'a str)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child.as_str()) {
                    ("$ref", Some(target)) => found.push((at.to_owned(), target)),
                    _ => refs(&format!("{at}/{key}"), child, found),
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                refs(&format!("{at}/{i}"), child, found);
            }
        }
        _ => {}
    }
}

/// A schema named in a parameter and not registered leaves a `$ref` to nothing, which a
/// client's validator refuses the whole document for.
#[tokio::test]
async fn every_reference_in_the_document_leads_somewhere() {
    let doc = served_document().await;
    let mut found = Vec::new();
    refs("", &doc, &mut found);
    assert!(!found.is_empty(), "the document refers to no schema at all");
    let dangling: Vec<String> = found
        .iter()
        .filter(|(_, target)| {
            let pointer = target.strip_prefix('#').unwrap_or(target);
            doc.pointer(pointer).is_none()
        })
        .map(|(at, target)| format!("{at} → {target}"))
        .collect();
    assert!(dangling.is_empty(), "references to nothing: {dangling:?}");
}

/// The bounds the service enforces are the document's: a vote's option runs from 0 to the
/// largest index any question of the deck has, so a client generating from the document never
/// sends an index no question could have (a number past `usize` was a 400 "floating point").
#[tokio::test]
async fn a_votes_option_is_bounded_by_the_deck_in_the_document() {
    let doc = served_document().await;
    let option = doc
        .pointer("/components/schemas/VoteBody/properties/option")
        .unwrap_or_else(|| panic!("no VoteBody.option: {}", doc["components"]["schemas"]));
    let widest = workshop::scenario::deck()
        .map(|q| q.options.len())
        .max()
        .expect("a deck");
    assert_eq!(option["minimum"], 0, "{option}");
    assert_eq!(option["maximum"], widest as u64 - 1, "{option}");
}
