//! A class survives `up`'s own crash: `up` killed with SIGKILL and started again on the same
//! port, without `--class`, reopens the class from its class dir with every room, every token,
//! the slips as printed (same links, same codes) and the stock as they were, and the same admin
//! token. A second `up` never shares a class dir.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{eventually, http_client};
use crate::join::slips;
use crate::up::{signal, Up};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_killed_and_started_again_without_class_keeps_every_room_token_working() {
    // The default class dir, under an XDG_STATE_HOME both runs share.
    let state = tempfile::tempdir().unwrap();
    let vars = [("XDG_STATE_HOME", state.path().to_str().unwrap())];
    let port = oversell_client::ports::free_port().unwrap().to_string();
    let url = format!("http://127.0.0.1:{port}");
    let mut first = Up::spawn_with_env(
        &["--instances", "1", "--port", &port, "--class", "2"],
        &vars,
    );
    first
        .line(&format!("ready: {url}"), Duration::from_secs(90))
        .await;
    let class_dir = PathBuf::from(first.banner("class dir").await.0);
    assert_eq!(
        class_dir,
        state.path().join("oversell").join(format!("up-{port}"))
    );
    let admin_token = first.admin_token().await;
    let rooms = first.room_tokens().await;
    assert_eq!(rooms.len(), 2, "{rooms:?}");
    let slips_file = PathBuf::from(first.banner("slips file").await.0);
    let slips_before = slips(&std::fs::read_to_string(&slips_file).unwrap());
    assert_eq!(slips_before.len(), 2);
    let client = http_client();
    // A change only the kept data can bring back: student-01's stock, set with its own token.
    let reset = client
        .post(format!("{url}/admin/reset?room=student-01"))
        .bearer_auth(&rooms[0][1])
        .json(&json!({ "stock": 7 }))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);

    signal(first.pid(), libc::SIGKILL);
    first.reap();
    // Its children die with it; the port is free once nginx has gone.
    eventually(Duration::from_secs(20), || async {
        std::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().unwrap())).is_ok()
    })
    .await;

    let second = Up::spawn_with_env(
        &["--instances", "1", "--port", &port, "--show-tokens"],
        &vars,
    );
    second
        .line(&format!("ready: {url}"), Duration::from_secs(90))
        .await;
    assert_eq!(PathBuf::from(second.banner("class dir").await.0), class_dir);
    let reopened = second.line("class: reopened", Duration::from_secs(1)).await;
    assert!(reopened.contains("2 rooms, 2 with a token"), "{reopened}");
    assert_eq!(
        second.admin_token().await,
        admin_token,
        "the same admin token"
    );
    assert_eq!(
        second.room_tokens().await,
        rooms,
        "the same room tokens file"
    );
    // The slips the teacher printed still open their rooms: the banner names the same file,
    // holding the same links and codes, and each slip is its room's row.
    assert_eq!(
        PathBuf::from(second.banner("slips file").await.0),
        slips_file
    );
    let slips_after = slips(&std::fs::read_to_string(&slips_file).unwrap());
    assert_eq!(
        slips_after, slips_before,
        "the same slips after the restart"
    );
    for (slip, [room, _, link]) in slips_after.iter().zip(&rooms) {
        assert_eq!((&slip.room, &slip.link, &slip.qr), (room, link, link));
    }
    // --show-tokens prints the kept table, as the class was made.
    let [room, token, link] = &rooms[1];
    let row = second
        .line(&format!("{room} "), Duration::from_secs(1))
        .await;
    assert_eq!(
        row.split_whitespace().take(3).collect::<Vec<_>>(),
        [room, token, link]
    );
    // The room's join code (last on its row) is its slip's, and every slip's code gets its
    // room back after the restart.
    assert_eq!(
        row.split_whitespace().nth(3),
        Some(slips_after[1].code.as_str())
    );
    for slip in &slips_after {
        let joined = client
            .post(format!("{url}/join/session"))
            .json(&json!({ "code": slip.code }))
            .send()
            .await
            .unwrap();
        assert_eq!(joined.status(), StatusCode::OK, "{}'s code", slip.room);
        let joined: Value = joined.json().await.unwrap();
        assert_eq!(joined["room"], slip.room.as_str());
    }
    for [room, token, _] in &rooms {
        let whoami = client
            .get(format!("{url}/admin/whoami"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(whoami.status(), StatusCode::OK, "{room}'s token");
        let body: Value = whoami.json().await.unwrap();
        assert_eq!(body, json!({ "scope": "room", "room": room }));
    }
    let state_of_01: Value = client
        .get(format!("{url}/state?room=student-01"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state_of_01["stock"], 7, "{state_of_01}");
    let class = client
        .get(format!("{url}/admin/class"))
        .bearer_auth(&admin_token)
        .send()
        .await
        .unwrap();
    assert_eq!(class.status(), StatusCode::OK);

    // A third `up` given the same class dir while the second holds it is refused.
    let third = Up::spawn(&[
        "--instances",
        "1",
        "--port",
        "0",
        "--class-dir",
        class_dir.to_str().unwrap(),
    ]);
    let refused = third.line("error: ", Duration::from_secs(30)).await;
    assert!(
        refused.contains(&format!(
            "is in use by another oversell up (pid {})",
            second.pid()
        )),
        "{refused}"
    );
}
