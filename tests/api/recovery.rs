//! The book's recovery table (`docs/src/guide/recovery.md`), its commands run as written: every
//! `curl` a row gives is pasted into a shell, with `OVERSELL_ADMIN_TOKEN` set as the page says,
//! against a fleet of `oversell up`, and must be answered 2xx (a curl without the
//! `Authorization` header gets a 401) and do what its row says.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::eventually;
use crate::up::Up;

/// Every `curl …` in backticks on a row of the page's table.
fn table_curls(page: &str) -> Vec<String> {
    page.lines()
        .filter(|l| l.starts_with('|'))
        .flat_map(|row| row.split('`').skip(1).step_by(2))
        .filter(|code| code.starts_with("curl "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recovery_tables_curls_as_written_are_accepted_and_do_what_their_rows_say() {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/guide/recovery.md"),
    )
    .unwrap();
    let curls = table_curls(&page);
    let reset = curls.iter().find(|c| c.contains("/admin/reset"));
    let clear = curls
        .iter()
        .find(|c| c.contains("-X DELETE") && c.contains("/admin/faults"));
    let (Some(reset), Some(clear)) = (reset, clear) else {
        panic!("the table gives a reset and a clear-faults curl: {curls:?}");
    };
    assert_eq!(curls.len(), 2, "a curl this test does not check: {curls:?}");

    let port = oversell_client::ports::free_port().unwrap().to_string();
    let up = Up::spawn(&["--instances", "1", "--port", &port, "--class", "1"]);
    let url = format!("http://127.0.0.1:{port}");
    up.line(&format!("ready: {url}"), Duration::from_secs(90))
        .await;
    let token = up.admin_token().await;
    let client = crate::helpers::http_client();
    // A fault armed and waiting in the room, for the clear to take away.
    let armed = client
        .post(format!("{url}/admin/faults?room=student-01"))
        .bearer_auth(&token)
        .json(&json!({ "kind": "release-gap", "ms": 50 }))
        .send()
        .await
        .unwrap();
    assert!(armed.status().is_success(), "{:?}", armed.text().await);
    let faults_armed = || async {
        let state: Value = client
            .get(format!("{url}/state?room=student-01"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        state["faults"].as_array().map_or(0, Vec::len)
    };
    eventually(Duration::from_secs(10), || async {
        faults_armed().await == 1
    })
    .await;

    let run = |typed: &str| {
        let command = typed.replace('…', &url).replace("<room>", "student-01");
        let out = Command::new("bash")
            .args(["-c", &format!("{command} --silent --fail-with-body")])
            .env("OVERSELL_ADMIN_TOKEN", &token)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}` failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let answer: Value = serde_json::from_str(&run(reset)).unwrap();
    assert_eq!(answer["stock"], 100, "{answer}");
    let state: Value = client
        .get(format!("{url}/state?room=student-01"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state["stock"], 100, "{state}");
    let answer: Value = serde_json::from_str(&run(clear)).unwrap();
    assert_eq!(answer["armed"], json!([]), "{answer}");
    eventually(Duration::from_secs(10), || async {
        faults_armed().await == 0
    })
    .await;
}
