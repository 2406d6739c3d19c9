//! `loadtest lab submit | show | grade`: a room's own lock from `.lua` files, what the fleet
//! holds of it, and the grader's report card (or, with `--repeat`, how steady each outcome
//! is). A student passes their room's token; the instructor's admin token works everywhere.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use clap::{Args, Subcommand};
use http::Method;
use serde_json::{json, Value};

use loadtest::args::{Lang, TargetArgs};
use oversell_client::admin::AdminClient;
use oversell_client::http::preflight;
use oversell_client::target::Targets;

const EXAMPLES: &str = "\
Examples:
  # the ladder's SETNX + EXPIRE as two acquire steps (the room now sells under tier custom),
  # then the grader's report card
  export OVERSELL_ADMIN_TOKEN=<your room's token>
  loadtest lab submit --room student-07 --acquire setnx.lua --acquire expire.lua --release del.lua
  loadtest lab grade --room student-07

  # a whole lock from a folder (acquire-1.lua, acquire-2.lua, release-1.lua, renew.lua)
  loadtest lab submit --room student-07 --from static/locks/reentrant-watchdog
  loadtest lab show --room student-07
  loadtest lab grade --room student-07 --repeat 20 --json";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct LabArgs {
    #[command(subcommand)]
    pub action: LabAction,
}

#[derive(Debug, Subcommand)]
pub enum LabAction {
    /// Submit the room's own lock (each file is one step, sent as its own round trip) and
    /// switch the room to tier custom: every instance sells under it from then on.
    Submit(SubmitArgs),
    /// Show the room's lock and the last error its scripts met.
    Show(LabCommon),
    /// Attack the room's lock with the grader's suite and print the report card.
    Grade(GradeArgs),
}

#[derive(Debug, Args)]
pub struct LabCommon {
    #[command(flatten)]
    pub target: TargetArgs,

    /// The room's token (a student's) or the admin token.
    #[arg(long, env = "OVERSELL_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub common: LabCommon,

    /// An acquire step (1 to 3, in order).
    #[arg(long, value_name = "FILE.lua", required_unless_present = "from")]
    pub acquire: Vec<PathBuf>,

    /// A release step (1 or 2, in order).
    #[arg(long, value_name = "FILE.lua", required_unless_present = "from")]
    pub release: Vec<PathBuf>,

    /// The renew step, run every lease/3 while the lock is held.
    #[arg(long, value_name = "FILE.lua")]
    pub renew: Option<PathBuf>,

    /// A folder holding acquire-1.lua…, release-1.lua… and renew.lua.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["acquire", "release", "renew"])]
    pub from: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GradeArgs {
    #[command(flatten)]
    pub common: LabCommon,

    /// Grade this many times and say how often each attack had each outcome.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// Language of the holes the card explains.
    #[arg(long, value_enum, default_value = "both")]
    pub lang: Lang,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: LabArgs) -> anyhow::Result<String> {
    match args.action {
        LabAction::Submit(args) => submit(args).await,
        LabAction::Show(common) => {
            let admin = client(&common).await?;
            Ok(format!(
                "{:#}\n",
                admin.request(Method::GET, "/lab", None).await?
            ))
        }
        LabAction::Grade(args) => grade(args).await,
    }
}

async fn client(common: &LabCommon) -> anyhow::Result<AdminClient> {
    let targets = Targets::parse(&common.target.urls, common.target.room.as_deref())?;
    preflight(&targets, common.target.timeout).await?;
    Ok(AdminClient::new(&targets, common.token.clone()).with_timeout(common.target.timeout))
}

async fn submit(args: SubmitArgs) -> anyhow::Result<String> {
    let lock = match &args.from {
        Some(dir) => from_folder(dir)?,
        None => json!({
            "acquire": read_all(&args.acquire)?,
            "release": read_all(&args.release)?,
            "renew": args.renew.as_deref().map(read).transpose()?,
        }),
    };
    let admin = client(&args.common).await?;
    // The server stores the lock and switches the room to tier custom in the one request, as
    // it does for the dashboard's and the lab page's Submit.
    let reply = admin.request(Method::PUT, "/admin/lab", Some(lock)).await?;
    let shape = &reply["shape"];
    Ok(format!(
        "room {}: lock submitted ({} acquire, {} release step(s), renew: {}); the room now \
         sells under tier {} on every instance\n",
        reply["room"].as_str().unwrap_or("?"),
        shape["acquire_steps"],
        shape["release_steps"],
        shape["renew"],
        reply["tier"].as_str().unwrap_or("?"),
    ))
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    paths.iter().map(|p| read(p)).collect()
}

/// A lock from a folder: `acquire-1.lua` … `acquire-3.lua`, `release-1.lua`, `release-2.lua`,
/// and `renew.lua` if there is one.
fn from_folder(dir: &Path) -> anyhow::Result<Value> {
    let steps = |what: &str| -> anyhow::Result<Vec<String>> {
        let mut steps = Vec::new();
        for i in 1..=3 {
            let path = dir.join(format!("{what}-{i}.lua"));
            if !path.exists() {
                break;
            }
            steps.push(read(&path)?);
        }
        Ok(steps)
    };
    let (acquire, release) = (steps("acquire")?, steps("release")?);
    if acquire.is_empty() || release.is_empty() {
        bail!("{} has no acquire-1.lua or no release-1.lua", dir.display());
    }
    let renew = dir.join("renew.lua");
    let renew = renew.exists().then(|| read(&renew)).transpose()?;
    Ok(json!({ "acquire": acquire, "release": release, "renew": renew }))
}

async fn grade(args: GradeArgs) -> anyhow::Result<String> {
    // A grading runs a few dozen seconds of attacks.
    let admin = client(&args.common).await?.with_timeout(
        args.common
            .target
            .timeout
            .max(std::time::Duration::from_secs(300)),
    );
    let mut cards = Vec::new();
    for round in 1..=args.repeat {
        let card = card_of(&admin).await?;
        if args.repeat > 1 && !args.json && !args.common.target.quiet {
            eprintln!(
                "grading {round}/{}: {}",
                args.repeat,
                outcomes(&card).join(" ")
            );
        }
        cards.push(card);
    }
    if args.json {
        return Ok(match args.repeat {
            1 => format!("{:#}\n", cards[0]),
            _ => format!(
                "{:#}\n",
                json!({ "cards": cards, "steady": steadiness(&cards) })
            ),
        });
    }
    let last = cards.last().ok_or_else(|| anyhow!("no grading ran"))?;
    let mut out = card_text(last, args.common.target.room.as_deref(), args.lang);
    if args.repeat > 1 {
        let _ = writeln!(out, "\nOver {} gradings:", args.repeat);
        for (attack, seen) in steadiness(&cards) {
            let _ = writeln!(out, "  {attack:<28} {seen}");
        }
    }
    Ok(out)
}

/// Grades the room and waits for its card: a room behind others in the class's line is
/// answered its place (`202`), then asked about until the card is there.
pub async fn card_of(admin: &AdminClient) -> anyhow::Result<Value> {
    let mut reply = admin
        .request(Method::POST, "/admin/lab/grade", None)
        .await?;
    while matches!(reply["state"].as_str(), Some("queued" | "running")) {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        reply = admin.request(Method::GET, "/admin/lab/grade", None).await?;
    }
    if reply["state"] == "idle" {
        bail!("the room's grading was lost (an instance restarted on the way): grade again");
    }
    Ok(reply)
}

fn outcomes(card: &Value) -> Vec<String> {
    card["attacks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a["outcome"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// Per attack, how often each outcome came: `deadlock 20/20`.
fn steadiness(cards: &[Value]) -> BTreeMap<String, String> {
    let mut counts: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for card in cards {
        for attack in card["attacks"].as_array().into_iter().flatten() {
            let id = attack["attack"].as_str().unwrap_or("?").to_owned();
            let outcome = attack["outcome"].as_str().unwrap_or("?").to_owned();
            *counts.entry(id).or_default().entry(outcome).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(attack, seen)| {
            let seen: Vec<String> = seen
                .iter()
                .map(|(outcome, n)| format!("{outcome} {n}/{}", cards.len()))
                .collect();
            (attack, seen.join(", "))
        })
        .collect()
}

fn card_text(card: &Value, room: Option<&str>, lang: Lang) -> String {
    let shape = &card["shape"];
    let mut out = format!(
        "Report card, room {}: {} acquire step(s), {} release step(s), renew: {}\n\n",
        room.unwrap_or("default"),
        shape["acquire_steps"],
        shape["release_steps"],
        shape["renew"]
    );
    for attack in card["attacks"].as_array().into_iter().flatten() {
        let outcome = attack["outcome"].as_str().unwrap_or("?");
        let shown = match outcome {
            "held" | "not-applicable" => outcome.to_owned(),
            broke => broke.to_uppercase(),
        };
        let _ = writeln!(
            out,
            "  {:<28} {shown}",
            attack["attack"].as_str().unwrap_or("?")
        );
        if let Some(note) = attack["note"].as_str() {
            let _ = writeln!(out, "      {note}");
        }
        for (key, wanted) in [("hole_en", Lang::En), ("hole_zh", Lang::Zh)] {
            if let Some(hole) = attack[key].as_str() {
                if lang == wanted || lang == Lang::Both {
                    let _ = writeln!(out, "      {hole}");
                }
            }
        }
    }
    out.push('\n');
    match card["matches"].as_str() {
        Some(tier) => {
            let _ = writeln!(out, "Matches the ladder's rung: {tier}");
        }
        None if card["as_good_as_a_lock_gets"] == true => {
            out.push_str(
                "Holds every attack a lock alone can hold; only a fencing token checked by the \
                 stock survives the pause (tier fenced)\n",
            );
        }
        None => out.push_str("Matches no rung of the ladder\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_lock_reads_its_steps_in_order_and_needs_both_kinds() {
        let dir = tempfile_dir();
        std::fs::write(dir.join("acquire-1.lua"), "return 1").unwrap();
        std::fs::write(dir.join("acquire-2.lua"), "return 2").unwrap();
        let err = from_folder(&dir).unwrap_err().to_string();
        assert!(err.contains("release-1.lua"), "{err}");
        std::fs::write(dir.join("release-1.lua"), "return 3").unwrap();
        let lock = from_folder(&dir).unwrap();
        assert_eq!(lock["acquire"], json!(["return 1", "return 2"]));
        assert_eq!(lock["renew"], Value::Null);
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lab-folder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn steadiness_counts_each_outcome_per_attack() {
        let card = |o: &str| json!({ "attacks": [{ "attack": "holder-dies", "outcome": o }] });
        let seen = steadiness(&[card("deadlock"), card("deadlock"), card("held")]);
        assert_eq!(seen["holder-dies"], "deadlock 2/3, held 1/3");
    }
}
