//! The recorder: a run's whole history ([`crate::history`]) put together once the run is over,
//! from what the clients kept (every request's call, return and answer) and what the fleet
//! recorded in the resource store (the lock timeline: each section's enter and exit, renewals,
//! stale writes, faults as they struck; the ledger: each sale). It reads, never judges: the
//! checker reads what this writes.
//!
//! Leases are the lock store's own where it stamps them (the Redis tiers on a shared store,
//! `src/lock/lease_stamp.rs`), and derived where it stamps none: a section's lease is then
//! taken as granted at its enter (the grant came just before), running a TTL from then and
//! from each renewal, released at its exit. Each lease line says which (`source`), and the
//! `run` line's `clocks` says which clock each time is on and the bound between them, measured
//! at the run's start and end (`clock_bound.rs`).

mod checked;
pub mod clock_bound;
mod sections;

pub use checked::{check, report, run_view, violation_svg, violation_view, Checked};

use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, Context};
use http::Method;
use loadtest::stats::wall_clock_us;
use loadtest::Exchange;
use oversell_api::tier::Lease as LeaseKind;
use oversell_api::StateView;
use oversell_client::AdminClient;
use serde_json::Value;

use oversell_api::history::{Clocks, Cut, End, LeaseSource, Line, Request, Run, VERSION};

/// Entries or orders read per call.
const PAGE: usize = 10_000;
/// The most timeline entries one history reads: a few runs of the stream's cap.
const MAX_TIMELINE: usize = 200_000;
/// The most ledger orders one history reads (`GET /ledger` keeps them all).
const MAX_LEDGER: usize = 1_000_000;

/// What a run was, for its `run` line.
pub struct RunInfo<'a> {
    pub id: String,
    pub chapter: Option<&'a str>,
    /// The state read before the first request: the room, the tier, its settings, the stock.
    pub before: &'a StateView,
    /// The clocks' bound read before the first request ([`clock_bound::measure`]); `None`:
    /// not read, and the history then states no bound.
    pub clocks_at_start: Option<u64>,
}

/// A run id: unique enough across runs and processes, and sortable by time.
pub fn run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let n = RUNS.fetch_add(1, Relaxed);
    format!(
        "{:x}-{:x}-{n}",
        wall_clock_us() / 1000,
        std::process::id() & 0xffff
    )
}

/// The whole history of a run that has just ended: `exchanges` are the requests the clients
/// kept (`None`: they were made where none was kept, e.g. an instance's own burst).
pub async fn collect(
    admin: &AdminClient,
    run: RunInfo<'_>,
    exchanges: Option<&[Exchange]>,
) -> anyhow::Result<Vec<Line>> {
    let before = run.before;
    let leased = before.tier.facts().lease == LeaseKind::Expires;
    let mut lines = vec![Line::Run(Run {
        v: VERSION,
        id: run.id,
        room: before.room.clone(),
        chapter: run.chapter.map(str::to_owned),
        tier: before.tier.to_string(),
        stock: before.truth.stock,
        ttl_ms: before.settings.ttl_ms,
        business_ms: before.settings.business_ms,
        clocks: Clocks {
            request: "the client's (loadtest's wall clock)".into(),
            section: "the resource store's (Redis TIME)".into(),
            lease: String::new(),
            fault: "the resource store's (Redis TIME at the strike)".into(),
            bound_us: None,
        },
    })];
    match exchanges {
        Some(exchanges) => lines.extend(exchanges.iter().filter_map(request)),
        None => lines.push(Line::Cut(Cut {
            what: "request".into(),
            reason: "the buyers ran inside an instance; their answers were not kept".into(),
        })),
    }
    let (mut entries, dropped) = stream(admin, "/timeline").await?;
    // A lab lock's stamped leases, kept beside its lock in the lock store (the only locks
    // that stamp there). A lock store that cannot be read now (a chapter's fault still on it)
    // costs the stamps, said, never the history: those leases are derived.
    let mut leases_dropped = 0;
    if before.tier == oversell_api::tier::Tier::Custom {
        match stream(admin, "/leases").await {
            Ok((leases, dropped)) => {
                entries.extend(leases);
                leases_dropped = dropped;
            }
            Err(err) => lines.push(Line::Cut(Cut {
                what: "lease".into(),
                reason: format!(
                    "the lab lock's stamped leases could not be read from the lock store \
                     ({err:#}): its leases are derived from their sections"
                ),
            })),
        }
    }
    let ledger = ledger(admin).await?;
    if dropped > 0 {
        lines.push(Line::Cut(Cut {
            what: "section".into(),
            reason: format!(
                "the lock timeline keeps about 5,000 entries and dropped the oldest {dropped}: \
                 sections that sold nothing before them, and their leases and faults, are \
                 missing (every sale is still here, from the ledger)"
            ),
        }));
    }
    if leases_dropped > 0 {
        lines.push(Line::Cut(Cut {
            what: "lease".into(),
            reason: format!(
                "the lab lock's lease stream keeps about 5,000 entries and dropped the oldest \
                 {leases_dropped}: those leases are derived from their sections"
            ),
        }));
    }
    let ttl_us = (before.settings.ttl_ms as i64).saturating_mul(1000);
    lines.extend(sections::lines(&entries, &ledger, leased.then_some(ttl_us)));
    let stamped = lines
        .iter()
        .any(|l| matches!(l, Line::Lease(l) if l.source == LeaseSource::Store));
    let clocks_at_end = clock_bound::measure(admin).await;
    if let Some(Line::Run(first)) = lines.first_mut() {
        let shared = before.lock_store.kind == oversell_api::LockStoreKind::Shared;
        first.clocks.lease = lease_clock(stamped, leased, shared);
        // Both ends or none: a bound read once says nothing of a clock that moved meanwhile.
        first.clocks.bound_us = match (run.clocks_at_start, clocks_at_end) {
            (Some(start), Ok(end)) => Some(start.max(end)),
            _ => None,
        };
    }
    let stock = admin.state().await.map(|s| s.truth.stock).ok();
    lines.push(Line::End(End {
        at_us: wall_clock_us(),
        stock,
    }));
    Ok(lines)
}

/// Which clock the leases are on, in words: the store's own stamps, derived ones, or none.
fn lease_clock(stamped: bool, leased: bool, shared: bool) -> String {
    match (stamped, leased) {
        (true, _) if shared => "the resource store's (Redis TIME), stamped by the lock store \
                      (the same server) in each step's own script with the deadline it set; a \
                      lease line of source `derived` was not stamped and is derived from its \
                      section"
            .into(),
        (true, _) => "the lock store's (its own Redis TIME, another server's than the \
                      sections': the two agree within bound_us), stamped in each step's own \
                      script with the deadline it set; a lease line of source `derived` was \
                      not stamped and is derived from its section, on the resource store's"
            .into(),
        (false, true) => "the resource store's, derived: granted at the section's enter, \
                          running ttl_ms from it and from each renewal, released at its exit \
                          (this tier's lock store stamps no lease of its own)"
            .into(),
        (false, false) => "none: this tier's lock has no lease".into(),
    }
}

/// `loadtest run --history FILE`: the run, then its whole history written to FILE.
#[cfg(feature = "cli")]
pub async fn run_command(args: loadtest::cli::RunArgs) -> anyhow::Result<String> {
    let Some(path) = args.history.clone() else {
        return loadtest::cli::run_keeping(args)
            .await
            .map(|(report, _)| report);
    };
    let asked = args.load().requests();
    if let Some(n) = asked.filter(|&n| n > loadtest::MAX_KEPT_ANSWERS) {
        anyhow::bail!(
            "--history keeps every request in memory, at most {max}: {n} were asked (-n or \
             --burst {max} or fewer, or leave --history off)",
            max = loadtest::MAX_KEPT_ANSWERS
        );
    }
    let targets = oversell_client::Targets::parse(&args.target.urls, args.target.room.as_deref())?;
    let admin = AdminClient::new(&targets, None);
    let before = admin
        .state()
        .await
        .context("--history reads the room's state before the run")?;
    let clocks_at_start = clock_bound::measure(&admin).await.ok();
    let (report, stats) = loadtest::cli::run_keeping(args).await?;
    let info = RunInfo {
        id: run_id(),
        chapter: None,
        before: &before,
        clocks_at_start,
    };
    let lines = collect(&admin, info, Some(&stats.exchanges)).await?;
    write(&path, &lines)?;
    let kept = stats.exchanges.len() as u64;
    let full = match asked {
        None if kept >= loadtest::MAX_KEPT_ANSWERS => format!(
            "The run ended at {kept} requests, before its duration: a history keeps at most that many\n"
        ),
        _ => String::new(),
    };
    Ok(format!(
        "{report}{full}History: {} lines in {} (loadtest check {})\n",
        lines.len(),
        path.display(),
        path.display()
    ))
}

/// Writes a history as JSON Lines.
pub fn write(path: &Path, lines: &[Line]) -> anyhow::Result<()> {
    let file = std::fs::File::create(path)
        .with_context(|| format!("cannot write the history to {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for line in lines {
        serde_json::to_writer(&mut out, line)?;
        out.write_all(b"\n")?;
    }
    out.flush()
        .with_context(|| format!("cannot write the history to {}", path.display()))
}

/// A request as its history line: the answer's sale fields where the body had them.
fn request(exchange: &Exchange) -> Option<Line> {
    let buyer = exchange.buyer.clone()?;
    let body: Value = serde_json::from_slice(&exchange.body).unwrap_or(Value::Null);
    let text = |name: &str| body.get(name).and_then(Value::as_str).map(str::to_owned);
    Some(Line::Request(Request {
        buyer,
        qty: 1,
        call_us: exchange.call_us,
        return_us: exchange.return_us,
        status: exchange.status,
        order_id: text("order_id"),
        stock_left: body.get("stock_left").and_then(Value::as_i64),
        fence: body.get("fence").and_then(Value::as_u64),
        instance: text("instance"),
    }))
}

/// Every entry since the room's reset of the stream `route` reads (`/timeline`, `/leases`),
/// and how many its cap dropped.
async fn stream(admin: &AdminClient, route: &str) -> anyhow::Result<(Vec<Value>, u64)> {
    let mut entries = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let path = match &after {
            Some(id) => format!("{route}?limit={PAGE}&after={id}"),
            None => format!("{route}?limit={PAGE}"),
        };
        let mut page = admin.request(Method::GET, &path, None).await?;
        let added = page["added"].as_u64().unwrap_or(0);
        let kept = page["kept"].as_u64().unwrap_or(0);
        let Value::Array(got) = page["entries"].take() else {
            return Err(anyhow!("GET {route} answered no entries list"));
        };
        entries.extend(got);
        after = page["next"].as_str().map(str::to_owned);
        if after.is_none() || entries.len() >= MAX_TIMELINE {
            return Ok((entries, added.saturating_sub(kept)));
        }
    }
}

/// Every order of the ledger, oldest first.
async fn ledger(admin: &AdminClient) -> anyhow::Result<Vec<Value>> {
    let mut orders = Vec::new();
    loop {
        let path = format!("/ledger?offset={}&limit={PAGE}", orders.len());
        let mut page = admin.request(Method::GET, &path, None).await?;
        let Value::Array(got) = page["orders"].take() else {
            return Err(anyhow!("GET /ledger answered no orders list"));
        };
        let last = got.len() < PAGE;
        orders.extend(got);
        if last || orders.len() >= MAX_LEDGER {
            return Ok(orders);
        }
    }
}

#[cfg(all(test, feature = "cli"))]
mod tests {
    /// Asked for more requests than a history keeps, the run is refused before it sends one
    /// (the address is one nobody listens on: reaching it would be another error).
    #[tokio::test]
    async fn a_history_run_past_the_bound_is_refused_before_it_starts() {
        let n = (loadtest::MAX_KEPT_ANSWERS + 1).to_string();
        let history = std::env::temp_dir().join("oversell-never-written.jsonl");
        let args = [
            "loadtest",
            "run",
            "--url",
            "http://127.0.0.1:9",
            "-n",
            &n,
            "--history",
        ];
        let err = crate::run_cli(
            args.into_iter()
                .map(String::from)
                .chain([history.display().to_string()]),
        )
        .await
        .unwrap_err();
        let said = format!("{err:#}");
        assert!(
            said.contains("at most 500000") && said.contains(&n),
            "{said}"
        );
        assert!(!history.exists());
    }
}
