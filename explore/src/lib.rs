//! # explore: every way a Redis lock breaks
//!
//! The fleet samples schedules; this searches them. A deterministic model of the Redis
//! commands a lock's steps call runs **the real Lua steps** (a built-in rung's files of
//! `static/locks/`, or a student's by the lab's contract), each script whole as Redis runs it,
//! for two or three buyers that follow the sale's procedure, while an adversary chooses who
//! steps next, when time passes and leases end, and spends a stated fault budget (a pause, a
//! crash between steps, a failover that loses unreplicated writes, a clock jump).
//! Breadth-first, it answers the **shortest** schedule that breaks mutual exclusion (a unit
//! sold twice), a release (another's lock deleted) or progress (a deadlock), or "no break
//! within these bounds".
//!
//! # Layout
//! - `store`: one Redis in memory: keys, their values, their expiry on the store's clock.
//! - `commands`: the commands a lock may call, with Redis's replies; others are refused.
//! - `script`: the Lua steps on Lua 5.1, `redis.call`/`redis.pcall`, Redis's conversions.
//! - `lock`: a lock as steps: a rung's files of `static/locks/`, or a lab lock's.
//! - `world`: one state: the lock store (and its replica), the stock, the buyers, the time.
//! - `sale`: a buyer's procedure, step by step, and the stock's rules (`enter.lua`,
//!   `commit.lua`).
//! - `said`: what a step did, as data, and in words (English, Chinese).
//! - `adversary`: every choice in a state: whose step, a renewal, time passing, a fault.
//! - `judge`: what a state breaks.
//! - `bounds`: what a search covers.
//! - `search`: breadth-first to the shortest break of each property.
//! - `answer`: the answer in words or JSON, and its exit status.
//! - `ladder`: each rung's shortest break at the default bounds, in words, for the reveal and
//!   the book.
//! - `attacks`: the lab grader's rung-telling attacks as budgets, judged as the grader judges.
//! - `trace`: a schedule replayed as the events a run's history records.
//!
//! # Why a search of our own, not `stateright`
//! Stateright's checker fits the shape (breadth-first, hashed states, a path per property)
//! but not three needs here: its checker wants a `Send + Sync` model, while every transition
//! runs Lua on a state that is neither (one Lua state per search, the steps compiled once);
//! "deadlock" is judged on a state (no live buyer can touch the lock, no lease will end it, a
//! newcomer is refused), which its `eventually` properties, judged on terminal paths, do not
//! say; and the answer must tell "every state seen" from "a bound met" for the exit status.
//! The search itself is a queue, a set of 64-bit state hashes and parent links (`search.rs`).

pub mod adversary;
pub mod answer;
pub mod attacks;
pub mod bounds;
pub mod commands;
pub mod judge;
pub mod ladder;
pub mod lock;
pub mod said;
pub mod sale;
pub mod script;
pub mod search;
pub mod store;
pub mod trace;
pub mod world;

use answer::Answer;
use bounds::Bounds;
use lock::LockSource;

/// Why a lock could not be searched: a step that does not compile (its line named), a lock
/// with the wrong number of steps, or a command outside the model (named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Searches every schedule of `lock` within `bounds`.
pub fn explore(lock: &LockSource, bounds: Bounds) -> Result<Answer, Refused> {
    let machine = sale::Machine::new(lock, bounds.clone()).map_err(Refused)?;
    let searched = search::search(&machine).map_err(|e| Refused(e.to_string()))?;
    Ok(Answer::new(&lock.name, &bounds, searched))
}

/// The events of a schedule `explore` found for `lock` within `bounds`, replayed.
pub fn replay(
    lock: &LockSource,
    bounds: Bounds,
    found: &search::Found,
) -> Result<trace::Trace, Refused> {
    let machine = sale::Machine::new(lock, bounds).map_err(Refused)?;
    trace::trace(&machine, found).map_err(|e| Refused(e.to_string()))
}
