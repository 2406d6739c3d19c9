//! The `loadtest` binary's command line: the generator's commands (`run`, `matrix`,
//! `hand-off`, the `loadtest` crate's) beside the workshop's (`scenario`, `curriculum`,
//! `course`, `lab`), each run by its own module.

use std::ffi::OsString;

use anyhow::anyhow;
use clap::{Parser, Subcommand};

use crate::lab::command::LabArgs;
use crate::scenario::command::{CurriculumArgs, ScenarioArgs};

const EXAMPLES: &str = "\
  # the curriculum: one step, all steps, and how often the timing-dependent ones hold
  loadtest scenario list
  OVERSELL_ADMIN_TOKEN=secret loadtest scenario setnx-crash
  OVERSELL_ADMIN_TOKEN=secret loadtest curriculum --timing-sensitive --repeat 20

  # the whole course rehearsed, each chapter on the fleet it needs (root for the partitions)
  sudo loadtest course --report course.md";

/// Fires buyers at an oversell fleet and prints what each lock tier really did; runs the
/// workshop's chapters, its lab and its course.
#[derive(Debug, Parser)]
#[command(name = "loadtest", version, after_help = format!("{}\n\n{EXAMPLES}", loadtest::cli::EXAMPLES))]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Generator(loadtest::Command),
    /// Run one scenario of the curriculum (`list` shows them) and check its expected outcome.
    Scenario(ScenarioArgs),
    /// Run the whole curriculum in the order of the ladder: PASS/FAIL and why, per scenario.
    Curriculum(CurriculumArgs),
    /// Rehearse the whole course: every chapter, each on the fleet it needs (started and
    /// stopped for it), and a printable report.
    Course(crate::course::CourseArgs),
    /// The lab: submit a room's own lock (Lua steps), show it, or grade it against the
    /// ladder's faults.
    Lab(LabArgs),
    /// The book's chapter reference, from the catalog and the questions (`--markdown`).
    Chapters(crate::chapters::ChaptersArgs),
    /// Check a run's history (`--history FILE`): mutual exclusion, the stock, fencing, the
    /// acknowledged sales; exit 1 on a violation, 2 on a file that is not a history.
    Check(crate::history::command::CheckArgs),
    /// Search every schedule of a lock (`--tier T`, or a lab lock's `--acquire`/`--release`
    /// files) for the shortest that breaks it; exit 1 broken, 2 bad input, 3 a bound reached.
    Explore(crate::explore::ExploreArgs),
    /// The deck of questions the class votes on, in course order: each with its chapter,
    /// options, sources and rule in words (`--json` for one JSON array).
    Questions(crate::questions::QuestionsArgs),
}

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
        Command::Generator(loadtest::Command::Run(args)) if args.history.is_some() => {
            crate::recorder::run_command(args).await
        }
        Command::Generator(command) => loadtest::execute_command(command).await,
        Command::Scenario(args) => crate::scenario::command::one(args).await,
        Command::Curriculum(args) => crate::scenario::command::all(args).await,
        Command::Course(args) => crate::course::run(args).await,
        Command::Lab(args) => crate::lab::command::run(args).await,
        Command::Chapters(args) => crate::chapters::run(args),
        Command::Check(args) => crate::history::command::run(args),
        Command::Explore(args) => crate::explore::run(args).await,
        Command::Questions(args) => crate::questions::run(&args),
    }
}
