//! The lock tiers behind one small interface ([`Lock`]: one attempt, `try_acquire`, and
//! `release`), each in its own file opening with what it guarantees and what breaks it.
//!
//! The Redis tiers (`setnx` … `fenced`, `fair` among them) and the lab's locks (`custom`) are step lists
//! (`steps.rs`): the Lua script of each step, in order, read by the lab's contract. A Redis
//! tier's scripts are the files of `static/locks/<tier>/`, the lab's presets for that rung,
//! included as they are (the tests below hold them to it). One
//! engine runs them all (`engine.rs`): it sends the steps, rides them with the sale's own
//! scripts when they share a server (`riding.rs`), waits for replicas, renews a lease with a
//! renew step (`renewals.rs`), strikes the fault points between steps, and records what a
//! release saw. The tiers that are not step lists (`none`, `local`, `redlock`, `zookeeper`,
//! `postgres`) implement [`Lock`] themselves and say why. Around every tier, the bounded wait
//! for a busy lock (spin, pub/sub) is `wait.rs`, and the in-memory queue of `wait: cohort`
//! `cohort.rs`.
//! `atomic-deduct` takes no lock at all, so [`Locks::get`] has nothing for it: the sale path
//! runs its script instead (`sale/atomic_deduct.rs`).
//!
//! Locks live in the *lock store* (`cx.store`), the ground truth in the *resource store*
//! (`cx.resource`): a release step only reports what it saw (whose lock the key held before and
//! after it, `send.rs`), and the engine records that in the resource store, so a
//! lock store that fails never takes the measurement with it.

mod atomic_expiry;
pub(crate) mod cohort;
mod custom;
mod engine;
mod fair;
mod fault_timing;
mod fenced;
mod local;
mod lua_release;
mod none;
mod postgres;
mod redlock;
mod reentrant_watchdog;
mod release_record;
mod renewals;
mod replies;
mod riding;
mod send;
mod setnx;
mod setnx_expire;
mod signals;
mod sold_out;
mod steps;
#[cfg(test)]
mod test_cx;
mod uuid_owner;
mod wait;
mod zookeeper;

use std::time::Duration;

use async_trait::async_trait;
use oversell_api::settings::Settings;
use oversell_api::tier::Tier;

use crate::faults::{Fault, FaultPoints};
use crate::ground_truth::record;
use crate::keys::Keys;
use crate::lock_store::node_faults::HeldReplicas;
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::redis_pool::{Conn, RedisPool, StoreError};

use crate::composed::Call;
use engine::Stepped;
pub use riding::{Release, TripReplies, Wrapped};
pub use signals::ReleaseSignals;
use steps::On;

/// Everything one acquire or release needs to know.
pub struct LockCx<'a> {
    /// Where the lock lives.
    pub store: &'a LockStore,
    /// The resource store: where what the lock saw is recorded.
    pub resource: &'a RedisPool,
    pub keys: &'a Keys,
    pub settings: &'a Settings,
    /// Unique per sale (and per process run): the lock value or hash field of this holder.
    pub owner: &'a str,
    /// This instance's id, for the timeline.
    pub instance: &'a str,
    /// The faults armed for this room, and how to claim one.
    pub faults: &'a FaultPoints<'a>,
    pub signals: &'a ReleaseSignals,
    pub metrics: &'a Metrics,
    /// A lock-store fault this sale claimed (`failover`, `lock-store-restart`): it strikes
    /// around the next successful acquire, once. A std `Mutex`, never held across `.await`.
    pub store_fault: &'a std::sync::Mutex<Option<Fault>>,
    /// Replicas the `failover` fault holds off during this attempt (see `lock/fault_timing.rs`).
    pub held_replicas: &'a std::sync::Mutex<Option<HeldReplicas>>,
    /// The sale's read (its calls, as data), for an acquire that can carry it in its round
    /// trip (`riding.rs`); `None` for a nested re-entry, which never carries one.
    pub read: Option<&'a [Call]>,
    /// The room's reset generation when the sale began (empty: none): what the lock's
    /// releases record counts only if no reset came since (a reset deletes the room's locks).
    pub generation: &'a str,
    /// The room's own lock, for the `custom` tier (the lab); `None` when it has none.
    pub lab: Option<&'a crate::lab::LabLock>,
}

impl LockCx<'_> {
    /// What a lock's steps are about: the room's keys, this holder, the lease.
    pub fn on(&self) -> On<'_> {
        On {
            keys: self.keys,
            owner: self.owner,
            ttl_ms: self.settings.ttl_ms,
            wait_ms: self.settings.wait_deadline_ms,
        }
    }

    /// A release that found the lock already gone or someone else's: the holder had lost it
    /// without knowing. Counted in the resource store (and marked on the timeline) and in this
    /// instance's metrics: the only signal a paused holder ever gets.
    async fn lost_release(&self) -> Result<(), StoreError> {
        self.metrics.lost_release(self.settings.tier);
        record::lost_release(
            self.resource,
            self.keys,
            self.generation,
            self.instance,
            self.owner,
        )
        .await
    }

    /// The lock-store fault this sale claimed and has not yet struck with, if any.
    fn striking_fault(&self) -> Option<Fault> {
        self.store_fault
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Takes the claimed lock-store fault: it strikes once.
    fn take_store_fault(&self) -> Option<Fault> {
        self.store_fault
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Takes the guard of replicas held off for this attempt; dropping it resumes them.
    fn resume_replicas(&self) -> Option<HeldReplicas> {
        self.held_replicas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// A connection to the lock store.
    async fn conn(&self) -> Result<Conn, StoreError> {
        self.store.pool().conn().await
    }

    /// After a lock write on `conn`: with `sync_replicas` set, waits (`WAIT`) until that many
    /// replicas have the write, as Redisson's `checkLockSyncedSlaves` does. `WAIT` counts the
    /// writes of its own connection, so it must follow the lock write on the same one.
    async fn replicated(&self, conn: &mut Conn) -> Result<(), StoreError> {
        let wanted = self.settings.sync_replicas;
        if wanted == 0 {
            return Ok(());
        }
        // Replicas held off by the `failover` fault come back now: the write is done, and
        // `WAIT` is how the holder learns whether they got it before the primary dies.
        drop(self.resume_replicas());
        // Behind the room's key, so that a Redis Cluster connection sends `WAIT` to the master
        // owning the lock's slot (alone, it would ask every master and answer the least).
        let (_, acked): (i64, u32) = redis::pipe()
            .exists(self.keys.lock())
            .cmd("WAIT")
            .arg(wanted)
            .arg(self.settings.sync_timeout_ms)
            .query_async(conn)
            .await?;
        if acked < wanted {
            return Err(StoreError::NotReplicated { acked, wanted });
        }
        Ok(())
    }
}

/// A lock this sale holds. Dropping it without `release` leaves the Redis lock to its lease.
pub struct Held {
    /// The fencing token, for the `fenced` tier.
    pub fence: Option<u64>,
    /// How many times the owner holds the lock after this acquire (2 = re-entered).
    pub depth: u32,
    /// The replies to the sale's read when it rode with the acquire (`riding.rs`); boxed, as a
    /// hold is passed around and is rarely carrying one.
    pub read: Option<Box<TripReplies>>,
    _keep: Keep,
}

/// What must live exactly as long as the hold.
enum Keep {
    Nothing,
    /// The in-process mutex guard of the `local` tier.
    Local {
        _guard: tokio::sync::OwnedMutexGuard<()>,
    },
    /// The watchdog's renewals of a lock with a renew step (`renewals.rs`); aborted on drop.
    Renewing {
        _renewals: renewals::Renewals,
    },
    /// The database session whose transaction holds the lock (`postgres.rs`); closed on drop,
    /// which frees the lock, as a crashed holder's closed socket does. Boxed: a hold is
    /// passed around, and is rarely a session's.
    Session(Box<crate::pg_store::Session>),
}

impl Held {
    /// Stops renewing the lease, as a paused process does (the `holder-pause` fault). An
    /// in-process guard is kept: a paused process still holds its own mutex.
    pub fn stop_renewing(&mut self) {
        if matches!(self._keep, Keep::Renewing { .. }) {
            self._keep = Keep::Nothing;
        }
    }

    /// Leaves the hold without stopping its watchdog, which renews the lock for nobody (the
    /// `renewal-outlives-release` fault).
    pub fn abandon_renewing(self) {
        if let Keep::Renewing { _renewals } = self._keep {
            _renewals.outlive_the_hold();
        }
    }

    /// A hold with nothing attached: also what an unlock that overtook its acquire releases.
    pub(crate) fn plain() -> Self {
        Held {
            fence: None,
            depth: 1,
            read: None,
            _keep: Keep::Nothing,
        }
    }

    /// A plain hold whose lease `renewals` keep alive (Redlock's extension).
    fn renewed_by(renewals: renewals::Renewals) -> Self {
        Held {
            _keep: Keep::Renewing {
                _renewals: renewals,
            },
            ..Held::plain()
        }
    }
}

/// The outcome of one attempt.
pub enum Attempt {
    Acquired(Held),
    /// Someone else holds it; `lease_left` bounds a pub/sub wait when the tier knows it.
    Busy {
        lease_left: Option<Duration>,
    },
    /// The holder died between two acquire steps (the `holder-dies-between-steps` fault):
    /// whatever the first steps wrote stays, and nothing more is sent.
    HolderDied,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("lock wait deadline passed")]
    Timeout,
    #[error("the holder died between its acquire steps (a fault)")]
    HolderDied,
    /// The buyer stopped dead while waiting in line (the `waiter-dies` fault).
    #[error("the waiter died in line (a fault)")]
    WaiterDied,
    /// A nested re-entry found the lock someone else's: the owner had lost it.
    #[error("the lock was lost before the re-entry")]
    Lost,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[async_trait]
pub trait Lock: Send + Sync {
    /// One attempt to take the lock, without waiting.
    async fn try_acquire(&self, cx: &LockCx<'_>) -> Result<Attempt, StoreError>;

    /// Gives the lock back. Errors leave the lock to its lease (or forever, for `setnx`).
    async fn release(&self, cx: &LockCx<'_>, held: Held) -> Result<(), StoreError>;

    /// Takes the lock, waiting as the settings say, until the wait deadline.
    async fn acquire(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        wait::until_acquired(self, cx).await
    }

    /// Takes the lock again for the owner who holds it (a nested step). A reentrant lock
    /// answers at once; one that does not know its owner waits for itself, to its deadline.
    async fn acquire_again(&self, cx: &LockCx<'_>) -> Result<Held, LockError> {
        wait::again(self, cx).await
    }

    /// Whether the same owner may take the lock again while holding it.
    fn reentrant(&self) -> bool {
        false
    }

    /// Whether the lock serves its waiters in the order they queued in the store (`fair`):
    /// a buyer then tries at once, to get its place there.
    fn queues(&self) -> bool {
        false
    }

    /// The sale's `calls` as one round trip's calls with this lock held by `cx.owner`: as they
    /// are, or, for a reentrant lock, inside a nested hold (the acquire again before them, the
    /// nested release after; read back with [`TripReplies::open`]). `None` when the nested
    /// hold cannot go in one trip with them: the sale then takes the lock again, sends its
    /// calls and gives the nested hold back, one after the other.
    fn around(&self, _cx: &LockCx<'_>, calls: Vec<Call>) -> Option<Wrapped> {
        (!self.reentrant()).then(|| Wrapped::plain(calls))
    }

    /// The release as calls that can follow the sale's last calls in their round trip (read
    /// back with [`Release::answered`]); `None` when it cannot ride there and is sent on its
    /// own, after.
    fn release_behind(&self, _cx: &LockCx<'_>) -> Option<Release> {
        None
    }
}

/// One lock object per tier for this instance (the `local` tier keeps its mutexes here).
pub struct Locks {
    none: none::NoLock,
    local: local::LocalLock,
    setnx: Stepped,
    setnx_expire: Stepped,
    atomic_expiry: Stepped,
    uuid_owner: Stepped,
    lua_release: Stepped,
    reentrant: Stepped,
    fair: Stepped,
    fenced: Stepped,
    redlock: redlock::Redlock,
    zookeeper: zookeeper::ZooKeeperLock,
    zookeeper_fenced: zookeeper::ZooKeeperLock,
    postgres: postgres::PostgresLock,
    postgres_fenced: postgres::PostgresLock,
    custom: custom::CustomLock,
}

impl Default for Locks {
    fn default() -> Self {
        Locks {
            none: none::NoLock,
            local: local::LocalLock::default(),
            setnx: Stepped(&setnx::Setnx),
            setnx_expire: Stepped(&setnx_expire::SetnxExpire),
            atomic_expiry: Stepped(&atomic_expiry::AtomicExpiry),
            uuid_owner: Stepped(&uuid_owner::UuidOwner),
            lua_release: Stepped(&lua_release::LuaRelease),
            reentrant: Stepped(&reentrant_watchdog::ReentrantWatchdog),
            fair: Stepped(&fair::Fair),
            fenced: Stepped(&fenced::Fenced),
            redlock: redlock::Redlock,
            zookeeper: zookeeper::ZooKeeperLock::plain(),
            zookeeper_fenced: zookeeper::ZooKeeperLock::fencing(),
            postgres: postgres::PostgresLock::plain(),
            postgres_fenced: postgres::PostgresLock::fencing(),
            custom: custom::CustomLock::default(),
        }
    }
}

impl Locks {
    /// The lock of a tier the engine runs as a built-in step list (`steps.rs`).
    fn stepped(&self, tier: Tier) -> Option<&Stepped> {
        Some(match tier {
            Tier::Setnx => &self.setnx,
            Tier::SetnxExpire => &self.setnx_expire,
            Tier::AtomicExpiry => &self.atomic_expiry,
            Tier::UuidOwner => &self.uuid_owner,
            Tier::LuaRelease => &self.lua_release,
            Tier::ReentrantWatchdog => &self.reentrant,
            Tier::Fair => &self.fair,
            Tier::Fenced => &self.fenced,
            _ => return None,
        })
    }

    /// The lock of a tier; `None` for `atomic-deduct`, which needs none.
    pub fn get(&self, tier: Tier) -> Option<&dyn Lock> {
        Some(match tier {
            Tier::None => &self.none,
            Tier::Local => &self.local,
            Tier::Redlock => &self.redlock,
            Tier::Zookeeper => &self.zookeeper,
            Tier::ZookeeperFenced => &self.zookeeper_fenced,
            Tier::Postgres => &self.postgres,
            Tier::PostgresFenced => &self.postgres_fenced,
            Tier::Custom => &self.custom,
            Tier::AtomicDeduct => return None,
            Tier::Setnx
            | Tier::SetnxExpire
            | Tier::AtomicExpiry
            | Tier::UuidOwner
            | Tier::LuaRelease
            | Tier::ReentrantWatchdog
            | Tier::Fair
            | Tier::Fenced => return self.stepped(tier).map(|lock| lock as &dyn Lock),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use super::steps::{On, Request, Step, Technique};
    use super::*;

    fn static_locks() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("static/locks")
    }

    /// The scripts a tier sends, by the name of the lab file each step is: `acquire-1.lua`…
    fn sent(technique: &dyn Technique) -> BTreeMap<String, &'static str> {
        let keys = Keys::for_room("presets");
        let on = On {
            keys: &keys,
            owner: "holder",
            ttl_ms: 1_000,
            wait_ms: 5_000,
        };
        let source = |step: &Step| match &step.request {
            Request::Script(call) => call.source(),
            Request::Lab(_) => panic!("a built-in tier sent a lab step"),
        };
        let mut named = BTreeMap::new();
        for (what, steps) in [
            ("acquire", technique.acquire(&on)),
            ("release", technique.release(&on)),
        ] {
            for (i, step) in steps.iter().enumerate() {
                named.insert(format!("{what}-{}.lua", i + 1), source(step));
            }
        }
        if let Some(renew) = technique.renew(&on) {
            named.insert("renew.lua".into(), source(&renew));
        }
        named
    }

    /// A preset folder's scripts, by file name.
    fn presets(dir: &Path) -> BTreeMap<String, String> {
        let mut named = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "lua") {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                named.insert(name, std::fs::read_to_string(&path).unwrap());
            }
        }
        named
    }

    /// The code of a script or source file without its `--` comments and whitespace: what a
    /// copy would keep even with its comments reworded.
    fn code(text: &str) -> String {
        text.lines()
            .filter(|line| !line.trim_start().starts_with("--"))
            .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
            .collect()
    }

    #[test]
    fn every_preset_is_the_very_script_its_built_in_tier_sends() {
        let locks = Locks::default();
        let mut folders = Vec::new();
        for entry in std::fs::read_dir(static_locks()).unwrap() {
            let dir = entry.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            let id = dir.file_name().unwrap().to_string_lossy().into_owned();
            let tier: Tier = id.parse().unwrap_or_else(|_| panic!("{id}: no such tier"));
            let technique = locks.stepped(tier).map(|s| s.0);
            let technique = technique.unwrap_or_else(|| panic!("{id}: not a step list"));
            let sent = sent(technique);
            let presets = presets(&dir);
            let names = |m: Vec<&String>| m.into_iter().cloned().collect::<Vec<_>>();
            assert_eq!(
                names(sent.keys().collect()),
                names(presets.keys().collect()),
                "{id}: the tier's steps and the lab's files"
            );
            for (name, source) in &sent {
                // The same bytes, and the same `&'static str`: the file itself, not a copy.
                assert_eq!(*source, presets[name], "{id}/{name}");
            }
            folders.push(tier);
        }
        // Every Redis rung the engine runs as steps is a lab preset.
        for tier in Tier::ALL {
            if locks.stepped(tier).map(|s| s.0).is_some() {
                assert!(folders.contains(&tier), "{tier}: no static/locks/{tier}/");
            }
        }
    }

    /// The walk from `POST /sale` to Redis goes one way: the sale calls the lock (through the
    /// `Lock` trait and the types beside it; the engine, its steps and the round-trip planner
    /// are private to this module, so the compiler holds that half), and nothing here calls
    /// back into the sale.
    #[test]
    fn the_lock_never_reaches_into_the_sale() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lock");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                // The code, not its tests (this one names what it looks for).
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                for needle in ["crate::sale", "super::super::sale"] {
                    assert!(!code.contains(needle), "{} names {needle}", path.display());
                }
            }
        }
    }

    #[test]
    fn no_copy_of_a_preset_lives_under_src() {
        let mut scripts = Vec::new();
        for entry in std::fs::read_dir(static_locks()).unwrap() {
            let dir = entry.unwrap().path();
            if dir.is_dir() {
                for (name, text) in presets(&dir) {
                    scripts.push((dir.join(name), code(&text)));
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut dirs = vec![src];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                // A script file is a copy when its code is the preset's; a Rust file, when it
                // holds the preset's code (in a string) anywhere.
                let text = code(&text);
                let lua = path.extension().is_some_and(|e| e == "lua");
                for (preset, script) in &scripts {
                    let copies = match lua {
                        true => text == *script,
                        false => text.contains(script.as_str()),
                    };
                    assert!(
                        !copies,
                        "{} copies {}: include the preset instead",
                        path.display(),
                        preset.display()
                    );
                }
            }
        }
    }
}
