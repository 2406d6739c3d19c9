//! A fleet member's supervisor (`oversell member`, the process a store's container runs): what
//! the instances ask of it over the fleet's network, and what it answers. The faults that act
//! on a store's process, clock or network use it where the store is out of this machine's
//! reach (a container), instead of a pid and a data dir.

use serde::{Deserialize, Serialize};

/// `POST /member/kill`: the process is killed (SIGKILL) and brought back after `down_ms`
/// (0: at once, as its supervisor restarts any process that exits).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kill {
    #[serde(default)]
    pub down_ms: u64,
}

/// `POST /member/pause`: the process is stopped (SIGSTOP) for `ms`, then resumed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    pub ms: u64,
}

/// `POST /member/clock`: the process' wall clock moves `add_ms` (negative: back).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockShift {
    pub add_ms: i64,
}

/// `POST /member/cut`: packets to and from `drop` (IPv4 addresses) are dropped inside the
/// member's own network namespace for `ms`, then let through again; a new cut replaces the
/// one in force. `DELETE /member/cut` heals at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cut {
    pub drop: Vec<String>,
    pub ms: u64,
}

/// What every call answers: the member as its supervisor sees it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberView {
    /// Its id in the fleet (`lock1`, `redlock3`, `zk2`).
    pub id: String,
    /// The running process; `None` while it is down.
    pub pid: Option<u32>,
    pub restarts: u32,
    /// How the last process ended (`signal 9`), if one did.
    pub last_exit: Option<String>,
    /// Its clock's offset from the real time, in ms (0 without the clock shim).
    pub clock_offset_ms: i64,
    /// Until when (unix ms) a kill keeps it down, if one does.
    pub down_until_ms: Option<u64>,
    /// What the last call did, in words (`killed pid 12, down for 8000 ms`).
    pub did: String,
}
