//! A small client for the service's admin and observation endpoints. Admin calls and state
//! reads go to the first target; the fleet spreads settings to every instance by itself.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use http::{Method, StatusCode};
use oversell_api::{Settings, SettingsPatch, StateView, Tier};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::http::{Pool, Reply};
use crate::target::{Target, Targets};

/// How often a condition is polled while waiting for the fleet.
const POLL: Duration = Duration::from_millis(10);

pub const TOKEN_HINT: &str = "pass --token or OVERSELL_ADMIN_TOKEN";

/// A request whose repetition changes nothing (a read, a `PUT`, a `DELETE`, a reset to a
/// given stock) answered 503 because a store was slow is asked again, with a growing pause, for as long as the call's
/// own timeout allows: an instance whose store did not answer in time (a disk busy with
/// someone's build holds up the resource store's fsync; a class grading at once) is not a
/// fleet that is down, and a grading or a chapter should not fail for it. Other writes are not
/// asked again: one that was refused may have half happened, and twice would be two.
const RETRY_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two tries.
const RETRY_PAUSE_MAX: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct AdminClient {
    targets: Targets,
    token: Option<String>,
    /// Limit for each call.
    timeout: Duration,
    /// Its connections, kept open between calls (and shared with its clones).
    pool: Pool,
}

impl std::fmt::Debug for AdminClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminClient")
            .field("targets", &self.targets)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl AdminClient {
    pub fn new(targets: &Targets, token: Option<String>) -> AdminClient {
        AdminClient {
            targets: targets.clone(),
            token,
            timeout: Duration::from_secs(10),
            pool: Pool::default(),
        }
    }

    /// The same client on `pool`'s connections: a process making many clients (a server
    /// grading rooms) keeps one set of connections for them all.
    pub fn with_pool(mut self, pool: Pool) -> AdminClient {
        self.pool = pool;
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> AdminClient {
        self.timeout = timeout;
        self
    }

    /// `POST /admin/reset {"stock": N}`: empties the ledger and counters, sets the stock.
    /// Twice is the same as once, so a 503 is asked again as a `PUT` would be.
    pub async fn reset(&self, stock: i64) -> anyhow::Result<Value> {
        let body = json!({ "stock": stock });
        self.call(
            self.targets.first(),
            Method::POST,
            "/admin/reset",
            Some(body),
            Repeat::Safe,
        )
        .await
    }

    /// `PUT /admin/tier {"tier": id}`; returns the new settings.
    pub async fn set_tier(&self, tier: Tier) -> anyhow::Result<Settings> {
        let reply = self
            .admin(Method::PUT, "/admin/tier", json!({ "tier": tier }))
            .await?;
        typed("PUT /admin/tier", reply)
    }

    /// `PUT /admin/config` with the fields the patch sets; returns the new settings.
    pub async fn set_config(&self, patch: &SettingsPatch) -> anyhow::Result<Settings> {
        let reply = self
            .admin(Method::PUT, "/admin/config", serde_json::to_value(patch)?)
            .await?;
        typed("PUT /admin/config", reply)
    }

    /// `GET /state` of the first target: the ground truth.
    pub async fn state(&self) -> anyhow::Result<StateView> {
        self.state_of(self.targets.first()).await
    }

    pub async fn state_of(&self, target: &Target) -> anyhow::Result<StateView> {
        typed(
            "/state",
            self.call(target, Method::GET, "/state", None, Repeat::Safe)
                .await?,
        )
    }

    /// Polls `/state` on every target until every instance behind them reports `settings`.
    /// Instances are told apart by the `instance` field, so this also works through a load
    /// balancer: it keeps reading until `instances` distinct ones have answered with the new
    /// settings, and the last answer of each it has seen agrees.
    pub async fn wait_for_settings(
        &self,
        settings: &Settings,
        instances: usize,
        limit: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        let mut latest: BTreeMap<String, bool> = BTreeMap::new();
        loop {
            for target in self.targets.iter() {
                let state = self.state_of(target).await?;
                latest.insert(state.instance, state.settings == *settings);
            }
            let agreeing = latest.values().filter(|ok| **ok).count();
            if agreeing == latest.len() && agreeing >= instances {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let behind: Vec<&str> = latest
                    .iter()
                    .filter(|(_, ok)| !**ok)
                    .map(|(id, _)| id.as_str())
                    .collect();
                bail!(
                    "the fleet did not take the new settings within {limit:?}: {agreeing} of {instances} instances agree{}",
                    match behind.is_empty() {
                        true => String::new(),
                        false => format!(" (behind: {})", behind.join(", ")),
                    }
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Any call to the first target, e.g. `POST /admin/faults`; non-2xx answers are errors.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let repeat = Repeat::by_method(&method);
        self.call(self.targets.first(), method, path, body, repeat)
            .await
    }

    async fn admin(&self, method: Method, path: &str, body: Value) -> anyhow::Result<Value> {
        let repeat = Repeat::by_method(&method);
        self.call(self.targets.first(), method, path, Some(body), repeat)
            .await
    }

    async fn call(
        &self,
        target: &Target,
        method: Method,
        path: &str,
        body: Option<Value>,
        repeat: Repeat,
    ) -> anyhow::Result<Value> {
        let url = self.targets.url_of(target, path);
        let body = body.map(|b| b.to_string().into_bytes());
        let give_up = Instant::now() + self.timeout;
        let mut pause = RETRY_PAUSE;
        let reply = loop {
            let left = give_up.saturating_duration_since(Instant::now());
            let reply = self
                .pool
                .fetch(
                    &self.targets,
                    target,
                    method.clone(),
                    path,
                    self.token.as_deref(),
                    body.clone(),
                    left.max(Duration::from_millis(1)),
                )
                .await?;
            if !store_was_slow(&reply)
                || repeat == Repeat::Never
                || Instant::now() + pause >= give_up
            {
                break reply;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(RETRY_PAUSE_MAX);
        };
        if reply.status == StatusCode::UNAUTHORIZED {
            bail!("admin token rejected (401) — {TOKEN_HINT}");
        }
        let json: Option<Value> = serde_json::from_slice(&reply.body).ok();
        if !reply.status.is_success() {
            let why = json
                .as_ref()
                .and_then(|v| v.get("message").or(v.get("error")))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| excerpt(&reply.body));
            bail!("{method} {url} answered {}: {why}", reply.status);
        }
        json.ok_or_else(|| anyhow!("{url} did not return JSON"))
    }
}

/// A 503 that says a store did not answer in time (the fleet is up, a moment was slow), not
/// one that will say the same again (a grading lost, a fleet down).
fn store_was_slow(reply: &Reply) -> bool {
    const SLOW: [&str; 4] = [
        "redis_unavailable",
        "zookeeper_unavailable",
        "postgres_unavailable",
        "request_timeout",
    ];
    reply.status == StatusCode::SERVICE_UNAVAILABLE
        && serde_json::from_slice::<Value>(&reply.body)
            .ok()
            .and_then(|v| v["error"].as_str().map(|code| SLOW.contains(&code)))
            .unwrap_or(false)
}

/// Whether a request answered 503 may be sent again.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Repeat {
    /// Twice is the same as once.
    Safe,
    /// Twice may be two (a fault armed twice, a sale made twice).
    Never,
}

impl Repeat {
    /// As HTTP says of the method: `GET`, `PUT`, `DELETE` are idempotent, `POST` is not.
    fn by_method(method: &Method) -> Repeat {
        match method.is_idempotent() {
            true => Repeat::Safe,
            false => Repeat::Never,
        }
    }
}

/// The start of a body, on one line, for an error message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.chars().count() > 80 {
        true => format!("{}…", line.chars().take(80).collect::<String>()),
        false => line,
    }
}

/// Reads an answer as the API type it is; a server that answers something else is named.
fn typed<T: DeserializeOwned>(what: &str, reply: Value) -> anyhow::Result<T> {
    serde_json::from_value(reply).map_err(|e| {
        anyhow!("{what} is not what oversell answers ({e}): is this an oversell server?")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_slow_store_is_asked_again() {
        let reply = |status: u16, code: &str| Reply {
            status: StatusCode::from_u16(status).unwrap(),
            content_type: None,
            body: json!({ "error": code, "message": "…" }).to_string().into(),
        };
        assert!(store_was_slow(&reply(503, "redis_unavailable")));
        assert!(!store_was_slow(&reply(503, "grading_lost")));
        assert!(!store_was_slow(&reply(500, "redis_unavailable")));
        assert_eq!(Repeat::by_method(&Method::DELETE), Repeat::Safe);
        assert_eq!(Repeat::by_method(&Method::POST), Repeat::Never);
    }

    #[test]
    fn long_bodies_are_cut_to_one_short_line() {
        assert_eq!(excerpt(b"a\n  b"), "a b");
        assert_eq!(excerpt(&[b'x'; 200]).chars().count(), 81);
    }

    #[test]
    fn a_state_without_its_figures_is_refused_and_says_so() {
        let err = typed::<StateView>("/state", json!({"stock": 1})).unwrap_err();
        assert!(err.to_string().contains("oversell server"), "{err}");
    }
}
