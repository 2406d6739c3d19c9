//! How fast the history checker reads and checks a run: a synthetic clean `lua-release`-like
//! history of `--operations` operations (requests + sections, each section with its lease
//! line too), written to a temporary file as `loadtest check` would find it, then parsed and
//! checked `--runs` times. With `--race` every section is stretched over the next fifty (as
//! `none` would leave them), so the overlap count has millions of pairs to count.
//!
//!   cargo build --release --workspace --bins && target/release/check-speed --operations 1000000
//!
//! Prints one markdown row per run: parse, check, total, the operations a second, and beside
//! them, in the same run on the same file, how long Python takes only to parse it
//! (`json.loads` of every line, the least any Python checker would do): the ratio says what a
//! checker in Rust buys over a script.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;
use workshop::history::{check, read_path, synth::Synth};

#[derive(Parser)]
struct Args {
    /// Operations in the history (requests + sections).
    #[arg(long, default_value_t = 1_000_000)]
    operations: usize,
    /// How many times to parse and check it.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Fences on every section (the `fenced` tier).
    #[arg(long)]
    fenced: bool,
    /// Stretch every section over the next fifty: a none-race-like history.
    #[arg(long)]
    race: bool,
    /// Also keep the history in FILE (to profile `loadtest check FILE` on it, say).
    #[arg(long, value_name = "FILE")]
    keep: Option<std::path::PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut history = Synth {
        fenced: args.fenced,
        ..Synth::operations(args.operations)
    }
    .build();
    if args.race {
        for s in &mut history.sections {
            s.exit_us = s.exit_us.map(|_| s.enter_us + 5_000);
        }
    }
    let text = history.to_jsonl();
    let mut file = tempfile::NamedTempFile::new()?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    if let Some(keep) = &args.keep {
        std::fs::write(keep, &text)?;
    }
    let lines = text.lines().count();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{} operations ({} requests, {} sections, {} leases), {lines} lines, {:.1} MB, {cores} cores",
        history.operations(),
        history.requests.len(),
        history.sections.len(),
        history.leases.len(),
        text.len() as f64 / 1e6
    );
    drop(text);
    drop(history);
    println!("| run | parse s | check s | total s | CPU s (all threads) | operations/s | overlaps | verdict | Python parse s | total / Python |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for run in 1..=args.runs {
        let cpu = cpu_seconds();
        let start = Instant::now();
        let history = read_path(file.path())?;
        let parsed = start.elapsed();
        let report = check(&history);
        let total = start.elapsed();
        let cpu = cpu_seconds() - cpu;
        let ops = history.operations() as f64;
        // Right after the check, on the same file: in the page cache for both.
        let python = python_parse(file.path());
        let (python_s, ratio) = match &python {
            Ok(p) => (
                format!("{:.3}", p.as_secs_f64()),
                format!("{:.2}", total.as_secs_f64() / p.as_secs_f64()),
            ),
            Err(why) => (why.clone(), "-".to_owned()),
        };
        println!(
            "| {run} | {:.3} | {:.3} | {:.3} | {cpu:.3} | {:.0} | {} | {} | {python_s} | {ratio} |",
            parsed.as_secs_f64(),
            (total - parsed).as_secs_f64(),
            total.as_secs_f64(),
            ops / total.as_secs_f64(),
            report.counts.overlaps,
            if report.ok {
                "all four hold"
            } else {
                "violated"
            }
        );
        if !args.race && !report.ok {
            anyhow::bail!(
                "a clean history was not clean:\n{}",
                report.text(Default::default())
            );
        }
    }
    Ok(())
}

/// How long `python3` takes to `json.loads` every line of the file (its start-up excluded:
/// it times itself), or why it could not.
fn python_parse(path: &Path) -> Result<Duration, String> {
    const SCRIPT: &str = "import json, sys, time\n\
        start = time.perf_counter()\n\
        with open(sys.argv[1], 'rb') as f:\n    \
            for line in f:\n        \
                json.loads(line)\n\
        print(time.perf_counter() - start)\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(path)
        .output()
        .map_err(|e| format!("no python3 ({e})"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let secs: f64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("python3 printed no time ({e})"))?;
    Ok(Duration::from_secs_f64(secs))
}

/// User + system CPU time of this process so far, every thread counted: on a shared machine
/// the wall time says how busy the others were, this says what the check itself cost.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
