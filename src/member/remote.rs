//! A member in a container, reached through its supervisor (`oversell member`) on the fleet's
//! network: the same acts as on this machine, asked over HTTP with the admin token. No
//! container is ever handed the Docker socket: whoever holds the admin token can stop, kill,
//! pause or cut off a store of the fleet, and nothing else on the host.

use std::sync::OnceLock;
use std::time::Duration;

use oversell_api::member::{ClockShift, Cut, Kill, MemberView, Pause};
use serde::Serialize;

/// The port every member's supervisor listens on, beside its store.
pub const PORT: u16 = 7070;

/// How long a supervisor may take to answer: it acts at once, so long is down.
const ANSWER_LIMIT: Duration = Duration::from_secs(3);

/// The admin token of this instance, which every member's supervisor of its fleet also
/// holds. Set once at start-up: a process-wide value because the faults that need it are
/// reached from deep inside a sale, far from the configuration.
static TOKEN: OnceLock<String> = OnceLock::new();

/// Remembers the admin token the supervisors are asked with.
pub fn set_token(token: &str) {
    let _ = TOKEN.set(token.to_owned());
}

/// A member's supervisor: `http://<host>:7070`.
#[derive(Debug, Clone)]
pub struct Remote {
    host: String,
}

impl Remote {
    /// The supervisor beside the server at `addr` (`host:port`).
    pub fn beside(addr: &str) -> Remote {
        let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
        Remote {
            host: host.to_owned(),
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub async fn kill(&self, down_for: Option<Duration>) -> Result<MemberView, String> {
        let down_ms = down_for.map_or(0, |d| d.as_millis() as u64);
        self.post("/member/kill", &Kill { down_ms }).await
    }

    pub async fn pause(&self, stop_for: Duration) -> Result<MemberView, String> {
        let ms = stop_for.as_millis() as u64;
        self.post("/member/pause", &Pause { ms }).await
    }

    pub async fn resume(&self) -> Result<MemberView, String> {
        self.post("/member/resume", &serde_json::json!({})).await
    }

    pub async fn shift_clock(&self, ms: i64) -> Result<MemberView, String> {
        self.post("/member/clock", &ClockShift { add_ms: ms }).await
    }

    pub async fn cut(&self, cut: &Cut) -> Result<MemberView, String> {
        self.post("/member/cut", cut).await
    }

    pub async fn heal(&self) -> Result<MemberView, String> {
        self.request(axum::http::Method::DELETE, "/member/cut", None)
            .await
    }

    pub async fn view(&self) -> Result<MemberView, String> {
        self.request(axum::http::Method::GET, "/member", None).await
    }

    async fn post(&self, path: &str, body: &impl Serialize) -> Result<MemberView, String> {
        let body = serde_json::to_vec(body).map_err(|err| err.to_string())?;
        self.request(axum::http::Method::POST, path, Some(body))
            .await
    }

    async fn request(
        &self,
        method: axum::http::Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<MemberView, String> {
        let url = format!("http://{}:{PORT}", self.host);
        let why = |err: String| format!("{}'s supervisor ({url}): {err}", self.host);
        let token = TOKEN.get().map(String::as_str);
        // The name resolves on the fleet's network only: a blocking look-up, off the runtime.
        let resolved = tokio::task::spawn_blocking({
            let url = url.clone();
            move || oversell_client::Targets::parse(&[url], None)
        })
        .await
        .map_err(|err| why(err.to_string()))?
        .map_err(|err| why(err.to_string()))?;
        let target = resolved.first().clone();
        let reply = oversell_client::http::fetch(
            &resolved,
            &target,
            method,
            path,
            token,
            body,
            ANSWER_LIMIT,
        )
        .await
        .map_err(|err| why(err.to_string()))?;
        if !reply.status.is_success() {
            let text = String::from_utf8_lossy(&reply.body);
            return Err(why(format!("{} {}", reply.status, text.trim())));
        }
        serde_json::from_slice(&reply.body).map_err(|err| why(err.to_string()))
    }
}
