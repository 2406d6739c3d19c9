//! One state of the world the search walks: the lock store (and, when a failover may strike,
//! its replica), the resource store's stock as `sale/enter.lua` and `sale/commit.lua` keep it,
//! each client where its sale is, the time, and the faults left to spend. What moves it is
//! `sale.rs`; what is wrong with it is `judge.rs`.

use std::hash::{Hash, Hasher};

use serde::Serialize;

use crate::store::Store;

/// A fault the adversary may spend its budget on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// A client stops while time runs (a GC pause, a frozen process): its renewals too.
    Pause,
    /// A client dies between two of its steps and never comes back.
    Crash,
    /// The lock store's replica, without the writes not yet copied to it, is promoted.
    Failover,
    /// The lock store's clock jumps ahead to the next lease's end (as the fleet's clock
    /// fault moves a node's wall clock): a lease ends early for everyone.
    ClockJump,
}

impl FaultKind {
    pub const ALL: [FaultKind; 4] = [
        FaultKind::Pause,
        FaultKind::Crash,
        FaultKind::Failover,
        FaultKind::ClockJump,
    ];

    pub fn id(self) -> &'static str {
        match self {
            FaultKind::Pause => "pause",
            FaultKind::Crash => "crash",
            FaultKind::Failover => "failover",
            FaultKind::ClockJump => "clock-jump",
        }
    }

    pub fn parse(s: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.id() == s)
    }
}

/// Where a client's sale is: the sale's procedure (`src/sale/`), one round trip a step.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The next step is acquire step `step` (0-based) of attempt `attempt` (1-based).
    Acquire { step: usize, attempt: u32 },
    /// Attempt `attempt` found the lock busy: the wait loop tries again, or gives up.
    Waiting { attempt: u32 },
    /// Held: the next step is the read (`enter.lua`).
    Read,
    /// Read: the business work runs (time may pass), then the write (`commit.lua`).
    Write,
    /// The next step is release step `step`.
    Release { step: usize },
    /// The sale is over.
    Done,
}

/// How a sale ended (or will, once its release is done).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    Sold,
    SoldOut,
    /// The stock refused its token: a newer holder had read or written.
    Stale,
    /// The wait loop ran out of tries (a 503).
    GaveUp,
    /// A step of the lock failed (a Lua error): the sale's 503.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub phase: Phase,
    pub end: Option<End>,
    /// The hold's fencing token, when the acquire answered one.
    pub token: Option<u64>,
    /// The stock this client read.
    pub read: Option<i64>,
    /// When its watchdog renews next (ms, the clients' time), while it does.
    pub renewal: Option<u64>,
    pub paused: bool,
    pub crashed: bool,
}

impl Client {
    pub fn new() -> Client {
        Client {
            phase: Phase::Acquire {
                step: 0,
                attempt: 1,
            },
            end: None,
            token: None,
            read: None,
            renewal: None,
            paused: false,
            crashed: false,
        }
    }

    /// Believes it holds the lock: between its last acquire step and its first release step.
    pub fn holds(&self) -> bool {
        matches!(self.phase, Phase::Read | Phase::Write)
    }

    /// Alive, and may still send a step that changes the lock.
    pub fn may_touch_the_lock(&self) -> bool {
        !self.crashed
            && matches!(
                self.phase,
                Phase::Read
                    | Phase::Write
                    | Phase::Release { .. }
                    | Phase::Acquire { step: 1.., .. }
            )
    }

    /// May take a step of its own now.
    pub fn can_step(&self) -> bool {
        !self.crashed && !self.paused && self.phase != Phase::Done
    }
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

/// The resource store's stock, as the sale's scripts keep it: never faulted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Stock {
    pub initial: i64,
    pub left: i64,
    /// Orders acknowledged (the ledger's length).
    pub orders: i64,
    /// The highest fencing token a read or write carried.
    pub highest_token: u64,
    pub stale: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct World {
    /// The clients' time, ms.
    pub now: u64,
    /// How far the lock store's clock is ahead of the clients' (a clock jump).
    pub store_ahead: u64,
    pub store: Store,
    /// The lock store's replica as of its last copy; `None` when no failover may strike.
    pub replica: Option<Store>,
    pub clients: Vec<Client>,
    pub stock: Stock,
    pub faults_left: u32,
    /// A release deleted (or changed) a lock another holder held.
    pub foreign_release: bool,
    /// A lock step failed, with its message.
    pub failed: Option<String>,
}

impl World {
    pub fn new(clients: usize, faults: u32, replicated: bool) -> World {
        World {
            now: 0,
            store_ahead: 0,
            store: Store::new(0),
            replica: replicated.then(|| Store::new(0)),
            clients: vec![Client::new(); clients],
            stock: Stock {
                initial: clients as i64,
                left: clients as i64,
                orders: 0,
                highest_token: 0,
                stale: 0,
            },
            faults_left: faults,
            foreign_release: false,
            failed: None,
        }
    }

    /// The owner value of client `i`: `A`, `B`, `C` (the service's are UUIDs).
    pub fn owner(i: usize) -> String {
        char::from(b'A' + i as u8).to_string()
    }

    /// Moves the clients' time to `now`, and the store's with it.
    pub fn set_time(&mut self, now: u64) {
        self.now = now;
        let store_now = now + self.store_ahead;
        self.store.now_ms = store_now;
        self.store.purge();
        if let Some(replica) = &mut self.replica {
            replica.now_ms = store_now;
            replica.purge();
        }
    }

    /// Hashes what decides the world's future. With `relative`, every instant is taken from
    /// now (the same lock and clients at two instants are one state): sound for steps that
    /// never read the store's clock.
    pub fn fingerprint<H: Hasher>(&self, h: &mut H, relative: bool) {
        if !relative {
            self.now.hash(h);
            self.store_ahead.hash(h);
        }
        self.store.fingerprint(h, relative);
        if let Some(replica) = &self.replica {
            replica.fingerprint(h, relative);
        }
        for c in &self.clients {
            c.phase.hash(h);
            c.end.hash(h);
            c.token.hash(h);
            c.read.hash(h);
            c.renewal
                .map(|due| {
                    if relative {
                        due.saturating_sub(self.now)
                    } else {
                        due
                    }
                })
                .hash(h);
            c.paused.hash(h);
            c.crashed.hash(h);
        }
        self.stock.hash(h);
        self.faults_left.hash(h);
        self.foreign_release.hash(h);
        self.failed.hash(h);
    }
}
