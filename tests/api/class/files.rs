//! A class's tokens are kept in files only their owner may read, never in a log: `up --class`
//! writes them (and the admin token) in its class dir and its banner names the files; the
//! instances and nginx never log a token. `oversell class` (compose's `class` service) on a
//! running fleet does as `up --class`: the room tokens file and the slips in `--out`, its log
//! naming them. Both print the tokens only when `--show-tokens` asks.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::call;
use crate::helpers::{assert_refused_in_one_line, eventually, spawn_fleet, TestFleet, TOKEN};
use crate::join::slips;
use crate::up::Up;

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

async fn whoami(fleet: &TestFleet, token: &str) -> (StatusCode, Value) {
    call(
        fleet,
        0,
        Method::GET,
        "/admin/whoami",
        Some(token),
        json!({}),
    )
    .await
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
        let (status, session) =
            call(&fleet, 0, Method::POST, "/join/session", None, code_body).await;
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

/// `up --class 2` through nginx: the tokens are in files only their owner may read, the
/// banner names the files and prints no token; the instances (logging at debug) and nginx's
/// access log never see one, used or refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_keeps_the_class_tokens_in_files_and_no_log_ever_holds_a_token() {
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
