//! The dashboard ships inside the binary: `oversell serve` started from any directory serves
//! it; `--static-dir` serves a directory from disk instead.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use oversell::launch::redis_server::RedisServer;
use oversell_client::ports::free_port;
use reqwest::StatusCode;

use crate::helpers::eventually;

/// An `oversell serve` process and the file its log goes to; killed on drop.
struct Serve(Child, tempfile::NamedTempFile);

impl Serve {
    fn log(&self) -> String {
        std::fs::read_to_string(self.1.path()).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(redis: &RedisServer, port: u16, cwd: &std::path::Path, static_dir: Option<&str>) -> Serve {
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oversell"));
    cmd.args([
        "serve",
        "--port",
        &port.to_string(),
        "--redis-url",
        &redis.url(),
    ])
    .current_dir(cwd)
    .env_remove("STATIC_DIR")
    .env("ADMIN_TOKEN", "t")
    .env_remove("RUST_LOG")
    .stdout(Stdio::from(log.reopen().expect("the log file")))
    .stderr(Stdio::null());
    if let Some(dir) = static_dir {
        cmd.args(["--static-dir", dir]);
    }
    Serve(cmd.spawn().expect("spawn oversell serve"), log)
}

async fn get(client: &reqwest::Client, url: &str) -> Option<(StatusCode, String, String)> {
    let resp = client.get(url).send().await.ok()?;
    let status = resp.status();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    Some((status, ctype, resp.text().await.ok()?))
}

#[tokio::test]
async fn the_dashboard_is_served_from_any_working_directory() {
    let redis = RedisServer::start().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let client = crate::helpers::http_client();
    // Embedded, and with a --static-dir that does not exist (as `oversell up` run outside the
    // repository passes one): both serve the built-in copy.
    for static_dir in [None, Some("no-such-dir")] {
        let port = free_port().unwrap();
        let app = serve(&redis, port, elsewhere.path(), static_dir);
        let base = format!("http://127.0.0.1:{port}");
        eventually(Duration::from_secs(20), || async {
            get(&client, &format!("{base}/health")).await.is_some()
        })
        .await;
        let (status, ctype, body) = get(&client, &format!("{base}/")).await.unwrap();
        assert_eq!(status, StatusCode::OK, "{static_dir:?}");
        assert!(ctype.starts_with("text/html"), "{ctype}");
        assert!(body.contains("app.js"), "{body}");
        let (status, ctype, _) = get(&client, &format!("{base}/app.js")).await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert!(ctype.contains("javascript"), "{ctype}");
        let (status, _, body) = get(&client, &format!("{base}/class")).await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("class.js"), "{body}");
        let (status, _, body) = get(&client, &format!("{base}/no-such-file.js"))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.contains("\"not_found\""), "{body}");
        // The embedded copy is the quiet default; only a directory asked for and missing warns.
        let warned = app.log().contains("no such --static-dir");
        assert_eq!(
            warned,
            static_dir.is_some(),
            "{static_dir:?}: {}",
            app.log()
        );
    }
}

#[tokio::test]
async fn a_static_dir_overrides_the_embedded_dashboard() {
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<p>edited on disk</p>").unwrap();
    std::fs::write(dir.path().join("class.html"), "<p>class page on disk</p>").unwrap();
    let port = free_port().unwrap();
    let _app = serve(&redis, port, dir.path(), Some(dir.path().to_str().unwrap()));
    let client = crate::helpers::http_client();
    let base = format!("http://127.0.0.1:{port}");
    eventually(Duration::from_secs(20), || async {
        get(&client, &format!("{base}/health")).await.is_some()
    })
    .await;
    let (status, _, body) = get(&client, &format!("{base}/")).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "<p>edited on disk</p>");
    // `oversell up` run in the repository serves `static/` from disk: /class must work there.
    let (status, _, body) = get(&client, &format!("{base}/class?x=1")).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "<p>class page on disk</p>");
}

/// A browser that accepts gzip gets the dashboard's files compressed (the same bytes once
/// decompressed), a client that does not gets them as they are; the event stream is never
/// compressed (a compressor would hold its events back).
#[tokio::test]
async fn the_dashboard_files_come_compressed_to_a_browser_that_asks() {
    use std::io::Read;
    let fleet = crate::helpers::spawn_fleet(1).await;
    let client = &fleet.client;
    for file in ["/", "/app.js", "/i18n.js", "/class"] {
        let url = format!("{}{file}", fleet.url(0));
        let plain = client.get(&url).send().await.unwrap();
        assert_eq!(plain.headers().get("content-encoding"), None, "{file}");
        let plain = plain.bytes().await.unwrap();
        let packed = client
            .get(&url)
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(packed.headers()["content-encoding"], "gzip", "{file}");
        let packed = packed.bytes().await.unwrap();
        let mut unpacked = Vec::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_end(&mut unpacked)
            .unwrap();
        assert_eq!(unpacked, plain, "{file}");
        assert!(
            packed.len() * 2 < plain.len(),
            "{file}: {} of {}",
            packed.len(),
            plain.len()
        );
    }
    let events = client
        .get(format!("{}/events", fleet.url(0)))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    assert_eq!(events.headers().get("content-encoding"), None);
}
