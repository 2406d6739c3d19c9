//! A class rehearsal: the instructor makes a class (`POST /admin/class`), every student opens
//! their room's dashboard and, with their own room token only, fires server-side bursts and
//! switches between the safe tiers, and now and then tries to act in a neighbour's room (which
//! must be a 403), while the instructor's room runs the curriculum's scenarios with the admin
//! token. At the end every student room's ground truth must be exact (orders = buyers the
//! bursts reported sold, stock = initial − orders, nothing oversold, no lost update, no
//! overlap), no answer a 5xx, every cross-room attempt refused, every dashboard live.
//!
//! The curriculum runs the scenarios whose fault stays in the room or freezes a process; the
//! ones that crash an instance are left out: a crash drops every room's sales in flight on
//! that instance (a 502 for those students), which is the fault's point, not the fleet's.
//!
//!   cargo build --release && target/release/class-rehearsal --duration 120

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use http::{Method, StatusCode};
use oversell_api::{BurstReport, FaultKind, StateView, Tier};
use oversell_bench::{wait_until, Dashboard, Fleet};
use oversell_client::http::fetch;
use oversell_client::Targets;
use serde_json::{json, Value};
use workshop::scenario::CATALOG;

#[derive(Parser)]
#[command(
    about = "A class on one fleet: students act in their own rooms with room tokens while the \
             instructor's room runs the curriculum; checks every room's ground truth"
)]
struct Args {
    /// The oversell binary (`oversell up` starts the fleet).
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    #[arg(long, default_value_t = 30)]
    students: usize,
    /// Buyers per student burst (server-side, `POST /admin/burst`).
    #[arg(long, default_value_t = 50)]
    buyers: usize,
    /// Seconds between two actions of one student (the students are staggered).
    #[arg(long, default_value_t = 3)]
    every: u64,
    /// Seconds the rehearsal lasts.
    #[arg(long, default_value_t = 120)]
    duration: u64,
    /// The tiers a student switches between: safe ones, each keeping the ground truth at zero,
    /// so that any oversold item or overlap in a student room is the fleet's fault, not the
    /// tier's.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "lua-release,reentrant-watchdog,fenced,atomic-deduct"
    )]
    tiers: Vec<Tier>,
}
const DEMO_ROOM: &str = "demo";
const STOCK: i64 = 1_000_000;

/// What one student did and was told.
#[derive(Default, Debug)]
struct StudentRun {
    room: String,
    bursts: usize,
    sold: usize,
    /// Buyers inside bursts answered 503 or with an error.
    failed_buyers: usize,
    /// Whole requests (bursts, tier switches) answered 5xx or not at all.
    five: usize,
    /// Bursts refused as busy (409): the fleet shedding load, said clearly.
    busy: usize,
    /// Requests refused by nginx's per-client limit (429).
    limited: usize,
    tier_switches: usize,
    /// Attempts in a neighbour's room, and how many of them were 403.
    trespasses: usize,
    forbidden: usize,
    other: Vec<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let fleet = Fleet::start(
        &args.oversell,
        args.instances,
        &[("WAIT_DEADLINE_MS", "30000")],
    )?;
    println!(
        "fleet: {} ({} instances); {} students, a burst of {} or a tier switch every {} s each, \
         the curriculum in room `{DEMO_ROOM}`, {} s",
        fleet.url, args.instances, args.students, args.buyers, args.every, args.duration
    );
    let made = fleet
        .admin(DEMO_ROOM)?
        .request(
            Method::POST,
            "/admin/class",
            Some(json!({ "students": args.students, "stock": STOCK })),
        )
        .await?;
    let tickets: Vec<(String, String)> = made["rooms"]
        .as_array()
        .context("no rooms in the class")?
        .iter()
        .map(|t| {
            (
                t["room"].as_str().unwrap_or_default().to_owned(),
                t["token"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let dashboards: Vec<Dashboard> = tickets
        .iter()
        .map(|(room, _)| Dashboard::open(&fleet.url, room))
        .collect::<anyhow::Result<_>>()?;
    wait_until(
        Duration::from_secs(60),
        "every student dashboard's first state",
        || dashboards.iter().all(|d| d.states() >= 1),
    )
    .await?;

    let started = Instant::now();
    let until = tokio::time::Instant::now() + Duration::from_secs(args.duration);
    let curriculum = tokio::spawn(run_curriculum(
        fleet.targets(DEMO_ROOM)?,
        fleet.token.clone(),
        until,
    ));
    let mut students = Vec::new();
    for (i, (room, token)) in tickets.iter().enumerate() {
        let neighbour = tickets[(i + 1) % tickets.len()].0.clone();
        let every = Duration::from_secs(args.every);
        let offset = every.mul_f64(i as f64 / tickets.len() as f64);
        students.push(tokio::spawn(run_student(
            Targets::parse(&[fleet.url.as_str()], Some(room))?,
            Targets::parse(&[fleet.url.as_str()], Some(&neighbour))?,
            room.clone(),
            token.clone(),
            i,
            args.tiers.clone(),
            args.buyers,
            every,
            offset,
            until,
        )));
    }
    let mut runs = Vec::new();
    for student in students {
        runs.push(student.await??);
    }
    let scenarios = curriculum.await??;
    let elapsed = started.elapsed();

    let mut failures = Vec::new();
    println!();
    println!("room         bursts   sold  switches  403/tries  busy  429  5xx  orders    stock  oversold lost overlaps");
    let admin_of = |room: &str| fleet.admin(room);
    for run in &runs {
        let state: StateView = admin_of(&run.room)?.state().await?;
        let figure = |name: &str| state.truth.figure(name).unwrap_or(i64::MIN);
        println!(
            "{:<12} {:>6} {:>6} {:>9} {:>5}/{:<4} {:>5} {:>4} {:>4} {:>7} {:>8} {:>9} {:>4} {:>8}",
            run.room,
            run.bursts,
            run.sold,
            run.tier_switches,
            run.forbidden,
            run.trespasses,
            run.busy,
            run.limited,
            run.five + run.failed_buyers,
            figure("orders"),
            figure("stock"),
            figure("oversold"),
            figure("lost_updates"),
            figure("overlaps"),
        );
        let sold = run.sold as i64;
        let exact = figure("orders") == sold
            && figure("items_sold") == sold
            && figure("stock") == STOCK - sold
            && figure("oversold") == 0
            && figure("lost_updates") == 0
            && figure("overlaps") == 0;
        if !exact {
            failures.push(format!(
                "{}: ground truth not exact: {:?}",
                run.room, state.truth
            ));
        }
        if run.five + run.failed_buyers > 0 {
            failures.push(format!(
                "{}: {} requests 5xx or unanswered, {} buyers failed inside bursts",
                run.room, run.five, run.failed_buyers
            ));
        }
        if run.forbidden != run.trespasses {
            failures.push(format!(
                "{}: {} of {} attempts in another room were refused with 403",
                run.room, run.forbidden, run.trespasses
            ));
        }
        for other in &run.other {
            failures.push(format!("{}: {other}", run.room));
        }
    }
    for (dashboard, (room, _)) in dashboards.iter().zip(&tickets) {
        if let Some(why) = dashboard.stalled(elapsed) {
            failures.push(format!("dashboard of {room}: {why}"));
        }
    }
    let total = |f: fn(&StudentRun) -> usize| runs.iter().map(f).sum::<usize>();
    println!();
    println!(
        "{} s: {} bursts selling {} items ({:.0}/s), {} tier switches, {} of {} cross-room \
         attempts refused with 403, {} bursts refused as busy, {} requests limited (429), {} 5xx",
        elapsed.as_secs(),
        total(|r| r.bursts),
        total(|r| r.sold),
        total(|r| r.sold) as f64 / elapsed.as_secs_f64(),
        total(|r| r.tier_switches),
        total(|r| r.forbidden),
        total(|r| r.trespasses),
        total(|r| r.busy),
        total(|r| r.limited),
        total(|r| r.five + r.failed_buyers),
    );
    println!("curriculum in `{DEMO_ROOM}` meanwhile (scenario: held/ran):");
    let mut ran = 0;
    for (id, (held, runs)) in &scenarios {
        println!("  {id:<40} {held}/{runs}");
        ran += runs;
    }
    if ran == 0 {
        failures.push("the curriculum ran no scenario".into());
    }
    if failures.is_empty() {
        println!(
            "PASS: every student room's ground truth exact, no 5xx, every trespass a 403, every dashboard live"
        );
        Ok(())
    } else {
        for failure in &failures {
            println!("FAIL: {failure}");
        }
        bail!("{} failures", failures.len())
    }
}

/// One student until `until`: a burst in their room every `every`, a tier switch every fourth
/// time, and after each, one try at resetting the neighbour's room.
#[allow(clippy::too_many_arguments)]
async fn run_student(
    mine: Targets,
    neighbour: Targets,
    room: String,
    token: String,
    index: usize,
    tiers: Vec<Tier>,
    buyers: usize,
    every: Duration,
    offset: Duration,
    until: tokio::time::Instant,
) -> anyhow::Result<StudentRun> {
    let mut run = StudentRun {
        room,
        ..StudentRun::default()
    };
    let mut next = tokio::time::Instant::now() + offset;
    let mut step = 0usize;
    while next < until {
        tokio::time::sleep_until(next).await;
        next += every;
        step += 1;
        let answer = if step.is_multiple_of(4) {
            let tier = tiers[(index + step / 4) % tiers.len()];
            let answer = call(
                &mine,
                &token,
                Method::PUT,
                "/admin/tier",
                json!({ "tier": tier }),
            )
            .await;
            if answer.as_ref().is_ok_and(|(s, _)| *s == StatusCode::OK) {
                run.tier_switches += 1;
            }
            answer
        } else {
            let answer = call(
                &mine,
                &token,
                Method::POST,
                "/admin/burst",
                json!({ "buyers": buyers }),
            )
            .await;
            if let Ok((StatusCode::OK, body)) = &answer {
                let report: BurstReport = serde_json::from_value(body.clone())?;
                run.bursts += 1;
                run.sold += report.ok;
                run.failed_buyers += report.unavailable + report.errors;
                if report.sold_out > 0 {
                    run.other
                        .push(format!("{} buyers found it sold out", report.sold_out));
                }
            }
            answer
        };
        match answer {
            Ok((StatusCode::OK, _)) => {}
            Ok((StatusCode::CONFLICT, _)) => run.busy += 1,
            Ok((StatusCode::TOO_MANY_REQUESTS, _)) => run.limited += 1,
            Ok((status, _)) if status.is_server_error() => run.five += 1,
            Ok((status, body)) => run.other.push(format!("{status}: {body}")),
            Err(_) => run.five += 1,
        }
        // A student who tries their token on the neighbour's room.
        run.trespasses += 1;
        let tried = call(
            &neighbour,
            &token,
            Method::POST,
            "/admin/reset",
            json!({ "stock": 1 }),
        )
        .await;
        match tried {
            Ok((StatusCode::FORBIDDEN, _)) => run.forbidden += 1,
            Ok((status, body)) => run
                .other
                .push(format!("trespass answered {status}: {body}")),
            Err(e) => run.other.push(format!("trespass unanswered: {e:#}")),
        }
    }
    Ok(run)
}

/// The instructor's room: the curriculum's scenarios in ladder order, again and again, until
/// `until`; held/ran per scenario. Scenarios that do not fit this fleet (another lock store,
/// one instance) are refused by the server and skipped.
async fn run_curriculum(
    demo: Targets,
    token: String,
    until: tokio::time::Instant,
) -> anyhow::Result<BTreeMap<&'static str, (usize, usize)>> {
    let scenarios: Vec<&'static str> = CATALOG
        .iter()
        .filter(|s| {
            s.fault
                .as_ref()
                .is_none_or(|f| f.kind.strikes_room_only() || f.kind == FaultKind::Freeze)
        })
        .map(|s| s.id)
        .collect();
    let mut outcomes: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    'rounds: loop {
        let mut ran_any = false;
        for id in &scenarios {
            if tokio::time::Instant::now() >= until {
                break 'rounds;
            }
            let (status, body) = call(
                &demo,
                &token,
                Method::POST,
                "/admin/scenario",
                json!({ "id": id }),
            )
            .await?;
            match status {
                StatusCode::OK => {
                    ran_any = true;
                    let entry = outcomes.entry(*id).or_default();
                    entry.1 += 1;
                    if body["passed"] == true {
                        entry.0 += 1;
                    }
                }
                // Does not fit this fleet (the server says why): not part of the rehearsal.
                StatusCode::BAD_REQUEST => {}
                status => bail!("scenario {id}: {status}: {body}"),
            }
        }
        if !ran_any {
            break;
        }
    }
    Ok(outcomes)
}

/// One request with a bearer token: status and JSON body (`Null` when not JSON).
async fn call(
    targets: &Targets,
    token: &str,
    method: Method,
    path: &str,
    body: Value,
) -> anyhow::Result<(StatusCode, Value)> {
    let reply = fetch(
        targets,
        targets.first(),
        method,
        path,
        Some(token),
        Some(body.to_string().into_bytes()),
        Duration::from_secs(120),
    )
    .await?;
    Ok((
        reply.status,
        serde_json::from_slice(&reply.body).unwrap_or(Value::Null),
    ))
}
