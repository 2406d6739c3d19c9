//! What the dashboard costs a classroom's network and the demo's sale rate, through
//! `oversell up`'s nginx:
//!
//! 1. bytes to open the page: the page and every file it loads, as a browser asks for them
//!    (`Accept-Encoding: gzip, deflate, br`), plus the stream's first state and timeline
//!    window on a busy room;
//! 2. bytes per viewer per second on an idle room, and while the room sells flat out;
//! 3. the sale rate with 0, 100 and 500 viewers of the selling room, phases alternated
//!    (0, 100, 500, 0, 100, 500, …) so a drift of the machine's load hits each, as ratios of
//!    the medians.
//!
//!   cargo build --release && target/release/feed-cost

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use loadtest::{fire, Load, Model, RequestSpec, Silent, Stop};
use oversell_api::{SettingsPatch, Tier};
use oversell_bench::{median, wait_until, Dashboard, Fleet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Parser)]
#[command(
    about = "Bytes per viewer, bytes to open the page, and what 100/500 viewers cost the sale rate"
)]
struct Args {
    /// The oversell binary (`oversell up` starts the fleet).
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    /// Viewer counts of the rate phases (0 is the baseline).
    #[arg(long, value_delimiter = ',', default_value = "0,100,500")]
    viewers: Vec<usize>,
    /// Rounds of the rate phases.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Seconds of selling per phase.
    #[arg(long, default_value_t = 8)]
    seconds: u64,
    /// Buyers of the closed loop (each sends its next order when answered).
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// The tier the room sells under.
    #[arg(long, default_value = "lua-release")]
    tier: Tier,
}

const ROOM: &str = "demo";
/// The page's default window (sections drawn).
const DRAW: usize = 100;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let fleet = Fleet::start(
        &args.oversell,
        args.instances,
        &[("MAX_EVENT_STREAMS", "2000")],
    )?;
    let targets = fleet.targets(ROOM)?;
    let admin = fleet.admin(ROOM)?;
    println!(
        "fleet: {} ({} instances); room `{ROOM}` sells under {} (business 0 ms), {} buyers in a closed loop",
        fleet.url, args.instances, args.tier, args.connections
    );
    admin.reset(1_000_000).await?;
    admin
        .set_config(&SettingsPatch {
            tier: Some(args.tier),
            business_ms: Some(0),
            ..SettingsPatch::default()
        })
        .await?;
    let authority = fleet.url.trim_start_matches("http://").to_owned();

    // 2a. An idle room: what a viewer costs when nothing happens.
    let idle = viewers(&fleet.url, 5).await?;
    let before = total_bytes(&idle);
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    let idle_rate = (total_bytes(&idle) - before) as f64 / 5.0 / args.seconds as f64;
    drop(idle);
    println!(
        "idle room: {:.2} KB/s per viewer (5 viewers, {} s)",
        idle_rate / 1024.0,
        args.seconds
    );

    // 3 (and 2b). Sale rate with 0 / 100 / 500 viewers, and the bytes each viewer received.
    let load = Load {
        model: Model::Closed {
            stop: Stop::After(Duration::from_secs(args.seconds)),
        },
        connections: args.connections,
        request: RequestSpec::sale(1),
        timeout: Duration::from_secs(30),
    };
    let mut rates: Vec<(usize, Vec<f64>)> = args.viewers.iter().map(|&v| (v, Vec::new())).collect();
    let mut per_viewer: Vec<f64> = Vec::new();
    let mut busiest = 0.0_f64;
    let mut errors = 0;
    for round in 0..args.rounds {
        for (i, &count) in args.viewers.iter().enumerate() {
            let open = viewers(&fleet.url, count).await?;
            let before = total_bytes(&open);
            let started = Instant::now();
            let stats = fire(&targets, &load, &Silent).await?;
            let elapsed = started.elapsed().as_secs_f64();
            let received = total_bytes(&open) - before;
            let sold = stats.status(200) as f64 / elapsed;
            errors += stats.sent() - stats.status(200);
            busiest = busiest.max(sold);
            let refused: u64 = open
                .iter()
                .map(|d| d.counts.refused.load(std::sync::atomic::Ordering::Relaxed))
                .sum();
            let each = if count > 0 {
                received as f64 / count as f64 / elapsed
            } else {
                0.0
            };
            if count > 0 {
                per_viewer.push(each);
            }
            println!(
                "round {} phase {}: {:>4} viewers  {:>7.1} sales/s  p99 {:>6.1} ms  {:>6.2} KB/s per viewer{}",
                round + 1,
                i + 1,
                count,
                sold,
                stats.latency_ms(0.99),
                each / 1024.0,
                if refused > 0 { format!("  ({refused} refused)") } else { String::new() }
            );
            if refused > 0 {
                bail!("{refused} viewers refused");
            }
            rates[i].1.push(sold);
        }
    }

    // 1. Opening the page on the busy room: the files, then the first state and window.
    let (page_bytes, files) =
        page_bytes(&authority, vec!["/".to_owned()], &mut BTreeSet::new()).await?;
    let on_demand = on_demand_bytes(&authority).await?;
    let busy = tokio::spawn({
        let targets = targets.clone();
        let load = load.clone();
        async move { fire(&targets, &load, &Silent).await }
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let first = first_events_bytes(&fleet.url).await?;
    busy.await??;

    println!();
    println!("opening the page: {:.1} KB of files ({} files, compressed) + {:.1} KB of first events (state and a {DRAW}-section window of a busy room) = {:.1} KB",
        page_bytes as f64 / 1024.0, files, first as f64 / 1024.0, (page_bytes + first) as f64 / 1024.0);
    println!(
        "loaded with import() when first needed (the chart, the tier texts), not to open the page: {:.1} KB",
        on_demand as f64 / 1024.0
    );
    println!(
        "per viewer: {:.2} KB/s idle; {:.2} KB/s (median, max {:.2}) while the room sold up to {:.0} sales/s",
        idle_rate / 1024.0,
        median(&per_viewer) / 1024.0,
        per_viewer.iter().cloned().fold(0.0, f64::max) / 1024.0,
        busiest
    );
    let baseline = median(&rates[0].1);
    for (count, sold) in &rates {
        println!(
            "{count:>4} viewers: {:.1} sales/s (median of {}), ratio to {} viewers {:.3}",
            median(sold),
            sold.len(),
            rates[0].0,
            median(sold) / baseline
        );
    }
    println!("non-200 answers while measuring: {errors}");
    let worst = rates
        .iter()
        .map(|(_, s)| median(s) / baseline)
        .fold(f64::MAX, f64::min);
    let checks = [
        ("≤ 64 KB to open the page", page_bytes + first <= 64 * 1024),
        (
            "≤ 16 KB/s per viewer at the highest sale rate",
            per_viewer.iter().all(|&b| b <= 16.0 * 1024.0),
        ),
        ("viewers cost ≤ 10 % of the sale rate", worst >= 0.9),
    ];
    let mut failed = false;
    for (what, ok) in checks {
        println!("{}: {what}", if ok { "PASS" } else { "FAIL" });
        failed |= !ok;
    }
    if failed {
        bail!("a target was missed");
    }
    Ok(())
}

/// `count` dashboards of the room, each with its first state.
async fn viewers(url: &str, count: usize) -> anyhow::Result<Vec<Dashboard>> {
    let open: Vec<Dashboard> = (0..count)
        .map(|_| Dashboard::open_drawing(url, ROOM, Some(DRAW)))
        .collect::<anyhow::Result<_>>()?;
    wait_until(
        Duration::from_secs(60),
        "every viewer's first state",
        || open.iter().all(|d| d.states() >= 1),
    )
    .await?;
    Ok(open)
}

fn total_bytes(open: &[Dashboard]) -> u64 {
    open.iter().map(Dashboard::bytes).sum()
}

/// The page and every file it loads (scripts, styles, the modules they import statically), as
/// a browser asks for them: the bytes on the wire, headers included, and how many files.
/// Files already in `seen` are not counted again.
async fn page_bytes(
    authority: &str,
    mut queue: Vec<String>,
    seen: &mut BTreeSet<String>,
) -> anyhow::Result<(u64, usize)> {
    let mut total = 0;
    let mut files = 0;
    while let Some(path) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        total += get(authority, &path, true).await?.0;
        files += 1;
        // The links are read from the plain text.
        let (_, body) = get(authority, &path, false).await?;
        for link in links(&body, LOADED) {
            queue.push(resolve(&path, &link));
        }
    }
    Ok((total, files))
}

/// What the page's modules load with `import()` when first needed (the chart when it comes
/// into view, the tier texts when a tier is described), beyond the files the page opened with.
async fn on_demand_bytes(authority: &str) -> anyhow::Result<u64> {
    let mut seen = BTreeSet::new();
    page_bytes(authority, vec!["/".to_owned()], &mut seen).await?;
    let mut later = Vec::new();
    for path in seen.clone() {
        let (_, body) = get(authority, &path, false).await?;
        later.extend(
            links(&body, ON_DEMAND)
                .into_iter()
                .map(|l| resolve(&path, &l)),
        );
    }
    Ok(page_bytes(authority, later, &mut seen).await?.0)
}

fn resolve(from: &str, link: &str) -> String {
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    let link = link.trim_start_matches("./");
    if link.starts_with('/') {
        link.to_owned()
    } else {
        format!("{dir}/{link}")
    }
}

/// What a page or module loads as it opens: scripts, styles, static imports.
const LOADED: &[(&str, char)] = &[("src=\"", '"'), ("href=\"", '"'), ("from '", '\'')];
/// What it loads later, on demand.
const ON_DEMAND: &[(&str, char)] = &[("import('", '\'')];

/// The local targets of `kinds` (an opening text and the quote that closes it) in a page or
/// module.
fn links(body: &str, kinds: &[(&str, char)]) -> Vec<String> {
    let mut found = Vec::new();
    for (open, close) in kinds {
        let mut rest = body;
        while let Some(at) = rest.find(open) {
            rest = &rest[at + open.len()..];
            let Some(end) = rest.find(*close) else { break };
            let link = &rest[..end];
            let local = !link.contains(':') && !link.starts_with('#') && !link.is_empty();
            if local {
                found.push(link.to_owned());
            }
            rest = &rest[end..];
        }
    }
    found
}

/// One GET on a fresh connection: bytes received (headers included) and the body as text.
async fn get(authority: &str, path: &str, compressed: bool) -> anyhow::Result<(u64, String)> {
    let mut tcp = TcpStream::connect(authority).await?;
    let encoding = if compressed {
        "Accept-Encoding: gzip, deflate, br\r\n"
    } else {
        ""
    };
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n{encoding}Connection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).await?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    if !text.starts_with("HTTP/1.1 200") {
        bail!("GET {path}: {}", text.lines().next().unwrap_or(""));
    }
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((raw.len() as u64, body))
}

/// The bytes a new viewer receives until it has its first state and its first window.
async fn first_events_bytes(url: &str) -> anyhow::Result<u64> {
    let viewer = Dashboard::open_drawing(url, ROOM, Some(DRAW))?;
    wait_until(
        Duration::from_secs(30),
        "the first state and window",
        || {
            viewer.states() >= 1
                && viewer
                    .counts
                    .timeline
                    .load(std::sync::atomic::Ordering::Relaxed)
                    >= 1
        },
    )
    .await
    .context("a new viewer's first events")?;
    Ok(viewer.bytes())
}
