//! The serial floor of a locked sale: one client doing a lock chain's round trips back to back
//! against a Redis, with the service's own scripts, on the service's own client stack
//! (redis-rs' multiplexed connection on tokio). No HTTP, no nginx, no other buyer: the fastest
//! a lock can pass from sale to sale through that Redis on this machine, which is the physical
//! limit `bench/selling-rate.sh` measures the locked tiers against.
//!
//! Each chain runs for `--seconds` on a room of its own (`serial-floor`, removed at the end), so
//! a fleet's rooms are not touched; the release publishes on a channel nobody listens to, so
//! the instances are not woken. Prints TSV: chain, round trips, chains/s, µs per chain.
//!
//!   cargo run --release -p oversell-bench --bin serial-floor -- --redis redis://127.0.0.1:6379

use std::time::{Duration, Instant};

use clap::Parser;
use redis::aio::MultiplexedConnection;
use redis::Value;

#[derive(Parser)]
#[command(about = "One client doing a lock chain's round trips back to back: the serial floor")]
struct Args {
    /// The Redis the fleet's locks and stock live in.
    #[arg(long, default_value = "redis://127.0.0.1:6379")]
    redis: String,
    /// Seconds each chain runs.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
}

const ENTER: &str = include_str!("../../../src/sale/enter.lua");
const COMMIT: &str = include_str!("../../../src/sale/commit.lua");
const RELEASE: &str = include_str!("../../../src/lock/lua_release.lua");

const P: &str = "oversell:{serial-floor}:";
/// Published to by the release; no instance subscribes to it (the pattern needs `oversell:{`).
const CHANNEL: &str = "serial-floor:released";

fn key(name: &str) -> String {
    format!("{P}{name}")
}

struct Shas {
    enter: String,
    commit: String,
    release: String,
}

/// What a chain carries from one sale to the next: the read the previous write brought back
/// (the cohort pass).
#[derive(Default)]
struct Carry {
    entered: Option<(i64, i64)>,
}

/// The four chains: what each does in one iteration.
#[derive(Clone, Copy)]
enum Chain {
    /// `GET stock`: one round trip, nothing else.
    Get,
    /// A `lua-release` sale as the articles write it: take, read, write, release.
    Articles,
    /// The same with the write and the release in one pipeline.
    Pipelined,
    /// A cohort's local pass as the service makes it: the lock stays held, and each write
    /// carries the next sale's read behind it.
    CohortPass,
}

impl Chain {
    fn name(self) -> &'static str {
        match self {
            Chain::Get => "GET loop",
            Chain::Articles => "lua-release chain: SET NX PX, enter, commit, release",
            Chain::Pipelined => "lua-release chain as served: SET NX PX, enter, commit + release",
            Chain::CohortPass => "cohort pass as served: commit + the next sale's enter",
        }
    }

    fn round_trips(self) -> u32 {
        match self {
            Chain::Get => 1,
            Chain::Articles => 4,
            Chain::Pipelined => 3,
            Chain::CohortPass => 1,
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let client = redis::Client::open(args.redis.as_str())?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let shas = Shas {
        enter: load(&mut conn, ENTER).await?,
        commit: load(&mut conn, COMMIT).await?,
        release: load(&mut conn, RELEASE).await?,
    };
    let seconds = Duration::from_secs_f64(args.seconds);
    println!("chain\tround_trips\tper_s\tus_per_chain");
    for chain in [
        Chain::Get,
        Chain::Articles,
        Chain::Pipelined,
        Chain::CohortPass,
    ] {
        clean(&mut conn).await?;
        redis::cmd("SET")
            .arg(key("stock"))
            .arg(1_000_000_000)
            .arg("EX")
            .arg(600)
            .query_async::<()>(&mut conn)
            .await?;
        let started = Instant::now();
        let mut done = 0u64;
        let mut carry = Carry::default();
        while started.elapsed() < seconds {
            one(&mut conn, &shas, chain, done, &mut carry).await?;
            done += 1;
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{}\t{}\t{:.0}\t{:.1}",
            chain.name(),
            chain.round_trips(),
            done as f64 / secs,
            secs * 1e6 / done as f64
        );
    }
    clean(&mut conn).await?;
    Ok(())
}

async fn load(conn: &mut MultiplexedConnection, body: &str) -> redis::RedisResult<String> {
    redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(body)
        .query_async(conn)
        .await
}

async fn clean(conn: &mut MultiplexedConnection) -> redis::RedisResult<()> {
    let names = [
        "stock",
        "lock",
        "ledger",
        "items_sold",
        "exits",
        "overlaps",
        "fence_seen",
        "stale_writes_rejected",
        "timeline",
    ];
    let keys: Vec<String> = names.iter().map(|n| key(n)).collect();
    redis::cmd("DEL").arg(keys).query_async(conn).await
}

fn enter_cmd(shas: &Shas, owner: &str) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(&shas.enter).arg(5);
    cmd.arg(key("stock"))
        .arg(key("exits"))
        .arg(key("fence_seen"))
        .arg(key("stale_writes_rejected"))
        .arg(key("timeline"));
    cmd.arg("").arg("floor").arg(owner);
    cmd
}

/// `whole`: sent as the service sends a call that is not last in a pipeline (`EVAL`).
fn commit_cmd(shas: &Shas, owner: &str, exits: i64, new_stock: i64, whole: bool) -> redis::Cmd {
    let mut cmd = match whole {
        true => redis::cmd("EVAL"),
        false => redis::cmd("EVALSHA"),
    };
    match whole {
        true => cmd.arg(COMMIT),
        false => cmd.arg(&shas.commit),
    };
    cmd.arg(8);
    for name in [
        "stock",
        "ledger",
        "items_sold",
        "exits",
        "overlaps",
        "fence_seen",
        "stale_writes_rejected",
        "timeline",
    ] {
        cmd.arg(key(name));
    }
    cmd.arg(exits)
        .arg(new_stock)
        .arg(1)
        .arg(r#"{"order_id":"floor","qty":1}"#)
        .arg("")
        .arg("floor")
        .arg(owner);
    cmd
}

fn release_cmd(shas: &Shas, owner: &str) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(&shas.release)
        .arg(1)
        .arg(key("lock"))
        .arg(owner)
        .arg(CHANNEL);
    cmd
}

async fn one(
    conn: &mut MultiplexedConnection,
    shas: &Shas,
    chain: Chain,
    n: u64,
    carry: &mut Carry,
) -> anyhow::Result<()> {
    let owner = format!("floor-{n}");
    match chain {
        Chain::Get => {
            let _: Value = redis::cmd("GET")
                .arg(key("stock"))
                .query_async(conn)
                .await?;
        }
        Chain::Articles | Chain::Pipelined => {
            let (taken, _lease): (Option<String>, i64) = redis::pipe()
                .cmd("SET")
                .arg(key("lock"))
                .arg(&owner)
                .arg("NX")
                .arg("PX")
                .arg(3000)
                .pttl(key("lock"))
                .query_async(conn)
                .await?;
            anyhow::ensure!(taken.is_some(), "the floor's own lock was busy");
            let (stock, exits, _now): (i64, i64, i64) =
                enter_cmd(shas, &owner).query_async(conn).await?;
            let released: i64 = if let Chain::Articles = chain {
                let _: Value = commit_cmd(shas, &owner, exits, stock - 1, false)
                    .query_async(conn)
                    .await?;
                release_cmd(shas, &owner).query_async(conn).await?
            } else {
                // As the service sends it: the write whole (EVAL), the release by hash.
                let (_, released): (Value, i64) = redis::pipe()
                    .add_command(commit_cmd(shas, &owner, exits, stock - 1, true))
                    .add_command(release_cmd(shas, &owner))
                    .query_async(conn)
                    .await?;
                released
            };
            anyhow::ensure!(released == 1, "the floor lost its own lock");
        }
        Chain::CohortPass => {
            let (stock, exits) = match carry.entered {
                Some(entered) => entered,
                None => {
                    let (stock, exits, _now): (i64, i64, i64) =
                        enter_cmd(shas, &owner).query_async(conn).await?;
                    (stock, exits)
                }
            };
            let next = format!("floor-{}", n + 1);
            let (_, (stock, exits, _now)): (Value, (i64, i64, i64)) = redis::pipe()
                .add_command(commit_cmd(shas, &owner, exits, stock - 1, true))
                .add_command(enter_cmd(shas, &next))
                .query_async(conn)
                .await?;
            carry.entered = Some((stock, exits));
        }
    }
    Ok(())
}
