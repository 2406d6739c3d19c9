//! The launcher: every process of a fleet started and kept running, apart from the service
//! it starts. The service serves and the launcher launches: nothing outside this tree but
//! `src/main.rs` (and the integration tests, which start fleets) names it, and where both need
//! a piece — the fleet network an instance is handed, its cuts, a node's clock offset file,
//! a member's hold-down file — the piece is the service's and the launcher uses it
//! (`crate::member`).
//!
//! Two commands launch:
//!
//! - [`up`]: `oversell up`, the whole topology as local processes, for a machine without
//!   Docker; [`fleet`]: the same as one value, for `up` and for tests.
//! - [`member`]: `oversell member`, what a compose store's container runs: its store,
//!   restarted when it exits, and the faults' acts on it served to the admin token.
//!
//! And their parts:
//!
//! - [`topology`]: ids, instance environment and nginx values, shared with the compose files.
//! - [`supervisor`]: one task per child that restarts it, as `restart: unless-stopped` does.
//! - [`process`]: process groups, signals, prefixed output, HTTP probes.
//! - [`redis_server`]: a private `redis-server` (also what the tests start), free ports, and
//!   finding a program.
//! - [`redis_nodes`]: the Redis processes of `up` (resource store, lock store, Sentinels).
//! - [`zookeeper`]: ZooKeeper servers (standalone or a 3-node ensemble) for the ZooKeeper tiers.
//! - [`nginx`]: the nginx child.
//! - [`netns`]: `--network netns`: the namespaces made, taken down, and entered by a child.
//! - [`clock_shim`]: the preload library a Redis node runs under, so its clock can jump.

pub(crate) mod clock_shim;
pub mod fleet;
pub mod member;
pub mod netns;
pub(crate) mod nginx;
pub mod process;
pub(crate) mod redis_nodes;
pub mod redis_server;
pub mod supervisor;
pub mod topology;
pub mod up;
pub mod zookeeper;
