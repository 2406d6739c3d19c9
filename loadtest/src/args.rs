//! Flags that several commands share (where to send requests, the language of the
//! explanations) and the value parsers they use. Only with the `cli` feature; each command's
//! own flags live beside the command (`scenario::command`, `lab::command`).

use std::time::Duration;

use clap::Args;

/// Where to send requests.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Base URL of the service; repeat for several instances (connections go round robin,
    /// admin calls and state reads go to the first). OVERSELL_URL gives it where no flag
    /// does (several, comma-separated): compose's `loadtest` service sets the fleet's
    /// address inside its network, so a command there needs no `--url`.
    #[arg(
        short = 'u',
        long = "url",
        value_name = "URL",
        env = "OVERSELL_URL",
        value_delimiter = ',',
        default_value = "http://127.0.0.1:8080"
    )]
    pub urls: Vec<String>,

    /// Room to play in (a separate stock, ledger and settings).
    #[arg(long)]
    pub room: Option<String>,

    /// Give up on a connect or a request after this long (e.g. 500ms, 30s).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Never draw the progress bar (it is drawn only when stdout is a terminal anyway).
    #[arg(long)]
    pub quiet: bool,
}

/// Language of the explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    En,
    Zh,
    Both,
}

/// A duration: `30s`, `500ms`, `1.5s`, `2m`, `1h`, `100us`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration `{s}`: expected e.g. 500ms, 30s, 2m");
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let x: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "" | "s" | "sec" | "secs" => x,
        "ms" => x / 1e3,
        "us" | "µs" => x / 1e6,
        "m" | "min" | "mins" => x * 60.0,
        "h" => x * 3600.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(bad)
}
