//! The ZooKeeper lock recipe, on the `zookeeper-client` crate: what the `zookeeper` and
//! `zookeeper-fenced` tiers take and give back.
//!
//! # The recipe (ZooKeeper's own, and Curator's `InterProcessMutex`)
//!
//! Each contender creates an *ephemeral sequential* node under the room's lock dir,
//! `/oversell/locks/<room>/_c_<uuid>-lock-<sequence>` (Curator's naming, so a Curator client
//! would queue in the same line). The lowest sequence holds the lock. Every other contender
//! watches only the node just ahead of it, so a release wakes one waiter, not the herd. Release
//! deletes the node.
//!
//! What it guarantees: one holder at a time *while every holder's session is alive*, first come
//! first served, and no lease to tune: a holder that dies loses its node when its session times
//! out, and only then. ZooKeeper is consistent (a write is acknowledged by a quorum), so a lock
//! survives a server's crash; with no quorum it refuses, rather than answer wrongly.
//!
//! What breaks it: a holder that *pauses* (GC, SIGSTOP, a slow disk) longer than its session
//! timeout. Its session expires, its node is deleted, the next waiter takes the lock, and the
//! paused holder wakes up still believing it holds it — ZooKeeper is not immune to pauses
//! either. The fix is the same as for Redis: a fencing token checked by the resource. Here the
//! token comes free: the node's creation zxid ([`ZkHeld::czxid`]), which only grows, across
//! rooms, sessions, leader changes and a re-created lock dir. (The sequence number also grows,
//! but only per lock dir: it would restart if the dir were deleted and re-created.)
//!
//! # Where each piece is
//!
//! - `session`: the [`ZkSession`]: connecting, the session's expiry, and re-opening it.
//! - `recipe`: the recipe itself ([`ZkSession::lock`], [`ZkSession::release`],
//!   [`ZkSession::still_held`]), and why it is not the crate's own `Client::lock`.
//! - `reconnect`: a session given up in the middle of an acquire, and what the recipe makes of
//!   the node it created under the old one (CURATOR-604).
//! - `cleanup`: a `lock` cancelled at any point leaves no node behind.
//! - `naming`: the lock dirs and Curator's node names.
//! - `store`: an instance's way to ZooKeeper ([`ZkStore`]), and what `/state` shows of it
//!   (each server's mode, each room's queue).
//! - `four_letter`: what a server tells of itself outside any session (its four-letter
//!   words, and where it keeps its process id).
//! - `zk_error`: what a failed request means to a buyer.

mod cleanup;
mod four_letter;
mod naming;
mod recipe;
mod reconnect;
mod session;
mod store;
mod zk_error;

pub use four_letter::{four_letter, PID_FILE};
pub use naming::{lock_dir, LOCK_ROOT};
pub use recipe::{DeleteLoss, Released, ZkHeld};
pub use reconnect::{OldNode, Reconnect};
pub use session::{connect, ZkSession};
pub use store::{ServerModes, ZkNode, ZkStore};
pub use zk_error::ZkError;
