//! One task per child process (an instance, a Redis node, a Sentinel) doing what
//! `restart: unless-stopped` does under docker-compose: whenever the process exits, for
//! whatever reason, it is started again with the same id, port and settings, and the restart is
//! logged. What "the same settings" means is the child's own [`ChildSpec`]: a Redis node behind
//! Sentinel, for one, asks the Sentinels which primary to follow before it comes back.
//!
//! A stopped process (SIGSTOP, the freeze fault) is not an exit: the task waits with plain
//! `waitpid`, which reports only termination, so a frozen instance is left frozen.

use std::io::IsTerminal;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::netns::Place;
use super::process;
use super::topology::InstanceEnv;
use crate::member::HOLD_DOWN_FILE;

/// How long an instance may take to drain on SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// Restart back-off, as Docker's: 100ms, doubled after each quick exit, reset once an
/// instance has run for `STABLE`.
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(5);
const STABLE: Duration = Duration::from_secs(10);

/// What a supervisor runs and restarts.
#[async_trait]
pub trait ChildSpec: Send + Sync + 'static {
    /// The name in logs and restart lines (`app2`, `lock-store`, `sentinel1`).
    fn id(&self) -> &str;
    fn port(&self) -> u16;
    /// Where it runs: loopback unless the fleet has a network of its own.
    fn place(&self) -> Place {
        Place::LOOPBACK
    }
    /// The command for the next start; asked afresh for every start and restart.
    async fn command(&self) -> std::io::Result<Command>;
}

/// An instance: `program serve` with `env`.
#[derive(Debug)]
pub struct InstanceSpec {
    pub program: PathBuf,
    pub port: u16,
    pub place: Place,
    pub env: InstanceEnv,
    /// The socket `up` bound when it picked the port, handed to the first start: between
    /// picking a port and the instance binding it, another process (any outgoing connection
    /// takes a port of the same range) could take it. Restarts bind the port again by number.
    pub listener: Mutex<Option<std::net::TcpListener>>,
    /// The fleet network (its `OVERSELL_NETNS` form), for the `partition` fault.
    pub network: Option<String>,
}

/// The descriptor an instance finds its inherited socket at (`serve --listen-fd`).
const INHERITED_FD: i32 = 3;

#[async_trait]
impl ChildSpec for InstanceSpec {
    fn id(&self) -> &str {
        &self.env.instance_id
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn place(&self) -> Place {
        self.place.clone()
    }

    async fn command(&self) -> std::io::Result<Command> {
        let mut command = Command::new(&self.program);
        // A variable left empty is one this topology does not use (`LOCK_REDIS_URL` with a
        // shared lock store): not set at all, rather than set to nothing.
        let vars = self.env.vars().into_iter().filter(|(_, v)| !v.is_empty());
        command.arg("serve").envs(vars);
        if let Some(network) = &self.network {
            command.env(crate::member::network::ENV, network);
        }
        let listener = self
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(listener) = listener {
            command.env("OVERSELL_LISTEN_FD", INHERITED_FD.to_string());
            // SAFETY: between fork and exec, only dup2 and fcntl (async-signal-safe). The
            // closure owns the socket, so it stays open until the command is dropped.
            unsafe {
                command.pre_exec(move || inherit(listener.as_raw_fd()));
            }
        }
        // Colour codes are noise once our output is a pipe or a file.
        if !std::io::stdout().is_terminal() {
            command.env("NO_COLOR", "1");
        }
        Ok(command)
    }
}

/// In the child: puts the socket at [`INHERITED_FD`], open across exec.
fn inherit(fd: i32) -> std::io::Result<()> {
    // dup2 leaves the copy without close-on-exec; the same descriptor needs it cleared.
    let done = match fd == INHERITED_FD {
        true => unsafe { libc::fcntl(fd, libc::F_SETFD, 0) },
        false => unsafe { libc::dup2(fd, INHERITED_FD) },
    };
    match done < 0 {
        true => Err(std::io::Error::last_os_error()),
        false => Ok(()),
    }
}

/// One instance as its supervisor sees it right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub id: String,
    pub port: u16,
    /// Its address: loopback, or its own in the fleet's network.
    pub ip: std::net::Ipv4Addr,
    /// The running process; `None` between an exit and its restart.
    pub pid: Option<u32>,
    /// How many times it was restarted.
    pub restarts: u32,
    /// How the last process ended (`signal 6`), if one did.
    pub last_exit: Option<String>,
}

pub struct Supervisor {
    /// A std `Mutex`, not a tokio one: it is only held to copy or update a few fields, never
    /// across an `.await`. Shared with the task that owns the process.
    status: Arc<Mutex<Instance>>,
    /// `Option` so that `join` can take it while `Drop` still aborts an unjoined task (which
    /// drops the `Child`, and `kill_on_drop` kills it).
    task: Option<JoinHandle<()>>,
}

impl Supervisor {
    /// Starts the child and keeps it running until `stop` turns true.
    pub fn start(spec: impl ChildSpec, stop: watch::Receiver<bool>) -> Self {
        let status = Arc::new(Mutex::new(Instance {
            id: spec.id().to_owned(),
            port: spec.port(),
            ip: spec.place().ip,
            pid: None,
            restarts: 0,
            last_exit: None,
        }));
        let task = tokio::spawn(supervise(spec, status.clone(), stop));
        Supervisor {
            status,
            task: Some(task),
        }
    }

    pub fn instance(&self) -> Instance {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits for the task to stop its instance (after `stop` turned true).
    pub async fn join(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn supervise(
    spec: impl ChildSpec,
    status: Arc<Mutex<Instance>>,
    mut stop: watch::Receiver<bool>,
) {
    let id = spec.id().to_owned();
    let mut delay = FIRST_DELAY;
    loop {
        let started = Instant::now();
        // A start may wait (a node held down by a fault, a primary waiting for its
        // promotion): stopping the fleet must not wait for it.
        let spawned = tokio::select! {
            biased;
            _ = stopping(&mut stop) => return,
            spawned = spawn(&spec) => spawned,
        };
        let mut child = match spawned {
            Ok(child) => child,
            Err(err) => {
                process::say(&format!("restart: cannot start {id} ({err}), retrying"));
                if wait_or_stop(&mut stop, delay).await {
                    return;
                }
                delay = (delay * 2).min(MAX_DELAY);
                continue;
            }
        };
        let pid = child.id();
        let restarts = {
            let mut s = status.lock().unwrap_or_else(PoisonError::into_inner);
            s.pid = pid;
            s.restarts
        };
        if restarts > 0 {
            let pid = pid.unwrap_or(0);
            let addr = spec.place().addr(spec.port());
            process::say(&format!("restart: {id} is back: http://{addr} pid={pid}"));
        }
        tokio::select! {
            // Stopping wins a tie: an exit caused by our own SIGTERM is not a crash.
            biased;
            _ = stopping(&mut stop) => {
                process::stop_group(&mut child, libc::SIGTERM, STOP_GRACE).await;
                status.lock().unwrap_or_else(PoisonError::into_inner).pid = None;
                return;
            }
            exited = child.wait() => {
                let how = match exited {
                    Ok(exit) => process::describe(exit),
                    Err(err) => format!("wait failed: {err}"),
                };
                // A freeze helper the instance forked may outlive it: sweep its group.
                if let Some(pgid) = pid {
                    process::signal_group(pgid, libc::SIGKILL);
                }
                {
                    let mut s = status.lock().unwrap_or_else(PoisonError::into_inner);
                    s.pid = None;
                    s.restarts += 1;
                    s.last_exit = Some(how.clone());
                }
                process::say(&format!("restart: {id} exited ({how}), restarting"));
            }
        }
        if started.elapsed() >= STABLE {
            delay = FIRST_DELAY;
        }
        if wait_or_stop(&mut stop, delay).await {
            return;
        }
        delay = (delay * 2).min(MAX_DELAY);
    }
}

/// Sleeps `delay`; true if `stop` turned true meanwhile.
async fn wait_or_stop(stop: &mut watch::Receiver<bool>, delay: Duration) -> bool {
    tokio::select! {
        _ = stopping(stop) => true,
        _ = tokio::time::sleep(delay) => false,
    }
}

/// Completes once `stop` is true, or its sender is gone (the fleet was dropped).
async fn stopping(stop: &mut watch::Receiver<bool>) {
    // The `Ref` is dropped here: it must not live across an `.await` in a spawned task.
    let _ = stop.wait_for(|stopping| *stopping).await.map(|_| ());
}

async fn spawn(spec: &impl ChildSpec) -> std::io::Result<Child> {
    let mut command = spec.command().await?;
    spec.place().enter(&mut command)?;
    let mut child = process::supervised(&mut command).spawn()?;
    process::prefix_output(&mut child, spec.id());
    Ok(child)
}

/// Waits out a hold-down a fault left in a child's dir (`node-down`, `zk-node-down`: a unix
/// time in ms, see `HOLD_DOWN_FILE`), then removes it: the child stays down as a crashed
/// machine would, instead of being back within 100 ms.
pub async fn stay_down(dir: &std::path::Path) {
    let file = dir.join(HOLD_DOWN_FILE);
    let Ok(text) = std::fs::read_to_string(&file) else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    // At most a minute, whatever the file says: a garbled file must not keep a node down.
    let left = text.trim().parse::<u64>().unwrap_or(0).saturating_sub(now);
    tokio::time::sleep(Duration::from_millis(left.min(60_000))).await;
    let _ = std::fs::remove_file(&file);
}
