//! How a database lock's waiters should wait, measured on a private PostgreSQL: in the server's
//! own queue, or told of each release by `LISTEN/NOTIFY` and trying again.
//!
//! - `queue`: a blocking `pg_advisory_xact_lock` bounded by `lock_timeout`, what the `postgres`
//!   tiers do under `wait: pubsub`: the server grants the lock to its next waiter itself, in
//!   the order they came, the moment the holder's `COMMIT` frees it.
//! - `notify`: `pg_try_advisory_xact_lock`; a waiter that missed listens (`LISTEN released`)
//!   until the holder's `pg_notify('released', '')`, sent with its `COMMIT`, and tries again
//!   (at the latest after 200 ms): Redis' pub/sub waiting, done in the database.
//! - `spin`: `pg_try_advisory_xact_lock` every 20 ms, the articles' loop.
//!
//! Every client holds one session, and takes and gives back one advisory lock in a loop for
//! `--seconds`; the lock's work is nothing. Per mode: lock takes per second; the hand-off (the
//! holder's `COMMIT` sent → the next holder's lock statement answered, one process, one
//! monotonic clock); each take's wait; takes per client (min, max, Jain's index).
//!
//!   cargo run --release -p oversell-bench --bin pg-wait -- --clients 64 --seconds 5
//!
//! Prints one markdown row per mode.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use futures_util::StreamExt;
use oversell::launch::netns::Place;
use oversell::launch::postgres_server::{self, PostgresSpec};
use oversell::launch::supervisor::ChildSpec;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, NoTls, SimpleQueryMessage};

#[derive(Parser)]
#[command(about = "A database lock's waiters: the server's queue, LISTEN/NOTIFY, or polling")]
struct Args {
    /// Clients, each with a session of its own.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(2..=400))]
    clients: u32,
    /// How long each mode runs.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=120))]
    seconds: u64,
    /// Modes to run, in order.
    #[arg(default_values_t = ["queue".to_string(), "notify".to_string(), "spin".to_string()],
          value_parser = ["queue", "notify", "spin"])]
    modes: Vec<String>,
}

/// A waiter that heard nothing looks again after this long, as the service's pub/sub wait
/// re-checks a lock with no known lease.
const RECHECK: Duration = Duration::from_millis(200);
const SPIN_SLEEP: Duration = Duration::from_millis(20);
/// The one lock every client takes (class, key), apart from the service's.
const LOCK: &str = "4242, 1";

/// What one mode's clients saw, shared while they run (a std Mutex: held for a push, never
/// across an `.await`).
#[derive(Default)]
struct Seen {
    /// When the last holder sent its `COMMIT`.
    released: Option<Instant>,
    hand_offs: Vec<Duration>,
    waits: Vec<Duration>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let dir = tempfile::tempdir()?;
    let port = oversell_client::ports::free_port()?;
    let spec = PostgresSpec::new(dir.path(), port, Place::LOOPBACK);
    let mut server = spec
        .command()
        .await
        .context("start PostgreSQL")?
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    postgres_server::wait_ready(&spec, Duration::from_secs(60)).await?;
    println!(
        "| wait | takes/s | hand-off p50 / p99 / max ms | wait p50 / p99 ms | takes per client min / max (min/max) | Jain |"
    );
    println!("|---|---|---|---|---|---|");
    for mode in &args.modes {
        let row = run(&spec.url(), mode, args.clients, args.seconds).await?;
        println!("{row}");
    }
    server.kill().await.ok();
    Ok(())
}

async fn run(url: &str, mode: &str, clients: u32, seconds: u64) -> anyhow::Result<String> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, notes) = connect(url).await?;
        let (seen, mode) = (seen.clone(), mode.to_owned());
        tasks.push(tokio::spawn(async move {
            client_loop(&client, notes, &mode, &seen, until).await
        }));
    }
    let mut per_client = Vec::new();
    for task in tasks {
        per_client.push(task.await??);
    }
    let seen = seen.lock().unwrap_or_else(|p| p.into_inner());
    let takes: u64 = per_client.iter().sum();
    let (min, max) = (
        per_client.iter().min().copied().unwrap_or(0),
        per_client.iter().max().copied().unwrap_or(0),
    );
    let sum: f64 = per_client.iter().map(|&x| x as f64).sum();
    let squares: f64 = per_client.iter().map(|&x| (x * x) as f64).sum();
    let jain = if squares > 0.0 {
        sum * sum / (per_client.len() as f64 * squares)
    } else {
        0.0
    };
    let mut hand_offs = seen.hand_offs.clone();
    let mut waits = seen.waits.clone();
    Ok(format!(
        "| {mode} | {:.0} | {} / {} / {} | {} / {} | {min} / {max} ({:.2}) | {jain:.3} |",
        takes as f64 / seconds as f64,
        ms(quantile(&mut hand_offs, 0.5)),
        ms(quantile(&mut hand_offs, 0.99)),
        ms(quantile(&mut hand_offs, 1.0)),
        ms(quantile(&mut waits, 0.5)),
        ms(quantile(&mut waits, 0.99)),
        if max > 0 {
            min as f64 / max as f64
        } else {
            0.0
        },
    ))
}

/// A session, and the notifications it hears: the connection's messages are read by a task
/// of their own, as tokio-postgres asks of a client that listens.
async fn connect(url: &str) -> anyhow::Result<(Client, mpsc::UnboundedReceiver<()>)> {
    let (client, mut connection) = tokio_postgres::connect(url, NoTls).await?;
    let (tell, notes) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(_) = message {
                let _ = tell.send(());
            }
        }
    });
    Ok((client, notes))
}

/// Takes and gives back the lock until `until`; returns how many times it took it.
async fn client_loop(
    client: &Client,
    mut notes: mpsc::UnboundedReceiver<()>,
    mode: &str,
    seen: &Mutex<Seen>,
    until: Instant,
) -> anyhow::Result<u64> {
    if mode == "notify" {
        client.batch_execute("LISTEN released").await?;
    }
    let mut takes = 0;
    while Instant::now() < until {
        let asked = Instant::now();
        let left = until.saturating_duration_since(asked);
        let took = match mode {
            "queue" => queue(client, left).await?,
            _ => retry(client, &mut notes, mode, until).await?,
        };
        if !took {
            break;
        }
        let now = Instant::now();
        {
            let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(released) = seen.released.take() {
                seen.hand_offs.push(now - released);
            }
            seen.waits.push(now - asked);
            // Marked before the COMMIT is sent: the hand-off is what it takes the next one.
            seen.released = Some(Instant::now());
        }
        let release = match mode {
            "notify" => "SELECT pg_notify('released', ''); COMMIT",
            _ => "COMMIT",
        };
        client.batch_execute(release).await?;
        takes += 1;
    }
    Ok(takes)
}

/// Waits in the server's queue for the lock, at most `left`; false when the time ran out.
async fn queue(client: &Client, left: Duration) -> anyhow::Result<bool> {
    let ms = left.as_millis().max(1);
    let sql = format!("BEGIN; SET LOCAL lock_timeout = {ms}; SELECT pg_advisory_xact_lock({LOCK})");
    match client.batch_execute(&sql).await {
        Ok(()) => Ok(true),
        Err(err) if err.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
            client.batch_execute("ROLLBACK").await?;
            Ok(false)
        }
        Err(err) => Err(err.into()),
    }
}

/// Tries for the lock until it has it (true) or `until` passes (false), between tries waiting
/// for a release's notification (`notify`) or sleeping (`spin`).
async fn retry(
    client: &Client,
    notes: &mut mpsc::UnboundedReceiver<()>,
    mode: &str,
    until: Instant,
) -> anyhow::Result<bool> {
    loop {
        // Notifications heard before this try are of releases it comes after.
        while notes.try_recv().is_ok() {}
        let sql = format!("BEGIN; SELECT pg_try_advisory_xact_lock({LOCK})");
        let rows = client.simple_query(&sql).await?;
        let got = rows.iter().any(|message| match message {
            SimpleQueryMessage::Row(row) => row.get(0) == Some("t"),
            _ => false,
        });
        if got {
            return Ok(true);
        }
        client.batch_execute("ROLLBACK").await?;
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        match mode {
            "notify" => {
                let _ = tokio::time::timeout(RECHECK.min(left), notes.recv()).await;
            }
            "spin" => tokio::time::sleep(SPIN_SLEEP.min(left)).await,
            other => bail!("unknown mode {other}"),
        }
    }
}

fn quantile(values: &mut [Duration], q: f64) -> Option<Duration> {
    values.sort();
    let n = values.len();
    (n > 0).then(|| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("—".into(), |d| format!("{:.2}", d.as_secs_f64() * 1000.0))
}
