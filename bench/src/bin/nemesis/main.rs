//! The fleet under its own nemesis: while a class of 30 rooms buys on the safe tiers, votes
//! and grades its locks through nginx, members of the fleet (`oversell up --lab`: the
//! instances, nginx, the resource store, the lock store) are SIGKILLed, paused (SIGSTOP, then
//! SIGCONT) and restarted (SIGTERM; `up` starts each again) at random, one at a time, from a
//! seed, each fault logged with its time. At the end the clients' own records are checked:
//!
//! - every order answered 200 is in its room's ledger (`GET /ledger`), and every room's
//!   orders equal what left its stock (no unit sold twice, none taken without an order);
//! - every vote answered 200 is counted once in its round (a vote never answered 200 may be
//!   counted or not: its request may have landed before the fault);
//! - every grading pressed ends as a card or a clear error, never waiting forever nor
//!   vanishing from the line;
//! - every member struck serves again within `--recovery-bound` seconds of its fault's end.
//!
//! Pauses are shorter than the lock's lease (3 s): a longer one is the lease's documented
//! defect, which the curriculum shows on purpose. The lock store keeps its data on disk
//! (`--lock-persistence always`): a lock store restarted empty forgets the lock, the
//! `restart-loses-lock` chapter, and then no lock tier is safe. Traffic goes to 127.0.0.1 only.
//!
//!   bench/nemesis.sh --minutes 2 [--seed N]
//!
//! Its last lines: `acknowledged lost: N`, `oversold on safe tiers: N`, `votes lost: N`,
//! `gradings lost: N`, `longest recovery: S s`; exit 1 when a count is not 0 or a member
//! was not back within the bound.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use http::{Method, StatusCode};
use oversell_bench::fault::{get_json, ledger_ids, pid_on_port, redis_serves, signal, Rng};
use oversell_bench::Fleet;
use oversell_client::http::Pool;
use oversell_client::Targets;
use serde_json::{json, Value};

mod class;

#[derive(Parser)]
#[command(about = "Faults struck at the fleet's own members while a class buys, votes and grades")]
pub struct Args {
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    /// How long the faults strike; the class goes on for `--quiet` seconds more.
    #[arg(long, default_value_t = 2.0)]
    minutes: f64,
    /// The schedule's seed [default: from the clock, printed].
    #[arg(long)]
    seed: Option<u64>,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    /// Rooms of the class: the first `--buying` buy, the next `--grading` grade, all vote.
    #[arg(long, default_value_t = 30)]
    rooms: usize,
    #[arg(long, default_value_t = 18)]
    buying: usize,
    #[arg(long, default_value_t = 6)]
    grading: usize,
    /// Each buying room's stock [default: 800 a minute of faults, at least 1500: rooms sell
    /// out near the end on a loaded 2-core machine, so the sold-out boundary is under the
    /// faults too].
    #[arg(long)]
    stock: Option<i64>,
    /// The pause between two faults, at random in this range (ms).
    #[arg(long, default_value_t = 3_000)]
    gap_min_ms: u64,
    #[arg(long, default_value_t = 8_000)]
    gap_max_ms: u64,
    /// The most faults struck [default: one per 3 s of the run].
    #[arg(long)]
    max_faults: Option<usize>,
    /// Seconds without faults at the end, for the last gradings and votes to finish.
    #[arg(long, default_value_t = 15)]
    quiet: u64,
    /// Seconds a struck member has to serve again.
    #[arg(long, default_value_t = 30)]
    recovery_bound: u64,
}

/// The tiers the class buys on: none of them may oversell under these faults.
const SAFE_TIERS: [&str; 3] = ["lua-release", "fenced", "atomic-deduct"];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Instance,
    Nginx,
    ResourceStore,
    LockStore,
}

#[derive(Clone)]
struct Member {
    id: String,
    kind: Kind,
    port: u16,
}

#[derive(Clone, Copy)]
enum Act {
    Kill,
    Pause(Duration),
    Restart,
}

/// The members `up` printed: `app1: http://127.0.0.1:PORT pid=…`, `nginx: …`, `redis: …`,
/// `lock: 127.0.0.1:PORT pid=…`.
fn members(banner: &[String]) -> Vec<Member> {
    banner
        .iter()
        .filter_map(|line| {
            let (id, rest) = line.split_once(": ")?;
            let kind = match id {
                "nginx" => Kind::Nginx,
                "redis" => Kind::ResourceStore,
                "lock" => Kind::LockStore,
                _ if id.starts_with("app") && id[3..].parse::<u32>().is_ok() => Kind::Instance,
                _ => return None,
            };
            let addr = rest.split_whitespace().next()?;
            let port = addr
                .rsplit(':')
                .next()?
                .trim_end_matches('/')
                .parse()
                .ok()?;
            Some(Member {
                id: id.to_owned(),
                kind,
                port,
            })
        })
        .collect()
}

/// Whether the member serves: an instance or nginx answers `/health` 200, a store PING with
/// its data loaded.
async fn serves(pool: &Pool, member: &Member) -> bool {
    match member.kind {
        Kind::ResourceStore | Kind::LockStore => redis_serves(member.port).await,
        Kind::Instance | Kind::Nginx => {
            let Ok(targets) = Targets::parse(&[format!("http://127.0.0.1:{}", member.port)], None)
            else {
                return false;
            };
            let reply = pool
                .fetch(
                    &targets,
                    targets.first(),
                    Method::GET,
                    "/health",
                    None,
                    None,
                    Duration::from_secs(2),
                )
                .await;
            reply.is_ok_and(|r| r.status == StatusCode::OK)
        }
    }
}

/// Strikes `member` with `act`; the pid struck and the fault's end (the signal, the
/// SIGCONT), or why not.
async fn strike(member: &Member, act: Act) -> anyhow::Result<(u32, Instant)> {
    let struck =
        pid_on_port(member.port).with_context(|| format!("no process on {}'s port", member.id))?;
    let pid = struck as i32;
    // nginx's workers are its master's process group: a pause stops them all.
    let target = match member.kind {
        Kind::Nginx => -pid,
        _ => pid,
    };
    match act {
        Act::Kill => {
            signal(pid, libc::SIGKILL);
        }
        Act::Restart => {
            signal(pid, libc::SIGTERM);
        }
        Act::Pause(ms) => {
            signal(target, libc::SIGSTOP);
            tokio::time::sleep(ms).await;
            signal(target, libc::SIGCONT);
        }
    }
    Ok((struck, Instant::now()))
}

/// Whether the member serves again after `act`: a killed or stopped one only once another
/// process answers on its port (a stopping Redis or nginx still answers for a moment).
async fn back(pool: &Pool, member: &Member, act: Act, struck: u32) -> bool {
    let replaced = match act {
        Act::Pause(_) => true,
        Act::Kill | Act::Restart => pid_on_port(member.port).is_some_and(|pid| pid != struck),
    };
    replaced && serves(pool, member).await
}

fn act_words(act: Act) -> String {
    match act {
        Act::Kill => "SIGKILL".into(),
        Act::Restart => "SIGTERM (restart)".into(),
        Act::Pause(d) => format!("SIGSTOP for {} ms, SIGCONT", d.as_millis()),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    anyhow::ensure!(
        args.buying + args.grading <= args.rooms,
        "--buying + --grading must be at most --rooms"
    );
    println!(
        "nemesis: seed {seed}, {} min of faults then {} s quiet, {} instances, {} rooms \
         ({} buying on {}, {} grading, all voting); load {}",
        args.minutes,
        args.quiet,
        args.instances,
        args.rooms,
        args.buying,
        SAFE_TIERS.join("/"),
        args.grading,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let max_rooms = (args.rooms + 10).to_string();
    let fleet = Fleet::start_with(
        &args.oversell,
        args.instances,
        &[("MAX_ROOMS", &max_rooms)],
        &["--lab", "--lock-persistence", "always"],
    )?;
    let members = members(&fleet.banner);
    let kinds = |k: Kind| members.iter().filter(|m| m.kind == k).count();
    anyhow::ensure!(
        kinds(Kind::Instance) == usize::from(args.instances)
            && kinds(Kind::Nginx) == 1
            && kinds(Kind::ResourceStore) == 1
            && kinds(Kind::LockStore) == 1,
        "could not read the members from up's banner: {:?}",
        fleet.banner
    );
    let class = class::Class::make(&fleet, &args).await?;
    let pool = Pool::default();
    let stop = Arc::new(AtomicBool::new(false));
    let running = class.start(stop.clone());

    // The faults, one at a time: strike, then wait for the member to serve again.
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let window = Duration::from_secs_f64(args.minutes * 60.0);
    let max_faults = args
        .max_faults
        .unwrap_or((window.as_secs() / 3).max(1) as usize);
    let mut struck = Vec::new();
    let mut longest = Duration::ZERO;
    let mut over_bound = 0;
    while struck.len() < max_faults {
        let gap = rng.millis(args.gap_min_ms, args.gap_max_ms);
        if started.elapsed() + gap >= window {
            break;
        }
        tokio::time::sleep(gap).await;
        let member = members[rng.below(members.len() as u64) as usize].clone();
        let act = match rng.below(3) {
            0 => Act::Kill,
            1 => Act::Pause(rng.millis(300, 2_000)),
            _ => Act::Restart,
        };
        let at = started.elapsed().as_secs_f64();
        let (pid, ended) = match strike(&member, act).await {
            Ok(struck) => struck,
            Err(err) => {
                println!(
                    "[{at:7.1} s] fault {}: {} {}: not struck: {err:#}",
                    struck.len() + 1,
                    act_words(act),
                    member.id
                );
                continue;
            }
        };
        let bound = Duration::from_secs(args.recovery_bound);
        let back = loop {
            if back(&pool, &member, act, pid).await {
                break Some(ended.elapsed());
            }
            if ended.elapsed() > bound * 2 {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let took = back.unwrap_or(bound * 2);
        longest = longest.max(took);
        if took > bound {
            over_bound += 1;
        }
        struck.push((member.id.clone(), act));
        println!(
            "[{at:7.1} s] fault {}: {} {}; serving again after {}",
            struck.len(),
            act_words(act),
            member.id,
            back.map_or(format!("more than {} s", took.as_secs()), |d| format!(
                "{:.2} s",
                d.as_secs_f64()
            ))
        );
    }
    let quiet_from = started.elapsed().max(window);
    tokio::time::sleep(
        (quiet_from + Duration::from_secs(args.quiet)).saturating_sub(started.elapsed()),
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    let records = running.finish().await?;

    // The checks, from the clients' records and the ledger.
    let targets = Targets::parse(&[fleet.url.as_str()], None)?;
    let mut lost = 0usize;
    let mut oversold = 0i64;
    let mut taken_without_order = 0i64;
    for (room, tier) in &class.buying {
        let acked = records.acked_in(room);
        let ledger = ledger_ids(&pool, &targets, room).await?;
        let missing = acked.iter().filter(|id| !ledger.contains(*id)).count();
        let state = get_json(&pool, &targets, &format!("/state?room={room}")).await?;
        let field = |f: &str| state[f].as_i64().unwrap_or(0);
        let (orders, off_stock) = (field("orders"), field("initial_stock") - field("stock"));
        let twice = (orders - off_stock)
            .max(0)
            .max(orders - field("initial_stock"));
        if missing > 0 || twice > 0 || off_stock > orders {
            println!(
                "room {room} ({tier}): {} answered 200, {missing} not in the ledger; ledger {orders}, \
                 off the stock {off_stock}",
                acked.len()
            );
        }
        lost += missing;
        oversold += twice;
        taken_without_order += (off_stock - orders).max(0);
    }
    let mut by_act = [0usize; 3];
    for (_, act) in &struck {
        by_act[match act {
            Act::Kill => 0,
            Act::Pause(_) => 1,
            Act::Restart => 2,
        }] += 1;
    }
    println!(
        "faults struck: {} ({} SIGKILL, {} SIGSTOP/SIGCONT, {} SIGTERM restarts) over {:.0} s, seed {seed}",
        struck.len(),
        by_act[0],
        by_act[1],
        by_act[2],
        window.as_secs_f64()
    );
    println!("{}", records.summary());
    println!("stock taken without an order: {taken_without_order}");
    println!(
        "members not back within {} s: {over_bound}",
        args.recovery_bound
    );
    println!("acknowledged lost: {lost}");
    println!("oversold on safe tiers: {oversold}");
    println!("votes lost: {}", records.votes_miscounted);
    println!("gradings lost: {}", records.gradings_lost);
    println!("longest recovery: {:.1} s", longest.as_secs_f64());
    drop(fleet);
    let failed = lost > 0
        || oversold > 0
        || taken_without_order > 0
        || records.votes_miscounted > 0
        || records.gradings_lost > 0
        || over_bound > 0;
    std::process::exit(i32::from(failed));
}

/// One call through the fleet: its status and its JSON (`{}` when it has none), or the
/// transport's failure.
async fn call(
    pool: &Pool,
    targets: &Targets,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> anyhow::Result<(StatusCode, Value)> {
    call_within(
        pool,
        targets,
        (method, path),
        token,
        body,
        Duration::from_secs(15),
    )
    .await
}

/// The same, waiting up to `limit` for the answer (a grading's press answers when the
/// grading has run, which takes longer than a sale).
async fn call_within(
    pool: &Pool,
    targets: &Targets,
    (method, path): (Method, &str),
    token: Option<&str>,
    body: Option<Value>,
    limit: Duration,
) -> anyhow::Result<(StatusCode, Value)> {
    let reply = pool
        .fetch(
            targets,
            targets.first(),
            method,
            path,
            token,
            body.map(|b| b.to_string().into_bytes()),
            limit,
        )
        .await?;
    let value = serde_json::from_slice(&reply.body).unwrap_or_else(|_| json!({}));
    Ok((reply.status, value))
}

/// How many requests of each kind the class sent, shared by its tasks.
#[derive(Default)]
struct Sent {
    sales: AtomicU64,
    sales_ok: AtomicU64,
    votes: AtomicU64,
    votes_ok: AtomicU64,
    gradings: AtomicU64,
}
