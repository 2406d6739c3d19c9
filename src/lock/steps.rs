//! A lock described as Redis steps: what a tier file states, and all it states. Each step is
//! one round trip — a command (or a few in one pipeline), or a Lua script — with how to read
//! its reply. The engine (`engine.rs`) runs the steps in order and does everything around
//! them, for the built-in tiers and the lab's locks alike.

use std::sync::Arc;
use std::time::Duration;

use crate::composed::Call;
use crate::keys::Keys;

/// A tier's Lua script, kept with its source.
pub use crate::composed::Lua;

/// A lock as steps: Redisson's three methods (`tryLockInnerAsync`, `unlockInnerAsync`,
/// `renewExpiration`), as data.
pub trait Technique: Send + Sync {
    /// The acquire steps, in order: the lock is held when the last one took it.
    fn acquire(&self, on: &On<'_>) -> Vec<Step>;
    /// The release steps, in order.
    fn release(&self, on: &On<'_>) -> Vec<Step>;
    /// The step that pushes the lease out while the lock is held, if the lock renews it.
    fn renew(&self, _on: &On<'_>) -> Option<Step> {
        None
    }
    /// Whether the same owner may take the lock again while holding it.
    fn reentrant(&self) -> bool {
        false
    }
}

/// What the steps are about: the room's keys, the holder and the lease.
pub struct On<'a> {
    pub keys: &'a Keys,
    /// The lock's value (or hash field) of this holder.
    pub owner: &'a str,
    pub ttl_ms: u64,
}

impl On<'_> {
    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms)
    }
}

/// One round trip of a lock, and how its reply is read.
#[derive(Clone)]
pub struct Step {
    pub request: Request,
    pub reply: Reply,
}

impl Step {
    /// One command.
    pub fn command(cmd: redis::Cmd, reply: Reply) -> Step {
        let mut pipe = redis::pipe();
        pipe.add_command(cmd);
        Step::commands(pipe, reply)
    }

    /// Several commands in one pipeline: one round trip, not atomic.
    pub fn commands(pipe: redis::Pipeline, reply: Reply) -> Step {
        Step {
            request: Request::Commands(pipe),
            reply,
        }
    }

    /// One Lua script: atomic.
    pub fn script(call: Call, reply: Reply) -> Step {
        Step {
            request: Request::Script(call),
            reply,
        }
    }

    /// `DEL lock`, whoever holds it.
    pub fn del() -> Step {
        Step {
            request: Request::Del,
            reply: Reply::Removed,
        }
    }
}

/// What a step sends.
#[derive(Clone)]
pub enum Request {
    /// Commands in one pipeline.
    Commands(redis::Pipeline),
    /// `DEL` of the room's lock key. Sent as `GETDEL` (`del_and_observe.lua`, which also wakes
    /// waiters), so that the ground truth can see whose lock it removed.
    Del,
    /// A script of the tier's, with its keys and arguments.
    Script(Call),
    /// A lab lock's step: a student's script, run by the lab's contract (`crate::lab`).
    Lab(Arc<crate::lab::Step>),
}

/// How a step's reply is read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reply {
    // --- acquire steps ---
    /// 1 taken, 0 busy (`SETNX`); a busy lock is held at most `busy_for` more, when known.
    Taken { busy_for: Option<Duration> },
    /// Any reply goes on (`PEXPIRE`).
    Ignored,
    /// `[taken, lease left]`: `SET … NX PX` (`OK` or nil) then `PTTL`, or a script's `{1|0, ms}`.
    TakenOrLeaseLeft,
    /// `{depth, fencing token}` when held (depth 1 fresh, 2+ re-entered), `{0, lease left}`
    /// when another owner holds it; `fenced`: the token is this hold's.
    Hold { fenced: bool },
    // --- release steps ---
    /// The value `DEL` removed (nil: none): someone else's is a foreign release.
    Removed,
    /// The lock's value (`GET`): the release goes on only if it is this holder's.
    OwnedByUs,
    /// A number that is `lost` when the release found the lock gone or someone else's.
    LostIf(i64),
    // --- renew steps ---
    /// 1 renewed, 0 the lock is no longer ours: renewing stops.
    Renewed,
    // --- the lab's steps (`crate::lab`) ---
    /// By the lab's contract: go on (acquired, renewed) or stop (busy, with the lease left).
    Contract,
    /// A lab release step's reply, with whose lock the key held before and after it.
    ContractObserved,
}
