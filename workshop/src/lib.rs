//! The oversell workshop: what the class is taught with, standing on the load generator
//! (`loadtest`) and stood on by the service.
//!
//! # Layout
//!
//! - [`scenario`]: the chapters — each tier's defect as a scenario with its expected outcome,
//!   run against a live fleet and judged from the ground truth; the question the class is asked
//!   before it runs; `scenario::command` runs the `scenario` and `curriculum` commands.
//! - [`lab`]: the grader of students' own locks: a fixed suite of attacks, each a scenario run
//!   against the room's `custom` tier, and the report card.
//! - [`course`]: `loadtest course`, the whole workshop rehearsed: every chapter in teaching
//!   order, each on the fleet it needs (started with `oversell up` or compose, then stopped),
//!   and a printable report.
//! - [`history`]: a run's whole history (JSON Lines, versioned) and the checker that reads
//!   only it: mutual exclusion, the stock, fencing, acknowledgements; the first violation
//!   drawn as an SVG, and the whole run in a viewer (`history::view`, one HTML page).
//! - [`recorder`]: a run's history put together once it is over, from the clients' requests
//!   and what the fleet recorded (the lock timeline, the ledger).
//! - [`articles`]: the five articles the chapters cite by number, with their titles.
//! - [`burst`]: a burst of buyers through a fleet, read into the API's report, for the
//!   service's `POST /admin/burst` (the one place the service has the generator fire).
//! - [`explore`]: `loadtest explore`, a lock's every schedule searched for its shortest break
//!   (the `explore` crate: the real Lua steps on a model of Redis), for a rung or a lab lock.
//! - [`cli`]: the `loadtest` binary's command line: the generator's commands (`run`,
//!   `matrix`, `hand-off`) beside the workshop's.
//!
//! Crates point one way: `oversell-api` ← `oversell-client` (reaching a fleet over HTTP) ←
//! `loadtest` (the generator) ← `workshop` ← the service (`oversell`) ← `oversell-bench`; the
//! service reaches fleets through `oversell-client` itself, and fires the generator only
//! through the workshop's own calls ([`burst`], a chapter's runner, the grader). `explore`
//! stands on `oversell-api` alone, and only the binary (the `cli` feature) stands on it.
//!
//! # Features
//!
//! `cli` (on by default) is what only the binary needs; the server depends on `workshop` with
//! `default-features = false`.

pub mod articles;
pub mod burst;
pub mod chapters;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod course;
#[cfg(feature = "cli")]
pub mod explore;
pub mod history;
pub mod lab;
#[cfg(feature = "cli")]
pub mod questions;
pub mod recorder;
pub mod scenario;

#[cfg(feature = "cli")]
pub use cli::{execute, run_cli, Cli, Command};
