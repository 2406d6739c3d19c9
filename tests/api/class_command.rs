//! `oversell class` (compose's `class` service) on a running fleet: like `up --class`, it
//! writes the rooms' tokens and the slips to files only their owner may read, in `--out`, and
//! its log names the files and holds no token unless `--show-tokens` asks.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_refused_in_one_line, spawn_fleet, TestFleet, TOKEN};
use crate::join::slips;

/// `oversell class` with `args` against the fleet's first instance, run in `cwd`. Async: the
/// fleet answers from this test's own runtime, which a blocking wait would stall.
async fn oversell_class(fleet: &TestFleet, cwd: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_oversell"))
        .arg("class")
        .args(["--url", fleet.url(0)])
        .args(args)
        .current_dir(cwd)
        .env("ADMIN_TOKEN", TOKEN)
        .env_remove("PUBLIC_URL")
        .env("RUST_LOG", "oversell=warn")
        .output()
        .await
        .expect("run oversell class")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The rows of a room tokens file: room, token, join link, code.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

/// A request to the fleet's first instance with `token` (none: no `Authorization`).
async fn send(
    fleet: &TestFleet,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut req = fleet
        .client
        .request(method, format!("{}{path}", fleet.url(0)))
        .json(&body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

async fn whoami(fleet: &TestFleet, token: &str) -> (StatusCode, Value) {
    send(fleet, Method::GET, "/admin/whoami", Some(token), json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversell_class_writes_tokens_and_slips_to_out_and_its_log_names_them_with_no_token() {
    let fleet = spawn_fleet(1).await;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("class");
    let public = "http://students.example:8080";
    let ran = oversell_class(
        &fleet,
        tmp.path(),
        &[
            "--students",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--public-url",
            public,
        ],
    )
    .await;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&ran.stdout).into_owned(),
        String::from_utf8_lossy(&ran.stderr).into_owned(),
    );
    assert!(ran.status.success(), "{stdout}{stderr}");

    // The directory it made and both files are the owner's alone.
    let (tokens_file, slips_file) = (out.join("room-tokens"), out.join("slips.html"));
    assert_eq!(mode(&out), 0o700);
    assert_eq!(mode(&tokens_file), 0o600);
    assert_eq!(mode(&slips_file), 0o600);
    // The log names them, and the one address the projector shows.
    for named in [
        format!("room tokens file: {} ", tokens_file.display()),
        format!("slips file: {} ", slips_file.display()),
        format!("the projector shows {public}/join only"),
        format!("presenter's view: {public}/present.html"),
    ] {
        assert!(stdout.contains(&named), "no `{named}` in:\n{stdout}");
    }

    let table = rows(&std::fs::read_to_string(&tokens_file).unwrap());
    assert_eq!(table.len(), 3, "{table:?}");
    let slips = slips(&std::fs::read_to_string(&slips_file).unwrap());
    assert_eq!(slips.len(), 3);
    for (n, (row, slip)) in table.iter().zip(&slips).enumerate() {
        let [room, token, link, code] = &row[..] else {
            panic!("not room, token, link, code: {row:?}")
        };
        assert_eq!(room, &format!("student-0{}", n + 1));
        assert_eq!(link, &format!("{public}/?room={room}#token={token}"));
        // The slip is the row's: its room, its link printed and as a QR code, its code.
        assert_eq!(
            (&slip.room, &slip.link, &slip.qr, &slip.code),
            (room, link, link, code)
        );
        // Each token opens its own room on the fleet, and each code gets it back.
        let who = whoami(&fleet, token).await;
        assert_eq!(
            who,
            (StatusCode::OK, json!({ "scope": "room", "room": room }))
        );
        let code_body = json!({ "code": code });
        let (status, session) = send(&fleet, Method::POST, "/join/session", None, code_body).await;
        assert_eq!(status, StatusCode::OK, "{session}");
        assert_eq!(&session["room"], room.as_str());
        // Nothing it printed holds a token or a code.
        for secret in [token, code] {
            assert!(!stdout.contains(secret.as_str()), "{secret} in:\n{stdout}");
            assert!(!stderr.contains(secret.as_str()), "{secret} in:\n{stderr}");
        }
    }
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversell_class_with_show_tokens_alone_prints_the_table_and_writes_nothing() {
    let fleet = spawn_fleet(1).await;
    let tmp = tempfile::tempdir().unwrap();
    let ran = oversell_class(&fleet, tmp.path(), &["--students", "2", "--show-tokens"]).await;
    let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert!(ran.status.success(), "{stdout}");
    let table = rows(&stdout[stdout.find("\n# room").unwrap() + 1..]);
    assert_eq!(table.len(), 2, "{stdout}");
    for row in &table {
        let who = whoami(&fleet, &row[1]).await;
        assert_eq!(
            who,
            (StatusCode::OK, json!({ "scope": "room", "room": row[0] }))
        );
    }
    assert!(!stdout.contains("room tokens file"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "files written: {left:?}");
}

#[test]
fn oversell_class_without_out_or_show_tokens_is_refused_in_one_line_naming_out() {
    assert_refused_in_one_line(&[(
        vec!["class", "--students", "2", "--admin-token", "t"],
        "--out",
    )]);
}
