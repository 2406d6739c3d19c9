//! `loadtest check FILE`: read a history, check it, print the verdicts (or JSON), draw the first
//! violation (`--svg`), and exit with what the verdicts are: 0 all hold, 1 one is violated, 2
//! not a history (or bad usage: clap's own code), 3 none violated but one undecided, 4 the
//! report could not be written. A picture not written says nothing about the run, so it is
//! never 1.

use std::fmt;
use std::path::PathBuf;

use super::check::{check, Lang, State};

/// The exit codes of `loadtest check`.
pub const VIOLATED: u8 = State::Violated.exit_code();
pub const NOT_A_HISTORY: u8 = 2;
pub const UNKNOWN: u8 = State::Unknown.exit_code();
pub const NOT_WRITTEN: u8 = 4;

const AFTER: &str = "\
Exit status: 0 when all four verdicts hold, 1 when one is violated, 2 when FILE is not a
history (one line naming the line number and the field) or the usage is wrong, 3 when none is
violated but one is unknown (what the history holds cannot decide it: a cut, an unsettled
timeout, clocks), 4 when the SVG or the HTML could not be written. `--beside F2` puts a second
run in the viewer; F2 not a history is 2, but F2's verdicts never change the status.

  loadtest scenario lua-release-slow-business --history run.jsonl
  loadtest check run.jsonl --svg first.svg --lang zh
  loadtest check fenced.jsonl --html view.html --beside unfenced.jsonl";

/// Check a run's history (JSON Lines, v2; v1 still read): mutual exclusion, the stock,
/// fencing, and the acknowledged sales — from the history alone.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER)]
pub struct CheckArgs {
    /// The history file (`-` reads standard input).
    pub file: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also draw the first violation (or, when all hold, the run's first moments) as a
    /// self-contained SVG here.
    #[arg(long, value_name = "OUT")]
    pub svg: Option<PathBuf>,
    /// Also write the viewer here: one HTML file that opens from disk (no network), every
    /// operation on one time axis, the stores' state before and after each, the first
    /// violation a button away.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// A second history shown beside FILE in the viewer (the same chapter with and without a
    /// fence, say); only FILE's verdicts decide the exit status.
    #[arg(long, value_name = "F2", requires = "html")]
    pub beside: Option<PathBuf>,
    /// The language of the words: en or zh.
    #[arg(long, default_value = "en")]
    pub lang: Lang,
}

/// A command that ends with a report and an exit status other than 0: `main` prints `stdout`,
/// then `message` on stderr (when there is one), and exits with `code`.
#[derive(Debug)]
pub struct Exit {
    pub code: u8,
    pub stdout: String,
    pub message: String,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// Runs `loadtest check`.
pub fn run(args: CheckArgs) -> anyhow::Result<String> {
    let read = if args.file.as_os_str() == "-" {
        super::read(std::io::stdin().lock())
    } else {
        super::read_path(&args.file)
    };
    let history = read.map_err(|e| Exit {
        code: NOT_A_HISTORY,
        stdout: String::new(),
        message: format!("{}: {e}", args.file.display()),
    })?;
    let report = check(&history);
    let output = if args.json {
        serde_json::to_string_pretty(&report).map_err(|e| Exit {
            code: NOT_WRITTEN,
            stdout: String::new(),
            message: format!("cannot write the report: {e}"),
        })? + "\n"
    } else {
        report.text(args.lang)
    };
    if let Some(out) = &args.html {
        let mut views = vec![super::view::View::of(&history, &report)];
        if let Some(other) = &args.beside {
            let beside = super::read_path(other).map_err(|e| Exit {
                code: NOT_A_HISTORY,
                stdout: output.clone(),
                message: format!("{}: {e}", other.display()),
            })?;
            views.push(super::view::View::of(&beside, &check(&beside)));
        }
        let html = super::view::page(&views, super::view::Assets::Inline, args.lang);
        std::fs::write(out, html).map_err(|e| Exit {
            code: NOT_WRITTEN,
            stdout: output.clone(),
            message: format!("cannot write {}: {e}", out.display()),
        })?;
    }
    if let Some(out) = &args.svg {
        let svg = super::draw::svg(&history, &report, args.lang);
        std::fs::write(out, svg).map_err(|e| Exit {
            code: NOT_WRITTEN,
            stdout: output.clone(),
            message: format!("cannot write {}: {e}", out.display()),
        })?;
    }
    let named = |state: State| -> Vec<&str> {
        report
            .verdicts()
            .iter()
            .filter(|(_, _, v)| v.state == state)
            .map(|(name, _, _)| *name)
            .collect()
    };
    match report.state {
        State::Holds => Ok(output),
        State::Violated => Err(Exit {
            code: VIOLATED,
            stdout: output,
            message: format!("violated: {}", named(State::Violated).join(", ")),
        }
        .into()),
        State::Unknown => Err(Exit {
            code: UNKNOWN,
            stdout: output,
            message: format!("unknown: {}", named(State::Unknown).join(", ")),
        }
        .into()),
    }
}
