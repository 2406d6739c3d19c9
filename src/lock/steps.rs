//! A lock described as Redis steps: what a tier file states, and all it states. Each step is
//! one round trip, one Lua script: a built-in tier's is a file of `static/locks/<tier>/` (the
//! very file the lab offers as that rung), a lab lock's is a student's. Both are read by the
//! lab's contract (`crate::lab`). The engine (`engine.rs`) runs the steps in order and does
//! everything around them, for the built-in tiers and the lab's locks alike.

use std::sync::Arc;

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
    /// Whether the steps keep a queue of waiters in the store and serve it in order.
    fn queues(&self) -> bool {
        false
    }
    /// The list the release pushes to when it is `on.owner`'s turn, if the steps call their
    /// queued waiters by name that way: the waiter's next attempt can wait in the store
    /// behind a blocking pop of it (`parked.rs`).
    fn call_key(&self, _on: &On<'_>) -> Option<String> {
        None
    }
}

/// What the steps are about: the room's keys, the holder and the lease.
pub struct On<'a> {
    pub keys: &'a Keys,
    /// The lock's value (or hash field) of this holder.
    pub owner: &'a str,
    pub ttl_ms: u64,
    /// How much longer this buyer will wait for the lock, in ms: how long a queue may keep
    /// its place (`fair`).
    pub wait_ms: u64,
}

/// One round trip of a lock, and how its reply is read.
#[derive(Clone)]
pub struct Step {
    pub request: Request,
    pub reply: Reply,
}

impl Step {
    /// An acquire step: one script, its reply read by the lab's contract (`1` goes on, `0` or
    /// `{0, lease left}` busy, `{depth, token}` held).
    pub fn acquire(call: Call) -> Step {
        Step {
            request: Request::Script(call),
            reply: Reply::Contract,
        }
    }

    /// A release step: one script, `1` goes on to the next step and `0` stops; the engine
    /// looks at whose lock the key held before and after it (`send.rs`).
    pub fn release(call: Call) -> Step {
        Step {
            request: Request::Script(call),
            reply: Reply::ContractObserved,
        }
    }

    /// A renew step: one script, `1` renewed, `0` the lock is gone and renewing stops.
    pub fn renew(call: Call) -> Step {
        Step {
            request: Request::Script(call),
            reply: Reply::Contract,
        }
    }
}

/// What a step sends.
#[derive(Clone)]
pub enum Request {
    /// A script of the tier's (a file of `static/locks/<tier>/`), with its keys and arguments.
    Script(Call),
    /// A lab lock's step: a student's script, run by the lab's contract (`crate::lab`).
    Lab(Arc<crate::lab::Step>),
}

/// How a step's reply is read: by the lab's contract (`crate::lab`), a built-in tier's as a
/// student's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reply {
    /// An acquire or renew step: go on (taken at a depth, with a fencing token or none;
    /// renewed) or stop (busy, with the lease left when known; gone).
    Contract,
    /// A release step's reply, with whose lock the key held before and after it.
    ContractObserved,
}
