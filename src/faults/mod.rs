//! Fault injection: the articles' failure stories, made to happen for real at the exact point
//! each one describes.
//!
//! A fault is *armed* in Redis for a room (one-shot), optionally for one instance; otherwise the
//! next holder on any instance takes it. Every instance keeps a copy of the armed faults (pushed
//! like the settings), so when nothing is armed the sale path pays no round trip for this; when
//! one is, the instance that reaches the point first claims it with one atomic script, so it
//! fires exactly once across the fleet.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

pub use oversell_api::{Fault, FaultKind};

/// The stored form: `<instance or *>|<ms>|<nodes>|<isolate, comma-separated>` in the room's
/// fault hash, field = kind. Member ids hold no `|` or `,` (they are `app1`, `lock2`, …).
fn encode(fault: &Fault) -> String {
    let instance = fault.instance.as_deref().unwrap_or("*");
    let isolate = fault.isolate.join(",");
    format!("{instance}|{}|{}|{isolate}", fault.ms, fault.nodes)
}

/// Reads the stored form; `<instance>|<ms>` (before `nodes` existed) still reads.
fn decode(kind: &str, value: &str) -> Option<Fault> {
    let mut parts = value.split('|');
    let (instance, ms) = (parts.next()?, parts.next()?);
    let nodes = parts.next().map_or(Some(0), |n| n.parse().ok())?;
    let isolate: Vec<_> = parts
        .next()
        .unwrap_or("")
        .split(',')
        .filter(|id| !id.is_empty())
        .map(|id| id.to_owned().into())
        .collect();
    Some(Fault {
        kind: kind.parse().ok()?,
        ms: ms.parse().ok()?,
        instance: (instance != "*").then(|| instance.to_owned()),
        nodes,
        isolate: isolate.into(),
    })
}

/// Decodes the room's fault hash (as read by `HGETALL`).
pub fn decode_all(fields: &[(String, String)]) -> Vec<Fault> {
    fields
        .iter()
        .filter_map(|(kind, value)| decode(kind, value))
        .collect()
}

pub async fn arm(redis: &RedisPool, keys: &Keys, fault: &Fault) -> Result<(), StoreError> {
    let mut conn = redis.conn().await?;
    let _: () = redis::cmd("HSET")
        .arg(keys.faults())
        .arg(fault.kind.id())
        .arg(encode(fault))
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
    pub resource: &'a RedisPool,
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
            let mut conn = self.resource.conn().await?;
            let pending = match kind.strikes_lock_store() {
                true => STORE_FAULT_PENDING.as_millis().to_string(),
                false => String::new(),
            };
            let value: Option<String> = CLAIM
                .key(self.keys.faults())
                .key(self.keys.store_fault_pending())
                .key(self.keys.timeline())
                .key(self.keys.stock())
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
                let fault = decode(kind.id(), &value)?;
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

/// Keeps every worker of the current runtime busy with CPU-bound work for `duration`: one
/// task per worker that spins and never yields, so no other task of the process (a lease
/// renewal, a sale, an answer) is polled until they end. Returns when they have.
pub async fn starve_runtime(duration: Duration) {
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    let until = std::time::Instant::now() + duration;
    tracing::warn!(
        ms = duration.as_millis() as u64,
        workers,
        "fault: starving the runtime of CPU"
    );
    let hogs: Vec<_> = (0..workers)
        .map(|_| {
            tokio::spawn(async move {
                while std::time::Instant::now() < until {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    for hog in hogs {
        let _ = hog.await;
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
            isolate: Default::default(),
        };
        assert_eq!(decode("freeze", &encode(&fault)), Some(fault.clone()));
        let anyone = Fault {
            instance: None,
            ..fault
        };
        assert_eq!(decode("freeze", &encode(&anyone)), Some(anyone.clone()));
        assert!(anyone.matches(FaultKind::Freeze, "app7"));
        assert!(!anyone.matches(FaultKind::CrashHolding, "app7"));
        let jump = Fault {
            kind: FaultKind::ClockJump,
            ms: 30_000,
            instance: None,
            nodes: 3,
            isolate: Default::default(),
        };
        assert_eq!(decode("clock-jump", &encode(&jump)), Some(jump));
        let cut = Fault {
            isolate: vec!["lock-primary".into(), "app1".into()].into(),
            ..Fault::new(FaultKind::Partition, 9_000)
        };
        assert_eq!(decode("partition", &encode(&cut)), Some(cut.clone()));
        let older = decode("freeze", "app1|200").unwrap();
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
