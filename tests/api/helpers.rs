//! Test fixtures: a real `redis-server` per test, and fleets of in-process instances sharing it.

use std::sync::Once;
use std::time::{Duration, Instant};

use oversell::client_limit;
use oversell::config::ServeArgs;
use oversell::launch::redis_server::RedisServer;
use oversell::lock_store::LockStoreKind;
use oversell::startup::Application;
use oversell_api::settings::WaitStrategy;
use oversell_api::tier::Tier;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub const TOKEN: &str = "test-admin-token";

static TRACING: Once = Once::new();

/// Logs only when `TEST_LOG` is set.
fn init_tracing() {
    TRACING.call_once(|| {
        if std::env::var_os("TEST_LOG").is_some() {
            oversell::telemetry::init();
        }
    });
}

/// Flags for the instances of a test fleet.
pub fn serve_args(redis_url: &str, instance: &str) -> ServeArgs {
    ServeArgs {
        redis_url: redis_url.to_owned(),
        resource_store: oversell::config::ResourceStoreKind::Single,
        redis_cluster: vec![],
        lock_store: LockStoreKind::Shared,
        lock_redis_url: None,
        lock_sentinels: vec![],
        lock_redis_nodes: vec![],
        lock_cluster: vec![],
        zookeeper: None,
        zookeeper_session_ms: 4_000,
        postgres: None,
        lock_sentinel_master: oversell::lock_store::DEFAULT_SENTINEL_MASTER.into(),
        sync_replicas: 0,
        sync_timeout_ms: 1000,
        lease: oversell_api::settings::LeaseMode::Watchdog,
        host: "127.0.0.1".parse().unwrap(),
        port: 0,
        worker_threads: None,
        listen_fd: None,
        instance_id: Some(instance.to_owned()),
        tier: Tier::LuaRelease,
        ttl_ms: 3000,
        business_ms: 2,
        wait: WaitStrategy::PubSub,
        wait_deadline_ms: 20_000,
        admin_token: Some(TOKEN.to_owned()),
        fleet_url: None,
        public_url: None,
        max_rooms: 200,
        room_ttl_secs: 86_400,
        max_event_streams: 500,
        grading_slots: oversell::config::DEFAULT_GRADING_SLOTS,
        client_rate: client_limit::DEFAULT_CLIENT_RATE,
        client_burst: client_limit::DEFAULT_CLIENT_BURST,
        trusted_proxies: client_limit::DEFAULT_TRUSTED_PROXIES
            .split(',')
            .map(|net| client_limit::parse_network(net).unwrap())
            .collect(),
        static_dir: None,
    }
}

/// One in-process instance; stops when dropped.
pub struct TestApp {
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl TestApp {
    pub async fn spawn(args: &ServeArgs) -> TestApp {
        let app = Application::build(args).await.expect("build app");
        let url = format!("http://127.0.0.1:{}", app.port());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            app.run_until(async {
                let _ = stopped.await;
            })
            .await
            .expect("server ran");
        });
        TestApp {
            url,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Starts a graceful shutdown and waits until the server has finished it.
    pub async fn shut_down(mut self) {
        drop(self.stop.take());
        if let Some(task) = self.task.take() {
            task.await.expect("server task");
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// How long the tests' clients keep an idle connection: well under the instances' own limit
/// (`oversell::startup::HEADER_READ_TIMEOUT`, said in their `Keep-Alive` header). reqwest's
/// default is 90 s, so a request sent on a connection idle for about 5 s would cross the
/// instance's close and fail unanswered ("connection closed before message completed"), most
/// often on a loaded machine, where this side's timers and reads run late.
pub const CLIENT_IDLE: Duration = Duration::from_secs(2);

/// A client for the tests, keeping idle connections for [`CLIENT_IDLE`] only.
pub fn http_client() -> reqwest::Client {
    http_client_builder().build().expect("an HTTP client")
}

/// [`http_client`]'s builder, for a test that sets more.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().pool_idle_timeout(CLIENT_IDLE)
}

/// A Redis and N instances sharing it, plus a client that knows the admin token.
pub struct TestFleet {
    pub redis: RedisServer,
    pub apps: Vec<TestApp>,
    pub client: reqwest::Client,
}

pub async fn spawn_fleet(instances: usize) -> TestFleet {
    spawn_fleet_with(instances, |_| {}).await
}

/// A fleet whose instances get the usual flags changed by `configure`.
pub async fn spawn_fleet_with(instances: usize, configure: impl Fn(&mut ServeArgs)) -> TestFleet {
    init_tracing();
    let redis = RedisServer::start().expect("start redis-server");
    let mut apps = Vec::new();
    for i in 1..=instances {
        let mut args = serve_args(&redis.url(), &format!("app{i}"));
        configure(&mut args);
        apps.push(TestApp::spawn(&args).await);
    }
    let client = http_client_builder()
        .pool_max_idle_per_host(512)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    TestFleet {
        redis,
        apps,
        client,
    }
}

impl TestFleet {
    pub fn url(&self, i: usize) -> &str {
        &self.apps[i % self.apps.len()].url
    }

    /// An admin call through instance 0; panics unless it answers 200.
    pub async fn admin(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let resp = self
            .client
            .request(method, format!("{}{path}", self.url(0)))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        body
    }

    pub async fn reset(&self, stock: i64) {
        self.admin(
            reqwest::Method::POST,
            "/admin/reset",
            json!({ "stock": stock }),
        )
        .await;
    }

    /// Sets tier and settings, and waits until every instance reports them.
    pub async fn configure(&self, config: Value) {
        let wanted = self
            .admin(reqwest::Method::PUT, "/admin/config", config)
            .await;
        for i in 0..self.apps.len() {
            eventually(Duration::from_secs(5), || async {
                self.state_of(i).await["settings"] == wanted
            })
            .await;
        }
    }

    /// `GET path` on instance `i`, as JSON.
    pub async fn get_json(&self, i: usize, path: &str) -> Value {
        let url = format!("{}{path}", self.url(i));
        let resp = self.client.get(url).send().await.unwrap();
        resp.json().await.unwrap()
    }

    pub async fn state_of(&self, i: usize) -> Value {
        self.get_json(i, "/state").await
    }

    /// `GET /metrics` of instance `i`: the Prometheus text.
    pub async fn metrics_of(&self, i: usize) -> String {
        let url = format!("{}/metrics", self.url(i));
        let resp = self.client.get(url).send().await.unwrap();
        resp.text().await.unwrap()
    }

    pub async fn state(&self) -> Value {
        self.state_of(0).await
    }

    pub async fn ledger(&self) -> Vec<Value> {
        let body = self.get_json(0, "/ledger?limit=10000").await;
        body["orders"].as_array().unwrap().clone()
    }

    /// One sale through instance `i`: status and JSON body.
    pub async fn sale(&self, i: usize, buyer: &str) -> (StatusCode, Value) {
        let resp = self
            .client
            .post(format!("{}/sale", self.url(i)))
            .json(&json!({ "buyer": buyer }))
            .send()
            .await
            .unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// `buyers` sales at once, round robin over the instances, released together.
    pub async fn burst(&self, buyers: usize) -> Vec<(StatusCode, Value)> {
        let start = std::sync::Arc::new(tokio::sync::Barrier::new(buyers));
        let sales = (0..buyers).map(|i| {
            let start = start.clone();
            async move {
                start.wait().await;
                self.sale(i, &format!("buyer-{i}")).await
            }
        });
        futures_util::future::join_all(sales).await
    }
}

impl TestFleet {
    /// A plain connection to the fleet's Redis, to look at keys and counters directly. Its
    /// replies may take up to 10 s rather than the client's default half second: the test only
    /// looks, and on a loaded machine (two tests' fleets sharing two cores) a reply can wait
    /// that long behind the burst it is watching.
    pub async fn redis_conn(&self) -> redis::aio::MultiplexedConnection {
        let config =
            redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(10)));
        redis::Client::open(self.redis.url())
            .unwrap()
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .unwrap()
    }

    /// Entries on the default room's lock timeline: it grows as soon as a sale has read
    /// (its enter), which tells a test that the sale is under way.
    pub async fn timeline_len(&self) -> u64 {
        redis::cmd("XLEN")
            .arg("oversell:{default}:timeline")
            .query_async(&mut self.redis_conn().await)
            .await
            .unwrap()
    }

    /// Starts noting every command Redis runs (its slow log, with no threshold), forgetting
    /// those before: [`TestFleet::lock_tried`] looks there.
    pub async fn note_commands(&self) {
        let mut conn = self.redis_conn().await;
        let _: () = redis::pipe()
            .cmd("CONFIG")
            .arg("SET")
            .arg("slowlog-log-slower-than")
            .arg(0)
            .ignore()
            .cmd("CONFIG")
            .arg("SET")
            .arg("slowlog-max-len")
            .arg(10_000)
            .ignore()
            .cmd("SLOWLOG")
            .arg("RESET")
            .ignore()
            .query_async(&mut conn)
            .await
            .unwrap();
    }

    /// Whether a command named the default room's lock (plain or reentrant) since
    /// [`TestFleet::note_commands`]: a buyer has tried to take it.
    pub async fn lock_tried(&self) -> bool {
        let entries: Vec<redis::Value> = redis::cmd("SLOWLOG")
            .arg("GET")
            .arg(-1)
            .query_async(&mut self.redis_conn().await)
            .await
            .unwrap();
        let locks = ["oversell:{default}:lock", "oversell:{default}:rlock"];
        entries.iter().any(|entry| {
            let redis::Value::Array(fields) = entry else {
                return false;
            };
            let Some(redis::Value::Array(args)) = fields.get(3) else {
                return false;
            };
            args.iter().any(|arg| {
                matches!(arg, redis::Value::BulkString(b) if locks.iter().any(|l| b == l.as_bytes()))
            })
        })
    }

    /// Every key in Redis, sorted.
    pub async fn all_keys(&self) -> Vec<String> {
        let mut conn = self.redis_conn().await;
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg("*")
            .query_async(&mut conn)
            .await
            .unwrap();
        keys.sort();
        keys
    }

    /// A request through instance `i`: status and JSON body.
    pub async fn call(
        &self,
        i: usize,
        method: reqwest::Method,
        path: &str,
        admin: bool,
        body: Value,
    ) -> (StatusCode, Value) {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.url(i)))
            .json(&body);
        if admin {
            req = req.bearer_auth(TOKEN);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap_or(Value::Null))
    }
}

/// Waits until `check` holds, polling; panics after `limit`.
/// Every ground-truth figure a safe lock keeps at zero is zero in `state` (`what` names the
/// run in the failure).
pub fn assert_all_zero(state: &Value, what: &str) {
    for figure in [
        "oversold",
        "lost_updates",
        "overlaps",
        "foreign_releases",
        "lost_releases",
    ] {
        assert_eq!(state[figure], 0, "{what} {figure}: {state}");
    }
}

/// `GET /state` at `url` (a fleet's nginx or one instance), as JSON: the ground truth.
pub async fn state(url: &str) -> Value {
    reqwest::get(format!("{url}/state"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Waits until `check` holds, trying again every 10 ms; fails the test after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let held = poll_until(limit, check, |held| *held).await;
    assert!(held, "condition not met within {limit:?}");
}

/// Runs `attempt` every 10 ms until `done` accepts what it returned, for at most `limit`;
/// returns the last result either way, so the caller's assertion shows what was seen.
pub async fn poll_until<T, F, Fut>(limit: Duration, mut attempt: F, done: impl Fn(&T) -> bool) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let deadline = Instant::now() + limit;
    loop {
        let seen = attempt().await;
        if done(&seen) || Instant::now() >= deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until a sale at `url` is answered 200 (the store came back), for at most `limit`.
pub async fn eventually_sells(url: &str, limit: Duration) {
    let client = http_client();
    eventually(limit, || async {
        client
            .post(format!("{url}/sale"))
            .send()
            .await
            .is_ok_and(|r| r.status() == StatusCode::OK)
    })
    .await;
}

/// Runs `oversell` with each `args` (none of the fleet's variables set) and checks it stops
/// with exit 2 and one line naming `flag`.
pub fn assert_refused_in_one_line(cases: &[(Vec<&str>, &str)]) {
    for (args, flag) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_oversell"))
            .args(args)
            .env_remove("LOCK_STORE")
            .env_remove("LOCK_TIER")
            .env_remove("ZOOKEEPER")
            .env_remove("ADMIN_TOKEN")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(flag),
            "{args:?} should name {flag}: {stderr}"
        );
    }
}

/// A scenario run's verdicts on one line: `check [seen] ok|FAILED; …`.
pub fn verdicts_line(run: &workshop::scenario::ScenarioRun) -> String {
    run.verdicts
        .iter()
        .map(|v| {
            let held = if v.held { "ok" } else { "FAILED" };
            format!("{} [{}] {held}", v.check, v.seen)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One sale at `url` that must be refused with a 503 `error` within `deadline` (the wait
/// deadline plus slack): a store that cannot be reached is an answer, never a hang. Returns
/// the body for further checks.
pub async fn assert_sale_refused(url: &str, error: &str, deadline: Duration) -> Value {
    let asked = Instant::now();
    let resp = http_client()
        .post(format!("{url}/sale"))
        .json(&json!({ "buyer": "b" }))
        .send()
        .await
        .unwrap();
    let took = asked.elapsed();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], error, "{body}");
    assert!(took < deadline, "503 after {took:?}");
    body
}
