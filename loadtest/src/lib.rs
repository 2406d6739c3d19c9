//! `loadtest` fires buyers at an oversell fleet and reports what each lock tier really did: the
//! load generator, and nothing else. The chapters, the questions, the grader and the course
//! stand on it in the `workshop` crate, which also builds the `loadtest` binary (this crate's
//! `run`, `matrix` and `hand-off` beside the workshop's `scenario`, `curriculum`, `course`,
//! `lab` and `check`).
//!
//! # Layout
//!
//! The crate is cut by pipeline stage, like hatoo/oha:
//!
//! - [`args`]: the flags several commands share (target, language) and their value parsers.
//! - [`cli`]: flags (clap derive) and value parsers (`10k`, `30s`, `2k/s`), turned into a
//!   [`Load`] or [`MatrixOptions`]; [`execute`] runs the `run` and `matrix` commands.
//! - The targets, one-shot calls, the admin client and free ports are the fleet client's
//!   (`oversell_client`), which the service stands on too, apart from this crate.
//! - [`worker`]: the one generic worker and [`fire`], which runs a pool of them under a load
//!   model (burst, closed loop, open loop) sharing an atomic request budget. [`burst`] is the
//!   short form the server and scenarios call. A failure of the generator itself (a thread
//!   that cannot start, a worker that panics) is an error, never a panic in the caller. The
//!   worker's loop is `worker/mod.rs`; beside it the shapes as data (`load`), how each shape
//!   hands out request slots (`schedule`), `burst`, what a run's workers share (`plan`) and
//!   the pool on its threads (`pool`).
//! - [`http`]: the lean HTTP/1.1 connection each worker drives.
//! - [`stats`]: per-worker tallies merged into one [`RunStats`] (HDR histogram of latencies,
//!   status counts, connection errors, timeouts).
//! - [`hand_off`]: how fast the lock hands over, from the ledger's store-stamped times of every
//!   sold section (`GET /ledger`, read after the run); [`fairness`]: how evenly the clients
//!   (workers) shared the sales, Jain's index among them.
//! - [`matrix`]: reset → switch tier → burst → read the truth, one [`MatrixRow`] per tier.
//! - [`report`]: printers — text and JSON for a run; table, JSON, CSV and SVG for the matrix;
//!   a chart per tier of its hand-offs and acquires per client.
//! - [`progress`]: where a run reports how far it got ([`Progress`]; [`Silent`] draws
//!   nothing), and the binary's live bar, drawn only when stdout is a terminal.
//!
//! The binary (the workshop's) parses the flags and hands this crate's commands to
//! [`execute_command`]; tests call [`run_cli`] with the same arguments and read the printed
//! text (e.g. the matrix `--json`).
//!
//! # Features
//!
//! `cli` (on by default) is what only the binary needs: clap and the [`cli`] module,
//! [`execute`] and [`run_cli`], the printers of [`report`] and the live progress bar
//! (indicatif). The core above builds without it: the workshop crate, and through it the
//! server, fire bursts and chapters from a request handler.

#[cfg(feature = "cli")]
pub mod args;
#[cfg(feature = "cli")]
pub mod cli;
pub mod fairness;
pub mod hand_off;
pub mod http;
pub mod inside_split;
pub mod matrix;
pub mod progress;
#[cfg(feature = "cli")]
pub mod report;
pub mod spread;
pub mod stats;
pub mod store_counts;
pub mod worker;

#[cfg(feature = "cli")]
pub use cli::{execute, execute_command, run_cli, Cli, Command};
pub use matrix::{run_matrix, MatrixOptions, MatrixReport, MatrixRow};
#[cfg(feature = "cli")]
pub use progress::Bar;
pub use progress::{Progress, Silent};
pub use stats::{Exchange, RunStats};
pub use worker::{burst, fire, BurstOptions, Load, Model, RequestSpec, Stop, MAX_KEPT_ANSWERS};
