//! # oversell
//!
//! An inventory sale whose deduct step is guarded by one of thirteen lock tiers (Redis and
//! ZooKeeper), built to show with measured numbers what each tier protects against and what it
//! does not.
//!
//! # Layout
//!
//! - [`config`]: the flags of `oversell serve` (each also an env var).
//! - [`startup`]: `Application::build` binds, wires state and serves; graceful shutdown.
//! - [`routes`]: the HTTP API: `/sale`, `/state`, `/ledger`, `/events`, `/health`,
//!   `/metrics`, `/admin/*`, and the embedded dashboard.
//! - [`sale`]: the deduct step, the articles' read-check-write, with its ground-truth scripts.
//! - [`lock`]: one file per tier behind the `Lock` trait; the shared wait loop.
//! - [`faults`]: one-shot faults armed in Redis: crash, freeze, release gap.
//! - [`feed`]: the dashboard's live feed: one poller per watched room, reading only what is
//!   new (running totals in [`feed::tally`]), fanned out to every `/events` stream.
//! - [`ground_truth`]: reading and resetting what Redis says really happened.
//! - [`fleet`]: settings and faults shared by every instance through Redis, the pub/sub
//!   subscriber, control messages (crash / freeze one instance) and the instance registry.
//! - [`keys`]: every Redis key, built from a room name.
//! - [`rooms`]: a room's life: created by admin writes under `--max-rooms`, expired when idle,
//!   and told apart when the resource store lost it (`state_lost`).
//! - The tier ids, the settings, the fault kinds, a burst's request and report, and the
//!   `/state` document are types of the `oversell-api` crate, shared with `loadtest`.
//! - [`lock_store`]: where the locks live (shared, single, Sentinel, Redlock masters), what
//!   `/state` shows of it, and its faults.
//! - [`clock_offset`]: the file that moves a Redis node's wall clock (the `clock-jump` fault).
//! - [`zookeeper`]: the ZooKeeper lock recipe (Curator's), for the ZooKeeper tiers.
//! - [`scenario_guard`]: one scenario at a time per room, fleet-wide, held with a Redis lock.
//! - [`redis_pool`]: the bb8 pool of multiplexed connections.
//! - [`redis_server`]: a private `redis-server` process (for `oversell up` and tests).
//! - [`up`]: `oversell up`, the whole topology (Redis, N supervised instances, nginx) locally.
//! - [`view`]: the room as `/state` shows it (and every `/events` state event).
//! - [`error`]: the one error type and its HTTP mapping.
//! - [`metrics`]: Prometheus counters and histograms.
//! - [`telemetry`]: tracing set-up.

pub mod clock_offset;
pub mod config;
pub mod control;
pub mod error;
pub mod faults;
pub mod feed;
pub mod fleet;
pub mod ground_truth;
pub mod keys;
pub mod lock;
pub mod lock_store;
pub mod metrics;
pub mod poller;
pub mod redis_pool;
pub mod redis_server;
pub mod rooms;
pub mod routes;
pub mod sale;
pub mod scenario_guard;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod up;
pub mod view;
pub mod zookeeper;
