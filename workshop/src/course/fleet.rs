//! The fleet a chapter needs, started and stopped for it: `oversell up` with the chapter's
//! flags on this machine, or the compose profile of the same fleet (`deploy/compose.sh`).
//! A fleet that cannot start says why, in the last lines its launcher printed; one this
//! machine cannot start at all (no root for its network, no ZooKeeper, no PostgreSQL) is not
//! tried: its chapters are listed NOT RUN with what is missing.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use oversell_api::LockStoreKind;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::scenario::StoreSetup;
use oversell_client::ports::free_port;

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
    /// Whether `oversell up` needs root for it (a network of its own, made with `ip` and
    /// `nft`).
    pub needs_root: bool,
    /// Whether it runs ZooKeeper servers (java and Debian's jar).
    pub needs_zookeeper: bool,
    /// Whether it runs a PostgreSQL server.
    pub needs_postgres: bool,
}

/// What this machine has of what `oversell up` needs beyond Redis and nginx, found once
/// before the course starts its first fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    pub root: bool,
    /// `ip` (iproute2) and `nft` (nftables), for the network namespaces.
    pub ip: bool,
    pub nft: bool,
    /// `java` and `/usr/share/java/zookeeper.jar`, for ZooKeeper.
    pub java: bool,
    pub zookeeper_jar: bool,
    /// A server binary at `/usr/lib/postgresql/<version>/bin/postgres`.
    pub postgres: bool,
}

/// Debian's ZooKeeper jar, where `oversell up` looks for it.
const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// Where Debian keeps PostgreSQL's server binaries, one dir per version.
const POSTGRES_VERSIONS: &str = "/usr/lib/postgresql";

impl Machine {
    /// Looks at this machine: its user, its PATH (and the sbin dirs, where `ip` and `nft`
    /// live, as `oversell up` looks for its tools), and Debian's places for the rest.
    pub fn here() -> Machine {
        let postgres = std::fs::read_dir(POSTGRES_VERSIONS).is_ok_and(|versions| {
            versions
                .flatten()
                .any(|v| v.path().join("bin/postgres").is_file())
        });
        Machine {
            root: is_root(),
            ip: on_path("ip"),
            nft: on_path("nft"),
            java: on_path("java"),
            zookeeper_jar: Path::new(ZOOKEEPER_JAR).is_file(),
            postgres,
        }
    }
}

fn on_path(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .any(|dir| dir.join(name).is_file())
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
            needs_zookeeper: store.zookeeper > 0,
            needs_postgres: store.postgres,
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

    /// Why a machine with `here` cannot start it, if it cannot: everything it lacks, in one
    /// line. The partitions need network namespaces, which `oversell up` makes as root with
    /// `ip` and `nft`; ZooKeeper needs java and its jar, the database chapters PostgreSQL's
    /// server. Compose brings all of them in its images, so it needs nothing here.
    pub fn cannot_run_here(&self, on: On, here: &Machine) -> Option<String> {
        if on == On::Compose {
            return None;
        }
        let mut missing: Vec<&str> = Vec::new();
        if self.needs_root {
            if !here.root {
                missing.push(
                    "root: `oversell up --network netns` makes a network namespace per process \
                     (run the course as root, or with --on compose)",
                );
            }
            if !here.ip {
                missing.push("`ip` for the network namespaces (sudo apt-get install -y iproute2)");
            }
            if !here.nft {
                missing.push("`nft` for the network's cuts (sudo apt-get install -y nftables)");
            }
        }
        if self.needs_zookeeper {
            if !here.java {
                missing.push("`java` for ZooKeeper (sudo apt-get install -y zookeeper)");
            }
            if !here.zookeeper_jar {
                missing.push(
                    "ZooKeeper, /usr/share/java/zookeeper.jar (sudo apt-get install -y zookeeper)",
                );
            }
        }
        if self.needs_postgres && !here.postgres {
            missing.push(
                "PostgreSQL's server, /usr/lib/postgresql/*/bin/postgres (sudo apt-get install \
                 -y postgresql)",
            );
        }
        (!missing.is_empty()).then(|| format!("needs {}", missing.join("; ")))
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
        // Each fleet starts from nothing and keeps no class in the home directory: a class
        // dir of its own in the course's folder, which is this course's alone.
        let class_dir = self.logs.join(format!("fleet-{n:02}-class"));
        let mut up = Command::new(&self.oversell);
        up.args(["up", "--instances", "3", "--port", &port.to_string()])
            .args(["--admin-token", &self.token])
            .arg("--class-dir")
            .arg(&class_dir)
            .args(spec.up_flags.split_whitespace())
            .env("RUST_LOG", "oversell=error")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(out)
            .kill_on_drop(true);
        // The fleet dies with the course: `kill_on_drop` needs the course to unwind, and a
        // course killed by a signal sent to it alone (not a terminal's Ctrl-C, which reaches
        // the whole group) left its fleet running. `oversell up` stops everything on SIGTERM.
        // SAFETY: between fork and exec, prctl only sets this process's own attribute and is
        // async-signal-safe; nothing of the parent's is touched.
        unsafe {
            up.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        let mut child = up
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
        // Named after the course's own folder, so two courses never share a project.
        let course = self.logs.file_name().and_then(|name| name.to_str());
        let project = format!("{}-{n}", course.unwrap_or("oversell-course"));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine with everything `oversell up` may need.
    const EVERYTHING: Machine = Machine {
        root: true,
        ip: true,
        nft: true,
        java: true,
        zookeeper_jar: true,
        postgres: true,
    };

    /// A machine with Redis and nginx alone.
    const BARE: Machine = Machine {
        root: false,
        ip: false,
        nft: false,
        java: false,
        zookeeper_jar: false,
        postgres: false,
    };

    fn spec(store: StoreSetup) -> FleetSpec {
        FleetSpec::of(&store)
    }

    #[test]
    fn a_machine_with_everything_runs_every_fleet() {
        for store in [
            StoreSetup::ANY,
            StoreSetup::zookeeper(3),
            StoreSetup::postgres(),
            StoreSetup::zookeeper(1).partitioned(),
            StoreSetup::postgres().partitioned(),
        ] {
            assert_eq!(spec(store).cannot_run_here(On::Up, &EVERYTHING), None);
        }
    }

    #[test]
    fn the_default_fleet_needs_nothing_beyond_redis() {
        assert_eq!(spec(StoreSetup::ANY).cannot_run_here(On::Up, &BARE), None);
        assert_eq!(
            spec(StoreSetup::single_any()).cannot_run_here(On::Up, &BARE),
            None
        );
    }

    #[test]
    fn each_missing_tool_is_named_for_the_fleets_that_need_it() {
        let without = |missing: fn(&mut Machine)| {
            let mut machine = EVERYTHING;
            missing(&mut machine);
            machine
        };
        // (what the machine lacks, a fleet that needs it, what it is called, a fleet that
        // does not need it)
        let zk = StoreSetup::zookeeper(1);
        let cut = StoreSetup::single_any().partitioned();
        let cases = [
            (
                without(|m| m.java = false),
                zk,
                "`java`",
                StoreSetup::postgres(),
            ),
            (
                without(|m| m.zookeeper_jar = false),
                StoreSetup::zookeeper(3),
                "zookeeper.jar",
                StoreSetup::ANY,
            ),
            (
                without(|m| m.postgres = false),
                StoreSetup::postgres(),
                "/usr/lib/postgresql/*/bin/postgres",
                zk,
            ),
            (without(|m| m.root = false), cut, "root", StoreSetup::ANY),
            (without(|m| m.ip = false), cut, "`ip`", StoreSetup::ANY),
            (without(|m| m.nft = false), cut, "`nft`", StoreSetup::ANY),
        ];
        for (machine, needs, tool, spared) in cases {
            let why = spec(needs).cannot_run_here(On::Up, &machine).unwrap();
            assert!(why.contains(tool), "{tool}: {why}");
            assert_eq!(
                spec(spared).cannot_run_here(On::Up, &machine),
                None,
                "{tool}"
            );
        }
    }

    #[test]
    fn a_fleet_missing_two_things_names_both() {
        let machine = Machine {
            root: false,
            java: false,
            ..EVERYTHING
        };
        let why = spec(StoreSetup::zookeeper(1).partitioned())
            .cannot_run_here(On::Up, &machine)
            .unwrap();
        assert!(why.contains("root") && why.contains("`java`"), "{why}");
    }

    #[test]
    fn compose_needs_nothing_of_this_machine() {
        for store in [
            StoreSetup::zookeeper(3),
            StoreSetup::postgres(),
            StoreSetup::zookeeper(1).partitioned(),
        ] {
            assert_eq!(spec(store).cannot_run_here(On::Compose, &BARE), None);
        }
    }
}
