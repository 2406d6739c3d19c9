//! The fleet a chapter needs, started and stopped for it: `oversell up` with the chapter's
//! flags on this machine, or the compose profile of the same fleet (`deploy/compose.sh`).
//! A fleet that cannot start says why, in the last lines its launcher printed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use oversell_api::LockStoreKind;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::scenario::StoreSetup;

/// How long a fleet may take to come up: a 3-server ZooKeeper ensemble and Sentinel's first
/// election are the slow ones (seconds); a loaded 2-core machine stretches them.
const READY_WITHIN: Duration = Duration::from_secs(180);
/// How long a fleet may take to stop before it is killed.
const STOPPED_WITHIN: Duration = Duration::from_secs(60);

/// Where the course starts its fleets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum On {
    /// `oversell up` on this machine (Linux; root for the partition chapters).
    Up,
    /// Docker Compose (`deploy/compose.sh`, from the repository's root).
    Compose,
}

/// What a chapter's fleet is, as the course compares them: chapters that need the same one
/// share it, one after the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetSpec {
    /// `oversell up`'s flags for it.
    pub up_flags: String,
    /// The compose profile (empty: the shared fleet) and its `LOCK_PERSISTENCE`.
    pub profile: String,
    pub persistence: String,
    /// Whether `oversell up` needs root for it (a network of its own).
    pub needs_root: bool,
}

impl FleetSpec {
    pub fn of(store: &StoreSetup) -> FleetSpec {
        let profile = match (store.lock_store, store.zookeeper) {
            (Some(LockStoreKind::Single), _) => "lock-single",
            (Some(LockStoreKind::Sentinel), _) => "sentinel",
            (Some(LockStoreKind::Redlock), _) => "redlock",
            (Some(LockStoreKind::Cluster), _) => "cluster",
            (_, 1) => "zookeeper",
            (_, 0) if store.postgres => "postgres",
            (_, 0) => "",
            (_, _) => "zookeeper3",
        };
        FleetSpec {
            up_flags: store.up_flags(),
            profile: profile.to_owned(),
            persistence: store
                .persistence
                .map_or("none".into(), |p| p.id().to_owned()),
            needs_root: store.netns,
        }
    }

    /// How the report names it.
    pub fn describe(&self, on: On) -> String {
        match on {
            On::Up if self.up_flags.is_empty() => "oversell up".into(),
            On::Up => format!("oversell up {}", self.up_flags),
            On::Compose if self.profile.is_empty() => "compose (shared)".into(),
            On::Compose => format!(
                "compose --profile {} (LOCK_PERSISTENCE={})",
                self.profile, self.persistence
            ),
        }
    }

    /// Why this machine cannot start it, if it cannot: the partitions need network
    /// namespaces, which `oversell up` makes as root (compose has a network anyway).
    pub fn cannot_run_here(&self, on: On) -> Option<String> {
        (on == On::Up && self.needs_root && !is_root()).then(|| {
            "needs root: `oversell up --network netns` makes a network namespace per process \
             (run the course as root, or with --on compose)"
                .to_owned()
        })
    }
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A started fleet: its URL, and what stops it.
pub struct Fleet {
    pub url: String,
    stop: Stopper,
}

enum Stopper {
    Up { child: Child },
    Compose { project: String },
}

/// Where the course's launchers may be found.
pub struct Launchers {
    pub oversell: PathBuf,
    pub token: String,
    /// Where each fleet's launcher output goes (kept when the course fails).
    pub logs: PathBuf,
}

impl Launchers {
    pub async fn start(&self, spec: &FleetSpec, on: On, n: usize) -> anyhow::Result<Fleet> {
        let port = free_port()?;
        match on {
            On::Up => self.start_up(spec, port, n).await,
            On::Compose => self.start_compose(spec, port, n).await,
        }
    }

    async fn start_up(&self, spec: &FleetSpec, port: u16, n: usize) -> anyhow::Result<Fleet> {
        let log = self.logs.join(format!("fleet-{n:02}.log"));
        let out = std::fs::File::create(&log).with_context(|| format!("{}", log.display()))?;
        let mut child = Command::new(&self.oversell)
            .args(["up", "--instances", "3", "--port", &port.to_string()])
            .args(["--admin-token", &self.token])
            .args(spec.up_flags.split_whitespace())
            .env("RUST_LOG", "oversell=error")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(out)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", self.oversell.display()))?;
        let stdout = child.stdout.take().context("oversell up's output")?;
        let mut lines = BufReader::new(stdout).lines();
        let deadline = tokio::time::Instant::now() + READY_WITHIN;
        let mut said = Vec::new();
        loop {
            let line = tokio::time::timeout_at(deadline, lines.next_line()).await;
            match line {
                Ok(Ok(Some(line))) => {
                    if let Some(url) = line.strip_prefix("ready: ") {
                        // Its later lines (restarts) are not the course's business.
                        tokio::spawn(
                            async move { while let Ok(Some(_)) = lines.next_line().await {} },
                        );
                        let url = url.trim().to_owned();
                        let stop = Stopper::Up { child };
                        return Ok(Fleet { url, stop });
                    }
                    said.push(line);
                }
                Ok(_) => {
                    let _ = child.wait().await;
                    bail!(
                        "oversell up exited before it was ready: {}",
                        last_words(&said, &log)
                    );
                }
                Err(_) => {
                    stop_child(&mut child).await;
                    bail!(
                        "oversell up was not ready within {READY_WITHIN:?}: {}",
                        last_words(&said, &log)
                    );
                }
            }
        }
    }

    async fn start_compose(&self, spec: &FleetSpec, port: u16, n: usize) -> anyhow::Result<Fleet> {
        let script = Path::new("deploy/compose.sh");
        if !script.is_file() {
            bail!("--on compose runs deploy/compose.sh: run the course from the repository's root");
        }
        let project = format!("oversell-course-{}-{n}", std::process::id());
        let log = self.logs.join(format!("fleet-{n:02}.log"));
        let out = std::fs::File::create(&log).with_context(|| format!("{}", log.display()))?;
        let mut up = Command::new("bash");
        up.arg(script).arg("up");
        if !spec.profile.is_empty() {
            up.arg(&spec.profile);
        }
        let status = up
            .env("COMPOSE_PROJECT_NAME", &project)
            .env("OVERSELL_PORT", port.to_string())
            .env("LOCK_PERSISTENCE", &spec.persistence)
            .env("ADMIN_TOKEN", &self.token)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .status()
            .await
            .context("cannot run bash deploy/compose.sh")?;
        let fleet = Fleet {
            url: format!("http://127.0.0.1:{port}"),
            stop: Stopper::Compose { project },
        };
        if !status.success() {
            let words = last_words(&[], &log);
            fleet.stop().await;
            bail!("deploy/compose.sh up failed: {words}");
        }
        Ok(fleet)
    }
}

impl Fleet {
    /// Stops the fleet and waits until it is gone.
    pub async fn stop(self) {
        match self.stop {
            Stopper::Up { mut child } => stop_child(&mut child).await,
            Stopper::Compose { project } => {
                let _ = Command::new("bash")
                    .args(["deploy/compose.sh", "down"])
                    .env("COMPOSE_PROJECT_NAME", project)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .await;
            }
        }
    }
}

/// SIGTERM, so that `oversell up` takes down what it started; SIGKILL if it does not end.
async fn stop_child(child: &mut Child) {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on our own child's pid, which `wait` has not reaped yet.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    }
    if tokio::time::timeout(STOPPED_WITHIN, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// The last lines a launcher said, on stdout or in its log, as one line.
fn last_words(stdout: &[String], log: &Path) -> String {
    let logged = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = stdout
        .iter()
        .map(String::as_str)
        .chain(logged.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    match tail.is_empty() {
        true => format!("it printed nothing (log: {})", log.display()),
        false => format!("{} (log: {})", tail.join(" / "), log.display()),
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("no free port")?;
    Ok(listener.local_addr()?.port())
}

/// The `oversell` binary: `--oversell`, else beside this program, else on `PATH`.
pub fn oversell_binary(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(path) = given {
        return match path.is_file() {
            true => Ok(path),
            false => Err(anyhow!("--oversell {}: no such file", path.display())),
        };
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("oversell")))
        .filter(|p| p.is_file());
    if let Some(path) = beside {
        return Ok(path);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("oversell"))
            .find(|p| p.is_file())
    });
    on_path.ok_or_else(|| {
        anyhow!("no oversell binary beside loadtest or on PATH: build it (cargo build --release) or pass --oversell PATH")
    })
}
