//! A private `redis-server` process: started on a free port in a temp dir, ready once it
//! answers PING, killed and reaped on drop. `oversell up` runs one; so does every test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The one way this project picks a free port for a child, shared with `loadtest course`.
use oversell_client::ports::free_port;

pub struct RedisServer {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl RedisServer {
    /// Starts `redis-server` on a free loopback port with no persistence.
    pub fn start() -> anyhow::Result<Self> {
        Self::start_on(free_port()?)
    }

    /// Starts `redis-server` on `port` with no persistence.
    pub fn start_on(port: u16) -> anyhow::Result<Self> {
        Self::start_with(port, None)
    }

    /// Starts `redis-server` on `port`; with `data_dir`, its data lives there in an append-only
    /// file and survives restarts, otherwise nothing is persisted.
    pub fn start_with(port: u16, data_dir: Option<&Path>) -> anyhow::Result<Self> {
        let binary = find_binary("redis-server").context(
            "redis-server not found; install it with: sudo apt-get install -y redis-server",
        )?;
        let dir = tempfile::Builder::new()
            .prefix("oversell-redis-")
            .tempdir()?;
        let (data, appendonly) = match data_dir {
            Some(path) => {
                std::fs::create_dir_all(path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                (path, "yes")
            }
            None => (dir.path(), "no"),
        };
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                appendonly,
                "--daemonize",
                "no",
            ])
            .arg("--dir")
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start redis-server")?;
        let mut server = RedisServer { child, port, dir };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let client = redis::Client::open(self.url())?;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "redis-server exited at start-up ({status}); is port {} in use?",
                    self.port
                );
            }
            if let Ok(mut conn) = client.get_connection() {
                if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!(
            "redis-server did not answer PING within 10s on port {}",
            self.port
        )
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server (SIGKILL) and waits for it: Redis is gone, as after a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a fresh server on the same port, after `kill`.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        let fresh = RedisServer::start_on(self.port)?;
        let old = std::mem::replace(self, fresh);
        drop(old);
        Ok(())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Looks a program up on `PATH` and in the sbin directories Debian puts servers in.
pub fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}
