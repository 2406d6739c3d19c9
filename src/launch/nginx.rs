//! nginx as a child of `oversell up`: the template rendered into the run dir, run in the
//! foreground with the run dir as its prefix, so every file it writes (pid, logs, temp paths)
//! is inside the run dir and goes when the run dir goes.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use tokio::process::{Child, Command};

use super::process;
use super::topology::{ClientLimits, NginxValues};

/// How long nginx may take to finish in-flight requests on SIGQUIT before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

pub struct Nginx {
    child: Child,
    /// The master's pid, which is also the group of its workers: kept, since `child.id()` is
    /// gone once the master is reaped, while its workers may live on (and hold the port).
    group: Option<u32>,
    addr: SocketAddr,
    /// Kills nginx's workers if `up` dies without stopping them (see `process`); ended on
    /// drop, once nginx is stopped or killed.
    _reaper: Option<process::Reaper>,
}

impl Nginx {
    /// Renders the config for `upstreams` into `run_dir`, starts nginx on `host:port` for
    /// everyone and on `127.0.0.1:fleet_port` (and `also:fleet_port`: the gateway of a fleet
    /// network) for the fleet's own calls, and waits until it proxies `GET /health` to an
    /// instance.
    pub async fn start(
        binary: &Path,
        run_dir: &Path,
        (host, also): (IpAddr, Option<IpAddr>),
        (port, fleet_port): (u16, u16),
        upstreams: &[SocketAddr],
        limits: Option<&ClientLimits>,
    ) -> anyhow::Result<Self> {
        let run = run_dir.to_string_lossy().into_owned();
        let values = NginxValues {
            listen: vec![SocketAddr::new(host, port).to_string()],
            fleet_listen: std::iter::once(IpAddr::from([127, 0, 0, 1]))
                .chain(also)
                .map(|ip| SocketAddr::new(ip, fleet_port).to_string())
                .collect(),
            fleet_port,
            upstreams: upstreams.iter().map(SocketAddr::to_string).collect(),
            error_log: "stderr".into(),
            access_log: format!("{run}/access.log"),
            run_dir: run,
            limits: limits.cloned(),
        };
        let conf = run_dir.join("nginx.conf");
        std::fs::write(&conf, values.render()).context("cannot write nginx.conf")?;
        let mut command = Command::new(binary);
        command.arg("-p").arg(run_dir).arg("-c").arg(&conf);
        // Errors before the config is read go to stderr too, not to /var/log/nginx (which a
        // non-root user cannot open). `-e` exists since nginx 1.19.5.
        if supports_early_error_log(binary) {
            command.args(["-e", "stderr"]);
        }
        command.args(["-g", "daemon off;"]);
        let mut child = process::supervised(&mut command)
            .spawn()
            .context("cannot start nginx")?;
        process::prefix_output(&mut child, "nginx");
        let group = child.id();
        let reaper = group.and_then(process::Reaper::for_group);
        let mut nginx = Nginx {
            child,
            group,
            _reaper: reaper,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        nginx.wait_ready().await?;
        Ok(nginx)
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "nginx exited at start-up ({}); its error is above",
                    process::describe(status)
                );
            }
            if process::http_ok(self.addr, "/health").await {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        bail!("nginx did not answer on {} within 10s", self.addr)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Completes if nginx exits on its own, with how it ended. Its workers go with it: a
    /// master killed outright leaves them serving on the port, unsupervised.
    pub async fn exited(&mut self) -> String {
        let how = match self.child.wait().await {
            Ok(status) => process::describe(status),
            Err(err) => format!("wait failed: {err}"),
        };
        self.kill_group();
        how
    }

    /// Graceful quit (SIGQUIT), then SIGKILL after a grace period; workers included.
    pub async fn stop(&mut self) {
        process::stop_group(&mut self.child, libc::SIGQUIT, STOP_GRACE).await;
        self.kill_group();
    }

    fn kill_group(&self) {
        if let Some(group) = self.group {
            process::signal_group(group, libc::SIGKILL);
        }
    }
}

/// A fleet dropped without [`Nginx::stop`] (a panicking test, an early `?`) kills the whole
/// group: `kill_on_drop` reaches the master only, and the reaper, dropped with it, would no
/// longer be there to take the workers down (they outlived a failed test run that way).
impl Drop for Nginx {
    fn drop(&mut self) {
        self.kill_group();
    }
}

fn supports_early_error_log(binary: &Path) -> bool {
    let Ok(out) = StdCommand::new(binary)
        .arg("-v")
        .stdin(Stdio::null())
        .output()
    else {
        return false;
    };
    // `nginx version: nginx/1.22.1` (on stderr).
    let text = String::from_utf8_lossy(&out.stderr);
    let version = text.split('/').nth(1).unwrap_or("").trim();
    let parts: Vec<u32> = version
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse().ok())
        .take(3)
        .collect();
    parts.as_slice() >= [1, 19, 5].as_slice()
}

/// The nginx binary, or the one-line install hint.
pub fn find() -> anyhow::Result<PathBuf> {
    super::redis_server::find_binary("nginx")
        .context("nginx not found; install it with: sudo apt-get install -y nginx")
}
