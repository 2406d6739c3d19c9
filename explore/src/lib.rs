//! # explore: every way a Redis lock breaks
//!
//! A deterministic model of the Redis commands a lock's steps call, and the real Lua steps
//! run on it as Redis runs them.
//!
//! # Layout
//! - `lock`: a lock as steps: a rung's files of `static/locks/`, or a lab lock's.
//! - `store`: one Redis in memory: keys, their values, their expiry on the store's clock.
//! - `commands`: the commands a lock may call, with Redis's replies; others are refused.
//! - `script`: the Lua steps on Lua 5.1, `redis.call`/`redis.pcall`, Redis's conversions.
pub mod commands;
pub mod lock;
pub mod script;
pub mod store;
