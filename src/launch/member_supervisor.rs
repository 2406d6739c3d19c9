//! `oversell member`: what a store's container runs. It starts the store (a `redis-server`, a
//! Sentinel, a ZooKeeper server), restarts it whenever it exits, as `oversell up` restarts its
//! own children, and serves the acts a fault asks of it on a port of its own, to callers with
//! the admin token:
//!
//! | call | act |
//! |---|---|
//! | `GET /member` | the member now: pid, restarts, clock offset, hold-down |
//! | `POST /member/kill {"down_ms"}` | SIGKILL; back at once, or after `down_ms` |
//! | `POST /member/pause {"ms"}`, `POST /member/resume` | SIGSTOP for `ms`, SIGCONT |
//! | `POST /member/clock {"add_ms"}` | its wall clock moved (under the clock shim) |
//! | `POST /member/cut {"drop","ms"}`, `DELETE /member/cut` | `nft` drops in its own namespace |
//!
//! Why a supervisor inside the container rather than the Docker API from outside: an instance
//! with the Docker socket could start any container on the host, so the admin token would make
//! its holder root there. This way the token reaches the fleet's own stores and nothing else;
//! the cut needs `NET_ADMIN`, which the stores' containers alone are given, and it acts on
//! their own network namespace only.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::{rejection::JsonRejection, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use oversell_api::member::{ClockShift, Cut, Kill, MemberView, Pause};
use subtle::ConstantTimeEq;
use tokio::process::Command;
use tokio::sync::watch;

use super::supervisor::{stay_down, ChildSpec, Supervisor};
use crate::member::local_process::{down_until, Process};
use crate::member::remote;

/// `oversell member --id lock1 -- redis-server --port 6379 …`
#[derive(Debug, clap::Args)]
pub struct MemberArgs {
    /// The member's id in the fleet (`lock1`, `redlock3`, `zk2`), as `oversell up` names it.
    #[arg(long)]
    pub id: String,
    /// Where the supervisor keeps the store's hold-down file and clock offset.
    #[arg(long, default_value = "/tmp/oversell-member")]
    pub dir: PathBuf,
    /// Runs the store under the clock shim, so that the `clock-jump` fault can move its wall
    /// clock (the Redlock masters).
    #[arg(long)]
    pub clock_shim: bool,
    /// Runs the store as this user id (and its group id the same), not as the supervisor's:
    /// the supervisor is root to cut links, the store need not be.
    #[arg(long)]
    pub child_uid: Option<u32>,
    /// The port of the supervisor's own API.
    #[arg(long, default_value_t = remote::PORT)]
    pub control_port: u16,
    /// The fleet's admin token: every call must carry it (`Authorization: Bearer …`).
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: String,
    /// The store's command line, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The store, as its supervisor starts it.
struct Store {
    id: String,
    command: Vec<String>,
    dir: PathBuf,
    clock_shim: Option<PathBuf>,
    uid: Option<u32>,
}

#[async_trait]
impl ChildSpec for Store {
    fn id(&self) -> &str {
        &self.id
    }

    fn port(&self) -> u16 {
        0
    }

    async fn command(&self) -> std::io::Result<Command> {
        stay_down(&self.dir).await;
        let mut command = Command::new(&self.command[0]);
        command.args(&self.command[1..]);
        if let Some(shim) = &self.clock_shim {
            let offset = crate::member::clock_offset::offset_file(&self.dir);
            crate::member::clock_offset::create_offset_file(&offset)?;
            command.envs(super::clock_shim::preload_env(shim, &offset));
        }
        if let Some(uid) = self.uid {
            command.uid(uid).gid(uid);
        }
        Ok(command)
    }
}

struct Member {
    id: String,
    dir: PathBuf,
    token: String,
    supervisor: Supervisor,
    /// Whether this container may cut links (`nft` with `NET_ADMIN`), and why not if not.
    cuttable: Result<(), String>,
}

pub async fn run(args: MemberArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.dir)?;
    let clock_shim = match args.clock_shim {
        true => Some(super::clock_shim::install_preload(&args.dir)?),
        false => None,
    };
    let cuttable = nft(&crate::member::cut::table_sparing(Some(args.control_port))).await;
    if let Err(why) = &cuttable {
        tracing::warn!(%why, "this member cannot be cut off: partitions will not reach it");
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let store = Store {
        id: args.id.clone(),
        command: args.command,
        dir: args.dir.clone(),
        clock_shim,
        uid: args.child_uid,
    };
    let member = Arc::new(Member {
        id: args.id,
        dir: args.dir,
        token: args.admin_token,
        supervisor: Supervisor::start(store, stop_rx),
        cuttable,
    });
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", args.control_port)).await?;
    tracing::info!(id = %member.id, port = args.control_port, "member supervisor serving");
    let app = router(member.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(crate::startup::shutdown_signal())
        .await?;
    let _ = stop_tx.send(true);
    if let Ok(member) = Arc::try_unwrap(member) {
        member.supervisor.join().await;
    }
    Ok(())
}

fn router(member: Arc<Member>) -> Router {
    Router::new()
        .route("/member", get(view))
        .route("/member/kill", post(kill))
        .route("/member/pause", post(pause))
        .route("/member/resume", post(resume))
        .route("/member/clock", post(clock))
        .route("/member/cut", post(cut).delete(heal))
        .with_state(member)
}

/// A refusal: its status, and a JSON body saying why.
struct Refusal(StatusCode, &'static str, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let Refusal(status, error, message) = self;
        let body = serde_json::json!({ "error": error, "message": message });
        (status, Json(body)).into_response()
    }
}

type Answer = Result<Json<MemberView>, Refusal>;

impl Member {
    fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let given = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            None => Err(Refusal(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "send the fleet's admin token: Authorization: Bearer <token>".into(),
            )),
            Some(given) if bool::from(given.as_bytes().ct_eq(self.token.as_bytes())) => Ok(()),
            Some(_) => Err(Refusal(
                StatusCode::FORBIDDEN,
                "forbidden",
                "that is not the fleet's admin token".into(),
            )),
        }
    }

    /// The running process, or a 503 while the store is down.
    fn process(&self) -> Result<Process, Refusal> {
        let pid = self.supervisor.instance().pid.ok_or_else(|| {
            Refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "member_down",
                format!("{} is down (being restarted)", self.id),
            )
        })?;
        Ok(Process {
            pid: pid as i32,
            dir: self.dir.clone(),
        })
    }

    fn view(&self, did: String) -> Json<MemberView> {
        let instance = self.supervisor.instance();
        let offset = crate::member::clock_offset::read_offset(
            &crate::member::clock_offset::offset_file(&self.dir),
        );
        Json(MemberView {
            id: self.id.clone(),
            pid: instance.pid,
            restarts: instance.restarts,
            last_exit: instance.last_exit,
            clock_offset_ms: offset.unwrap_or(0),
            down_until_ms: down_until(&self.dir),
            did,
        })
    }
}

fn failed(why: String) -> Refusal {
    Refusal(StatusCode::INTERNAL_SERVER_ERROR, "act_failed", why)
}

fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, Refusal> {
    body.map(|Json(b)| b)
        .map_err(|e| Refusal(StatusCode::BAD_REQUEST, "bad_request", e.body_text()))
}

async fn view(State(m): State<Arc<Member>>, headers: HeaderMap) -> Answer {
    m.check(&headers)?;
    Ok(m.view(String::new()))
}

async fn kill(
    State(m): State<Arc<Member>>,
    headers: HeaderMap,
    asked: Result<Json<Kill>, JsonRejection>,
) -> Answer {
    m.check(&headers)?;
    let Kill { down_ms } = body(asked)?;
    if down_ms > 60_000 {
        return Err(Refusal(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("`down_ms` is at most 60000 (a workshop's minute); got {down_ms}"),
        ));
    }
    let process = m.process()?;
    let down_for = (down_ms > 0).then(|| Duration::from_millis(down_ms));
    process.kill(down_for).map_err(failed)?;
    tracing::warn!(id = %m.id, pid = process.pid, down_ms, "member killed");
    Ok(m.view(format!("killed pid {}, down for {down_ms} ms", process.pid)))
}

async fn pause(
    State(m): State<Arc<Member>>,
    headers: HeaderMap,
    asked: Result<Json<Pause>, JsonRejection>,
) -> Answer {
    m.check(&headers)?;
    let Pause { ms } = body(asked)?;
    let process = m.process()?;
    process.pause(Duration::from_millis(ms)).map_err(failed)?;
    tracing::warn!(id = %m.id, pid = process.pid, ms, "member paused");
    Ok(m.view(format!("stopped pid {} for {ms} ms", process.pid)))
}

async fn resume(State(m): State<Arc<Member>>, headers: HeaderMap) -> Answer {
    m.check(&headers)?;
    let process = m.process()?;
    process.resume().map_err(failed)?;
    Ok(m.view(format!("resumed pid {}", process.pid)))
}

async fn clock(
    State(m): State<Arc<Member>>,
    headers: HeaderMap,
    asked: Result<Json<ClockShift>, JsonRejection>,
) -> Answer {
    m.check(&headers)?;
    let ClockShift { add_ms } = body(asked)?;
    let process = m.process()?;
    let now = process.shift_clock(add_ms).map_err(|why| {
        Refusal(
            StatusCode::CONFLICT,
            "no_clock_shim",
            format!("{}: {why}", m.id),
        )
    })?;
    tracing::warn!(id = %m.id, add_ms, now, "member clock moved");
    Ok(m.view(format!("clock {add_ms:+} ms (now {now:+} ms)")))
}

async fn cut(
    State(m): State<Arc<Member>>,
    headers: HeaderMap,
    asked: Result<Json<Cut>, JsonRejection>,
) -> Answer {
    m.check(&headers)?;
    let Cut { drop, ms } = body(asked)?;
    uncuttable(&m)?;
    let bad = |why: String| Refusal(StatusCode::BAD_REQUEST, "bad_request", why);
    if ms == 0 || ms > crate::member::cut::MAX_MS {
        return Err(bad(format!(
            "`ms` must be 1..={}; got {ms}",
            crate::member::cut::MAX_MS
        )));
    }
    let addrs = drop
        .iter()
        .map(|a| a.parse::<std::net::Ipv4Addr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad(format!("`drop` takes IPv4 addresses; got {drop:?}")))?;
    let mut script = crate::member::cut::flush();
    if !addrs.is_empty() {
        script += &crate::member::cut::add(&addrs, ms);
    }
    nft(&script).await.map_err(failed)?;
    tracing::warn!(id = %m.id, ?addrs, ms, "member cut off");
    Ok(m.view(format!(
        "cut off from {} addresses for {ms} ms",
        addrs.len()
    )))
}

async fn heal(State(m): State<Arc<Member>>, headers: HeaderMap) -> Answer {
    m.check(&headers)?;
    uncuttable(&m)?;
    nft(&crate::member::cut::flush()).await.map_err(failed)?;
    Ok(m.view("healed".into()))
}

fn uncuttable(m: &Member) -> Result<(), Refusal> {
    m.cuttable.clone().map_err(|why| {
        Refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "cannot_cut",
            format!("{} cannot be cut off here: {why}", m.id),
        )
    })
}

/// Runs an `nft` script in this process' own network namespace.
async fn nft(script: &str) -> Result<(), String> {
    use tokio::io::AsyncWriteExt;
    let mut child = Command::new("nft")
        .args(["-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot run nft: {err}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .await
            .map_err(|err| err.to_string())?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|err| err.to_string())?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "nft: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}
