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

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use clap::Parser;
use oversell::composed::{self, Call, Lua};
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

static ENTER: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../src/sale/enter.lua")));
static COMMIT: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../src/sale/commit.lua")));
// The `lua-release` rung's own steps, as the service sends them.
static RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/lua-release/release-1.lua"
    ))
});
static SET_NX_PX: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(include_str!(
        "../../../static/locks/lua-release/acquire-1.lua"
    ))
});
/// The look at whose lock it is, which the service sends around a release step.
static HOLDER: LazyLock<Lua> =
    LazyLock::new(|| Lua::new(include_str!("../../../src/lock/holder.lua")));

const P: &str = "oversell:{serial-floor}:";
/// Published to by the release; no instance subscribes to it (the pattern needs `oversell:{`).
const CHANNEL: &str = "serial-floor:released";

fn key(name: &str) -> String {
    format!("{P}{name}")
}

/// The reset generation of the floor's room, which its sales began under.
const GENERATION: &str = "floor";

/// What a chain carries from one sale to the next: the read the previous write brought back
/// (the cohort pass).
#[derive(Default)]
struct Carry {
    entered: Option<Entered>,
}

/// The four chains: what each does in one iteration.
#[derive(Clone, Copy)]
enum Chain {
    /// `GET stock`: one round trip, nothing else.
    Get,
    /// A `lua-release` sale as the articles write it: take, read, write, release.
    Articles,
    /// The same as the service sends it: the read behind the acquire, the release behind the
    /// write.
    Together,
    /// A cohort's local pass as the service makes it: the lock stays held, and each write
    /// carries the next sale's read behind it.
    CohortPass,
}

impl Chain {
    fn name(self) -> &'static str {
        match self {
            Chain::Get => "GET loop",
            Chain::Articles => "lua-release chain: SET NX PX, enter, commit, release",
            Chain::Together => "lua-release chain as served: SET NX PX + enter, commit + release",
            Chain::CohortPass => "cohort pass as served: commit + the next sale's enter",
        }
    }

    fn round_trips(self) -> u32 {
        match self {
            Chain::Get => 1,
            Chain::Articles => 4,
            Chain::Together => 2,
            Chain::CohortPass => 1,
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let client = redis::Client::open(args.redis.as_str())?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let seconds = Duration::from_secs_f64(args.seconds);
    println!("chain\tround_trips\tper_s\tus_per_chain");
    for chain in [
        Chain::Get,
        Chain::Articles,
        Chain::Together,
        Chain::CohortPass,
    ] {
        clean(&mut conn).await?;
        // The stock, and what a reset put on sale (the write counts what it sells beyond it).
        for name in ["stock", "initial"] {
            redis::cmd("SET")
                .arg(key(name))
                .arg(1_000_000_000)
                .arg("EX")
                .arg(600)
                .query_async::<()>(&mut conn)
                .await?;
        }
        // As a reset leaves it: the read and the write check it.
        redis::cmd("SET")
            .arg(key("generation"))
            .arg(GENERATION)
            .arg("EX")
            .arg(600)
            .query_async::<()>(&mut conn)
            .await?;
        // Not timed: the first call of each script loads it.
        one(&mut conn, chain, 0, &mut Carry::default()).await?;
        let started = Instant::now();
        let mut done = 0u64;
        let mut carry = Carry::default();
        while started.elapsed() < seconds {
            one(&mut conn, chain, done + 1, &mut carry).await?;
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
        "generation",
        "initial",
    ];
    let keys: Vec<String> = names.iter().map(|n| key(n)).collect();
    redis::cmd("DEL").arg(keys).query_async(conn).await
}

/// `enter.lua` as the sale calls it (`src/sale/mod.rs`), for an unfenced tier.
fn enter(owner: &str) -> Call {
    ENTER
        .call()
        .key(key("stock"))
        .key(key("exits"))
        .key(key("fence_seen"))
        .key(key("stale_writes_rejected"))
        .key(key("timeline"))
        .key(key("generation"))
        .arg("")
        .arg("floor")
        .arg(owner)
        .arg(GENERATION)
}

/// `commit.lua` as the sale calls it, writing one item sold.
fn commit(owner: &str, (stock, exits): &Entered) -> Call {
    let mut call = COMMIT.call();
    for name in [
        "stock",
        "ledger",
        "items_sold",
        "exits",
        "overlaps",
        "fence_seen",
        "stale_writes_rejected",
        "timeline",
        "generation",
        "initial",
    ] {
        call = call.key(key(name));
    }
    call.arg(exits)
        .arg(stock - 1)
        .arg(1)
        .arg(r#"{"order_id":"floor","qty":1}"#)
        .arg("")
        .arg("floor")
        .arg(owner)
        .arg(GENERATION)
        // µs the sale took: the timeline's, not the floor's concern.
        .arg(0)
}

fn release(owner: &str) -> Call {
    RELEASE
        .call()
        .key(key("lock"))
        .arg(owner)
        .arg(3000)
        .arg(CHANNEL)
}

/// The (stock, exits) of `enter.lua`'s reply.
type Entered = (i64, i64);

fn entered(reply: redis::RedisResult<Value>) -> anyhow::Result<Entered> {
    let (stock, exits, _now): (i64, i64, i64) = as_type(reply)?;
    Ok((stock, exits))
}

/// A call's reply as the type its script returns.
fn as_type<T: redis::FromRedisValue>(reply: redis::RedisResult<Value>) -> anyhow::Result<T> {
    Ok(redis::from_redis_value(reply?)?)
}

async fn one(
    conn: &mut MultiplexedConnection,
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
        Chain::Together => {
            let take = SET_NX_PX.call().key(key("lock")).arg(&owner).arg(3000);
            let read = enter(&owner);
            let replies = composed::run_if_first_takes(conn, &[&take, &read]).await?;
            let mut replies = replies.into_iter();
            let taken: i64 = as_type(replies.next().unwrap_or(Ok(Value::Nil)))?;
            anyhow::ensure!(taken == 1, "the floor's own lock was busy");
            let read = entered(replies.next().unwrap_or(Ok(Value::Nil)))?;
            // The write and the release (between two looks at whose lock it is) in one script.
            let write = commit(&owner, &read);
            let holder = HOLDER.call().key(key("lock"));
            let calls = [&write, &holder, &release(&owner), &holder];
            let mut replies = composed::run_in_order(conn, &calls).await?;
            replies.pop();
            let released: i64 = as_type(replies.pop().unwrap_or(Ok(Value::Nil)))?;
            anyhow::ensure!(released == 1, "the floor lost its own lock");
        }
        Chain::Articles => {
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
            let read = entered(enter(&owner).invoke(conn).await)?;
            let _: Value = commit(&owner, &read).invoke(conn).await?;
            let released: i64 = release(&owner).invoke(conn).await?;
            anyhow::ensure!(released == 1, "the floor lost its own lock");
        }
        Chain::CohortPass => {
            let read = match carry.entered.take() {
                Some(entered) => entered,
                None => entered(enter(&owner).invoke(conn).await)?,
            };
            let next = format!("floor-{}", n + 1);
            let write = commit(&owner, &read);
            // As a cohort's holder sends it: behind a lock already held (no fencing token).
            let calls = [&write, &enter(&next)];
            let mut replies = composed::run_holding(conn, &calls, None).await?;
            carry.entered = Some(entered(replies.pop().unwrap_or(Ok(Value::Nil)))?);
        }
    }
    Ok(())
}
