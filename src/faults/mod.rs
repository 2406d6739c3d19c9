//! Fault injection: the articles' failure stories, made to happen for real at the exact point
//! each one describes.
//!
//! A fault is *armed* in Redis for a room (one-shot), optionally for one instance; otherwise the
//! next holder on any instance takes it. Every instance keeps a copy of the armed faults (pushed
//! like the settings), so when nothing is armed the sale path pays no round trip for this; when
//! one is, the instance that reaches the point first claims it with one atomic script, so it
//! fires exactly once across the fleet.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use serde::{Deserialize, Serialize};

use crate::keys::Keys;
use crate::lock_store::LockStoreKind;
use crate::redis_pool::{RedisPool, StoreError};

/// Where and how a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The holder's process aborts inside the critical section, after reading the stock.
    CrashHolding,
    /// `setnx-expire` only: the process aborts after `SETNX`, before `EXPIRE`.
    CrashBeforeExpire,
    /// `uuid-owner` only: a pause of `ms` between the `GET` that saw our value and the `DEL`.
    ReleaseGap,
    /// The holder's whole process stops (SIGSTOP) for `ms` after reading the stock, before
    /// writing it, then resumes (SIGCONT from a helper process).
    Freeze,
    /// Lock store `sentinel` only: the next holder's lock is written while the primary's
    /// replica link is cut, then the primary is killed and Sentinel promotes the replica,
    /// which never saw the lock.
    Failover,
    /// Lock store `single` only: the store's Redis is killed right after the next acquire and
    /// restarted by its supervisor with its persistence setting.
    LockStoreRestart,
    /// Lock store `redlock` only: `nodes` masters (default: a minority) are killed and stay
    /// down for `ms`.
    NodeDown,
    /// Lock store `redlock` only: the next holder's lock stands on a bare majority (the rest
    /// are cut off by a one-second crash during its acquire), and right after the acquire one
    /// master that granted it is killed and restarted with its persistence setting: the
    /// restart-without-fsync case of the Redlock debate.
    NodeRestart,
    /// Lock store `redlock` only: right after the next acquire, the wall clock of `nodes`
    /// masters that granted it (default: a majority) jumps `ms` forward, so the lock expires
    /// there early.
    ClockJump,
    /// ZooKeeper only: as the next buyer queues, `nodes` ZooKeeper servers (default 1) are
    /// killed and stay down for `ms`.
    ZkNodeDown,
}

impl FaultKind {
    pub const ALL: [FaultKind; 10] = [
        FaultKind::CrashHolding,
        FaultKind::CrashBeforeExpire,
        FaultKind::ReleaseGap,
        FaultKind::Freeze,
        FaultKind::Failover,
        FaultKind::LockStoreRestart,
        FaultKind::NodeDown,
        FaultKind::NodeRestart,
        FaultKind::ClockJump,
        FaultKind::ZkNodeDown,
    ];

    pub fn id(self) -> &'static str {
        match self {
            FaultKind::CrashHolding => "crash-holding",
            FaultKind::CrashBeforeExpire => "crash-before-expire",
            FaultKind::ReleaseGap => "release-gap",
            FaultKind::Freeze => "freeze",
            FaultKind::Failover => "failover",
            FaultKind::LockStoreRestart => "lock-store-restart",
            FaultKind::NodeDown => "node-down",
            FaultKind::NodeRestart => "node-restart",
            FaultKind::ClockJump => "clock-jump",
            FaultKind::ZkNodeDown => "zk-node-down",
        }
    }

    /// The lock store a fault needs, when it strikes the store itself.
    pub fn needs_lock_store(self) -> Option<LockStoreKind> {
        match self {
            FaultKind::Failover => Some(LockStoreKind::Sentinel),
            FaultKind::LockStoreRestart => Some(LockStoreKind::Single),
            FaultKind::NodeDown | FaultKind::NodeRestart | FaultKind::ClockJump => {
                Some(LockStoreKind::Redlock)
            }
            _ => None,
        }
    }

    /// Whether the fault strikes ZooKeeper's servers.
    pub fn needs_zookeeper(self) -> bool {
        self == FaultKind::ZkNodeDown
    }

    /// Whether the fault strikes where the locks live (a Redis lock store or ZooKeeper), not
    /// an instance: the claimant strikes around its acquire, and other buyers wait for it.
    pub fn strikes_lock_store(self) -> bool {
        self.needs_lock_store().is_some() || self.needs_zookeeper()
    }

    /// Whether the fault needs a duration (for `clock-jump`: how far the clock jumps).
    pub fn takes_ms(self) -> bool {
        matches!(
            self,
            FaultKind::ReleaseGap
                | FaultKind::Freeze
                | FaultKind::NodeDown
                | FaultKind::ClockJump
                | FaultKind::ZkNodeDown
        )
    }

    /// Whether the fault strikes a number of servers (`nodes`): Redlock masters, or
    /// ZooKeeper servers.
    pub fn takes_nodes(self) -> bool {
        matches!(
            self,
            FaultKind::NodeDown | FaultKind::ClockJump | FaultKind::ZkNodeDown
        )
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for FaultKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        FaultKind::ALL
            .into_iter()
            .find(|k| k.id() == s)
            .ok_or_else(|| {
                let valid: Vec<_> = FaultKind::ALL.iter().map(|k| k.id()).collect();
                format!("unknown fault `{s}`; valid faults: {}", valid.join(", "))
            })
    }
}

/// An armed fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// Duration for `release-gap`, `freeze` and `node-down`, the jump of `clock-jump`; 0
    /// otherwise.
    pub ms: u64,
    /// The instance it targets; `None` = the next holder anywhere.
    pub instance: Option<String>,
    /// How many Redlock masters `node-down` and `clock-jump` strike; 0 = their default.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nodes: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Fault {
    fn matches(&self, kind: FaultKind, instance: &str) -> bool {
        self.kind == kind && self.instance.as_deref().is_none_or(|i| i == instance)
    }

    /// The stored form: `<instance or *>|<ms>|<nodes>` in the room's fault hash, field = kind.
    fn encode(&self) -> String {
        let instance = self.instance.as_deref().unwrap_or("*");
        format!("{instance}|{}|{}", self.ms, self.nodes)
    }

    /// Reads the stored form; `<instance>|<ms>` (before `nodes` existed) still reads.
    fn decode(kind: &str, value: &str) -> Option<Fault> {
        let mut parts = value.split('|');
        let (instance, ms) = (parts.next()?, parts.next()?);
        let nodes = parts.next().map_or(Some(0), |n| n.parse().ok())?;
        Some(Fault {
            kind: kind.parse().ok()?,
            ms: ms.parse().ok()?,
            instance: (instance != "*").then(|| instance.to_owned()),
            nodes,
        })
    }
}

/// Decodes the room's fault hash (as read by `HGETALL`).
pub fn decode_all(fields: &[(String, String)]) -> Vec<Fault> {
    fields
        .iter()
        .filter_map(|(kind, value)| Fault::decode(kind, value))
        .collect()
}

pub async fn arm(redis: &RedisPool, keys: &Keys, fault: &Fault) -> Result<(), StoreError> {
    let mut conn = redis.conn().await?;
    let _: () = redis::cmd("HSET")
        .arg(keys.faults())
        .arg(fault.kind.id())
        .arg(fault.encode())
        .query_async(&mut conn)
        .await?;
    Ok(())
}

pub async fn clear(redis: &RedisPool, keys: &Keys) -> Result<(), StoreError> {
    let mut conn = redis.conn().await?;
    let _: () = redis::cmd("DEL")
        .arg(keys.faults())
        .query_async(&mut conn)
        .await?;
    Ok(())
}

static CLAIM: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("claim.lua")));

/// How long a claimed lock-store fault is marked pending at most: the other buyers wait that
/// long for it to strike the next holder (see `sale`).
pub const STORE_FAULT_PENDING: Duration = Duration::from_secs(3);

/// The faults one sale may meet: the armed copy this instance holds, and how to claim one.
pub struct FaultPoints<'a> {
    pub armed: &'a [Fault],
    pub redis: &'a RedisPool,
    pub keys: &'a Keys,
    pub instance: &'a str,
}

impl FaultPoints<'_> {
    /// Whether a fault of this kind is armed for this instance (the local copy; no round trip).
    pub fn is_armed(&self, kind: FaultKind) -> bool {
        self.armed.iter().any(|f| f.matches(kind, self.instance))
    }

    /// Claims the fault of this kind if one is armed for us; only one claimant ever wins.
    pub async fn claim(&self, kind: FaultKind) -> Option<Fault> {
        if !self.armed.iter().any(|f| f.matches(kind, self.instance)) {
            return None; // the usual case: nothing armed, no round trip
        }
        let claimed = async {
            let mut conn = self.redis.conn().await?;
            let pending = match kind.strikes_lock_store() {
                true => STORE_FAULT_PENDING.as_millis().to_string(),
                false => String::new(),
            };
            let value: Option<String> = CLAIM
                .key(self.keys.faults())
                .key(self.keys.store_fault_pending())
                .arg(kind.id())
                .arg(self.instance)
                .arg(crate::keys::CONTROL_CHANNEL)
                .arg(crate::control::Control::reload(self.keys.room()).to_json())
                .arg(pending)
                .invoke_async(&mut conn)
                .await?;
            Ok::<_, StoreError>(value)
        }
        .await;
        match claimed {
            Ok(Some(value)) => {
                let fault = Fault::decode(kind.id(), &value)?;
                tracing::warn!(fault = %kind, ms = fault.ms, instance = self.instance, "fault fires");
                Some(fault)
            }
            Ok(None) => None,
            Err(err) => {
                tracing::warn!(%err, "could not claim a fault");
                None
            }
        }
    }
}

/// Aborts the whole process, as a crash would: no cleanup, no lock release.
pub fn crash(reason: &str) -> ! {
    eprintln!("fault: crashing on purpose ({reason})");
    std::process::abort()
}

/// Stops the whole process for `duration` with a real SIGSTOP; a helper process sends the
/// SIGCONT. Every thread stops, the lock watchdog included, exactly like a long GC pause.
pub fn freeze(duration: Duration) {
    let pid = std::process::id();
    let secs = format!("{:.3}", duration.as_secs_f64());
    let helper = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("sleep {secs}; kill -CONT {pid}"))
        .spawn();
    match helper {
        Ok(mut child) => {
            tracing::warn!(
                ms = duration.as_millis() as u64,
                "fault: freezing the whole process"
            );
            // SAFETY: raising a signal on our own process has no memory-safety preconditions.
            unsafe {
                libc::raise(libc::SIGSTOP);
            }
            // Resumed: reap the helper so it does not linger as a zombie.
            std::thread::spawn(move || child.wait());
        }
        Err(err) => tracing::error!(%err, "cannot freeze: no helper process to resume us"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_round_trips_through_its_stored_form() {
        let fault = Fault {
            kind: FaultKind::Freeze,
            ms: 1500,
            instance: Some("app2".into()),
            nodes: 0,
        };
        assert_eq!(
            Fault::decode("freeze", &fault.encode()),
            Some(fault.clone())
        );
        let anyone = Fault {
            instance: None,
            ..fault
        };
        assert_eq!(
            Fault::decode("freeze", &anyone.encode()),
            Some(anyone.clone())
        );
        assert!(anyone.matches(FaultKind::Freeze, "app7"));
        assert!(!anyone.matches(FaultKind::CrashHolding, "app7"));
        let jump = Fault {
            kind: FaultKind::ClockJump,
            ms: 30_000,
            instance: None,
            nodes: 3,
        };
        assert_eq!(Fault::decode("clock-jump", &jump.encode()), Some(jump));
        let older = Fault::decode("freeze", "app1|200").unwrap();
        assert_eq!((older.ms, older.nodes), (200, 0));
    }

    #[test]
    fn unknown_fault_lists_the_valid_ones() {
        let err = "explode".parse::<FaultKind>().unwrap_err();
        assert!(
            err.contains("crash-holding") && err.contains("freeze"),
            "{err}"
        );
    }
}
