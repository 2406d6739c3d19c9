//! A private `redis-server` process: started on a free port in a temp dir, ready once it
//! answers PING, killed and reaped on drop. `oversell up` runs one; so does every test.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

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

/// The lowest port [`free_port`] picks.
const FIRST_PICKED_PORT: u16 = 10_000;

/// A port free right now, picked at random below the kernel's ephemeral range. A port the
/// kernel picks (`bind` to 0) comes from the range outgoing connections take their ports from:
/// handed to a child, it can be taken by any connection before the child binds it. Below the
/// range only a process binding that very port could take it.
pub fn free_port() -> anyhow::Result<u16> {
    let end = ephemeral_range_start().max(FIRST_PICKED_PORT + 1);
    let span = u64::from(end - FIRST_PICKED_PORT);
    let mut seed = random_seed();
    for _ in 0..256 {
        // xorshift64: enough to spread the picks of concurrent tests.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let port = FIRST_PICKED_PORT + (seed % span) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Where the kernel's ephemeral ports start (`ip_local_port_range`; 32768 when unreadable).
fn ephemeral_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish() | 1
}

/// Looks a program up on `PATH` and in the sbin directories Debian puts servers in.
pub fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_port_lies_below_the_ephemeral_range_and_can_be_bound() {
        let start = ephemeral_range_start();
        for _ in 0..20 {
            let port = free_port().unwrap();
            assert!(
                (FIRST_PICKED_PORT..start).contains(&port),
                "{port} (range from {start})"
            );
            TcpListener::bind(("127.0.0.1", port)).unwrap();
        }
    }
}
