//! The class under the nemesis: its rooms buying, voting and grading through nginx, each
//! client keeping its own record of what the fleet answered.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use http::{Method, StatusCode};
use oversell_bench::Fleet;
use oversell_client::http::Pool;
use oversell_client::Targets;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use super::{call, call_within, Args, Sent, SAFE_TIERS};

/// The chapter whose question the class votes on, two rounds a poll, polls one after another.
const CHAPTER: &str = "none-race";
/// How long a vote is tried again after failures, and a round's counts read.
const VOTE_DEADLINE: Duration = Duration::from_secs(60);
/// How long a student waits for a grading's card before calling it lost.
const GRADING_DEADLINE: Duration = Duration::from_secs(240);

#[derive(Clone)]
struct Seat {
    room: String,
    token: String,
}

pub struct Class {
    /// The buying rooms and their tiers.
    pub buying: Vec<(String, &'static str)>,
    grading: Vec<Seat>,
    seats: Vec<Seat>,
    targets: Targets,
    admin_token: String,
    options: usize,
}

pub struct Running {
    buyers: Vec<(String, JoinHandle<Vec<String>>)>,
    votes: JoinHandle<VoteTally>,
    graders: Vec<JoinHandle<GradeTally>>,
    sent: Arc<Sent>,
}

/// What the clients saw, and what it adds up to.
pub struct Records {
    acked: HashMap<String, Vec<String>>,
    pub votes_miscounted: u64,
    pub gradings_lost: u64,
    votes: VoteTally,
    grades: GradeTally,
    sent: Arc<Sent>,
}

#[derive(Default)]
struct VoteTally {
    rounds: u64,
    accepted: u64,
    unsure: u64,
    miscounted: u64,
}

#[derive(Default)]
struct GradeTally {
    cards: u64,
    errors: HashMap<String, u64>,
    lost: u64,
}

impl Class {
    pub async fn make(fleet: &Fleet, args: &Args) -> anyhow::Result<Class> {
        let admin = fleet
            .admin("default")?
            .with_timeout(Duration::from_secs(60));
        let stock = args
            .stock
            .unwrap_or(((args.minutes * 800.0) as i64).max(1_500));
        let made = admin
            .request(
                Method::POST,
                "/admin/class",
                Some(json!({ "students": args.rooms, "stock": stock })),
            )
            .await?;
        let seats: Vec<Seat> = made["rooms"]
            .as_array()
            .context("no rooms in the class")?
            .iter()
            .map(|t| Seat {
                room: t["room"].as_str().unwrap_or_default().to_owned(),
                token: t["token"].as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        let mut buying = Vec::new();
        for (i, seat) in seats[..args.buying].iter().enumerate() {
            let tier = SAFE_TIERS[i % SAFE_TIERS.len()];
            let room = fleet.admin(&seat.room)?;
            room.request(Method::PUT, "/admin/tier", Some(json!({ "tier": tier })))
                .await?;
            room.reset(stock).await?;
            buying.push((seat.room.clone(), tier));
        }
        let lock = lab_lock("lua-release")?;
        let grading = seats[args.buying..args.buying + args.grading].to_vec();
        for seat in &grading {
            fleet
                .admin(&seat.room)?
                .request(Method::PUT, "/admin/lab", Some(lock.clone()))
                .await?;
        }
        let opened = admin
            .request(
                Method::POST,
                "/admin/class/poll",
                Some(json!({ "chapter": CHAPTER })),
            )
            .await?;
        Ok(Class {
            buying,
            grading,
            seats,
            targets: Targets::parse(&[fleet.url.as_str()], None)?,
            admin_token: fleet.token.clone(),
            options: opened["question"]["options"].as_array().map_or(2, Vec::len),
        })
    }

    /// Two buyers a buying room, a grader a grading room, one coordinator for the votes.
    pub fn start(&self, stop: Arc<AtomicBool>) -> Running {
        let pool = Pool::default();
        let sent = Arc::new(Sent::default());
        let mut buyers = Vec::new();
        for (room, _) in &self.buying {
            for _ in 0..2 {
                let (pool, targets, room_, stop, sent) = (
                    pool.clone(),
                    self.targets.clone(),
                    room.clone(),
                    stop.clone(),
                    sent.clone(),
                );
                buyers.push((
                    room.clone(),
                    tokio::spawn(buyer(pool, targets, room_, stop, sent)),
                ));
            }
        }
        let graders = self
            .grading
            .iter()
            .map(|seat| {
                let (pool, targets, seat, stop, sent) = (
                    pool.clone(),
                    self.targets.clone(),
                    seat.clone(),
                    stop.clone(),
                    sent.clone(),
                );
                tokio::spawn(grader(pool, targets, seat, stop, sent))
            })
            .collect();
        let voting = Voting {
            pool,
            targets: self.targets.clone(),
            admin_token: self.admin_token.clone(),
            seats: self.seats.clone(),
            options: self.options,
            sent: sent.clone(),
        };
        Running {
            buyers,
            votes: tokio::spawn(voting.run(stop)),
            graders,
            sent,
        }
    }
}

impl Running {
    /// Waits for every client to stop (a grading in progress to its end).
    pub async fn finish(self) -> anyhow::Result<Records> {
        let mut acked: HashMap<String, Vec<String>> = HashMap::new();
        for (room, buyer) in self.buyers {
            acked.entry(room).or_default().extend(buyer.await?);
        }
        let votes = self.votes.await?;
        let mut grades = GradeTally::default();
        for grader in self.graders {
            let g = grader.await?;
            grades.cards += g.cards;
            grades.lost += g.lost;
            for (code, n) in g.errors {
                *grades.errors.entry(code).or_default() += n;
            }
        }
        Ok(Records {
            acked,
            votes_miscounted: votes.miscounted,
            gradings_lost: grades.lost,
            votes,
            grades,
            sent: self.sent,
        })
    }
}

impl Records {
    pub fn acked_in(&self, room: &str) -> &[String] {
        self.acked.get(room).map_or(&[], Vec::as_slice)
    }

    pub fn summary(&self) -> String {
        let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let mut errors: Vec<String> = self
            .grades
            .errors
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        errors.sort();
        format!(
            "requests: {} sales ({} answered 200), {} votes ({} answered 200) over {} rounds \
             ({} votes accepted, {} never answered 200), {} gradings ({} cards, clear errors: {})",
            n(&self.sent.sales),
            n(&self.sent.sales_ok),
            n(&self.sent.votes),
            n(&self.sent.votes_ok),
            self.votes.rounds,
            self.votes.accepted,
            self.votes.unsure,
            n(&self.sent.gradings),
            self.grades.cards,
            if errors.is_empty() {
                "none".into()
            } else {
                errors.join(", ")
            }
        )
    }
}

/// Buys until told to stop; the order ids answered 200.
async fn buyer(
    pool: Pool,
    targets: Targets,
    room: String,
    stop: Arc<AtomicBool>,
    sent: Arc<Sent>,
) -> Vec<String> {
    let mut acked = Vec::new();
    let path = format!("/sale?room={room}");
    while !stop.load(Ordering::Relaxed) {
        sent.sales.fetch_add(1, Ordering::Relaxed);
        match call(&pool, &targets, Method::POST, &path, None, None).await {
            Ok((StatusCode::OK, sold)) => {
                sent.sales_ok.fetch_add(1, Ordering::Relaxed);
                match sold["order_id"].as_str() {
                    Some(id) => acked.push(id.to_owned()),
                    None => eprintln!("a 200 sale without an order id in {room}: {sold}"),
                }
            }
            // Sold out, a lock not had in time, a member away: a buyer tries again shortly.
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    acked
}

/// The poll's coordinator: opens a poll, every seat votes, the round's counts are checked
/// against what the seats were told; the next round; again until told to stop.
struct Voting {
    pool: Pool,
    targets: Targets,
    admin_token: String,
    seats: Vec<Seat>,
    options: usize,
    sent: Arc<Sent>,
}

impl Voting {
    async fn run(self, stop: Arc<AtomicBool>) -> VoteTally {
        let mut tally = VoteTally::default();
        let mut poll = 0usize;
        'polls: while !stop.load(Ordering::Relaxed) {
            for round in 1..=2usize {
                let (path, body) = match round {
                    1 => ("/admin/class/poll", Some(json!({ "chapter": CHAPTER }))),
                    _ => ("/admin/class/poll/round", None),
                };
                if !self.until_round_open(path, body, round).await {
                    println!("votes: round {round} of poll {poll} could not be opened within {VOTE_DEADLINE:?}");
                    tally.miscounted += 1;
                    break 'polls;
                }
                let choices: Vec<usize> = (0..self.seats.len())
                    .map(|i| (i + poll * 2 + round) % self.options)
                    .collect();
                let answers = futures_util::future::join_all(
                    self.seats
                        .iter()
                        .zip(&choices)
                        .map(|(seat, &option)| self.vote(seat, option)),
                )
                .await;
                let (mut sure, mut maybe) = (vec![0u64; self.options], vec![0u64; self.options]);
                for (&option, accepted) in choices.iter().zip(&answers) {
                    match accepted {
                        true => sure[option] += 1,
                        false => maybe[option] += 1,
                    }
                }
                tally.rounds += 1;
                tally.accepted += sure.iter().sum::<u64>();
                tally.unsure += maybe.iter().sum::<u64>();
                let Some(counts) = self.counts(round).await else {
                    println!("votes: the counts of round {round} of poll {poll} could not be read");
                    tally.miscounted += sure.iter().sum::<u64>();
                    continue;
                };
                for o in 0..self.options {
                    let counted = counts.get(o).copied().unwrap_or(0);
                    let off = sure[o].saturating_sub(counted)
                        + counted.saturating_sub(sure[o] + maybe[o]);
                    if off > 0 {
                        println!(
                            "votes: poll {poll} round {round} option {o}: {counted} counted, {} accepted, {} unsure",
                            sure[o], maybe[o]
                        );
                    }
                    tally.miscounted += off;
                }
                if stop.load(Ordering::Relaxed) {
                    break 'polls;
                }
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            poll += 1;
        }
        tally
    }

    async fn admin(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        call(
            &self.pool,
            &self.targets,
            method,
            path,
            Some(self.admin_token.as_str()),
            body,
        )
        .await
    }

    /// Asks for `round` (a new poll, or the next round) until the admin view shows it open.
    async fn until_round_open(&self, path: &str, body: Option<Value>, round: usize) -> bool {
        let deadline = Instant::now() + VOTE_DEADLINE;
        while Instant::now() < deadline {
            // A call whose answer was lost may have opened it: the view says.
            let _ = self.admin(Method::POST, path, body.clone()).await;
            if let Ok((StatusCode::OK, view)) =
                self.admin(Method::GET, "/admin/class/poll", None).await
            {
                let open = view["rounds"][round - 1]["open"].as_bool() == Some(true);
                let fresh = round > 1 || view["rounds"][0]["voters"].as_u64() == Some(0);
                if view["round"].as_u64() == Some(round as u64) && open && fresh {
                    return true;
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        false
    }

    /// Votes until answered 200 (true) or the deadline (false: it may have landed or not).
    async fn vote(&self, seat: &Seat, option: usize) -> bool {
        let deadline = Instant::now() + VOTE_DEADLINE;
        let path = format!("/poll?room={}", seat.room);
        while Instant::now() < deadline {
            self.sent.votes.fetch_add(1, Ordering::Relaxed);
            let answer = call(
                &self.pool,
                &self.targets,
                Method::POST,
                &path,
                Some(seat.token.as_str()),
                Some(json!({ "option": option })),
            )
            .await;
            if matches!(answer, Ok((StatusCode::OK, _))) {
                self.sent.votes_ok.fetch_add(1, Ordering::Relaxed);
                return true;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        false
    }

    async fn counts(&self, round: usize) -> Option<Vec<u64>> {
        let deadline = Instant::now() + VOTE_DEADLINE;
        while Instant::now() < deadline {
            if let Ok((StatusCode::OK, view)) =
                self.admin(Method::GET, "/admin/class/poll", None).await
            {
                return view["rounds"][round - 1]["counts"]
                    .as_array()
                    .map(|c| c.iter().map(|n| n.as_u64().unwrap_or(0)).collect());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        None
    }
}

enum Graded {
    Card,
    Error(String),
    Lost(String),
}

/// Presses "grade" again and again until told to stop, each time until a card, a clear
/// error, or the deadline.
async fn grader(
    pool: Pool,
    targets: Targets,
    seat: Seat,
    stop: Arc<AtomicBool>,
    sent: Arc<Sent>,
) -> GradeTally {
    let mut tally = GradeTally::default();
    while !stop.load(Ordering::Relaxed) {
        sent.gradings.fetch_add(1, Ordering::Relaxed);
        match grade_once(&pool, &targets, &seat).await {
            Graded::Card => tally.cards += 1,
            Graded::Error(code) => *tally.errors.entry(code).or_default() += 1,
            Graded::Lost(why) => {
                println!("grading lost in {}: {why}", seat.room);
                tally.lost += 1;
            }
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    tally
}

/// One press, then a look every 2 s as the lab page does.
async fn grade_once(pool: &Pool, targets: &Targets, seat: &Seat) -> Graded {
    let deadline = Instant::now() + GRADING_DEADLINE;
    let path = format!("/admin/lab/grade?room={}", seat.room);
    let token = Some(seat.token.as_str());
    let card = |v: &Value| v["attacks"].is_array();
    // The press: a failure without an answer (a member away) is pressed again.
    let mut last: String;
    let job = loop {
        // The press answers once the grading has run (or with its place in line): it may
        // take as long as the grading.
        let left = deadline.saturating_duration_since(Instant::now());
        match call_within(pool, targets, (Method::POST, &path), token, None, left).await {
            Ok((StatusCode::OK, v)) if card(&v) => return Graded::Card,
            Ok((StatusCode::ACCEPTED, v)) => break v["job"].as_u64(),
            Ok((_, v)) if v["error"].is_string() => return clear_error(seat, &v),
            Ok((status, v)) => last = format!("{status} {v}"),
            Err(err) => last = format!("{err:#}"),
        }
        if Instant::now() > deadline {
            return Graded::Lost(format!("no answer to the press; the last: {last}"));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    // Looked at by its job, as the lab page does: a grading lost with its instance answers
    // `grading_lost`, not the room's last card.
    let look = match job {
        Some(job) => format!("{path}&job={job}"),
        None => path,
    };
    let mut same_error = (String::new(), 0);
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(2)).await;
        match call(pool, targets, Method::GET, &look, token, None).await {
            Ok((StatusCode::OK, v)) if card(&v) => return Graded::Card,
            Ok((StatusCode::OK, v)) if v["state"] == "idle" => {
                return Graded::Lost("in line, then neither in line nor answered".into())
            }
            // The kept answer of a grading that failed, or a look that failed: the same
            // error five looks in a row is the grading's.
            Ok((_, v)) if v["error"].is_string() => {
                let code = v["error"].as_str().unwrap_or_default().to_owned();
                same_error = match same_error.0 == code {
                    true => (code, same_error.1 + 1),
                    false => (code, 1),
                };
                if same_error.1 >= 5 {
                    return clear_error(seat, &v);
                }
            }
            _ => same_error = (String::new(), 0),
        }
    }
    Graded::Lost(format!("still waiting after {GRADING_DEADLINE:?}"))
}

/// A grading's clear error; one stopped at its bound is printed with the step it stalled
/// at, so a run says where its gradings stall, not only how often.
fn clear_error(seat: &Seat, v: &Value) -> Graded {
    let code = v["error"].as_str().unwrap_or_default().to_owned();
    if code == "grading_timed_out" {
        println!(
            "grading stopped at its bound in {}: {}",
            seat.room, v["message"]
        );
    }
    Graded::Error(code)
}

/// The ladder's own scripts for `tier`, as `PUT /admin/lab` takes them.
fn lab_lock(tier: &str) -> anyhow::Result<Value> {
    let dir = Path::new("static/locks").join(tier);
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
