//! How many acknowledged lock writes a lock store killed with `kill -9` under load forgets,
//! measured from what the restarted store still has: 002 says AOF loses nothing (line 705)
//! and `everysec` at most a second (line 774); this counts it.
//!
//! Each run starts a `redis-server` of its own (a fresh data dir, the persistence under test,
//! with the flags `oversell up --lock-persistence` gives a lock store: `src/launch/redis_nodes.rs`)
//! and lets `--writers` clients take locks back to back (`SET lock:<n> <owner> NX PX 600000`,
//! each `n` once, the acknowledgement's time kept), SIGKILLs the server after `--load-ms`,
//! restarts it on the same dir and reads which locks came back. Lost = acknowledged but
//! absent; the loss window = the kill's time − the earliest acknowledgement among the lost.
//!
//! With `--disk-pressure` two `dd` loops write and sync files beside the store the whole time, as a
//! busy disk (another service's writes, a backup) would: an `everysec` Redis whose background
//! fsync takes longer than a second postpones writing its AOF buffer (up to 2 s,
//! `aof_delayed_fsync` in `INFO persistence`) while it already answers the clients, so a
//! process kill can lose what it acknowledged. Without it the AOF buffer reaches the kernel
//! before each reply, and a process kill loses nothing; only a machine that goes down loses the
//! unsynced second, which killing a process cannot show.
//!
//!   cargo run --release -p oversell-bench --bin aof-loss -- --runs 10 everysec always
//!
//! Prints one markdown row per persistence.
//!
//! With `--fleet` it measures the resource store of a whole fleet instead, the orders
//! themselves: for each persistence, with the disk idle and then busy (the same `dd` loops),
//! it starts `oversell up --resource-persistence P --tier lua-release`, sells through nginx
//! for `--seconds` (the selling rate: 200s a second, nothing killed), then SIGKILLs the
//! resource store `--kills` times while the buyers go on (`up` restarts it), and reads the
//! ledger back: acknowledged-then-lost = orders answered 200 that are not in it.
//!
//!   target/release/aof-loss --fleet --seconds 10 --kills 3 everysec always

use std::collections::HashSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use oversell_client::ports::free_port;

#[derive(Parser)]
#[command(about = "Acknowledged lock writes lost by a lock store killed with kill -9 under load")]
struct Args {
    /// Runs per persistence.
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Clients taking locks at once.
    #[arg(long, default_value_t = 16)]
    writers: usize,
    /// Load before the kill.
    #[arg(long, default_value_t = 3_000)]
    load_ms: u64,
    /// Two `dd` loops write and sync 512 MB files beside the store during the load.
    #[arg(long)]
    disk_pressure: bool,
    /// `everysec`, `always`, `no` (appendfsync) or `rdb` (the classic save rules); with
    /// `--fleet`, as `oversell up --resource-persistence` takes it.
    #[arg(default_values_t = ["everysec".to_owned()])]
    persistence: Vec<String>,
    /// Measure a fleet's resource store (orders through nginx) instead of a bare Redis.
    #[arg(long)]
    fleet: bool,
    #[arg(long, default_value = "target/release/oversell")]
    oversell: std::path::PathBuf,
    /// `--fleet`: seconds of selling before the kills, the rate's measure.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// `--fleet`: SIGKILLs of the resource store under load.
    #[arg(long, default_value_t = 3)]
    kills: u32,
}

/// One killed run.
struct Run {
    acked: usize,
    lost: usize,
    /// The kill's time − the earliest lost acknowledgement (0 when nothing was lost).
    window_ms: f64,
    delayed_fsyncs: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.fleet {
        return fleet::main(&args).await;
    }
    println!(
        "| persistence | disk | runs | acked writes per run (median) | lost per run | loss \
         window ms (max) | delayed fsyncs (sum) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for persistence in &args.persistence {
        let mut runs = Vec::new();
        for _ in 0..args.runs {
            runs.push(run(&args, persistence).await?);
        }
        let mut acked: Vec<usize> = runs.iter().map(|r| r.acked).collect();
        acked.sort_unstable();
        let lost: Vec<String> = runs.iter().map(|r| r.lost.to_string()).collect();
        let window = runs.iter().map(|r| r.window_ms).fold(0.0, f64::max);
        let delayed: u64 = runs.iter().map(|r| r.delayed_fsyncs).sum();
        println!(
            "| {persistence} | {} | {} | {} | {} | {window:.0} | {delayed} |",
            if args.disk_pressure {
                "busy (dd)"
            } else {
                "quiet"
            },
            runs.len(),
            acked[acked.len() / 2],
            lost.join(" "),
        );
    }
    Ok(())
}

fn persistence_args(persistence: &str) -> anyhow::Result<Vec<&'static str>> {
    Ok(match persistence {
        "everysec" => vec![
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
        ],
        "always" => vec![
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
        ],
        "no" => vec!["--appendonly", "yes", "--appendfsync", "no", "--save", ""],
        "rdb" => vec!["--appendonly", "no", "--save", "900 1 300 10 60 10000"],
        other => bail!("unknown persistence `{other}`"),
    })
}

fn start_redis(dir: &Path, port: u16, persistence: &str) -> anyhow::Result<Child> {
    Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(dir)
        .args(persistence_args(persistence)?)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("start redis-server")
}

/// Waits until the server answers and has loaded its data (deadline 30 s).
async fn connect(port: u16) -> anyhow::Result<redis::aio::MultiplexedConnection> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
            let info: redis::RedisResult<String> = redis::cmd("INFO")
                .arg("persistence")
                .query_async(&mut conn)
                .await;
            // `loading:0` on a line of its own: `async_loading:0` is another field.
            if matches!(&info, Ok(info) if info.lines().any(|l| l.trim() == "loading:0")) {
                return Ok(conn);
            }
        }
        if Instant::now() > deadline {
            bail!("redis-server on {port} did not come up within 30 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn info_field(info: &str, name: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

async fn run(args: &Args, persistence: &str) -> anyhow::Result<Run> {
    let dir = tempdir()?;
    let port = free_port()?;
    let mut server = start_redis(&dir, port, persistence)?;
    let mut probe = connect(port).await?;
    let pressure = match args.disk_pressure {
        true => Some(
            Command::new("sh")
                .process_group(0)
                .arg("-c")
                .arg(format!(
                    "for i in 1 2; do (while :; do dd if=/dev/zero of={}/ballast$i bs=1M \
                     count=512 conv=fsync status=none; done) & done; wait",
                    dir.display()
                ))
                .spawn()
                .context("start dd")?,
        ),
        false => None,
    };

    let next = Arc::new(AtomicU64::new(0));
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}"))?;
    let mut writers = Vec::new();
    for _ in 0..args.writers {
        let mut conn = client.get_multiplexed_async_connection().await?;
        let next = next.clone();
        writers.push(tokio::spawn(async move {
            let mut acked: Vec<(u64, Instant)> = Vec::new();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let set: redis::RedisResult<Option<String>> = redis::cmd("SET")
                    .arg(format!("lock:{n}"))
                    .arg("owner")
                    .arg("NX")
                    .arg("PX")
                    .arg(600_000)
                    .query_async(&mut conn)
                    .await;
                match set {
                    Ok(_) => acked.push((n, Instant::now())),
                    // The server is gone: the kill.
                    Err(_) => return acked,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(args.load_ms)).await;
    let info: String = redis::cmd("INFO")
        .arg("persistence")
        .query_async(&mut probe)
        .await?;
    let delayed_fsyncs = info_field(&info, "aof_delayed_fsync");
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(server.id() as i32, libc::SIGKILL) } != 0 {
        bail!("kill: {}", std::io::Error::last_os_error());
    }
    let killed = Instant::now();
    server.wait()?;
    let mut acked = Vec::new();
    for writer in writers {
        acked.extend(writer.await?);
    }
    if let Some(dd) = pressure {
        // The shell and its two loops are one process group of their own.
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-(dd.id() as i32), libc::SIGKILL);
        }
        let _ = dd.wait_with_output();
    }

    let mut server = start_redis(&dir, port, persistence)?;
    let mut conn = connect(port).await?;
    let mut kept = HashSet::new();
    let mut cursor: u64 = 0;
    loop {
        let (next_cursor, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg("lock:*")
            .arg("COUNT")
            .arg(10_000)
            .query_async(&mut conn)
            .await?;
        kept.extend(
            keys.iter()
                .filter_map(|k| k.strip_prefix("lock:")?.parse::<u64>().ok()),
        );
        cursor = next_cursor;
        if cursor == 0 {
            break;
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let lost: Vec<&(u64, Instant)> = acked.iter().filter(|(n, _)| !kept.contains(n)).collect();
    let window_ms = lost
        .iter()
        .map(|(_, at)| killed.saturating_duration_since(*at).as_secs_f64() * 1000.0)
        .fold(0.0, f64::max);
    Ok(Run {
        acked: acked.len(),
        lost: lost.len(),
        window_ms,
        delayed_fsyncs,
    })
}

fn tempdir() -> anyhow::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("aof-loss-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `--fleet`: a whole fleet's resource store, orders sold through nginx.
mod fleet {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use anyhow::Context;
    use http::{Method, StatusCode};
    use oversell_bench::fault::{
        get_json, ledger_ids, pid_on_port, redis_serves, signal, BusyDisk,
    };
    use oversell_bench::Fleet;
    use oversell_client::http::Pool;
    use oversell_client::Targets;
    use serde_json::Value;

    use super::Args;

    const BUYERS: usize = 16;

    struct Row {
        rate: f64,
        acked: usize,
        lost: usize,
        oversold: i64,
        longest_back: Duration,
    }

    pub async fn main(args: &Args) -> anyhow::Result<()> {
        println!(
            "# aof-loss --fleet: lua-release, 2 instances, {BUYERS} buyers through nginx, {} s \
             of selling then {} SIGKILLs of the resource store; load {}",
            args.seconds,
            args.kills,
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
        println!(
            "| resource store | disk | sales/s (no kill) | orders answered 200 | \
             acknowledged then lost | oversold | longest restart |"
        );
        println!("|---|---|---|---|---|---|---|");
        for busy in [false, true] {
            for persistence in &args.persistence {
                let row = run(args, persistence, busy).await?;
                println!(
                    "| appendfsync {persistence} | {} | {:.0} | {} | {} | {} | {:.1} s |",
                    if busy { "busy (2 dd loops)" } else { "idle" },
                    row.rate,
                    row.acked,
                    row.lost,
                    row.oversold,
                    row.longest_back.as_secs_f64()
                );
            }
        }
        Ok(())
    }

    async fn run(args: &Args, persistence: &str, busy: bool) -> anyhow::Result<Row> {
        let fleet = Fleet::start_with(
            &args.oversell,
            2,
            &[],
            &[
                "--resource-persistence",
                persistence,
                "--tier",
                "lua-release",
            ],
        )?;
        let port: u16 = fleet
            .redis_url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .context("the resource store's port")?;
        fleet.admin("default")?.reset(1_000_000).await?;
        // Beside the fleet's run dir, on the same filesystem.
        let ballast = std::env::temp_dir().join(format!("aof-loss-ballast-{}", std::process::id()));
        let disk = match busy {
            true => Some(BusyDisk::start(&ballast)?),
            false => None,
        };
        let targets = Targets::parse(&[fleet.url.as_str()], None)?;
        let pool = Pool::default();
        let acked = Arc::new(Mutex::new(Vec::<String>::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let buyers: Vec<_> = (0..BUYERS)
            .map(|_| {
                let (acked, stop, targets, pool) =
                    (acked.clone(), stop.clone(), targets.clone(), pool.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let reply = pool
                            .fetch(
                                &targets,
                                targets.first(),
                                Method::POST,
                                "/sale",
                                None,
                                None,
                                Duration::from_secs(10),
                            )
                            .await;
                        let Ok(reply) = reply else {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        };
                        if reply.status != StatusCode::OK {
                            continue;
                        }
                        let sold: Value = serde_json::from_slice(&reply.body).unwrap_or_default();
                        if let Some(id) = sold["order_id"].as_str() {
                            acked
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(id.to_owned());
                        }
                    }
                })
            })
            .collect();
        let count = || acked.lock().unwrap_or_else(|p| p.into_inner()).len();
        let started = Instant::now();
        tokio::time::sleep(Duration::from_secs(args.seconds)).await;
        let rate = count() as f64 / started.elapsed().as_secs_f64();
        let mut longest_back = Duration::ZERO;
        for _ in 0..args.kills {
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            let pid = pid_on_port(port).context("no resource store on its port")?;
            signal(pid as i32, libc::SIGKILL);
            let killed = Instant::now();
            while !redis_serves(port).await {
                anyhow::ensure!(
                    killed.elapsed() < Duration::from_secs(60),
                    "the resource store was not back within 60 s"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            longest_back = longest_back.max(killed.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        stop.store(true, Ordering::Relaxed);
        for buyer in buyers {
            buyer.await?;
        }
        drop(disk);
        let _ = std::fs::remove_dir_all(&ballast);
        let ledger = ledger_ids(&pool, &targets, "default").await?;
        let acked = acked.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let lost = acked.iter().filter(|id| !ledger.contains(*id)).count();
        let state = get_json(&pool, &targets, "/state").await?;
        Ok(Row {
            rate,
            acked: acked.len(),
            lost,
            oversold: state["oversold"].as_i64().unwrap_or(-1),
            longest_back,
        })
    }
}
