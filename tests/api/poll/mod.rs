//! The class vote: rooms vote with their tokens in two rounds, every count exact; bad input
//! gets its code; nobody reads another room's vote; an instance restarted mid-vote loses
//! nothing; the stream sends the open question on connect and each change; a reveal runs the
//! chapter and lands where its question's rule says; the results show both rounds; closing
//! the class removes the vote; every view carries the poll's version, which grows with every
//! change; a closed round calls a random room that voted a given option.

mod call;
mod every_room;
mod hidden;
mod reveal;
mod stream;
mod version;
mod votes;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// A request to `base` with `token` (none: no `Authorization`) and a JSON body (none: no body).
pub(crate) async fn call(
    client: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = client.request(method, format!("{base}{path}"));
    if let Some(body) = body {
        req = req.json(&body);
    }
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Like [`call`], and the answer must be a 200.
pub(crate) async fn ok(
    client: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Value {
    let (status, answer) = call(client, base, method, path, token, body).await;
    assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    answer
}

/// Opens the class's poll on `chapter`'s question, as the admin.
pub(crate) async fn open_poll(client: &reqwest::Client, base: &str, chapter: &str) -> Value {
    let open = Some(json!({ "chapter": chapter }));
    let token = Some(crate::helpers::TOKEN);
    ok(client, base, Method::POST, "/admin/class/poll", token, open).await
}

/// One room of a class and its token.
#[derive(Clone, Debug)]
pub(crate) struct Seat {
    pub room: String,
    pub token: String,
}

/// Makes a class of `students` through `base` with the admin `token`.
pub(crate) async fn make_class(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    students: usize,
) -> Vec<Seat> {
    let made = ok(
        client,
        base,
        Method::POST,
        "/admin/class",
        Some(token),
        Some(json!({ "students": students, "stock": 20 })),
    )
    .await;
    made["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Seat {
            room: t["room"].as_str().unwrap().to_owned(),
            token: t["token"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// The seat's vote for `option`: status and answer.
pub(crate) async fn vote(
    client: &reqwest::Client,
    base: &str,
    seat: &Seat,
    option: usize,
) -> (StatusCode, Value) {
    call(
        client,
        base,
        Method::POST,
        &format!("/poll?room={}", seat.room),
        Some(&seat.token),
        Some(json!({ "option": option })),
    )
    .await
}

/// Votes per option of what each seat voted last.
pub(crate) fn tally(choices: &[usize], options: usize) -> Vec<u64> {
    let mut counts = vec![0; options];
    for &c in choices {
        counts[c] += 1;
    }
    counts
}

/// The counts of `round` (from 1) in an admin view.
pub(crate) fn counts_of(view: &Value, round: usize) -> Vec<u64> {
    view["rounds"][round - 1]["counts"]
        .as_array()
        .unwrap_or_else(|| panic!("no round {round}: {view}"))
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect()
}

/// Asserts an error answer: its status, its code, and a message in the API's shape.
pub(crate) fn assert_refused(
    answer: &(StatusCode, Value),
    status: StatusCode,
    code: &str,
    what: &str,
) {
    assert_eq!(answer.0, status, "{what}: {}", answer.1);
    assert_eq!(answer.1["error"], code, "{what}: {}", answer.1);
    let message = answer.1["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{what}: {}", answer.1);
}
