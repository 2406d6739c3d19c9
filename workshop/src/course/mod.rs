//! `loadtest course`: the whole workshop rehearsed, every chapter in the order it is taught,
//! each on the fleet it needs. Chapters that need the same fleet share one, started before the
//! first of them and stopped after the last (`fleet.rs`); a chapter this machine cannot run is
//! listed with the reason, never skipped in silence. One progress line per chapter as it
//! ends, then a report: on the terminal, and as a Markdown file an instructor can print; with
//! `--class URL`, the class's votes beside each chapter (`class.rs`).

mod class;
mod fleet;
mod runs;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::Args;

use crate::scenario::{group_of, question, Runner, Scenario, CATALOG, GROUPS};
use class::{ClassFleet, ClassResults};
use fleet::{FleetSpec, Launchers, Machine, On};
use oversell_client::admin::AdminClient;
use oversell_client::target::Targets;
use runs::{pictures, run_cell, runs_dir, Drawn};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  loadtest course                                   # every chapter, each on its own fleet
  sudo loadtest course --repeat 20 --report course.md
  loadtest course --only ladder                     # one group: ladder, beyond, zookeeper, database, partitions, field, trackers
  loadtest course --from redlock-clock-jump         # from a chapter to the end
  loadtest course --on compose                      # the same on Docker Compose (from the repository)
  OVERSELL_ADMIN_TOKEN=secret loadtest course --class http://127.0.0.1:8080
                                                    # the class's votes on that fleet beside each chapter")]
pub struct CourseArgs {
    /// Run each chapter this many times and report how often it held.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Only the chapters of this group.
    #[arg(long, value_name = "GROUP")]
    pub only: Option<String>,

    /// Start at this chapter; the ones before it are left out.
    #[arg(long, value_name = "CHAPTER")]
    pub from: Option<String>,

    /// Where the fleets run.
    #[arg(long, value_enum, default_value = "up")]
    pub on: On,

    /// The `oversell` binary that starts each fleet [default: beside loadtest, else on PATH].
    #[arg(long, value_name = "PATH")]
    pub oversell: Option<PathBuf>,

    /// Where the Markdown report is written.
    #[arg(long, value_name = "FILE", default_value = "course-report.md")]
    pub report: PathBuf,

    /// The fleet a class voted on (`oversell up --class N`): per chapter, the class's votes
    /// in each round, the share right, the gain, and where the class's run landed against
    /// the rehearsal's, in the report. Read before the first fleet starts (an error stops the
    /// course there) and again at the end.
    #[arg(long, value_name = "URL")]
    pub class: Option<String>,

    /// The admin token of the class's fleet (the fleets the course starts make their own).
    #[arg(long, env = "OVERSELL_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// How one chapter ended.
enum Outcome {
    /// Run `runs` times, its expectation held `held` times.
    Ran {
        held: u32,
        runs: u32,
        /// The checks that did not hold, in the last run that failed.
        missed: Vec<String>,
        /// The option of the chapter's question each run landed in (`None`: in none).
        landed: Vec<Option<usize>>,
        /// The history checker's verdicts on the last run, and whether they agree with the
        /// chapter's own figures.
        checker: String,
        /// The last run's viewer, and its first violation drawn when its history showed one;
        /// `None` when the run left no history to read.
        drawn: Option<Drawn>,
    },
    /// Its fleet could not be started, or the run itself failed.
    Error(String),
    /// This machine cannot run it.
    NotRun(String),
}

struct Chapter<'a> {
    scenario: &'a Scenario,
    group: &'static str,
    fleet: String,
    seconds: f64,
    outcome: Outcome,
}

impl Chapter<'_> {
    fn verdict(&self) -> &'static str {
        match &self.outcome {
            Outcome::Ran { held, runs, .. } if held == runs => "PASS",
            Outcome::Ran { .. } => "FAIL",
            Outcome::Error(_) => "ERROR",
            Outcome::NotRun(_) => "NOT RUN",
        }
    }
}

/// The chapters asked for, in teaching order.
fn chosen(args: &CourseArgs) -> anyhow::Result<Vec<&'static Scenario>> {
    if let Some(group) = &args.only {
        if !GROUPS.iter().any(|(name, _)| name == group) {
            let names: Vec<&str> = GROUPS.iter().map(|(name, _)| *name).collect();
            bail!("unknown group `{group}`; valid: {}", names.join(", "));
        }
    }
    let mut chapters: Vec<&Scenario> = CATALOG.iter().collect();
    if let Some(from) = &args.from {
        let at = chapters.iter().position(|s| s.id == from).ok_or_else(|| {
            anyhow!("unknown chapter `{from}`: `loadtest scenario list` shows them")
        })?;
        chapters.drain(..at);
    }
    if let Some(group) = &args.only {
        chapters.retain(|s| group_of(s.id) == Some(group.as_str()));
    }
    if chapters.is_empty() {
        bail!("no chapter is both in --only and at or after --from");
    }
    Ok(chapters)
}

pub async fn run(args: CourseArgs) -> anyhow::Result<String> {
    let chapters = chosen(&args)?;
    // The class first: a wrong URL or token stops the course before its first fleet.
    let class = match &args.class {
        Some(url) => {
            let fleet = ClassFleet::connect(url, args.token.clone()).await?;
            let results = fleet.results().await?;
            eprintln!(
                "class at {url}: {} chapters polled so far",
                results.chapters.len()
            );
            Some((fleet, results))
        }
        None => None,
    };
    // One folder per course, not per process: two courses of one process (the API tests run
    // two at once) each remove their own folder when they pass, never the other's.
    let run = random_token()?;
    let logs = std::env::temp_dir().join(format!(
        "oversell-course-{}-{}",
        std::process::id(),
        &run[..8]
    ));
    std::fs::create_dir_all(&logs).with_context(|| format!("{}", logs.display()))?;
    let launchers = Launchers {
        oversell: match args.on {
            On::Up => fleet::oversell_binary(args.oversell.clone())?,
            On::Compose => PathBuf::new(),
        },
        token: random_token()?,
        logs: logs.clone(),
    };
    let here = Machine::here();
    let started = Instant::now();
    let total = chapters.len();
    let mut done: Vec<Chapter> = Vec::with_capacity(total);
    let mut i = 0;
    let mut fleets = 0;
    while i < total {
        // The run of chapters that share this one's fleet.
        let spec = FleetSpec::of(&chapters[i].fleet());
        let end = (i..total)
            .find(|&j| FleetSpec::of(&chapters[j].fleet()) != spec)
            .unwrap_or(total);
        let described = spec.describe(args.on);
        if let Some(why) = spec.cannot_run_here(args.on, &here) {
            for scenario in &chapters[i..end] {
                let chapter = not_run(scenario, &described, Outcome::NotRun(why.clone()));
                progress(done.len() + 1, total, &chapter);
                done.push(chapter);
            }
            i = end;
            continue;
        }
        fleets += 1;
        eprintln!("fleet {fleets}: starting {described}");
        let t0 = Instant::now();
        let fleet = match launchers.start(&spec, args.on, fleets).await {
            Ok(fleet) => fleet,
            Err(err) => {
                for scenario in &chapters[i..end] {
                    let outcome = Outcome::Error(format!("its fleet did not start: {err:#}"));
                    let chapter = not_run(scenario, &described, outcome);
                    progress(done.len() + 1, total, &chapter);
                    done.push(chapter);
                }
                i = end;
                continue;
            }
        };
        eprintln!(
            "fleet {fleets}: ready in {:.0} s at {}",
            t0.elapsed().as_secs_f64(),
            fleet.url
        );
        for scenario in &chapters[i..end] {
            let chapter = rehearse(
                scenario,
                &fleet.url,
                &launchers.token,
                args.repeat,
                &described,
            )
            .await;
            progress(done.len() + 1, total, &chapter);
            done.push(chapter);
        }
        fleet.stop().await;
        i = end;
    }
    let mut report = markdown(&done, &args, started.elapsed().as_secs_f64());
    let mut summary = summary(&done);
    if let Some((fleet, before)) = class {
        let (results, stale) = match fleet.results().await {
            Ok(results) => (results, None),
            Err(err) => (before, Some(format!("{err:#}"))),
        };
        let (section, line) = class_report(&fleet.url, &results, &done, stale.as_deref());
        report += &section;
        summary += &format!("\n{line}");
    }
    report += &pictures(&done, &args.report)?;
    std::fs::write(&args.report, &report)
        .with_context(|| format!("cannot write the report to {}", args.report.display()))?;
    let text = format!(
        "{}\n{summary}\nreport: {}\n",
        table(&done),
        args.report.display()
    );
    let failed = done
        .iter()
        .filter(|c| matches!(c.verdict(), "FAIL" | "ERROR"))
        .count();
    match failed {
        0 => {
            let _ = std::fs::remove_dir_all(&logs);
            Ok(text)
        }
        n => Err(anyhow!(
            "{text}{n} chapters did not pass (fleet logs kept in {})",
            logs.display()
        )),
    }
}

/// Runs one chapter `repeat` times on the fleet at `url`.
async fn rehearse(
    scenario: &'static Scenario,
    url: &str,
    token: &str,
    repeat: u32,
    fleet: &str,
) -> Chapter<'static> {
    let t0 = Instant::now();
    let outcome = match runs(scenario, url, token, repeat).await {
        Ok(outcome) => outcome,
        Err(err) => Outcome::Error(format!("{err:#}")),
    };
    Chapter {
        scenario,
        group: group_of(scenario.id).unwrap_or("?"),
        fleet: fleet.to_owned(),
        seconds: t0.elapsed().as_secs_f64(),
        outcome,
    }
}

/// The class's section of the report and its line on the terminal.
fn class_report(
    url: &str,
    results: &ClassResults,
    done: &[Chapter<'_>],
    stale: Option<&str>,
) -> (String, String) {
    let rehearsed: Vec<(&str, Vec<Option<usize>>)> = done
        .iter()
        .map(|c| match &c.outcome {
            Outcome::Ran { landed, .. } => (c.scenario.id, landed.clone()),
            _ => (c.scenario.id, Vec::new()),
        })
        .collect();
    let mut line = class::summary(results, &rehearsed);
    if let Some(why) = stale {
        line += &format!(" (read before the course: {why})");
    }
    (class::markdown(url, results, &rehearsed, stale), line)
}

async fn runs(scenario: &Scenario, url: &str, token: &str, repeat: u32) -> anyhow::Result<Outcome> {
    let targets = Targets::parse(&[url], None)?;
    let admin = AdminClient::new(&targets, Some(token.to_owned()));
    let runner = Runner {
        targets: &targets,
        admin: &admin,
        instances: 3,
        spare: None,
        step: Default::default(),
    };
    let (mut held, mut missed, mut landed) = (0, Vec::new(), Vec::new());
    let mut checker = String::new();
    let mut drawn = None;
    for _ in 0..repeat {
        let run = runner.run(scenario).await?;
        landed.push(question(scenario.id).and_then(|q| q.landed(&run.figures)));
        checker = match &run.check {
            Ok(checked) => checked.cell(),
            Err(why) => format!("not checked: {why}"),
        };
        drawn = run.history.as_ref().ok().and_then(|lines| {
            let lang = crate::history::Lang::En;
            Some(Drawn {
                svg: crate::recorder::violation_svg(lines, lang),
                view: crate::recorder::run_view(lines, lang)?,
            })
        });
        if run.passed {
            held += 1;
        } else {
            missed = run
                .verdicts
                .iter()
                .filter(|v| !v.held)
                .map(|v| format!("{} — saw {}", v.check, v.seen))
                .collect();
        }
    }
    Ok(Outcome::Ran {
        held,
        runs: repeat,
        missed,
        landed,
        checker,
        drawn,
    })
}

fn not_run(scenario: &'static Scenario, fleet: &str, outcome: Outcome) -> Chapter<'static> {
    Chapter {
        scenario,
        group: group_of(scenario.id).unwrap_or("?"),
        fleet: fleet.to_owned(),
        seconds: 0.0,
        outcome,
    }
}

/// One line per chapter as it ends, on stderr.
fn progress(n: usize, total: usize, c: &Chapter<'_>) {
    let held = match &c.outcome {
        Outcome::Ran { held, runs, .. } if *runs > 1 => format!(" held {held}/{runs}"),
        _ => String::new(),
    };
    eprintln!(
        "[{n:>2}/{total}] {:<10} {:<34} {:<7}{held} {:>5.0} s",
        c.group,
        c.scenario.id,
        c.verdict(),
        c.seconds
    );
}

fn held_cell(c: &Chapter<'_>) -> String {
    match &c.outcome {
        Outcome::Ran { held, runs, .. } => format!("{held}/{runs}"),
        _ => "—".into(),
    }
}

/// The terminal's table: chapter, verdict, held, seconds.
fn table(done: &[Chapter<'_>]) -> String {
    let mut out = String::new();
    for c in done {
        let _ = writeln!(
            out,
            "{:<7} {:<34} {:>6} {:>5.0} s  {}",
            c.verdict(),
            c.scenario.id,
            held_cell(c),
            c.seconds,
            c.scenario.source
        );
    }
    out
}

fn summary(done: &[Chapter<'_>]) -> String {
    let count = |v: &str| done.iter().filter(|c| c.verdict() == v).count();
    format!(
        "{} chapters: {} PASS, {} FAIL, {} ERROR, {} NOT RUN",
        done.len(),
        count("PASS"),
        count("FAIL"),
        count("ERROR"),
        count("NOT RUN")
    )
}

/// The printable report: every chapter with its article and lines, verdict, hold rate and
/// time; then why each one that did not pass did not.
fn markdown(done: &[Chapter<'_>], args: &CourseArgs, seconds: f64) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("# oversell: the course, rehearsed\n\n");
    let _ = writeln!(
        out,
        "{} · fleets on `{}` · each chapter run {} time{} · {:.0} min in all\n",
        summary(done),
        match args.on {
            On::Up => "oversell up",
            On::Compose => "docker compose",
        },
        args.repeat,
        if args.repeat == 1 { "" } else { "s" },
        seconds / 60.0
    );
    out += "| # | chapter | group | tier | article and lines | fleet | verdict | held | history checker | run | s |\n";
    out += "|---|---|---|---|---|---|---|---|---|---|---|\n";
    let (runs_dir, _) = runs_dir(&args.report);
    for (n, c) in done.iter().enumerate() {
        let run = run_cell(c, &runs_dir);
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | `{}` | {} | {} | {} | {} | {} | {run} | {:.0} |",
            n + 1,
            c.scenario.id,
            c.group,
            c.scenario.tier,
            cell(c.scenario.source),
            cell(&c.fleet),
            c.verdict(),
            held_cell(c),
            cell(match &c.outcome {
                Outcome::Ran { checker, .. } => checker,
                _ => "—",
            }),
            c.seconds
        );
    }
    let mut why = String::new();
    for c in done {
        match &c.outcome {
            Outcome::Ran { missed, .. } if !missed.is_empty() => {
                let _ = writeln!(
                    why,
                    "- `{}` ({}): {}",
                    c.scenario.id,
                    c.verdict(),
                    missed.join("; ")
                );
            }
            Outcome::Error(reason) | Outcome::NotRun(reason) => {
                let _ = writeln!(why, "- `{}` ({}): {reason}", c.scenario.id, c.verdict());
            }
            Outcome::Ran { .. } => {}
        }
    }
    if !why.is_empty() {
        out += "\n## Why\n\n";
        out += &why;
    }
    out
}

/// An admin token no one guesses, for the fleets the course starts.
fn random_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for a random name or token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
