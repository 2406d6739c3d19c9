//! What the benchmarks that strike a running fleet share: the process behind a member's
//! port (it changes at every restart, the port does not), signals to it, a busy disk beside
//! it, a small seeded random source (a fault schedule can be replayed), and the ledger read
//! back through the fleet's URL.

use std::collections::HashSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use anyhow::{bail, Context};
use http::{Method, StatusCode};
use oversell_client::http::Pool;
use oversell_client::Targets;
use serde_json::Value;

/// The pid of the process listening on 127.0.0.1:`port` (for nginx, its master: the one
/// listener whose parent is not another of them), read from `ss`.
pub fn pid_on_port(port: u16) -> Option<u32> {
    let out = Command::new("ss")
        .args(["-Hltnp", &format!("sport = :{port}")])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let pids: HashSet<u32> = text
        .split("pid=")
        .skip(1)
        .filter_map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect();
    pids.iter()
        .copied()
        .find(|pid| parent_of(*pid).is_none_or(|parent| !pids.contains(&parent)))
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces, so read after its closing paren.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Sends `signal` to `pid` (a negative pid: its process group); whether it was delivered.
pub fn signal(pid: i32, signal: i32) -> bool {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// Two `dd` loops writing and syncing 256 MB files in `dir`, as another service's writes or
/// a backup would: a Redis on the same disk then sees its background fsync lag. Stopped
/// (the whole group) when dropped.
pub struct BusyDisk {
    shell: Child,
}

impl BusyDisk {
    pub fn start(dir: &Path) -> anyhow::Result<BusyDisk> {
        std::fs::create_dir_all(dir)?;
        let shell = Command::new("sh")
            .process_group(0)
            .arg("-c")
            .arg(format!(
                "for i in 1 2; do (while :; do dd if=/dev/zero of={}/ballast$i bs=1M \
                 count=256 conv=fsync status=none; done) & done; wait",
                dir.display()
            ))
            .spawn()
            .context("start dd")?;
        Ok(BusyDisk { shell })
    }
}

impl Drop for BusyDisk {
    fn drop(&mut self) {
        signal(-(self.shell.id() as i32), libc::SIGKILL);
        let _ = self.shell.wait();
    }
}

/// splitmix64: a seeded source, so a run's schedule is the same for the same seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi` milliseconds.
    pub fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.below(hi - lo + 1))
    }
}

/// Every order id in `room`'s ledger, read page by page through the fleet's URL.
pub async fn ledger_ids(
    pool: &Pool,
    targets: &Targets,
    room: &str,
) -> anyhow::Result<HashSet<String>> {
    let mut ids = HashSet::new();
    let mut offset = 0;
    loop {
        let path = format!("/ledger?room={room}&offset={offset}&limit=10000");
        // A page of 10,000 orders from a fleet under faults: more time than a plain read.
        let page = get_json_within(pool, targets, &path, Duration::from_secs(30)).await?;
        let orders = page["orders"]
            .as_array()
            .context("a ledger page without orders")?;
        if orders.is_empty() {
            return Ok(ids);
        }
        offset += orders.len();
        ids.extend(
            orders
                .iter()
                .filter_map(|o| Some(o["order_id"].as_str()?.to_owned())),
        );
    }
}

/// `GET path` through the fleet as JSON, or why not.
pub async fn get_json(pool: &Pool, targets: &Targets, path: &str) -> anyhow::Result<Value> {
    get_json_within(pool, targets, path, Duration::from_secs(10)).await
}

/// `GET path` through the fleet as JSON within `limit`, or why not.
async fn get_json_within(
    pool: &Pool,
    targets: &Targets,
    path: &str,
    limit: Duration,
) -> anyhow::Result<Value> {
    let reply = pool
        .fetch(
            targets,
            targets.first(),
            Method::GET,
            path,
            None,
            None,
            limit,
        )
        .await?;
    if reply.status != StatusCode::OK {
        bail!(
            "GET {path}: {} {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        );
    }
    Ok(serde_json::from_slice(&reply.body)?)
}

/// Whether a Redis answers PING on 127.0.0.1:`port` within a second, its data loaded.
pub async fn redis_serves(port: u16) -> bool {
    let asked = async {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        let info: String = redis::cmd("INFO")
            .arg("persistence")
            .query_async(&mut conn)
            .await
            .ok()?;
        Some(info.lines().any(|l| l.trim() == "loading:0"))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), asked).await,
        Ok(Some(true))
    )
}
