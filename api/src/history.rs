//! A run's history as JSON Lines, version 2: one object a line, each with a `type`. The first
//! line is the `run`; then, in any order, every `request` the clients made, every critical
//! `section` the resource store saw, every `lease` the lock granted, every `fault` struck, any
//! `cut` (a part that could not be kept whole, said, never silent), and last the `end`.
//!
//! All times are microseconds since the Unix epoch. Which clock each kind of time is on is
//! named in the `run` line (`clocks`): requests on the client's, sections and leases on the
//! resource store's (Redis `TIME`), faults on the clock of whoever struck them; and, from v2,
//! how far apart those clocks were measured to be during the run (`clocks.bound_us`). On one
//! host the clocks are one; across hosts times on two clocks compare only within the bound.
//!
//! What v2 changed: each `lease` says where it came from (`source`): stamped by the lock store
//! itself in the step's own script, on its clock, with the deadline it set (`store`), or derived
//! from the section it guarded (`derived`, all a v1 file has); a lease records a release the
//! store refused (`refused_release_us`); and the run measures the clocks' bound. A v1 file is
//! still read: its leases are derived, and it states no bound.
//!
//! The JSON Schema of this format is `workshop/history.schema.json`; a change to the format is
//! a new `v`. Written by the service (`GET /admin/runs/{id}/history`) and the recorder, read by
//! the checker (`workshop/src/history/`): a contract between the two sides, so it lives here.

use serde::{Deserialize, Serialize};

/// The format's version, on the `run` line.
pub const VERSION: u32 = 2;

/// The versions a reader still reads: v1 (leases derived, no clock bound) and this one.
pub const READS: [u32; 2] = [1, VERSION];

/// One line of a history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Run(Run),
    Request(Request),
    Section(Section),
    Lease(Lease),
    Fault(Fault),
    Cut(Cut),
    End(End),
}

/// What was run: the first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The format's version ([`VERSION`]).
    pub v: u32,
    pub id: String,
    pub room: String,
    /// The chapter run, or `null` for a plain `loadtest run`.
    pub chapter: Option<String>,
    pub tier: String,
    /// The stock before the first request.
    pub stock: i64,
    pub ttl_ms: u64,
    pub business_ms: u64,
    pub clocks: Clocks,
}

/// Which clock each kind of time is on, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    pub request: String,
    pub section: String,
    pub lease: String,
    pub fault: String,
    /// How far apart any two of these clocks may be (µs), measured during the run (each
    /// store's `TIME` read at its start and its end, on the client's clock around the call:
    /// the offset seen plus half the round trip, the larger of the two): a moment on one clock
    /// is known on another only within this. Absent: not measured (v1 files never state it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_us: Option<u64>,
}

/// One buyer's call and what it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub buyer: String,
    /// Items asked for.
    #[serde(default = "one")]
    pub qty: u32,
    pub call_us: i64,
    pub return_us: i64,
    /// The HTTP status; 0 when no answer came (a timeout, a dropped connection).
    pub status: u16,
    /// From the answer, where it had them.
    pub order_id: Option<String>,
    pub stock_left: Option<i64>,
    pub fence: Option<u64>,
    pub instance: Option<String>,
}

fn one() -> u32 {
    1
}

/// A critical section as the resource store saw it: entered with a read of the stock, left
/// with a write (or none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// The lock owner (a holder's id, unique per acquisition).
    pub owner: String,
    pub instance: String,
    pub enter_us: i64,
    /// `null` while open: a holder that never left (it crashed, or the run ended first).
    pub exit_us: Option<i64>,
    pub fence: Option<u64>,
    /// The order this section sold (its ledger entry), when it sold.
    pub order_id: Option<String>,
    /// The buyer of that order, when it sold (how an unanswered request is settled).
    pub buyer: Option<String>,
    /// Items it sold.
    pub qty: Option<u32>,
    /// The stock it read at the enter, and the stock it wrote at the exit (`null`: none).
    pub read: Option<i64>,
    pub wrote: Option<i64>,
    pub outcome: Outcome,
}

/// How a section ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It wrote the stock and its order went into the ledger.
    Sold,
    /// It read a stock too short and wrote nothing.
    SoldOut,
    /// Its write was refused: its fence was older than one already seen.
    StaleRefused,
    /// Its holder died inside it.
    Crashed,
    /// Still open when the history was read.
    Open,
    /// An admin reset the room under it: nothing written.
    Reset,
}

/// A lease the lock granted: when, until when, each renewal, and its release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    pub owner: String,
    pub granted_us: i64,
    /// `null` for a lock with no lease (it is held until released: `setnx`, a session lock),
    /// or, stamped by the store, one granted with none yet (`setnx-expire`'s first step: its
    /// first renewal sets one).
    pub deadline_us: Option<i64>,
    #[serde(default)]
    pub renewals: Vec<Renewal>,
    /// `null` when never released (it ran out, or its holder died).
    pub released_us: Option<i64>,
    /// When a release found the lock no longer this owner's (gone, or another's), and the
    /// store refused it: the moment the holder learned it had lost the lock.
    #[serde(default)]
    pub refused_release_us: Option<i64>,
    /// Where this lease came from. Absent (v1): derived.
    #[serde(default)]
    pub source: LeaseSource,
}

/// Where a lease's times came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseSource {
    /// Stamped by the lock store in the step's own script, on the lock store's clock (the
    /// resource store's: the two are one where a tier stamps), with the deadline the store
    /// set. An expiry is known as that deadline, not as a moment: Redis expires keys lazily.
    Store,
    /// Derived from the section it guarded: granted at its enter, the TTL from then and from
    /// each renewal, released at its exit (where a tier's store stamps no lease of its own).
    #[default]
    Derived,
}

/// A lease renewed at `renew_us`, to run until `deadline_us`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Renewal {
    pub renew_us: i64,
    pub deadline_us: i64,
}

/// A fault as a mark on the timeline: what, on whom, from when to when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    /// The fault kind as the API names it (`freeze`, `crash-holding`, `release-gap`, …).
    pub kind: String,
    /// The instance or member it struck.
    pub target: String,
    pub from_us: i64,
    /// `null` for an instant (a crash) or a fault not yet over.
    pub to_us: Option<i64>,
}

/// A part of the history that could not be kept whole, and why: what follows it is not all
/// there was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    /// Which kind of line is incomplete: `request`, `section`, `lease` or `fault`.
    pub what: String,
    pub reason: String,
}

/// After the run: the stock as read once every request had its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub at_us: i64,
    /// The stock read after the run; `null` when it could not be read.
    pub stock: Option<i64>,
}
