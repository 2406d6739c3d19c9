//! A workshop rehearsal: a class of rooms, each with its dashboard open and a burst of buyers
//! every few seconds, on one `oversell up` fleet, for a while. At the end every room's ground
//! truth must be exact (as many orders as 200s, stock = initial − orders, nothing oversold,
//! no lost update, no overlap), no answer may be a 5xx, and every dashboard must have kept
//! receiving state. Prints the sale latency percentiles over all bursts.
//!
//!   cargo build --release && cargo run --release -p oversell-bench --bin rehearsal -- --duration 120

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Parser;
use loadtest::{burst, BurstOptions, RunStats};
use oversell_api::{SettingsPatch, Tier};
use oversell_bench::{wait_until, Dashboard, Fleet};

#[derive(Parser)]
#[command(
    about = "Rooms × dashboards × bursts of buyers on one fleet; checks every room's ground truth"
)]
struct Args {
    /// The oversell binary (`oversell up` starts the fleet).
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    #[arg(long, default_value_t = 30)]
    rooms: usize,
    /// Buyers per burst.
    #[arg(long, default_value_t = 100)]
    buyers: usize,
    /// Seconds between two bursts in one room (the rooms are staggered).
    #[arg(long, default_value_t = 3)]
    every: u64,
    /// Seconds the rehearsal lasts.
    #[arg(long, default_value_t = 120)]
    duration: u64,
    /// Safe tiers, dealt round robin over the rooms.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "lua-release,reentrant-watchdog,fenced,atomic-deduct"
    )]
    tiers: Vec<Tier>,
}

struct RoomRun {
    room: String,
    tier: Tier,
    stock: i64,
    stats: RunStats,
    bursts: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // A busy 2-core machine must not turn a lock wait into a 503: the deadline is generous,
    // and the latency figures say how long buyers really waited.
    let fleet = Fleet::start(
        &args.oversell,
        args.instances,
        &[("WAIT_DEADLINE_MS", "30000")],
    )?;
    println!(
        "fleet: {} ({} instances); {} rooms, a burst of {} buyers every {} s in each, {} s",
        fleet.url, args.instances, args.rooms, args.buyers, args.every, args.duration
    );
    let bursts_per_room = (args.duration / args.every).max(1) as usize;
    // Enough stock that the last burst still sells: every order is checked against it.
    let stock = (bursts_per_room * args.buyers) as i64 + 1;

    let mut dashboards = Vec::new();
    for (i, room) in (0..args.rooms).map(|i| (i, format!("class-{i:02}"))) {
        let admin = fleet.admin(&room)?;
        admin
            .set_config(&SettingsPatch {
                tier: Some(args.tiers[i % args.tiers.len()]),
                ..SettingsPatch::default()
            })
            .await?;
        admin.reset(stock).await?;
        dashboards.push(Dashboard::open(&fleet.url, &room)?);
    }
    wait_until(
        Duration::from_secs(60),
        "every dashboard's first state",
        || dashboards.iter().all(|d| d.states() >= 1),
    )
    .await?;

    let started = Instant::now();
    let every = Duration::from_secs(args.every);
    let mut runs = Vec::new();
    for i in 0..args.rooms {
        let room = format!("class-{i:02}");
        let targets = fleet.targets(&room)?;
        let buyers = args.buyers;
        // Staggered: the rooms' bursts are spread over the interval, as a class's would be.
        let offset = every.mul_f64(i as f64 / args.rooms as f64);
        runs.push(tokio::spawn(async move {
            let options = BurstOptions {
                connections: None,
                timeout: Duration::from_secs(60),
                ..BurstOptions::default()
            };
            let mut total = RunStats::default();
            let mut next = tokio::time::Instant::now() + offset;
            for _ in 0..bursts_per_room {
                tokio::time::sleep_until(next).await;
                next += every;
                let stats = burst(&targets, buyers, &options).await?;
                merge(&mut total, &stats);
            }
            anyhow::Ok((room, total))
        }));
    }
    let mut results = Vec::new();
    for (i, run) in runs.into_iter().enumerate() {
        let (room, stats) = run.await??;
        results.push(RoomRun {
            room,
            tier: args.tiers[i % args.tiers.len()],
            stock,
            stats,
            bursts: bursts_per_room,
        });
    }
    let elapsed = started.elapsed();

    let mut failures = Vec::new();
    let mut all = RunStats::default();
    println!();
    println!(
        "room      tier                 sent   200   5xx  orders  stock  oversold lost overlaps"
    );
    for run in &results {
        let state = fleet.admin(&run.room)?.state().await?;
        let ok = run.stats.status(200) as i64;
        let five = run
            .stats
            .statuses
            .range(500..600)
            .map(|(_, n)| n)
            .sum::<u64>()
            + run.stats.conn_errors
            + run.stats.timeouts;
        let figure = |name: &str| state.truth.figure(name).unwrap_or(i64::MIN);
        println!(
            "{:<9} {:<18} {:>6} {:>5} {:>5} {:>7} {:>6} {:>9} {:>4} {:>8}",
            run.room,
            run.tier,
            run.stats.sent(),
            ok,
            five,
            figure("orders"),
            figure("stock"),
            figure("oversold"),
            figure("lost_updates"),
            figure("overlaps"),
        );
        let exact = figure("orders") == ok
            && figure("items_sold") == ok
            && figure("stock") == run.stock - ok
            && figure("oversold") == 0
            && figure("lost_updates") == 0
            && figure("overlaps") == 0
            && run.stats.sent() == (run.bursts * args.buyers) as u64;
        if !exact {
            failures.push(format!(
                "{}: ground truth not exact: {:?}",
                run.room, state.truth
            ));
        }
        if five > 0 {
            failures.push(format!(
                "{}: {five} answers were 5xx or no answer",
                run.room
            ));
        }
        merge(&mut all, &run.stats);
    }
    for (i, dashboard) in dashboards.iter().enumerate() {
        if let Some(why) = dashboard.stalled(elapsed) {
            failures.push(format!("dashboard of class-{i:02}: {why}"));
        }
    }
    let states: u64 = dashboards.iter().map(|d| d.states()).sum();
    println!();
    println!(
        "{} sales in {:.0} s ({:.0}/s over the whole run); 200: {}, 5xx or none: {}",
        all.sent(),
        elapsed.as_secs_f64(),
        all.sent() as f64 / elapsed.as_secs_f64(),
        all.status(200),
        all.statuses.range(500..600).map(|(_, n)| n).sum::<u64>() + all.conn_errors + all.timeouts
    );
    println!(
        "sale latency over every burst: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        all.latency_ms(0.50),
        all.latency_ms(0.90),
        all.latency_ms(0.99),
        all.max_ms()
    );
    println!(
        "dashboards: {} streams, {states} state events ({:.1} per stream per second)",
        dashboards.len(),
        states as f64 / dashboards.len() as f64 / elapsed.as_secs_f64()
    );
    if failures.is_empty() {
        println!("PASS: every room's ground truth exact, no 5xx, every dashboard live");
        Ok(())
    } else {
        for failure in &failures {
            println!("FAIL: {failure}");
        }
        bail!("{} failures", failures.len())
    }
}

/// Adds one run's answers and latencies to a total.
fn merge(total: &mut RunStats, run: &RunStats) {
    for (status, n) in &run.statuses {
        *total.statuses.entry(*status).or_default() += n;
    }
    total.conn_errors += run.conn_errors;
    total.timeouts += run.timeouts;
    if total.first_error.is_none() {
        total.first_error.clone_from(&run.first_error);
    }
    // Same bounds on both sides (the generator's), so adding cannot fail.
    let _ = total.latency.add(&run.latency);
    total.elapsed += run.elapsed;
}
