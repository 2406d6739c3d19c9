//! # oversell
//!
//! An inventory sale whose deduct step is guarded by one of sixteen lock tiers (Redis,
//! ZooKeeper and PostgreSQL), built to show with measured numbers what each tier protects against and what it
//! does not.
//!
//! # Layout
//!
//! Modules are crate-private unless the binary or the integration tests start something
//! with them (`config`, `startup`, `launch`, `lock_store`, `zookeeper_recipe`, `telemetry`,
//! `client_limit`),
//! or the serial-floor bench sends what the service sends with them (`composed`), so the
//! compiler reports whatever nothing uses. No two files share a name (`mod.rs` aside), so a
//! file's name says which one it is: `error.rs` is [`error`], ZooKeeper's own is
//! `zookeeper_recipe/zk_error.rs`; the `partition` routes are `routes/partition.rs`, the cut
//! a holder meets `lock/faulty/partition.rs`; the launcher's process plumbing is
//! `launch/process.rs`, a member's process found on this machine `member/local_process.rs`.
//!
//! - [`config`]: the flags of `oversell serve` (each also an env var).
//! - [`startup`]: `Application::build` binds, wires state and serves; graceful shutdown.
//! - [`routes`]: the HTTP API: `/sale`, `/state`, `/ledger`, `/events`, `/health`,
//!   `/metrics`, `/admin/*`, and the embedded dashboard.
//! - [`sale`]: the deduct step, the articles' read-check-write, with its ground-truth scripts;
//!   `sale/mod.rs` reads it top to bottom, the read, the write and the cohort path beside it.
//! - [`composed`]: the scripts a sale sends back to back, run as one script in one round trip.
//! - [`lock`]: one file per tier behind the `Lock` trait; the Redis tiers and the lab's locks
//!   as step lists, run by one engine; the shared wait loop; the fault layer (`lock/faulty/`)
//!   that a room with faults armed gets around its lock, the one hook between the steps.
//! - [`faults`]: one-shot faults armed in Redis: crash, freeze, release gap.
//! - [`feed`]: the dashboard's live feed: one poller per watched room, reading only what is
//!   new (running totals in [`feed::tally`]), fanned out to every `/events` stream.
//! - [`ground_truth`]: reading and resetting what Redis says really happened.
//! - [`fleet_sync`]: settings and faults shared by every instance through Redis, the pub/sub
//!   subscriber, control messages (crash / freeze one instance) and the instance registry.
//! - [`keys`]: every Redis key, built from a room name.
//! - [`histories`]: the last runs' histories of each room, for `GET /admin/runs/{id}/history`.
//! - [`rooms`]: a room's life: created by admin writes under `--max-rooms`, expired when idle,
//!   and told apart when the resource store lost it (`state_lost`).
//! - The tier ids, the settings, the fault kinds, a burst's request and report, and the
//!   `/state` document are types of the `oversell-api` crate, shared with `loadtest`.
//! - [`member`]: the acts a store fault does on a member's process (kill, keep down, pause,
//!   move its clock, cut its links): on this machine by pid (`local_process`), or on compose
//!   through the member's supervisor (`oversell member`), which the store's container runs;
//!   the fleet's network as an instance is handed it, and the `partition` fault's drops
//!   between members.
//! - [`lock_store`]: where the locks live (shared, single, Sentinel, Redlock masters), what
//!   `/state` shows of it, and its faults.
//! - [`zookeeper_recipe`]: the ZooKeeper lock recipe (Curator's), for the ZooKeeper tiers: the
//!   session (connecting, expiry, re-opening), the recipe and its clean-up, and what `/state`
//!   shows of it. (The tier is `lock/tiers/zookeeper.rs`; the servers `oversell up` runs, the
//!   launcher's `zookeeper_servers`.)
//! - [`pg_store`]: PostgreSQL's sessions, for the database tiers (`lock/tiers/postgres.rs`): a
//!   database lock is a session's, so a session is closed, never pooled back, when a hold ends
//!   without a confirmed release. (The server `oversell up` runs is the launcher's
//!   `postgres_server`.)
//! - [`lab`]: a room's own lock, its steps students' Lua (the `custom` tier), run as a Redis
//!   ACL user of the room's on a lock store apart from the stock; its grader.
//! - [`room_tokens`]: a key to one room each (stored as digests), for the students of a class,
//!   and the short join code on its slip that gets a student who lost the tab back in.
//! - [`poll`]: the class vote: a chapter's question voted on from the students' phones before
//!   it runs, revealed beside the run's figures; one watcher per instance for its streams.
//! - [`viewers`]: open dashboards per room over the whole fleet, for the class page.
//! - [`grading_queue`]: the lab's gradings as one fleet-wide line, a few rooms at a time.
//! - [`scenario_guard`]: one scenario at a time per room, fleet-wide, held with a Redis lock.
//! - [`redis_pool`]: the bb8 pool of multiplexed connections; beside it its connection kinds,
//!   how long an answer may take, Sentinel and cluster routing, and what a failure means.
//! - [`class_setup`]: making a class from the command line (`up --class`, `oversell class`),
//!   the files its tokens and slips are kept in (owner-only), the slips themselves (a
//!   printable page: QR code, link and code per room), and reading the class a fleet already
//!   has (`up` started again on its class dir).
//! - [`view`]: the room as `/state` shows it (and every `/events` state event).
//! - [`client_limit`]: each instance's own per-client request limit, behind nginx's.
//! - [`error`]: the one error type and its HTTP mapping.
//! - [`metrics`]: Prometheus counters and histograms.
//! - [`telemetry`]: tracing set-up.
//!
//! The service serves; the launcher launches. [`launch`] starts the processes of a fleet and
//! keeps them running: `oversell up` (the whole topology — Redis, N supervised instances,
//! nginx — as local processes, its class kept in a class dir across its own restarts),
//! `oversell member` (a compose store's supervisor), `oversell doctor` (what this machine
//! lacks for `up`), and what starting them takes: supervision, the namespaces of `--network netns`, a private
//! `redis-server`, ZooKeeper servers, the clock shim. No service module names it (a test in
//! `launch` checks): where both sides need a piece, such as the fleet network an instance is
//! handed or a node's clock offset file, it is the service's ([`member`]) and the launcher
//! uses it.

// The tour above links crate-private modules: `cargo doc --document-private-items` shows them.
#![allow(rustdoc::private_intra_doc_links)]

pub mod class_setup;
pub mod client_limit;
pub mod composed;
pub mod config;
pub(crate) mod control;
pub(crate) mod error;
pub(crate) mod faults;
pub(crate) mod feed;
pub(crate) mod fleet_sync;
pub(crate) mod grading_queue;
pub(crate) mod ground_truth;
pub(crate) mod histories;
pub(crate) mod keys;
pub(crate) mod lab;
pub mod launch;
pub(crate) mod lock;
pub mod lock_store;
pub mod member;
pub(crate) mod metrics;
pub(crate) mod pg_store;
pub(crate) mod poll;
pub(crate) mod poller;
pub(crate) mod redis_pool;
pub(crate) mod room_tokens;
pub(crate) mod rooms;
pub(crate) mod routes;
pub(crate) mod sale;
pub(crate) mod scenario_guard;
pub mod startup;
pub(crate) mod state;
pub mod telemetry;
pub(crate) mod view;
pub(crate) mod viewers;
pub mod zookeeper_recipe;
