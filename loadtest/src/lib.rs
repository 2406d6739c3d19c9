//! `loadtest` fires buyers at an oversell fleet and reports what each lock tier really did.
//!
//! # Layout
//!
//! The crate is cut by pipeline stage, like hatoo/oha:
//!
//! - [`cli`]: flags (clap derive) and value parsers (`10k`, `30s`, `2k/s`), turned into a
//!   [`Load`] or [`MatrixOptions`].
//! - [`target`]: the base URLs, resolved once; connections are dealt round robin over them.
//! - [`worker`]: the one generic worker and [`fire`], which runs a pool of them under a load
//!   model (burst, closed loop, open loop) sharing an atomic request budget. [`burst`] is the
//!   short form the server and scenarios call.
//! - [`http`]: a raw hyper HTTP/1.1 connection per worker, and a one-shot `fetch`.
//! - [`stats`]: per-worker tallies merged into one [`RunStats`] (HDR histogram of latencies,
//!   status counts, connection errors, timeouts).
//! - [`admin`]: a small client for `/admin/*` and `GET /state`, the ground truth.
//! - [`matrix`]: reset → switch tier → burst → read the truth, one [`MatrixRow`] per tier.
//! - [`report`]: printers — text and JSON for a run; table, JSON, CSV and SVG for the matrix.
//! - [`progress`]: the live progress bar, silent unless stdout is a terminal.
//! - [`scenario`]: the curriculum — each tier's defect as a scenario with its expected
//!   outcome, run against a live fleet and judged from the ground truth.
//!
//! The binary only parses the flags and calls [`execute`]; tests call [`run_cli`] with the same
//! arguments and read the printed text (e.g. the matrix `--json`).

pub mod admin;
pub mod cli;
pub mod http;
pub mod matrix;
pub mod progress;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod target;
pub mod worker;

use std::ffi::OsString;

use anyhow::{anyhow, bail};
use clap::Parser;

pub use admin::Admin;
pub use cli::{Cli, Command};
pub use matrix::{run_matrix, MatrixOptions, MatrixReport, MatrixRow};
pub use progress::Progress;
pub use stats::RunStats;
pub use target::{Target, Targets};
pub use worker::{burst, fire, BurstOptions, Load, Model, RequestSpec, Stop};

/// Parses `args` (the first one is the program name) and runs the command; returns what the
/// binary would print on stdout. `--help` and bad flags come back as errors carrying clap's text.
pub async fn run_cli<I, T>(args: I) -> anyhow::Result<String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args).map_err(|e| anyhow!("{}", e.to_string().trim_end()))?;
    execute(cli).await
}

/// Runs a parsed command line; returns the report to print.
pub async fn execute(cli: Cli) -> anyhow::Result<String> {
    match cli.command {
        Command::Run(args) => run(args).await,
        Command::Matrix(args) => matrix(args).await,
        Command::Scenario(args) => scenario::command::one(args).await,
        Command::Curriculum(args) => scenario::command::all(args).await,
    }
}

async fn run(args: cli::RunArgs) -> anyhow::Result<String> {
    let targets = Targets::parse(&args.target.urls, args.target.room.as_deref())?;
    let load = args.load();
    http::preflight(&targets, load.timeout).await?;
    let progress = Progress::new(load.requests(), !args.target.quiet);
    let stats = fire(&targets, &load, &progress).await;
    progress.finish();
    let stats = stats?;
    Ok(match args.json {
        true => report::run_json(&targets, &load, &stats),
        false => report::run_text(&targets, &load, &stats),
    })
}

async fn matrix(args: cli::MatrixArgs) -> anyhow::Result<String> {
    let targets = Targets::parse(&args.target.urls, args.target.room.as_deref())?;
    let options = args.options()?;
    let Some(token) = args.token.clone() else {
        bail!("matrix needs the admin token — {}", admin::TOKEN_HINT);
    };
    http::preflight(&targets, args.target.timeout).await?;
    let admin = Admin::new(&targets, Some(token));
    // One read before anything changes: a wrong URL or a server that is not oversell stops
    // here with one line.
    admin.state().await?;
    let total = (options.tiers.len() * options.buyers) as u64;
    let progress = Progress::new(Some(total), !args.target.quiet);
    let report = run_matrix(&targets, &admin, &options, &progress).await;
    progress.finish();
    let report = report?;
    if let Some(path) = &args.chart {
        std::fs::write(path, report::matrix_svg(&report))
            .map_err(|e| anyhow!("cannot write the chart to {}: {e}", path.display()))?;
    }
    Ok(match (args.json, args.csv) {
        (true, _) => report::matrix_json(&report),
        (_, true) => report::matrix_csv(&report),
        _ => report::matrix_table(&report),
    })
}
