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
//!   drawn as an SVG.
//! - [`recorder`]: a run's history put together once it is over, from the clients' requests
//!   and what the fleet recorded (the lock timeline, the ledger).
//! - [`fleet_client`]: what the service takes from the generator to fire a chapter's buyers
//!   or a burst and to call a fleet (one place, so the service names no generator type).
//! - [`cli`]: the `loadtest` binary's command line: the generator's commands (`run`,
//!   `matrix`, `hand-off`) beside the workshop's.
//!
//! Crates point one way: `oversell-api` ← `loadtest` (the generator) ← `workshop` ← the
//! service (`oversell`) ← `oversell-bench`.
//!
//! # Features
//!
//! `cli` (on by default) is what only the binary needs; the server depends on `workshop` with
//! `default-features = false`.

pub mod chapters;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod course;
pub mod fleet_client;
pub mod history;
pub mod lab;
#[cfg(feature = "cli")]
pub mod questions;
pub mod recorder;
pub mod scenario;

#[cfg(feature = "cli")]
pub use cli::{execute, run_cli, Cli, Command};
