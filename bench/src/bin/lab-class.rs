//! A class pressing "Attack my lock" at once: N students' rooms on `oversell up --lab`, half
//! with a SETNX lock, half with a compare-and-delete one (the ladder's own scripts,
//! `static/locks/setnx` and `static/locks/lua-release`, as students write them), every
//! grading asked for in the same instant, each student then asking for their card every 2 s
//! as the lab page does. Beside them the instructor's demo sells in room `demo` (closed loop,
//! 16 buyers, `lua-release`, business 2 ms). Prints, per class size: cards back with the
//! outcomes their lock deserves (the grader's LADDER), any other answer, the longest wait and
//! the median one, and the demo's sale rate during the gradings against before them.
//!
//! With `--search` the class presses "Search every schedule" instead (`POST /admin/lab/search`,
//! answered when the room's search is done, through the same line's slots; a room told
//! `line_busy` presses again, as the page tells it to): the cards are the model's attacks.
//!
//!   cargo build --release && target/release/lab-class --students 100,200
//!   target/release/lab-class --students 60 --search

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use http::Method;
use loadtest::{fire, Load, Model, RequestSpec, Silent, Stop};
use oversell_api::{SettingsPatch, Tier};
use oversell_bench::{median, Fleet};
use oversell_client::AdminClient;
use serde_json::{json, Value};
use tokio::sync::Notify;
use workshop::lab::{ladder_outcomes, Outcome};

#[derive(Parser)]
#[command(about = "A class grading its locks at once on `oversell up --lab`")]
struct Args {
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    /// Class sizes, one fleet each.
    #[arg(long, value_delimiter = ',', default_value = "100,200")]
    students: Vec<usize>,
    /// More `oversell up` flags, e.g. `--lock-store redlock`. The grading slots are the
    /// instances' (`serve --grading-slots`): set `GRADING_SLOTS=N` in this bench's environment,
    /// which `oversell up` and its instances inherit.
    #[arg(long, allow_hyphen_values = true)]
    up: Vec<String>,
    /// Seconds the demo sells alone before the class presses.
    #[arg(long, default_value_t = 10)]
    alone: u64,
    /// The ladder's locks the students submit, dealt alternately: each rung's own scripts
    /// (`static/locks/<tier>/`), as a student would write them.
    #[arg(long, value_delimiter = ',', default_value = "setnx,lua-release")]
    locks: Vec<Tier>,
    /// The demo room's tier.
    #[arg(long, default_value = "lua-release")]
    demo_tier: Tier,
    /// Press "Search every schedule" instead of "Attack my lock".
    #[arg(long)]
    search: bool,
    /// The demo's rate is measured in slices of this many ms while the class waits (a class
    /// that is answered within one slice leaves none: shorten it, e.g. 500 with `--search`).
    #[arg(long, default_value_t = 5_000)]
    slice_ms: u64,
}

/// One student's result: the wait from the press to the card, and what came back.
struct Graded {
    waited: Duration,
    right: Result<(), String>,
    /// The most rooms ahead of them the answers showed.
    first_place: Option<u64>,
    /// How many times they pressed (a search told `line_busy` is pressed again).
    presses: u32,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let up: Vec<&str> = std::iter::once("--lab")
        .chain(args.up.iter().map(String::as_str))
        .collect();
    println!(
        "# lab-class ({} instances, up {:?}), load {}",
        args.instances,
        up,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for &students in &args.students {
        let fleet = Fleet::start_with(&args.oversell, args.instances, &[], &up)?;
        class(&fleet, students, &args).await?;
    }
    Ok(())
}

async fn class(fleet: &Fleet, students: usize, args: &Args) -> anyhow::Result<()> {
    let locks = (args.locks.iter())
        .map(|&tier| Ok((tier, lock_of(tier)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut rooms = Vec::new();
    for n in 1..=students {
        let room = format!("student-{n:03}");
        let (tier, lock) = &locks[n % locks.len()];
        let admin = fleet.admin(&room)?.with_timeout(Duration::from_secs(300));
        admin
            .request(Method::PUT, "/admin/lab", Some(lock.clone()))
            .await
            .with_context(|| format!("submitting {room}'s lock"))?;
        rooms.push((admin, *tier));
    }
    let demo_admin = fleet.admin("demo")?;
    demo_admin.reset(1_000_000).await?;
    demo_admin
        .set_config(&SettingsPatch {
            tier: Some(args.demo_tier),
            business_ms: Some(2),
            ..SettingsPatch::default()
        })
        .await?;
    let demo = fleet.targets("demo")?;
    let demo_for = |ms: u64| Load {
        model: Model::Closed {
            stop: Stop::After(Duration::from_millis(ms)),
        },
        connections: 16,
        request: RequestSpec::sale(1),
        timeout: Duration::from_secs(60),
    };
    let alone = fire(&demo, &demo_for(args.alone * 1_000), &Silent).await?;
    let alone_rate = alone.status(200) as f64 / alone.elapsed.as_secs_f64();

    // Every student presses in the same instant.
    let press = Arc::new(Notify::new());
    let graders: Vec<_> = rooms
        .into_iter()
        .map(|(admin, tier)| {
            let press = press.clone();
            let search = args.search;
            tokio::spawn(async move {
                press.notified().await;
                match search {
                    true => search_schedules(&admin, tier).await,
                    false => grade(&admin, tier).await,
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    press.notify_waiters();
    // The demo sells in slices until the last card is back.
    let mut slices = Vec::new();
    let waiting = async {
        let mut results = Vec::new();
        for g in graders {
            results.push(g.await?);
        }
        anyhow::Ok(results)
    };
    tokio::pin!(waiting);
    let slice = demo_for(args.slice_ms);
    let results = loop {
        tokio::select! {
            results = &mut waiting => break results?,
            stats = fire(&demo, &slice, &Silent) => {
                let stats = stats?;
                slices.push(stats.status(200) as f64 / stats.elapsed.as_secs_f64());
            }
        }
    };
    let took = started.elapsed();
    let right = results.iter().filter(|r| r.right.is_ok()).count();
    let mut waits: Vec<f64> = results.iter().map(|r| r.waited.as_secs_f64()).collect();
    waits.sort_by(f64::total_cmp);
    let longest = waits.last().copied().unwrap_or(0.0);
    let furthest = results.iter().filter_map(|r| r.first_place).max();
    let presses: u32 = results.iter().map(|r| r.presses).sum();
    println!(
        "{students} students ({}): {right}/{students} cards with the outcomes their lock \
         deserves; {presses} presses; all back in {:.0} s; wait p50 {:.0} s, longest {:.0} s; \
         furthest back in line {}; \
         demo {:.0} sales/s during (median of {} slices of {} ms) against {:.0} alone ({:.2}x)",
        if args.search { "search" } else { "attacks" },
        took.as_secs_f64(),
        median(&waits),
        longest,
        furthest.map_or("-".into(), |p| p.to_string()),
        median(&slices),
        slices.len(),
        args.slice_ms,
        alone_rate,
        median(&slices) / alone_rate,
    );
    for wrong in results
        .iter()
        .filter_map(|r| r.right.as_ref().err())
        .take(10)
    {
        println!("  not right: {wrong}");
    }
    Ok(())
}

/// Presses once, then asks every 2 s until the card is there, as the lab page does.
async fn grade(admin: &AdminClient, tier: Tier) -> Graded {
    let pressed = Instant::now();
    let mut first_place = None;
    let mut reply = admin.request(Method::POST, "/admin/lab/grade", None).await;
    loop {
        match &reply {
            Ok(r) if matches!(r["state"].as_str(), Some("queued" | "running")) => {
                if let Some(place) = r["place"].as_u64() {
                    first_place.get_or_insert(place);
                }
                tokio::time::sleep(Duration::from_secs(2)).await;
                reply = admin.request(Method::GET, "/admin/lab/grade", None).await;
            }
            _ => break,
        }
    }
    let right = match reply {
        Ok(card) => judge(&card, tier),
        Err(err) => Err(format!("{err:#}")),
    };
    Graded {
        waited: pressed.elapsed(),
        right,
        first_place,
        presses: 1,
    }
}

/// Presses "Search every schedule" until the room's turn comes: a press answers with the card,
/// or `line_busy` after its wait, pressed again at once as the lab page says.
async fn search_schedules(admin: &AdminClient, tier: Tier) -> Graded {
    let pressed = Instant::now();
    let mut presses = 0;
    let reply = loop {
        presses += 1;
        match admin.request(Method::POST, "/admin/lab/search", None).await {
            Err(err) if format!("{err:#}").contains("line_busy") && presses < 20 => continue,
            reply => break reply,
        }
    };
    let right = match reply {
        Ok(card) => judge(&card, tier),
        Err(err) => Err(format!("{err:#}")),
    };
    Graded {
        waited: pressed.elapsed(),
        right,
        first_place: None,
        presses,
    }
}

/// Whether the card has the outcomes the ladder gives `tier`'s scripts.
fn judge(card: &Value, tier: Tier) -> Result<(), String> {
    let (_, expected) = ladder_outcomes(tier).ok_or("no rung")?;
    let got: Vec<&str> = card["attacks"]
        .as_array()
        .ok_or_else(|| format!("not a card: {card}"))?
        .iter()
        .map(|a| a["outcome"].as_str().unwrap_or("?"))
        .collect();
    let want: Vec<&str> = expected.iter().map(|o: &Outcome| o.id()).collect();
    match got.get(..want.len()) == Some(&want[..]) {
        true => Ok(()),
        false => Err(format!("{tier}: {got:?}, the ladder says {want:?}")),
    }
}

/// The ladder's scripts for `tier`, as `PUT /admin/lab` takes them.
fn lock_of(tier: Tier) -> anyhow::Result<Value> {
    let dir = Path::new("static/locks").join(tier.id());
    let steps = |what: &str| -> Vec<String> {
        (1..=3)
            .map_while(|i| std::fs::read_to_string(dir.join(format!("{what}-{i}.lua"))).ok())
            .collect()
    };
    let mut lock = json!({ "acquire": steps("acquire"), "release": steps("release") });
    if let Ok(renew) = std::fs::read_to_string(dir.join("renew.lua")) {
        lock["renew"] = json!(renew);
    }
    anyhow::ensure!(
        lock["acquire"].as_array().is_some_and(|a| !a.is_empty()),
        "no scripts in {} (run from the repository's root)",
        dir.display()
    );
    Ok(lock)
}
