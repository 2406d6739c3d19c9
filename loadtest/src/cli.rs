//! The command line: clap derive, value parsers for counts ("10k"), durations ("30s") and rates,
//! the translation of flags into a [`Load`] or [`MatrixOptions`], and running a parsed command
//! ([`execute`], in `execute`). Only with the `cli` feature.

mod execute;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use http::Method;
use oversell_api::{SettingsPatch, WaitStrategy};

pub use crate::args::{parse_duration, Lang, TargetArgs};
use crate::matrix::{parse_tiers, MatrixOptions};
use crate::worker::{Load, Model, RequestSpec, Stop};

/// The generator's examples; the `loadtest` binary (the workshop crate) adds the chapters'.
pub const EXAMPLES: &str = "\
Examples:
  # 1000 buyers released at the same instant through nginx
  loadtest run --url http://127.0.0.1:8080 --burst 1000

  # closed loop: 50 connections, 10k sales; then 30 seconds
  loadtest run -c 50 -n 10k
  loadtest run -c 50 -z 30s

  # open loop: 2000 sales/s for 20 s, latencies corrected for coordinated omission
  loadtest run -q 2k -z 20s -c 200

  # 64 buyers for 10 s: hand-offs (Redis' clock, from the ledger) and acquires per client,
  # with a chart of both
  loadtest run -c 64 -z 10s --charts charts/

  # the same hand-offs after another tool's run (every sale since the room's last reset)
  wrk -t1 -c64 -d10s -s bench/wrk-sale.lua http://127.0.0.1:8080 && loadtest hand-off

  # a plain GET (benchmark the generator itself), JSON output
  loadtest run -m GET --path /ping -c 64 -z 10s --json

  # every tier: reset, switch, 1000 buyers, ground truth; as a table, then JSON and a chart
  OVERSELL_ADMIN_TOKEN=secret loadtest matrix --tiers all --stock 100 --buyers 1000
  loadtest matrix --token secret --tiers none,lua-release --business-ms 5 --json --chart tiers.svg

  # three instances without nginx: connections go round robin, admin calls to the first
  loadtest matrix --url http://127.0.0.1:3101 --url http://127.0.0.1:3102 --url http://127.0.0.1:3103 --token secret";

/// Fires buyers at an oversell fleet and prints what each lock tier really did.
#[derive(Debug, Parser)]
#[command(name = "loadtest", version, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fire requests under one load model; print status counts and latency percentiles.
    Run(RunArgs),
    /// For each tier: reset, switch the fleet, fire a burst of buyers, read the ground truth.
    Matrix(MatrixArgs),
    /// The hand-offs of the room's ledger as it stands (every sale since its last reset, the
    /// newest 100,000 at most) and its sales per instance: for a run another tool made (wrk).
    HandOff(HandOffArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Connections. In a burst: at most this many (default: one per buyer).
    #[arg(short = 'c', long = "connections", value_name = "N", value_parser = parse_connections)]
    pub connections: Option<u64>,

    /// Stop after this many requests, e.g. 10k [default: 1000].
    #[arg(short = 'n', long = "requests", value_name = "N", value_parser = parse_count, conflicts_with = "duration")]
    pub requests: Option<u64>,

    /// Stop after this long instead, e.g. 30s.
    #[arg(short = 'z', long = "duration", value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Open loop: start this many requests per second on schedule, e.g. 2k. Latency counts
    /// from when each request was due (coordinated omission corrected).
    #[arg(short = 'q', long = "rate", value_name = "PER_SECOND", value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// Burst: open one connection per buyer, then release all buyers at the same instant,
    /// one request each.
    #[arg(long, value_name = "BUYERS", value_parser = parse_count, conflicts_with_all = ["requests", "duration", "rate"])]
    pub burst: Option<u64>,

    /// HTTP method.
    #[arg(short = 'm', long, default_value = "POST", value_parser = parse_method)]
    pub method: Method,

    /// Path to request. `POST /sale` sends {"buyer":"ID","qty":Q} with a unique ID per
    /// request; anything else is sent without a body.
    #[arg(long, default_value = "/sale")]
    pub path: String,

    /// Items per order, for POST /sale.
    #[arg(long, default_value_t = 1)]
    pub qty: u32,

    /// Keep every request's answer and write the run's whole history to FILE: JSON Lines,
    /// the requests beside the sections, leases and faults the fleet recorded (`loadtest
    /// check FILE` reads it). A sale run in one room (not with --rooms), of at most 500,000
    /// requests: every answer is kept in memory, so a run for a duration ends there if not before.
    #[arg(long, value_name = "FILE", conflicts_with = "rooms")]
    pub history: Option<PathBuf>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,

    /// Do not read the ground truth around a sale run (`GET /state` before and after, the
    /// run's ledger after): no hand-off times, no sales per instance. For a bench that times
    /// the whole command.
    #[arg(long)]
    pub no_hand_off: bool,

    /// Spread the connections over N rooms, `<room>-001` … (`--room`, default `room`): the
    /// i-th connection sells in room i mod N, so give at least N connections for every room to
    /// get load (1..=10000). Each room must be stocked first. The hand-off, one room's, is
    /// not read.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub rooms: Option<u16>,

    /// Also write a chart of the run's hand-offs and acquires per client into this directory
    /// (made if missing), named after the tier and its way of waiting.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
}

impl RunArgs {
    pub fn load(&self) -> Load {
        let stop = match (self.requests, self.duration) {
            (_, Some(d)) => Stop::After(d),
            (Some(n), None) => Stop::Requests(n),
            (None, None) => Stop::Requests(1000),
        };
        let model = match (self.burst, self.rate) {
            (Some(buyers), _) => Model::Burst { buyers },
            (None, Some(rate)) => Model::Open { rate, stop },
            (None, None) => Model::Closed { stop },
        };
        let connections = match (self.connections, model) {
            (Some(c), _) => c,
            (None, Model::Burst { buyers }) => buyers.min(MAX_CONNECTIONS),
            (None, _) => 50,
        };
        let is_sale = self.method == Method::POST
            && self.path.split('?').next().unwrap_or("").ends_with("/sale");
        Load {
            model,
            connections: usize::try_from(connections).unwrap_or(usize::MAX),
            request: RequestSpec {
                method: self.method.clone(),
                path: self.path.clone(),
                buyer_qty: is_sale.then_some(self.qty),
                keep_answers: self.history.is_some(),
            },
            timeout: self.target.timeout,
        }
    }
}

#[derive(Debug, Args)]
pub struct MatrixArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Admin token of the service.
    #[arg(long, env = "OVERSELL_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Tiers to run: all, safe (all but none and local), or a list like none,local,fenced.
    #[arg(long, default_value = "all")]
    pub tiers: String,

    /// Stock each tier starts from.
    #[arg(long, default_value_t = 100)]
    pub stock: i64,

    /// Buyers per tier, released at the same instant.
    #[arg(long, value_name = "N", default_value = "1000", value_parser = parse_count)]
    pub buyers: u64,

    /// At most this many connections per burst (default: one per buyer).
    #[arg(short = 'c', long = "connections", value_name = "N", value_parser = parse_connections)]
    pub connections: Option<u64>,

    /// Business work inside the critical section, ms (small values make races visible).
    #[arg(long, value_name = "MS")]
    pub business_ms: Option<u64>,

    /// Lock lease, ms.
    #[arg(long, value_name = "MS")]
    pub ttl_ms: Option<u64>,

    /// How buyers wait for a held lock: pubsub, spin:MS (e.g. spin:20), cohort or cohort:PASSES.
    #[arg(long)]
    pub wait: Option<WaitStrategy>,

    /// How long a buyer may wait for the lock before a 503, ms.
    #[arg(long, value_name = "MS")]
    pub wait_deadline_ms: Option<u64>,

    /// Run every tier with each of these ways of waiting, one row each (e.g. spin:20,pubsub).
    #[arg(long, value_delimiter = ',', conflicts_with = "wait")]
    pub waits: Vec<WaitStrategy>,

    /// Also read the lock store's own counts per sale: `SET NX PX` tries (INFO commandstats)
    /// and requests (Redis commands, or ZooKeeper packets from `mntr`). Needs a lock store of
    /// its own (`oversell up --lock-store single`).
    #[arg(long)]
    pub store_counts: bool,

    /// Instances that must report each tier switch before firing [default: one per --url].
    /// Set it to the fleet size when --url is a load balancer.
    #[arg(long, value_name = "N")]
    pub instances: Option<usize>,

    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,

    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,

    /// Also write a chart of oversold items and throughput per tier to this SVG file.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,

    /// Also write one chart per tier, its hand-offs and acquires per client, into this
    /// directory (made if missing): `<tier>.svg`, or `<tier>-<wait>.svg` with --waits.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HandOffArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// The other tool's connections: also says how long a full turn of the queue took (that
    /// many consecutive sections), the floor of an in-order lock's sale latency.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub buyers: Option<u32>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl MatrixArgs {
    pub fn options(&self) -> anyhow::Result<MatrixOptions> {
        let settings = SettingsPatch {
            business_ms: self.business_ms,
            ttl_ms: self.ttl_ms,
            wait: self.wait,
            wait_deadline_ms: self.wait_deadline_ms,
            ..SettingsPatch::default()
        };
        Ok(MatrixOptions {
            tiers: parse_tiers(&self.tiers)?,
            stock: self.stock,
            buyers: usize::try_from(self.buyers)?,
            connections: self.connections.map(usize::try_from).transpose()?,
            settings,
            instances: self.instances.unwrap_or(self.target.urls.len()),
            timeout: self.target.timeout,
            waits: self.waits.clone(),
            store_counts: self.store_counts,
            ..MatrixOptions::default()
        })
    }
}

/// A count with an optional SI suffix: `500`, `10k`, `1.5k`, `2m` (million), `1_000`.
/// The most connections one generator opens: each is a socket (the open-file limit is often
/// 1024–20000) and, to one target, an ephemeral port (about 28,000 on Linux).
pub const MAX_CONNECTIONS: u64 = 10_000;

/// `-c`: a count of at least 1 and at most [`MAX_CONNECTIONS`].
pub fn parse_connections(s: &str) -> Result<u64, String> {
    match parse_count(s)? {
        n @ 1..=MAX_CONNECTIONS => Ok(n),
        _ => Err(format!(
            "connections must be 1..={MAX_CONNECTIONS} (one socket each), not {s}"
        )),
    }
}

pub fn parse_count(s: &str) -> Result<u64, String> {
    let bad = || format!("invalid count `{s}`: expected e.g. 500, 10k, 2m");
    let clean = s.trim().replace('_', "");
    let (digits, factor) = match clean.chars().last() {
        Some('k' | 'K') => (&clean[..clean.len() - 1], 1e3),
        Some('m' | 'M') => (&clean[..clean.len() - 1], 1e6),
        Some('g' | 'G') => (&clean[..clean.len() - 1], 1e9),
        _ => (clean.as_str(), 1.0),
    };
    if let Ok(n) = u64::from_str(digits) {
        return n.checked_mul(factor as u64).ok_or_else(bad);
    }
    let x: f64 = digits.parse().map_err(|_| bad())?;
    let n = x * factor;
    if !(n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64) {
        return Err(bad());
    }
    Ok(n as u64)
}

/// A rate in requests per second: `500`, `2k`, `2k/s`, `0.5`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let bad = || format!("invalid rate `{s}`: expected requests per second, e.g. 500 or 2k");
    let t = s.trim().trim_end_matches("/s");
    let (number, factor) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    let rate = number.parse::<f64>().map_err(|_| bad())? * factor;
    match rate.is_finite() && rate > 0.0 {
        true => Ok(rate),
        false => Err(bad()),
    }
}

fn parse_method(s: &str) -> Result<Method, String> {
    Method::from_bytes(s.to_ascii_uppercase().as_bytes())
        .map_err(|_| format!("invalid method `{s}`"))
}

pub use execute::{execute, execute_command, run_cli, run_keeping};

#[cfg(test)]
mod tests {
    use super::*;
    use oversell_api::Tier;

    #[test]
    fn counts_take_si_suffixes() {
        assert_eq!(parse_count("500"), Ok(500));
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("1.5k"), Ok(1_500));
        assert_eq!(parse_count("2M"), Ok(2_000_000));
        assert_eq!(parse_count("1_000"), Ok(1_000));
        for bad in ["", "k", "-1", "1.5", "ten", "1.00001k"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn connections_are_at_least_one_and_bounded() {
        assert_eq!(parse_connections("64"), Ok(64));
        assert_eq!(parse_connections("10k"), Ok(MAX_CONNECTIONS));
        for bad in ["0", "10001", "100k"] {
            let err = parse_connections(bad).unwrap_err();
            assert!(err.contains("1..=10000"), "{bad}: {err}");
        }
        // A burst larger than the bound shares the bounded connections.
        let l = run_load(&["--burst", "50k"]);
        assert_eq!(l.connections, MAX_CONNECTIONS as usize);
    }

    #[test]
    fn durations_take_units() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        for bad in ["", "s", "0s", "3 days", "-1s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_are_per_second() {
        assert_eq!(parse_rate("2k"), Ok(2000.0));
        assert_eq!(parse_rate("250/s"), Ok(250.0));
        assert!(parse_rate("0").is_err());
    }

    fn run_load(args: &[&str]) -> Load {
        let cli = Cli::try_parse_from([&["loadtest", "run"], args].concat()).unwrap();
        match cli.command {
            Command::Run(run) => run.load(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn run_flags_pick_the_load_model() {
        let l = run_load(&["-c", "10", "-n", "2k"]);
        assert_eq!(
            l.model,
            Model::Closed {
                stop: Stop::Requests(2000)
            }
        );
        assert_eq!(l.request, RequestSpec::sale(1));
        let l = run_load(&["-q", "1k", "-z", "5s"]);
        let stop = Stop::After(Duration::from_secs(5));
        assert_eq!(l.model, Model::Open { rate: 1000.0, stop });
        assert_eq!(l.connections, 50);
        let l = run_load(&["--burst", "300"]);
        assert_eq!(
            (l.model, l.connections),
            (Model::Burst { buyers: 300 }, 300)
        );
        let l = run_load(&["-m", "get", "--path", "/ping"]);
        assert_eq!(l.request, RequestSpec::plain(Method::GET, "/ping"));
    }

    #[test]
    fn conflicting_models_are_refused() {
        for args in [&["--burst", "5", "-n", "5"][..], &["-n", "5", "-z", "5s"]] {
            assert!(Cli::try_parse_from([&["loadtest", "run"], args].concat()).is_err());
        }
    }

    #[test]
    fn matrix_flags_become_settings_and_repeated_urls_targets() {
        let cli = Cli::try_parse_from([
            "loadtest",
            "matrix",
            "--url",
            "http://a:1",
            "--url",
            "http://b:2",
            "--tiers",
            "none,fenced",
            "--buyers",
            "1k",
            "--business-ms",
            "5",
            "--token",
            "t",
            "--json",
        ])
        .unwrap();
        let Command::Matrix(m) = cli.command else {
            unreachable!()
        };
        let o = m.options().unwrap();
        assert_eq!(o.tiers, [Tier::None, Tier::Fenced]);
        assert_eq!((o.buyers, o.instances, o.stock), (1000, 2, 100));
        assert_eq!(
            serde_json::to_value(&o.settings).unwrap(),
            serde_json::json!({"business_ms": 5})
        );
        assert_eq!(m.token.as_deref(), Some("t"));
    }

    #[test]
    fn the_help_has_examples() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("Examples:") && help.contains("loadtest matrix"));
        Cli::command().debug_assert();
    }
}
