//! `loadtest check FILE`: read a history, check it, print the verdicts (or JSON), draw the first
//! violation (`--svg`), and exit 1 when one of the four verdicts is broken.

use std::fmt;
use std::path::PathBuf;

use super::check::{check, Lang};

const AFTER: &str = "\
Exit status: 0 when all four verdicts hold, 1 when one is violated, 2 when FILE is not a
history (one line naming the line number and the field).

  loadtest scenario lua-release-slow-business --history run.jsonl
  loadtest check run.jsonl --svg first.svg --lang zh";

/// Check a run's history (JSON Lines, v1): mutual exclusion, the stock, fencing, and the
/// acknowledged sales — from the history alone.
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
        code: 2,
        stdout: String::new(),
        message: format!("{}: {e}", args.file.display()),
    })?;
    let report = check(&history);
    if let Some(out) = &args.svg {
        let svg = super::draw::svg(&history, &report, args.lang);
        std::fs::write(out, svg)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
    }
    let output = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        report.text(args.lang)
    };
    if report.ok {
        Ok(output)
    } else {
        let broken: Vec<&str> = report
            .verdicts()
            .iter()
            .filter(|(_, _, v)| !v.holds)
            .map(|(name, _, _)| *name)
            .collect();
        Err(Exit {
            code: 1,
            stdout: output,
            message: format!("violated: {}", broken.join(", ")),
        }
        .into())
    }
}
