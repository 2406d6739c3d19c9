//! One laptop flooding the fleet beside the demo: a student at 127.0.0.2 with 500 connections
//! selling as fast as it can in a room of its own (lock-free: the most work a sale can make),
//! and sending the next request the moment an answer comes, 429 or not (as wrk does), while the instructor's loadtest (127.0.0.1,
//! never limited) sells in the demo room and a dashboard at 127.0.0.3 reads the demo's state
//! every 100 ms. Phases alternate, flood and no flood, on a fleet with the default per-client
//! limits and then on one started with `--client-rate 0`: the demo's sale rate and the
//! dashboard's latency, as ratios in one run.
//!
//!   cargo build --release && target/release/fair-share

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use loadtest::{fire, Load, Model, RequestSpec, Silent, Stop};
use oversell_api::{SettingsPatch, Tier};
use oversell_bench::{median, Fleet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

#[derive(Parser)]
#[command(
    about = "The demo's sale rate and dashboard latency beside a flooding client, with and without per-client limits"
)]
struct Args {
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    /// The flooding client's connections.
    #[arg(long, default_value_t = 500)]
    flood: usize,
    /// Rounds of (no flood, flood) per fleet.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    #[arg(long, default_value_t = 8)]
    seconds: u64,
    /// The flooding student's room's tier: lock-free by default, the heaviest load a sale can
    /// put on the instances and Redis (with a lock, the flood would mostly wait for it).
    #[arg(long, default_value = "atomic-deduct")]
    flood_tier: Tier,
    /// The demo's tier.
    #[arg(long, default_value = "lua-release")]
    demo_tier: Tier,
}

#[derive(Default)]
struct FloodCounts {
    ok: AtomicU64,
    limited: AtomicU64,
    other: AtomicU64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut summary = Vec::new();
    for (name, flags) in [
        ("limits on (defaults)", &[][..]),
        ("limits off (--client-rate 0)", &["--client-rate", "0"][..]),
    ] {
        let fleet = Fleet::start_with(&args.oversell, args.instances, &[], flags)?;
        println!("fleet {name}: {} ({} instances)", fleet.url, args.instances);
        for (room, tier) in [("demo", args.demo_tier), ("flood", args.flood_tier)] {
            let admin = fleet.admin(room)?;
            admin.reset(1_000_000).await?;
            admin
                .set_config(&SettingsPatch {
                    tier: Some(tier),
                    business_ms: Some(2),
                    ..SettingsPatch::default()
                })
                .await?;
        }
        let addr: SocketAddr = fleet.url.trim_start_matches("http://").parse()?;
        let load = Load {
            model: Model::Closed {
                stop: Stop::After(Duration::from_secs(args.seconds)),
            },
            connections: 16,
            request: RequestSpec::sale(1),
            timeout: Duration::from_secs(60),
        };
        let demo = fleet.targets("demo")?;
        let (mut quiet, mut flooded) = (Vec::new(), Vec::new());
        let (mut quiet_p99, mut flooded_p99) = (Vec::new(), Vec::new());
        for round in 0..args.rounds {
            for flood_on in [false, true] {
                let stop = Arc::new(AtomicBool::new(false));
                let counts = Arc::new(FloodCounts::default());
                let flooders: Vec<_> = (0..if flood_on { args.flood } else { 0 })
                    .map(|_| tokio::spawn(flood(addr, stop.clone(), counts.clone())))
                    .collect();
                tokio::time::sleep(Duration::from_secs(1)).await;
                let watcher = tokio::spawn(watch(addr, stop.clone()));
                let started = Instant::now();
                let stats = fire(&demo, &load, &Silent).await?;
                let elapsed = started.elapsed().as_secs_f64();
                stop.store(true, Ordering::Relaxed);
                let mut latencies = watcher.await??;
                for f in flooders {
                    let _ = f.await;
                }
                latencies.sort_by(f64::total_cmp);
                let p = |q: f64| {
                    latencies
                        .get(((latencies.len() as f64 - 1.0) * q) as usize)
                        .copied()
                        .unwrap_or(f64::NAN)
                };
                let sold = stats.status(200) as f64 / elapsed;
                println!(
                    "  round {} {:<9} demo {:>7.1} sales/s (non-200: {}), dashboard GET /state p50 {:>6.1} ms p99 {:>7.1} ms; flood: {} sold, {} answered 429, {} other",
                    round + 1,
                    if flood_on { "flood" } else { "no flood" },
                    sold,
                    stats.sent() - stats.status(200),
                    p(0.5),
                    p(0.99),
                    counts.ok.load(Ordering::Relaxed),
                    counts.limited.load(Ordering::Relaxed),
                    counts.other.load(Ordering::Relaxed),
                );
                if flood_on {
                    flooded.push(sold);
                    flooded_p99.push(p(0.99));
                } else {
                    quiet.push(sold);
                    quiet_p99.push(p(0.99));
                }
            }
        }
        summary.push(format!(
            "{name}: demo sales/s with the flood / without = {:.0} / {:.0} = {:.3}; dashboard p99 {:.1} ms with, {:.1} ms without",
            median(&flooded),
            median(&quiet),
            median(&flooded) / median(&quiet),
            median(&flooded_p99),
            median(&quiet_p99),
        ));
    }
    println!();
    for line in summary {
        println!("{line}");
    }
    Ok(())
}

/// One flooding connection from 127.0.0.2: sales in room `flood`, one after the other on a
/// kept-alive connection (a new one when nginx closes it), until `stop`.
async fn flood(addr: SocketAddr, stop: Arc<AtomicBool>, counts: Arc<FloodCounts>) {
    let body = r#"{"buyer":"flood","qty":1}"#;
    let request = format!(
        "POST /sale?room=flood HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut tcp) = connect_from("127.0.0.2", addr).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        while !stop.load(Ordering::Relaxed) {
            if tcp.write_all(request.as_bytes()).await.is_err() {
                break;
            }
            match read_status(&mut tcp).await {
                Some(200) => counts.ok.fetch_add(1, Ordering::Relaxed),
                Some(429) => counts.limited.fetch_add(1, Ordering::Relaxed),
                Some(_) => counts.other.fetch_add(1, Ordering::Relaxed),
                None => break,
            };
        }
    }
}

/// A student's dashboard at 127.0.0.3: `GET /state?room=demo` every 100 ms; the latencies (ms).
async fn watch(addr: SocketAddr, stop: Arc<AtomicBool>) -> anyhow::Result<Vec<f64>> {
    let request = format!("GET /state?room=demo HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut latencies = Vec::new();
    let mut tcp = connect_from("127.0.0.3", addr)
        .await
        .context("the dashboard's connection")?;
    while !stop.load(Ordering::Relaxed) {
        let asked = Instant::now();
        tcp.write_all(request.as_bytes()).await?;
        let status = read_status(&mut tcp)
            .await
            .context("the dashboard's answer")?;
        anyhow::ensure!(
            status == 200,
            "the dashboard's GET /state answered {status}"
        );
        latencies.push(asked.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(latencies)
}

async fn connect_from(ip: &str, addr: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(ip.parse().expect("an IPv4 address"), 0))?;
    socket.connect(addr).await
}

/// Reads one response (headers and a Content-Length body); its status, `None` when the
/// connection closed or the answer was not HTTP.
async fn read_status(tcp: &mut tokio::net::TcpStream) -> Option<u16> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tcp.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status: u16 = head.split_whitespace().nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = tcp.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(status)
}
