//! A class voting from its phones while the demo sells, through `oversell up`'s nginx: what
//! the votes cost the sale's rate, and how fast a vote is answered.
//!
//! A class of 200 rooms (the most one class has) and 300 phones, so a hundred rooms have two
//! (students who pair up), each phone with its room's token and the vote page's stream
//! (`/poll/events`) open. The demo room sells flat out; phases alternate, quiet (no vote) and
//! voting (every `--every-ms` all the phones vote at once, each a changed mind), so a drift of
//! the machine's load hits both. Reported: the sale rate while voting ÷ while quiet (medians),
//! and the p50 / p99 / max of the votes' answers.
//!
//!   cargo build --release && target/release/vote-storm

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use http::{Method, StatusCode};
use loadtest::{fire, Load, Model, RequestSpec, Silent, Stop};
use oversell_bench::{median, Dashboard, Fleet};
use oversell_client::http::fetch;
use oversell_client::Targets;
use serde_json::{json, Value};

#[derive(Parser)]
#[command(
    about = "300 phones voting at once beside the demo's sale: the sale's rate and the vote's p99"
)]
struct Args {
    /// The oversell binary (`oversell up` starts the fleet).
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    /// Rooms of the class (1..=200).
    #[arg(long, default_value_t = 200)]
    rooms: usize,
    #[arg(long, default_value_t = 300)]
    phones: usize,
    /// Milliseconds between two waves of votes (every phone votes in each wave).
    #[arg(long, default_value_t = 2_000)]
    every_ms: u64,
    /// Seconds of each phase.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Pairs of phases (quiet, voting).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Connections of the demo's buyers.
    #[arg(long, default_value_t = 32)]
    connections: usize,
}

/// One phone: its room and its room's token.
#[derive(Clone)]
struct Phone {
    room: String,
    token: String,
}

const CHAPTER: &str = "none-race";
const DEMO: &str = "default";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(1..=200).contains(&args.rooms) {
        bail!("--rooms must be 1..=200 (a class's most)");
    }
    let max_rooms = (args.rooms + 10).to_string();
    // The instances read it from their environment, which `up` hands them.
    let fleet = Fleet::start(&args.oversell, args.instances, &[("MAX_ROOMS", &max_rooms)])?;
    let admin = fleet.admin(DEMO)?;
    let made = admin
        .request(
            Method::POST,
            "/admin/class",
            Some(json!({ "students": args.rooms, "stock": 10 })),
        )
        .await?;
    let seats: Vec<Phone> = made["rooms"]
        .as_array()
        .context("no rooms in the class")?
        .iter()
        .map(|t| Phone {
            room: t["room"].as_str().unwrap_or_default().to_owned(),
            token: t["token"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    let phones: Vec<Phone> = (0..args.phones)
        .map(|i| seats[i % seats.len()].clone())
        .collect();
    admin
        .request(
            Method::POST,
            "/admin/reset",
            Some(json!({ "stock": 1_000_000 })),
        )
        .await?;
    let opened = admin
        .request(
            Method::POST,
            "/admin/class/poll",
            Some(json!({ "chapter": CHAPTER })),
        )
        .await?;
    let options = opened["question"]["options"].as_array().map_or(3, Vec::len);
    // Every phone's vote page holds the vote's stream open.
    let pages: Vec<Dashboard> = phones
        .iter()
        .map(|p| Dashboard::open_stream(&fleet.url, &format!("/poll/events?room={}", p.room)))
        .collect::<anyhow::Result<_>>()?;

    let targets = fleet.targets(DEMO)?;
    let load = Load {
        model: Model::Closed {
            stop: Stop::After(Duration::from_secs(args.seconds)),
        },
        connections: args.connections,
        request: RequestSpec::sale(1),
        timeout: Duration::from_secs(30),
    };
    let votes_at = Targets::parse(&[fleet.url.as_str()], None)?;
    let mut quiet = Vec::new();
    let mut voting = Vec::new();
    let mut latencies: Vec<f64> = Vec::new();
    let mut refused = 0u64;
    let mut wave = 0usize;
    for round in 1..=args.rounds {
        for with_votes in [false, true] {
            let stop = Arc::new(AtomicBool::new(false));
            let voters = with_votes.then(|| {
                let (phones, votes_at, stop) = (phones.clone(), votes_at.clone(), stop.clone());
                let every = Duration::from_millis(args.every_ms);
                let first_wave = wave;
                tokio::spawn(async move {
                    waves(&votes_at, &phones, options, every, first_wave, &stop).await
                })
            });
            let started = Instant::now();
            let stats = fire(&targets, &load, &Silent).await?;
            let rate = stats.status(200) as f64 / started.elapsed().as_secs_f64();
            stop.store(true, Ordering::Relaxed);
            let mut note = String::new();
            if let Some(voters) = voters {
                let (times, bad, waves) = voters.await?;
                wave += waves;
                refused += bad;
                note = format!(
                    "  {} votes in {waves} waves, p99 {:.1} ms",
                    times.len(),
                    quantile(&times, 0.99)
                );
                latencies.extend(times);
                voting.push(rate);
            } else {
                quiet.push(rate);
            }
            println!(
                "round {round} {:<7} {rate:>8.1} sales/s  (sale p99 {:.1} ms){note}",
                if with_votes { "voting" } else { "quiet" },
                stats.latency_ms(0.99),
            );
        }
    }
    let view = admin
        .request(Method::GET, "/admin/class/poll", None)
        .await?;
    let streamed: u64 = pages
        .iter()
        .map(|p| p.counts.poll.load(Ordering::Relaxed))
        .sum();
    let streams_refused: u64 = pages
        .iter()
        .map(|p| p.counts.refused.load(Ordering::Relaxed))
        .sum();
    let ratio = median(&voting) / median(&quiet);
    let p99 = quantile(&latencies, 0.99);
    println!();
    println!(
        "{} phones in {} rooms, {} votes: p50 {:.1} ms, p99 {p99:.1} ms, max {:.1} ms; {refused} refused",
        args.phones,
        seats.len(),
        latencies.len(),
        quantile(&latencies, 0.5),
        quantile(&latencies, 1.0),
    );
    println!(
        "sale rate: {:.1}/s quiet, {:.1}/s voting (medians): {ratio:.3}×",
        median(&quiet),
        median(&voting)
    );
    println!(
        "{} vote streams: {streamed} events ({:.2} per stream per second), {streams_refused} refused; voters counted in the last round: {}",
        pages.len(),
        streamed as f64 / pages.len() as f64 / (args.rounds * 2 * args.seconds as usize) as f64,
        view["rounds"][0]["voters"],
    );
    let verdicts = [
        (
            "the sale keeps ≥ 0.9× its rate while the class votes",
            ratio >= 0.9,
        ),
        ("a vote answers within 200 ms (p99)", p99 <= 200.0),
        ("every vote counted", refused == 0),
        ("every stream served", streams_refused == 0),
    ];
    for (what, held) in verdicts {
        println!("{} {what}", if held { "ok  " } else { "MISS" });
    }
    Ok(())
}

/// Waves of votes until `stop`: every phone at once, each wave another option than the last;
/// the answers' times (ms), the votes refused, and the waves sent.
async fn waves(
    targets: &Targets,
    phones: &[Phone],
    options: usize,
    every: Duration,
    first_wave: usize,
    stop: &AtomicBool,
) -> (Vec<f64>, u64, usize) {
    let mut times = Vec::new();
    let mut refused = 0;
    let mut sent = 0;
    let mut ticks = tokio::time::interval(every);
    while !stop.load(Ordering::Relaxed) {
        ticks.tick().await;
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let wave = first_wave + sent;
        let answers = futures_util::future::join_all(phones.iter().enumerate().map(|(i, p)| {
            let body = json!({ "option": (i + wave) % options }).to_string();
            async move {
                let started = Instant::now();
                let reply = fetch(
                    targets,
                    targets.first(),
                    Method::POST,
                    &format!("/poll?room={}", p.room),
                    Some(&p.token),
                    Some(body.into_bytes()),
                    Duration::from_secs(10),
                )
                .await;
                (started.elapsed().as_secs_f64() * 1000.0, reply)
            }
        }))
        .await;
        for (ms, reply) in answers {
            match reply {
                Ok(reply) if reply.status == StatusCode::OK => times.push(ms),
                Ok(reply) => {
                    refused += 1;
                    let body: Value = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
                    eprintln!("vote refused: {} {body}", reply.status);
                }
                Err(err) => {
                    refused += 1;
                    eprintln!("vote failed: {err:#}");
                }
            }
        }
        sent += 1;
    }
    (times, refused, sent)
}

/// The `q` quantile of `values` (nearest rank); 0 when empty.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n => sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
    }
}
