//! Running a parsed command line of the generator: `run`, `matrix` and `hand-off`. The
//! chapters' commands (`scenario`, `curriculum`, `course`, `lab`) are the workshop crate's.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{anyhow, bail};
use clap::Parser;
use oversell_api::StateView;

use super::{Cli, Command, HandOffArgs, MatrixArgs, RunArgs};
use crate::fairness::Fairness;
use crate::hand_off::{self, Mark};
use crate::matrix::run_matrix;
use crate::progress::Bar;
use crate::report;
use crate::stats::RunStats;
use crate::worker::fire;
use oversell_client::admin::{self, AdminClient};
use oversell_client::http::preflight;
use oversell_client::target::Targets;

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
    execute_command(cli.command).await
}

/// Runs one of the generator's commands; returns the report to print.
pub async fn execute_command(command: Command) -> anyhow::Result<String> {
    match command {
        Command::Run(args) => run(args).await,
        Command::Matrix(args) => matrix(args).await,
        Command::HandOff(args) => ledger_hand_off(args).await,
    }
}

async fn run(args: RunArgs) -> anyhow::Result<String> {
    run_keeping(args).await.map(|(report, _)| report)
}

/// The `run` command, returning the run's tallies with its report: with `--history`, they
/// hold every request whole for the caller to write the history with.
pub async fn run_keeping(args: RunArgs) -> anyhow::Result<(String, RunStats)> {
    let targets = Targets::parse(&args.target.urls, args.target.room.as_deref())?;
    let targets = match args.rooms {
        Some(n) => targets.spread_over_rooms(usize::from(n))?,
        None => targets,
    };
    let load = args.load();
    preflight(&targets, load.timeout).await?;
    let is_sale = load.request.buyer_qty.is_some();
    // The ground truth is read only around a sale run, and before it starts: a server that is
    // not oversell (or a room that is lost) costs the hand-off, never the run.
    let observer = AdminClient::new(&targets, None);
    let before = match is_sale && !args.no_hand_off && args.rooms.is_none() {
        true => Some(observer.state().await.map_err(|e| format!("{e:#}"))),
        false => None,
    };
    let progress = Bar::new(load.requests(), !args.target.quiet);
    let stats = fire(&targets, &load, &progress).await;
    progress.finish();
    let stats = stats?;
    let sale = match is_sale {
        true => Some(sale_run(&observer, before, &stats).await),
        false => None,
    };
    if let (Some(dir), Some(sale)) = (&args.charts, &sale) {
        write_charts(dir, [(sale.chart_name(), sale.svg(&targets))])?;
    }
    let report = match args.json {
        true => report::run_json(&targets, &load, &stats, sale.as_ref()),
        false => report::run_text(&targets, &load, &stats, sale.as_ref()),
    };
    Ok((report, stats))
}

/// A sale run's hand-offs (from the ledger, between the state read `before` and one read now)
/// and its acquires per client. `before`: `None` when the ground truth was not to be read.
async fn sale_run(
    observer: &AdminClient,
    before: Option<Result<StateView, String>>,
    stats: &RunStats,
) -> report::SaleRun {
    let fairness = Fairness::of(&stats.ok_per_client);
    let before = match before {
        None => Err("--no-hand-off".to_owned()),
        Some(read) => read.map_err(|e| format!("GET /state before the run: {e}")),
    };
    let settings = before.as_ref().ok().map(|s| s.settings);
    let measured = async {
        let before = before?;
        let after = observer
            .state()
            .await
            .map_err(|e| format!("GET /state after the run: {e:#}"))?;
        let buyers = Some(stats.ok_per_client.len());
        hand_off::from_ledger(observer, Mark::of(&before.truth), &after.truth, buyers)
            .await
            .map_err(|e| format!("{e:#}"))
    };
    match measured.await {
        Ok((hand_off, per_instance)) => report::SaleRun {
            settings,
            hand_off: Ok(hand_off),
            fairness: fairness.with_instances(per_instance),
        },
        Err(why) => report::SaleRun {
            settings,
            hand_off: Err(why),
            fairness,
        },
    }
}

/// `loadtest hand-off`: the ledger since the room's last reset, which also zeroed the overlap
/// count the figure is checked against.
async fn ledger_hand_off(args: HandOffArgs) -> anyhow::Result<String> {
    let targets = Targets::parse(&args.target.urls, args.target.room.as_deref())?;
    preflight(&targets, args.target.timeout).await?;
    let observer = AdminClient::new(&targets, None);
    let state = observer.state().await?;
    let (hand_off, per_instance) = hand_off::from_ledger(
        &observer,
        Mark::default(),
        &state.truth,
        args.buyers.map(|n| n as usize),
    )
    .await?;
    Ok(report::ledger_report(
        &targets,
        &state.settings,
        &hand_off,
        &per_instance,
        args.json,
    ))
}

/// Writes each `(file name, SVG)` into `dir`, made if missing.
fn write_charts(
    dir: &Path,
    charts: impl IntoIterator<Item = (String, String)>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow!("cannot make the charts directory {}: {e}", dir.display()))?;
    for (name, svg) in charts {
        let path = dir.join(name);
        std::fs::write(&path, svg)
            .map_err(|e| anyhow!("cannot write the chart to {}: {e}", path.display()))?;
    }
    Ok(())
}

async fn matrix(args: MatrixArgs) -> anyhow::Result<String> {
    let targets = Targets::parse(&args.target.urls, args.target.room.as_deref())?;
    let options = args.options()?;
    let Some(token) = args.token.clone() else {
        bail!("matrix needs the admin token — {}", admin::TOKEN_HINT);
    };
    preflight(&targets, args.target.timeout).await?;
    let admin = AdminClient::new(&targets, Some(token));
    // One read before anything changes: a wrong URL or a server that is not oversell stops
    // here with one line.
    admin.state().await?;
    let total = (options.tiers.len() * options.waits.len().max(1) * options.buyers) as u64;
    let progress = Bar::new(Some(total), !args.target.quiet);
    let report = run_matrix(&targets, &admin, &options, &progress).await;
    progress.finish();
    let report = report?;
    if let Some(path) = &args.chart {
        std::fs::write(path, report::matrix_svg(&report))
            .map_err(|e| anyhow!("cannot write the chart to {}: {e}", path.display()))?;
    }
    if let Some(dir) = &args.charts {
        write_charts(dir, report::matrix_charts(&report))?;
    }
    Ok(match (args.json, args.csv) {
        (true, _) => report::matrix_json(&report),
        (_, true) => report::matrix_csv(&report),
        _ => report::matrix_table(&report),
    })
}
