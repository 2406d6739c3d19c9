//! What the fleet benchmarks share: a real fleet started with `oversell up` (Redis, N
//! instances, nginx), dashboard streams held open against it (and whether each stayed live),
//! the flags and the closed loop of buyers of the benchmarks that sell in timed phases
//! ([`SalePhases`]), and Redis' own figures.
//!
//! - `sse-cost`: what 200 open dashboards cost the sale path of a room with a long ledger.
//! - `rehearsal`: a workshop's worth of rooms, dashboards and bursts of buyers.
//! - `class-rehearsal`: a class with room tokens beside the instructor's curriculum.
//! - `feed-cost`: what one viewer costs the network, and what 100 or 500 cost the sale rate.
//! - `fair-share`: a student flooding the fleet beside the demo, with and without limits.
//! - `vote-storm`: 300 phones voting at once beside the demo's sale, what it costs the sale.
//! - `phones`: 60 phones behind one address joining at once with the default per-client
//!   limits, one stream each: refused requests (0 is the bar), the feed and the vote.
//! - `nemesis`: the fleet's own members killed, paused and restarted while a class buys,
//!   votes and grades; nothing acknowledged may be lost (`fault`: what striking a member needs).

pub mod fault;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use loadtest::{Load, Model, RequestSpec, Stop};
use oversell_api::Tier;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// A running `oversell up`; SIGTERM (a clean teardown) when dropped.
pub struct Fleet {
    child: Child,
    pub url: String,
    pub token: String,
    pub redis_url: String,
    /// What `up` printed up to `ready:` (each member's address and first pid).
    pub banner: Vec<String>,
}

impl Fleet {
    /// Starts `<oversell> up --instances N --port 0` and waits for its `ready:` line.
    pub fn start(
        oversell: &PathBuf,
        instances: u16,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Fleet> {
        Fleet::start_with(oversell, instances, env, &[])
    }

    /// As [`Fleet::start`], with more `up` flags.
    pub fn start_with(
        oversell: &PathBuf,
        instances: u16,
        env: &[(&str, &str)],
        flags: &[&str],
    ) -> anyhow::Result<Fleet> {
        let mut child = Command::new(oversell)
            .args(["up", "--instances", &instances.to_string(), "--port", "0"])
            .args(flags)
            .envs(env.iter().copied())
            .env("RUST_LOG", "oversell=warn")
            .env_remove("ADMIN_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| {
                format!(
                    "cannot run {} (cargo build --release first)",
                    oversell.display()
                )
            })?;
        let stdout = child.stdout.take().context("no stdout")?;
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let seen = Arc::clone(&lines);
        std::thread::spawn(move || {
            let mut after_ready = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // What `up` says once running (a restart, nginx exiting) goes to stderr.
                if after_ready {
                    eprintln!("up | {line}");
                }
                let ready = line.starts_with("ready: ");
                after_ready |= ready;
                seen.lock().unwrap_or_else(|p| p.into_inner()).push(line);
                if ready {
                    let _ = ready_tx.send(());
                }
            }
        });
        let mut fleet = Fleet {
            child,
            url: String::new(),
            token: String::new(),
            redis_url: String::new(),
            banner: Vec::new(),
        };
        if ready_rx.recv_timeout(Duration::from_secs(60)).is_err() {
            bail!("oversell up did not print `ready:` within 60 s");
        }
        let lines = lines.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let value = |prefix: &str| {
            lines
                .iter()
                .find_map(|l| l.strip_prefix(prefix))
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_owned)
        };
        fleet.url = value("ready: ").context("no ready line")?;
        // The banner names the admin token's file; it prints no token.
        let token_file = value("admin token file: ").context("no admin token file line")?;
        fleet.token = std::fs::read_to_string(&token_file)
            .with_context(|| format!("cannot read the admin token from {token_file}"))?;
        fleet.redis_url = value("redis: ").context("no redis line")?;
        fleet.banner = lines;
        Ok(fleet)
    }

    /// The fleet's URL for one room, as the load generator takes it.
    pub fn targets(&self, room: &str) -> anyhow::Result<oversell_client::Targets> {
        oversell_client::Targets::parse(&[self.url.as_str()], Some(room))
    }

    pub fn admin(&self, room: &str) -> anyhow::Result<oversell_client::AdminClient> {
        Ok(oversell_client::AdminClient::new(
            &self.targets(room)?,
            Some(self.token.clone()),
        ))
    }

    pub async fn redis(&self) -> anyhow::Result<redis::aio::MultiplexedConnection> {
        Ok(redis::Client::open(self.redis_url.as_str())?
            .get_multiplexed_async_connection()
            .await?)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `used_memory` of INFO memory, in bytes.
pub async fn used_memory(conn: &mut redis::aio::MultiplexedConnection) -> anyhow::Result<u64> {
    let info: String = redis::cmd("INFO").arg("memory").query_async(conn).await?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .context("no used_memory in INFO memory")
}

/// Every command Redis ran so far (INFO commandstats).
pub async fn redis_calls(conn: &mut redis::aio::MultiplexedConnection) -> anyhow::Result<u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await?;
    Ok(info
        .lines()
        .filter_map(|line| line.split("calls=").nth(1))
        .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
        .sum())
}

/// What one dashboard stream received.
#[derive(Debug, Default)]
pub struct StreamCounts {
    pub state: AtomicU64,
    pub unavailable: AtomicU64,
    pub state_lost: AtomicU64,
    /// The HTTP status line was not 200.
    pub refused: AtomicU64,
    /// Bytes received, headers included (what the stream costs the network).
    pub bytes: AtomicU64,
    /// `timeline` events received.
    pub timeline: AtomicU64,
    /// `poll` events received (the class vote's stream).
    pub poll: AtomicU64,
}

/// An open `GET /events` stream, counting its events; closed when dropped.
pub struct Dashboard {
    pub counts: Arc<StreamCounts>,
    task: JoinHandle<()>,
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Dashboard {
    /// Opens the room's stream through the fleet's nginx, as a browser's `EventSource` would.
    pub fn open(url: &str, room: &str) -> anyhow::Result<Dashboard> {
        Dashboard::open_drawing(url, room, None)
    }

    /// As [`Dashboard::open`], for a page that draws `draw` sections of the timeline.
    pub fn open_drawing(url: &str, room: &str, draw: Option<usize>) -> anyhow::Result<Dashboard> {
        let draw = draw.map(|d| format!("&draw={d}")).unwrap_or_default();
        Dashboard::open_stream(url, &format!("/events?room={room}{draw}"))
    }

    /// Any of the fleet's event streams, e.g. the class vote's `/poll/events?room=…`.
    pub fn open_stream(url: &str, path_and_query: &str) -> anyhow::Result<Dashboard> {
        let authority = url
            .strip_prefix("http://")
            .context("the fleet URL is http://")?
            .trim_end_matches('/')
            .to_owned();
        let request = format!(
            "GET {path_and_query} HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n",
        );
        let counts = Arc::new(StreamCounts::default());
        let seen = Arc::clone(&counts);
        let task = tokio::spawn(async move {
            let Ok(mut tcp) = TcpStream::connect(&authority).await else {
                seen.refused.fetch_add(1, Ordering::Relaxed);
                return;
            };
            if tcp.write_all(request.as_bytes()).await.is_err() {
                seen.refused.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let mut buf = vec![0u8; 64 * 1024];
            let mut carry = String::new();
            let mut head = true;
            while let Ok(n) = tcp.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                seen.bytes.fetch_add(n as u64, Ordering::Relaxed);
                carry.push_str(&String::from_utf8_lossy(&buf[..n]));
                if head {
                    if !carry.starts_with("HTTP/1.1 200") {
                        seen.refused.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    head = false;
                }
                // Count whole lines only; keep a partial last line for the next read.
                let cut = carry.rfind('\n').map_or(0, |i| i + 1);
                for line in carry[..cut].lines() {
                    match line.trim_end() {
                        "event: state" => seen.state.fetch_add(1, Ordering::Relaxed),
                        "event: unavailable" => seen.unavailable.fetch_add(1, Ordering::Relaxed),
                        "event: state_lost" => seen.state_lost.fetch_add(1, Ordering::Relaxed),
                        "event: timeline" => seen.timeline.fetch_add(1, Ordering::Relaxed),
                        "event: poll" => seen.poll.fetch_add(1, Ordering::Relaxed),
                        _ => 0,
                    };
                }
                carry.drain(..cut);
            }
        });
        Ok(Dashboard { counts, task })
    }

    pub fn states(&self) -> u64 {
        self.counts.state.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.counts.bytes.load(Ordering::Relaxed)
    }

    /// Why this stream was not live over `elapsed`, if it was not: fewer states than 80 % of
    /// the ticks (a stream sends the state every other tick, 500 ms), or any `state_lost`,
    /// `unavailable` or refusal.
    pub fn stalled(&self, elapsed: Duration) -> Option<String> {
        let ticks = elapsed.as_secs_f64() / 0.5;
        let c = &self.counts;
        let (states, lost, unavailable, refused) = (
            c.state.load(Ordering::Relaxed),
            c.state_lost.load(Ordering::Relaxed),
            c.unavailable.load(Ordering::Relaxed),
            c.refused.load(Ordering::Relaxed),
        );
        ((states as f64) < ticks * 0.8 || lost + unavailable + refused > 0).then(|| {
            format!(
                "{states} states in {ticks:.0} ticks, {lost} state_lost, {unavailable} \
                 unavailable, {refused} refused"
            )
        })
    }
}

/// The flags of the benchmarks that sell to one room in timed phases (`feed-cost`,
/// `sse-cost`): the fleet, and the closed loop of buyers each phase runs.
#[derive(clap::Args)]
pub struct SalePhases {
    /// The oversell binary (`oversell up` starts the fleet).
    #[arg(long, default_value = "target/release/oversell")]
    pub oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    pub instances: u16,
    /// Seconds of selling per phase.
    #[arg(long, default_value_t = 8)]
    pub seconds: u64,
    /// Buyers of the closed loop (each sends its next order when answered).
    #[arg(long, default_value_t = 32)]
    pub connections: usize,
    /// The tier the room sells under while measuring.
    #[arg(long, default_value = "lua-release")]
    pub tier: Tier,
}

impl SalePhases {
    /// One phase's load: the closed loop of buyers, one item each, for `seconds`.
    pub fn load(&self) -> Load {
        Load {
            model: Model::Closed {
                stop: Stop::After(Duration::from_secs(self.seconds)),
            },
            connections: self.connections,
            request: RequestSpec::sale(1),
            timeout: Duration::from_secs(30),
        }
    }
}

/// Waits until `check` holds, polling every 50 ms; an error after `limit`.
pub async fn wait_until(
    limit: Duration,
    what: &str,
    mut check: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + limit;
    while !check() {
        if tokio::time::Instant::now() > deadline {
            bail!("{what}: not within {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The median of some figures (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}
