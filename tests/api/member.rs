//! `oversell member`, the supervisor a compose store runs under, as a real process on this
//! machine around a real `redis-server`: it answers only the admin token, and its acts are
//! real (the store killed and kept down, stopped and resumed, its clock moved). The cut is
//! left to the compose test: here it would drop packets in the host's own namespace.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oversell_client::ports::free_port;
use serde_json::{json, Value};

use crate::helpers::eventually;

const TOKEN: &str = "member-test-token";

/// The supervisor and its Redis; both go on drop (the supervisor takes its child with it).
struct Supervised {
    child: Child,
    control: String,
    redis: redis::Client,
    _dir: tempfile::TempDir,
}

impl Drop for Supervised {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start() -> Supervised {
    let dir = tempfile::tempdir().unwrap();
    let (control, port) = (free_port().unwrap(), free_port().unwrap());
    let child = Command::new(env!("CARGO_BIN_EXE_oversell"))
        .args(["member", "--id", "lock9", "--clock-shim"])
        .arg("--dir")
        .arg(dir.path())
        .args(["--control-port", &control.to_string(), "--"])
        .args(["redis-server", "--port", &port.to_string(), "--save", ""])
        .arg("--dir")
        .arg(dir.path())
        .env("ADMIN_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("oversell member starts");
    let supervised = Supervised {
        child,
        control: format!("http://127.0.0.1:{control}"),
        redis: redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap(),
        _dir: dir,
    };
    eventually(Duration::from_secs(20), || async {
        supervised.ping().await && supervised.ask("GET", "/member", None).await.0 == 200
    })
    .await;
    supervised
}

impl Supervised {
    async fn ping(&self) -> bool {
        let answered = async {
            let mut conn = self.redis.get_multiplexed_async_connection().await.ok()?;
            redis::cmd("PING")
                .query_async::<String>(&mut conn)
                .await
                .ok()
        };
        matches!(
            tokio::time::timeout(Duration::from_millis(300), answered).await,
            Ok(Some(_))
        )
    }

    async fn redis_time_s(&self) -> i64 {
        let mut conn = self.redis.get_multiplexed_async_connection().await.unwrap();
        let (s, _us): (i64, i64) = redis::cmd("TIME").query_async(&mut conn).await.unwrap();
        s
    }

    async fn ask(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.ask_as(Some(TOKEN), method, path, body).await
    }

    async fn ask_as(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let client = crate::helpers::http_client();
        let mut req = client.request(method.parse().unwrap(), format!("{}{path}", self.control));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }
}

#[tokio::test]
async fn a_member_supervisor_answers_the_admin_token_alone_with_a_json_reason() {
    let member = start().await;
    let (status, body) = member.ask_as(None, "GET", "/member", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("unauthorized"))
    );
    let (status, body) = member
        .ask_as(Some("not-it"), "POST", "/member/kill", Some(json!({})))
        .await;
    assert_eq!((status, body["error"].as_str()), (403, Some("forbidden")));
    assert!(member.ping().await, "a refused kill killed nothing");
    for (path, body) in [
        ("/member/pause", json!({"seconds": 1})),
        ("/member/kill", json!({"down_ms": "soon"})),
        ("/member/kill", json!({"down_ms": 600_000})),
        ("/member/clock", json!({})),
    ] {
        let (status, answer) = member.ask("POST", path, Some(body.clone())).await;
        assert_eq!(status, 400, "{path} {body}: {answer}");
        assert_eq!(answer["error"], "bad_request");
        assert!(answer["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let (_, view) = member.ask("GET", "/member", None).await;
    assert_eq!(view["restarts"], 0, "bad requests acted on nothing: {view}");
}

#[tokio::test]
async fn a_killed_member_stays_down_for_its_time_then_its_supervisor_brings_it_back() {
    let member = start().await;
    let (_, before) = member.ask("GET", "/member", None).await;
    let (status, view) = member
        .ask("POST", "/member/kill", Some(json!({"down_ms": 1500})))
        .await;
    assert_eq!(status, 200, "{view}");
    let killed_at = Instant::now();
    assert!(view["down_until_ms"].as_u64().is_some(), "{view}");
    eventually(Duration::from_secs(2), || async { !member.ping().await }).await;
    eventually(Duration::from_secs(20), || async { member.ping().await }).await;
    assert!(
        killed_at.elapsed() >= Duration::from_millis(1400),
        "back after {:?}, before its hold-down ended",
        killed_at.elapsed()
    );
    let (_, after) = member.ask("GET", "/member", None).await;
    assert_eq!(after["restarts"], 1, "{after}");
    assert_eq!(after["last_exit"], "signal 9", "{after}");
    assert_ne!(after["pid"], before["pid"], "{after}");
}

#[tokio::test]
async fn a_paused_member_answers_nothing_until_it_is_resumed() {
    let member = start().await;
    let (status, view) = member
        .ask("POST", "/member/pause", Some(json!({"ms": 5_000})))
        .await;
    assert_eq!(status, 200, "{view}");
    assert!(!member.ping().await, "a stopped Redis answered");
    let (status, _) = member.ask("POST", "/member/resume", Some(json!({}))).await;
    assert_eq!(status, 200);
    eventually(Duration::from_secs(5), || async { member.ping().await }).await;
    let (_, view) = member.ask("GET", "/member", None).await;
    assert_eq!(view["restarts"], 0, "a pause is not a crash: {view}");
}

#[tokio::test]
async fn a_members_clock_moves_without_a_restart() {
    let member = start().await;
    let before = member.redis_time_s().await;
    let (status, view) = member
        .ask("POST", "/member/clock", Some(json!({"add_ms": 3_600_000})))
        .await;
    assert_eq!(
        (status, view["clock_offset_ms"].as_i64()),
        (200, Some(3_600_000))
    );
    let after = member.redis_time_s().await;
    assert!(
        (3590..3700).contains(&(after - before)),
        "TIME moved {} s",
        after - before
    );
    assert_eq!(view["restarts"], 0);
}
