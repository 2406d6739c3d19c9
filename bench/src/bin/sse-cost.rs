//! What open dashboards cost the sale path: a room with a long ledger (20,000 orders by
//! default), sold to by a closed loop of buyers, with and without 200 `/events` streams open on
//! it, through `oversell up`'s nginx. The phases alternate (with, without, with, …) so a slow
//! drift of the machine's load hits both; the figure is the ratio of the medians. Redis'
//! `used_memory` is sampled every second of every phase.
//!
//!   cargo build --release && cargo run --release -p oversell-bench --bin sse-cost

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Parser;
use loadtest::{fire, Load, Model, RequestSpec, Silent, Stop};
use oversell_api::{SettingsPatch, Tier};
use oversell_bench::{median, redis_calls, used_memory, wait_until, Dashboard, Fleet, SalePhases};

#[derive(Parser)]
#[command(about = "Sale throughput with and without dashboards open on a long-ledger room")]
struct Args {
    #[command(flatten)]
    sale: SalePhases,
    /// Orders in the room's ledger before measuring.
    #[arg(long, default_value_t = 20_000)]
    orders: u64,
    /// Dashboard streams open in the "with" phases.
    #[arg(long, default_value_t = 200)]
    streams: usize,
    /// Phases of each kind (they alternate).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// The room's tier (lock-free by default: the streams' cost, not a lock's, is measured).
    #[arg(long, default_value = "atomic-deduct")]
    tier: Tier,
}

const ROOM: &str = "dashboards";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let fleet = Fleet::start(&args.sale.oversell, args.sale.instances, &[])?;
    let targets = fleet.targets(ROOM)?;
    let admin = fleet.admin(ROOM)?;
    let mut redis = fleet.redis().await?;
    println!("fleet: {} ({} instances)", fleet.url, args.sale.instances);

    // A long ledger, filled fast by the lock-free tier.
    admin.reset(1_000_000).await?;
    admin
        .set_config(&SettingsPatch {
            tier: Some(args.tier),
            ..SettingsPatch::default()
        })
        .await?;
    let fill = Load {
        model: Model::Closed {
            stop: Stop::Requests(args.orders),
        },
        connections: 64,
        request: RequestSpec::sale(1),
        timeout: Duration::from_secs(30),
    };
    let filled = fire(&targets, &fill, &Silent).await?;
    let state = admin.state().await?;
    if state.truth.orders != args.orders as i64 {
        bail!(
            "filling the ledger: {} orders, {} sales answered 200",
            state.truth.orders,
            filled.status(200)
        );
    }
    admin
        .set_config(&SettingsPatch {
            tier: Some(args.sale.tier),
            business_ms: Some(2),
            ..SettingsPatch::default()
        })
        .await?;
    println!(
        "room `{ROOM}`: {} orders in the ledger, tier {}",
        args.orders, args.sale.tier
    );

    let load = args.sale.load();
    let memory_start = used_memory(&mut redis).await?;
    let mut memory_max = memory_start;
    let (mut without, mut with) = (Vec::new(), Vec::new());
    let (mut calls_without, mut calls_with) = (Vec::new(), Vec::new());
    let mut errors = 0;
    for phase in 0..args.rounds * 2 {
        let streams = phase % 2 == 0;
        let mut dashboards = Vec::new();
        if streams {
            for _ in 0..args.streams {
                dashboards.push(Dashboard::open(&fleet.url, ROOM)?);
            }
            // Every stream is live, and every instance's poller has caught up with the ledger
            // (a few ticks of bounded reads) before the clock starts.
            wait_until(
                Duration::from_secs(60),
                "every stream's first state",
                || dashboards.iter().all(|d| d.states() >= 1),
            )
            .await?;
            let caught_up = dashboards.iter().map(|d| d.states()).min().unwrap_or(0) + 12;
            wait_until(Duration::from_secs(60), "the pollers to catch up", || {
                dashboards.iter().all(|d| d.states() >= caught_up)
            })
            .await?;
        }
        let calls = redis_calls(&mut redis).await?;
        let memory_before = used_memory(&mut redis).await?;
        let peak = Arc::new(AtomicU64::new(0));
        let sampler = {
            let mut conn = fleet.redis().await?;
            let peak = Arc::clone(&peak);
            tokio::spawn(async move {
                loop {
                    if let Ok(used) = used_memory(&mut conn).await {
                        peak.fetch_max(used, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            })
        };
        let started = Instant::now();
        let stats = fire(&targets, &load, &Silent).await?;
        let elapsed = started.elapsed().as_secs_f64();
        let calls = redis_calls(&mut redis).await? - calls;
        sampler.abort();
        let phase_peak = peak
            .load(Ordering::Relaxed)
            .max(used_memory(&mut redis).await?);
        memory_max = memory_max.max(phase_peak);
        let sold = stats.status(200) as f64 / elapsed;
        errors += stats.sent() - stats.status(200);
        let refused: u64 = dashboards
            .iter()
            .map(|d| d.counts.refused.load(Ordering::Relaxed))
            .sum();
        println!(
            "phase {}: {:>4} streams  {:>7.1} sales/s  p99 {:>6.1} ms  {:>7.0} redis commands/s  used_memory {:.1} -> peak {:.1} MB{}",
            phase + 1,
            if streams { args.streams } else { 0 },
            sold,
            stats.latency_ms(0.99),
            calls as f64 / elapsed,
            mb(memory_before),
            mb(phase_peak),
            if refused > 0 { format!("  ({refused} streams refused)") } else { String::new() },
        );
        if streams {
            with.push(sold);
            calls_with.push(calls as f64 / elapsed);
        } else {
            without.push(sold);
            calls_without.push(calls as f64 / elapsed);
        }
        drop(dashboards);
    }
    let memory_end = used_memory(&mut redis).await?;
    let state = admin.state().await?;
    let ratio = median(&with) / median(&without);
    println!();
    println!("sales/s without streams (median): {:.1}", median(&without));
    println!(
        "sales/s with {} streams (median): {:.1}",
        args.streams,
        median(&with)
    );
    println!(
        "ratio with/without: {ratio:.3} (cost {:.1}%)",
        (1.0 - ratio) * 100.0
    );
    println!(
        "redis commands/s: {:.0} without, {:.0} with",
        median(&calls_without),
        median(&calls_with)
    );
    println!(
        "redis used_memory: {:.1} MB at start, {:.1} MB peak, {:.1} MB at end",
        mb(memory_start),
        mb(memory_max),
        mb(memory_end)
    );
    println!(
        "ledger: {} orders (each ~0.25 KB of the memory growth), oversold {}, lost updates {}; non-200 answers while measuring: {errors}",
        state.truth.orders, state.truth.oversold, state.truth.lost_updates
    );
    let ok = ratio >= 0.9;
    let verdict = if ok { "PASS" } else { "FAIL" };
    println!(
        "{verdict}: {} streams cost at most 10% of the sale throughput",
        args.streams
    );
    if !ok {
        bail!(
            "the streams cost {:.1}% of the throughput",
            (1.0 - ratio) * 100.0
        );
    }
    Ok(())
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}
