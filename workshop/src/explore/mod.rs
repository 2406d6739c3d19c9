//! `loadtest explore`: every schedule of a lock searched (the `explore` crate), for a built-in
//! rung (`--tier`) or a lock by the lab's contract (`--acquire … --release … [--renew …]`),
//! and the answer printed in words or JSON, with the exit status the checker uses: 0 no break
//! within the bounds, 1 broken, 2 bad input (a file, a flag, a step that does not compile or
//! calls a command outside the model), 3 a bound reached before the search ended. With
//! `--history FILE`, the shortest break is also written as a run's history (`history.rs`).
//! With `--replay --url U`, it is also run on the real fleet with the fleet's own faults
//! (`counterpart.rs` reads which, `replay.rs` runs it), and the exit status is the fleet's:
//! 0 it did what the model predicted, 1 it did not (or cannot), 2 bad input.

mod counterpart;
mod history;
mod replay;

use std::path::{Path, PathBuf};

use explore::answer::{Verdict, BAD_INPUT};
use explore::bounds::Bounds;
use explore::lock::{self, LockSource};
use explore::said::Lang;
use explore::world::FaultKind;

use crate::history::command::Exit;

const AFTER: &str = "\
Exit status: 0 when no schedule within the bounds breaks the lock, 1 when one does (its
shortest schedule is printed), 2 on bad input (an unknown tier, a file that cannot be read, a
step that does not compile or calls a command the model does not know), 3 when a bound (depth,
states, time) cut the search before it saw every state.

With --replay, the exit status is the fleet's instead: 0 when the fleet, given the schedule's
faults as its own (a pause at a step, a death, a failover), did what the model predicted (the
history checker's verdict on its history), 1 when it did not or has no such fault (said why),
2 on bad input (as above, a lab lock, no token, a fleet that cannot be reached).

  loadtest explore --tier uuid-owner
  loadtest explore --tier fenced --faults failover --json
  loadtest explore --tier lua-release --history break.jsonl && loadtest check break.jsonl
  loadtest explore --tier uuid-owner --attacks     # the grader's card, from the model
  loadtest explore --acquire setnx.lua --acquire expire.lua --release del.lua
  OVERSELL_ADMIN_TOKEN=secret loadtest explore --tier lua-release --replay --url URL";

/// Search every schedule of a lock for the shortest one that breaks it: two buyers, an
/// adversary choosing who steps and when time passes, and a fault budget.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER)]
pub struct ExploreArgs {
    /// A built-in Redis rung: setnx, setnx-expire, atomic-expiry, uuid-owner, lua-release,
    /// reentrant-watchdog, fair, fenced.
    #[arg(long, conflicts_with_all = ["acquire", "release", "renew"])]
    pub tier: Option<String>,
    /// A lab lock's acquire step (1 to 3, in order), a Lua file.
    #[arg(long, value_name = "FILE")]
    pub acquire: Vec<PathBuf>,
    /// A lab lock's release step (1 or 2, in order), a Lua file.
    #[arg(long, value_name = "FILE")]
    pub release: Vec<PathBuf>,
    /// A lab lock's renew step, run every lease/3 while held.
    #[arg(long, value_name = "FILE")]
    pub renew: Option<PathBuf>,
    /// Print the answer as JSON (each step's words in both languages: `note`, `note_zh`).
    #[arg(long)]
    pub json: bool,
    /// The language of the words: en or zh.
    #[arg(long, default_value = "en")]
    pub lang: String,
    /// Also write a schedule as a run's history here, its clock named `model`, so that
    /// `loadtest check FILE` judges it: the shortest that sells a unit twice, else the
    /// shortest break, else the shortest with two holders, each run on to its end.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Instead of one search, one per attack of the lab's grader (each a fault budget), read
    /// as the grader reads its run: the model's report card. When every attack holds, the
    /// search of every schedule runs too, and a break it finds is printed (exit 1): a
    /// schedule none of the attacks made.
    #[arg(long, conflicts_with_all = ["history", "replay"])]
    pub attacks: bool,
    /// Also run the shortest break on the fleet at `--url` (a built-in rung only): its
    /// faults armed as the fleet's own (`POST /admin/faults`), the model's buyers sent, the
    /// run's history checked. Sets the room's tier, lease and stock, as a chapter does.
    #[arg(long, requires = "url")]
    pub replay: bool,
    /// The fleet for `--replay`.
    #[arg(long, value_name = "URL", requires = "replay")]
    pub url: Option<String>,
    /// The room `--replay` runs in.
    #[arg(long, requires = "replay")]
    pub room: Option<String>,
    /// Admin token of the fleet, for `--replay`.
    #[arg(long, env = "OVERSELL_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How many faults the adversary may spend.
    #[arg(long, default_value_t = 1)]
    pub budget: u32,
    /// Which faults: pause, crash, failover, clock-jump (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "pause,crash")]
    pub faults: Vec<String>,
    /// How many buyers (1 to 3).
    #[arg(long, default_value_t = 2)]
    pub clients: usize,
    /// Acquire attempts per buyer before its wait gives up (1: no retry).
    #[arg(long, default_value_t = 2)]
    pub attempts: u32,
    /// The lease sent to every step, ms.
    #[arg(long, default_value_t = 300)]
    pub lease_ms: u64,
    /// The longest schedule looked at.
    #[arg(long, default_value_t = 60)]
    pub max_depth: usize,
    /// The most states kept before the search stops with "bound reached".
    #[arg(long, default_value_t = 2_000_000)]
    pub max_states: usize,
    /// The longest the search may run, ms, before it stops with "bound reached" [default:
    /// no limit].
    #[arg(long, value_name = "MS")]
    pub time_budget_ms: Option<u64>,
}

fn bad(message: String) -> anyhow::Error {
    Exit {
        code: BAD_INPUT,
        stdout: String::new(),
        message,
    }
    .into()
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))
}

/// The lock the flags name.
fn lock_of(args: &ExploreArgs) -> anyhow::Result<LockSource> {
    if let Some(id) = &args.tier {
        let rung = lock::SEARCHABLE.into_iter().find(|t| t.id() == id);
        let names: Vec<&str> = lock::SEARCHABLE.iter().map(|t| t.id()).collect();
        return rung.and_then(lock::rung).ok_or_else(|| {
            bad(format!(
                "--tier {id}: not a Redis rung of Lua steps; one of {}",
                names.join(", ")
            ))
        });
    }
    if args.acquire.is_empty() && args.release.is_empty() {
        return Err(bad(
            "name a lock: --tier T, or --acquire FILE … --release FILE … [--renew FILE]".into(),
        ));
    }
    let sources = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| read(p))
            .collect::<anyhow::Result<Vec<_>>>()
    };
    let acquire = sources(&args.acquire)?;
    let release = sources(&args.release)?;
    let renew = args.renew.as_deref().map(read).transpose()?;
    lock::lab(&acquire, &release, renew.as_deref()).map_err(bad)
}

fn bounds_of(args: &ExploreArgs) -> anyhow::Result<Bounds> {
    if !(1..=3).contains(&args.clients) {
        return Err(bad(format!("--clients {}: 1 to 3", args.clients)));
    }
    if args.attempts == 0 || args.lease_ms < 3 {
        return Err(bad("--attempts is at least 1, --lease-ms at least 3".into()));
    }
    let mut faults = Vec::new();
    for name in args.faults.iter().filter(|f| !f.is_empty()) {
        let kind = FaultKind::parse(name).ok_or_else(|| {
            bad(format!(
                "--faults {name}: one of pause, crash, failover, clock-jump"
            ))
        })?;
        faults.push(kind);
    }
    Ok(Bounds {
        clients: args.clients,
        budget: args.budget,
        faults,
        attempts: args.attempts,
        lease_ms: args.lease_ms,
        max_depth: args.max_depth,
        max_states: args.max_states,
        time_budget_ms: args.time_budget_ms,
        ..Bounds::default()
    })
}

/// Runs `loadtest explore`.
pub async fn run(args: ExploreArgs) -> anyhow::Result<String> {
    let rung = match (args.replay, &args.tier) {
        (false, _) => None,
        (true, Some(id)) => Some(
            id.parse::<oversell_api::Tier>()
                .map_err(|e| bad(format!("--tier {id}: {e}")))?,
        ),
        (true, None) => {
            return Err(bad(
                "--replay runs a built-in rung on the fleet: name it with --tier".into(),
            ))
        }
    };
    let lock = lock_of(&args)?;
    let bounds = bounds_of(&args)?;
    let lang =
        Lang::parse(&args.lang).ok_or_else(|| bad(format!("--lang {}: en or zh", args.lang)))?;
    if args.attacks {
        return card(&lock, &bounds, args.json, lang);
    }
    let answer =
        explore::explore(&lock, bounds.clone()).map_err(|e| bad(format!("{}: {e}", lock.name)))?;
    let mut output = if args.json {
        serde_json::to_string_pretty(&answer)? + "\n"
    } else {
        answer.text(lang)
    };
    if let Some(path) = &args.history {
        let note = write_history(&lock, &bounds, &answer, path)?;
        if !args.json {
            output += &note;
        }
    }
    if let Some(tier) = rung {
        return on_the_fleet(&args, &lock, tier, &bounds, &answer, output).await;
    }
    let outcomes: Vec<&str> = answer.outcomes.iter().map(|o| o.id()).collect();
    let message = match answer.verdict {
        Verdict::NoBreak => return Ok(output),
        Verdict::Broken => format!("broken: {}", outcomes.join(", ")),
        Verdict::BoundReached => "a bound reached before the search ended".to_owned(),
    };
    Err(Exit {
        code: answer.exit_code(),
        stdout: output,
        message,
    }
    .into())
}

/// The schedule a history or a replay shows: the sale sold twice when there is one (what the
/// checker judges), else the shortest break, else the two holders.
fn shown(answer: &explore::answer::Answer) -> Option<&explore::search::Found> {
    use explore::judge::Property;
    let breaks = answer
        .found
        .iter()
        .filter(|f| f.property.outcome().is_some());
    answer
        .found(Property::SoldTwice)
        .or_else(|| breaks.min_by_key(|f| f.depth))
        .or_else(|| answer.found(Property::TwoHolders))
}

/// `--replay`: the answer's break run on the fleet; the exit status is the fleet's.
async fn on_the_fleet(
    args: &ExploreArgs,
    lock: &LockSource,
    tier: oversell_api::Tier,
    bounds: &Bounds,
    answer: &explore::answer::Answer,
    mut output: String,
) -> anyhow::Result<String> {
    let url = args.url.as_deref().unwrap_or_default();
    let found = shown(answer).filter(|f| f.property.outcome().is_some());
    let Some(found) = found else {
        return Err(Exit {
            code: explore::answer::BROKEN,
            stdout: output,
            message: "nothing to replay: the model found no break within these bounds".into(),
        }
        .into());
    };
    let machine = explore::sale::Machine::new(lock, bounds.clone()).map_err(bad)?;
    let fleet = replay::Fleet {
        url,
        room: args.room.as_deref(),
        token: args.token.as_deref(),
    };
    let replayed = replay::replay(&machine, lock, tier, found, &fleet)
        .await
        .map_err(|e| bad(e.0))?;
    if args.json {
        let both = serde_json::json!({ "answer": answer, "replay": replayed });
        output = serde_json::to_string_pretty(&both)? + "\n";
    } else {
        output += &replayed.text(url);
    }
    if replayed.reproduced {
        return Ok(output);
    }
    let message = match replayed.ran {
        true => format!(
            "the fleet's run held: no {} on the fleet",
            found.property.id()
        ),
        false => format!("not replayed: {}", replayed.because),
    };
    Err(Exit {
        code: explore::answer::BROKEN,
        stdout: output,
        message,
    }
    .into())
}

/// Writes a schedule of the answer as a history at `path`: the sale sold twice when there is
/// one (what the checker judges), else the shortest break, else the two holders; says what it
/// wrote.
fn write_history(
    lock: &LockSource,
    bounds: &Bounds,
    answer: &explore::answer::Answer,
    path: &Path,
) -> anyhow::Result<String> {
    let Some(found) = shown(answer) else {
        return Ok("\n  no schedule to write: nothing broke, and never two holders\n".into());
    };
    let trace = explore::replay(lock, bounds.clone(), found).map_err(|e| bad(e.to_string()))?;
    let tier = if lock.name == "lab" {
        "custom"
    } else {
        &lock.name
    };
    let lines = history::lines(&trace, tier, found.property.id(), bounds.lease_ms);
    std::fs::write(path, history::text(&lines)).map_err(|e| Exit {
        code: crate::history::command::NOT_WRITTEN,
        stdout: String::new(),
        message: format!("cannot write {}: {e}", path.display()),
    })?;
    Ok(format!(
        "\n  the {} schedule written as a history: {} (loadtest check reads it)\n",
        found.property.id(),
        path.display()
    ))
}

/// `--attacks`: one search per grader attack, and the card they make; when every attack
/// held, the search of every schedule too, and its shortest break if it has one.
fn card(lock: &LockSource, bounds: &Bounds, json: bool, lang: Lang) -> anyhow::Result<String> {
    use oversell_api::grade::Outcome;
    let graded =
        explore::attacks::grade(lock, bounds).map_err(|e| bad(format!("{}: {e}", lock.name)))?;
    let output = if json {
        serde_json::to_string_pretty(&graded)? + "\n"
    } else {
        let mut out = format!(
            "{}: the grader's attacks, each searched on the model\n",
            lock.name
        );
        for g in &graded {
            let how = g.answer.as_ref().map_or(String::new(), |a| {
                let depth = a
                    .found
                    .iter()
                    .filter(|f| f.property.outcome() == Some(g.outcome))
                    .map(|f| f.depth)
                    .min();
                match depth {
                    Some(d) => format!(" at depth {d} ({} states)", a.states),
                    None => format!(" ({} states)", a.states),
                }
            });
            out += &format!("  {:<26} {}{how}\n", g.attack, g.outcome.id());
        }
        out
    };
    let broken: Vec<&str> = graded
        .iter()
        .filter(|g| !matches!(g.outcome, Outcome::Held | Outcome::NotApplicable))
        .map(|g| g.attack)
        .collect();
    if broken.is_empty() {
        // Every attack held: the search of every schedule, under the same bounds, may still
        // find one none of them made, which the card must not hide.
        let search = explore::explore(lock, bounds.clone())
            .map_err(|e| bad(format!("{}: {e}", lock.name)))?;
        let Some(found) = explore::attacks::beyond(&graded, &search) else {
            return Ok(output);
        };
        let mut output = output;
        if !json {
            output += &format!("\n  {}:\n", explore::attacks::beyond_words(found, lang));
            for (i, step) in found.schedule.iter().enumerate() {
                let note = if lang == Lang::Zh {
                    &step.note_zh
                } else {
                    &step.note
                };
                output += &format!("    {:>2}. {note}\n", i + 1);
            }
        }
        return Err(Exit {
            code: explore::answer::BROKEN,
            stdout: output,
            message: format!(
                "broken by a schedule none of the attacks made: {}",
                found.property.id()
            ),
        }
        .into());
    }
    Err(Exit {
        code: explore::answer::BROKEN,
        stdout: output,
        message: format!("broken by: {}", broken.join(", ")),
    }
    .into())
}
