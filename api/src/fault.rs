//! The faults an instructor can arm: what each strikes, and an armed fault as `/state` lists
//! it and `POST /admin/faults` takes it.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::store::LockStoreKind;

/// Where and how a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The holder's instance, after the holder read the stock, has every worker of its async
    /// runtime busy with CPU-bound work for `ms` (tasks that never yield): its watchdog's
    /// renewals, its sales and its answers wait for a worker, as a lease-renewal thread
    /// waits on a machine at 100% CPU. The process runs on, burning CPU, unlike `freeze`.
    CpuStarve,
    /// Lock store `sentinel` only: the next holder's lock is written while the primary's
    /// replica link is cut, then the primary is killed and Sentinel promotes the replica,
    /// which never saw the lock.
    Failover,
    /// Lock store `sentinel` only: as the next buyer tries to lock, the primary's replicas are
    /// stopped (SIGSTOP) for `ms` and resumed by a helper process, as replicas that lag
    /// behind: the primary serves on, but a lock write that waits for a replica to have it
    /// (`sync_replicas`) waits for nobody until the lag ends.
    ReplicaLag,
    /// Lock store `single` only: the store's Redis is killed right after the next acquire and
    /// restarted by its supervisor with its persistence setting.
    LockStoreRestart,
    /// Lock store `single` only: the store's Redis is killed as the next buyer tries to lock,
    /// and its supervisor brings it back only after `ms`, as a crashed server would be: the
    /// single point of failure, with nothing left to lock on meanwhile.
    LockStoreDown,
    /// Lock store `single` only: right after the next acquire, the store's Redis is killed
    /// and brought back after `ms` with its persistence setting, so the holder's renewals due
    /// meanwhile fail; its watchdog tries again at the next one, and renews on once the store
    /// is back (with `always`, the lock is back too).
    RenewalOutage,
    /// As `renewal-outage`, but the holder's watchdog gives up at its first failed renewal and
    /// is never scheduled again, as a watchdog that only reschedules after a success: the
    /// lock, back with the store, runs out its lease while its holder still works.
    RenewalGivesUp,
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
    /// Lock store `redlock` only: as the next buyer asks for the lock, `nodes` masters
    /// (default 1) are stopped (SIGSTOP) for `ms` and resumed by a helper process, so their
    /// votes come late: a slow master makes the whole acquire slow, and a lease shorter than
    /// that leaves the lock no validity when the majority is in.
    NodeSlow,
    /// Lock store `redlock` only: `node-slow` for the next buyer's acquire (`nodes` masters,
    /// default 1, stopped for `ms`), and that buyer keeps the majority it wins however late it
    /// came: a client that never checks the validity left, so a lock already expired on the
    /// masters that granted first is worked under as if held.
    ValidityUnchecked,
    /// ZooKeeper only: as the next buyer queues, `nodes` ZooKeeper servers (default 1) are
    /// killed and stay down for `ms`.
    ZkNodeDown,
    /// The holder stops dead inside the critical section, after reading the stock: no write,
    /// no release, no more renewals. To the lock store this is a crashed holder (a dead client
    /// only stops sending); the instance serves on, so it strikes its room alone.
    HolderDies,
    /// As `holder-dies`, between the first and the second step of an acquire (`setnx-expire`
    /// between `SETNX` and `EXPIRE`, a lab lock between its acquire steps).
    HolderDiesBetweenSteps,
    /// The holder stops for `ms` after reading the stock, renewals included, then writes: to
    /// the lock store, a process paused (a GC stop); the instance serves on.
    HolderPause,
    /// The next holder's sale, after reading the stock, calls a helper that takes the room's
    /// lock again (a nested step) and gives it back: a reentrant lock lets its owner in, any
    /// other makes the sale wait for itself until its wait deadline (a 503, nothing written).
    NestedLock,
    /// The next buyer to find the lock busy stops dead in its wait: it never tries again and
    /// never says it is leaving, as a waiter whose process died. A lock that queues its
    /// waiters (`fair`) still has it in line; the instance serves on, so it strikes its room
    /// alone.
    WaiterDies,
    /// The next buyer's unlock overtakes its own acquire, as the `finally` of a lock call
    /// interrupted while its acquire was in flight: the unlock runs first and finds nothing
    /// (a lost release), the acquire then lands and takes the lock, and the buyer leaves
    /// believing it has none (503 `acquire_abandoned`). The watchdog that acquire started is
    /// never stopped: it renews the orphan for nobody, and every buyer after it waits, until a
    /// reset deletes the lock. Not on a cohort's wait, whose buyers hand the lock on in memory.
    RenewalOutlivesRelease,
    /// Pub/sub waits only: the next buyer to find the lock busy is out of this instance's
    /// line for release messages from its failed attempt until `ms` later (it subscribes only
    /// after failing, and the subscription takes that long), then waits for a message without
    /// trying again first, at most the lease it saw or its deadline, and gives up there. A
    /// release published in the gap reaches nobody: the lock stands free while it sleeps.
    LateSubscriber,
    /// Pub/sub waits only: the same `ms` gap after the next buyer's failed attempt, but the
    /// buyer stays in line for release messages through it, as every wait here does (in line
    /// before its first attempt): a release published in the gap is kept for it, and it tries
    /// as soon as the gap ends. `late-subscriber`'s control.
    SubscribeGap,
    /// The holder's task dies inside the critical section, after reading the stock, while its
    /// process lives on: no write, no release, but its watchdog is a task of the process, not
    /// of the holder, and nothing stops it. It renews the lock for nobody until a reset, as a
    /// Redisson renewal outlives the thread that died holding the lock (Redisson #3521,
    /// #5115). The instance serves on, so it strikes its room alone.
    WorkerDies,
    /// The attempt that takes the next lock has its reply lost: the acquire ran in Redis, but
    /// the buyer, timed out, believes it did not and sends the same acquire again at once,
    /// under the same owner. A reentrant lock takes that second one as a re-entry: two holds
    /// for one sale, of which its unlock gives back one (Redisson #7367). Strikes its room
    /// alone.
    AcquireReplyLost,
    /// The next holder pauses `ms` after reading the stock (as `holder-pause`: its renewals
    /// stop with it), then writes to a resource that cannot check a fencing token: its write
    /// carries none, so nothing refuses it however stale it is. The token came with the lock
    /// and went with the read; only the write, where a check would have counted, is without
    /// it (ShedLock #2201). Strikes its room alone.
    UncheckedWrite,
    /// The next holder pauses `ms` after reading the stock (as `holder-pause`: its renewals
    /// stop with it), and as it comes back extends its lease before it writes, as a client
    /// that extends a long task's lock does, with the extend redlock-rb and redis-semaphore
    /// had before their fixes: the lock's key set again to the holder's value with a new
    /// lease if it holds that value *or nothing at all* (redlock-rb #36, redis-semaphore
    /// #175). A lease that ran out and a lock some other buyer took and gave back in the
    /// meantime look, to that extend, like a lock still held: it succeeds, and the holder
    /// writes. For a lock whose key holds its owner's value (`lua-release`, `uuid-owner`).
    /// Strikes its room alone.
    ExtendRetakes,
    /// As `extend-retakes`, with the extend those libraries have since: a new lease only if
    /// the key still holds the holder's value. After a lapse it fails, and the holder gives
    /// up its write (503 `lock_lost`), as their callers are told (redlock-rb's
    /// `extend_only_if_locked`, redis-semaphore's `onLockLost`). Strikes its room alone.
    ExtendChecked,
    /// A lock variant more than a one-shot fault: while armed (until cleared or the room is
    /// reset), every sale of the room on an instance keeps its owner token in one slot of the
    /// instance's, as redis-py's lock keeps it in a thread-local that, under an event loop,
    /// every task of the thread shares (aredis #119): each acquire writes its token there,
    /// and each release sends the token it finds there, which is the latest acquirer's. A
    /// holder whose lease ran out then deletes the lock of the one who took it after, with
    /// its compare-and-delete satisfied. Strikes its room alone; nothing claims it.
    TokenPerInstance,
    /// ZooKeeper only: as the next buyer queues, right after it created its lock node, its
    /// instance gives up its session for a new one, as a client that declared its session
    /// lost while the servers still hold it (Curator's, after a long disconnect). The old
    /// session lives on the servers for `ms`, and its nodes with it; the buyer goes on in line
    /// under the new session and, as Curator's `InterProcessMutex` does (CURATOR-604), still
    /// counts the old node as its own: lowest, it holds the lock on a node about to go, and
    /// when the old session ends the next buyer takes the lock beside it.
    ReconnectKeepsNode,
    /// As `reconnect-keeps-node`, with the check Curator's `LeaderLatch` makes since
    /// CURATOR-696: a node counts as the buyer's only if its owner is the buyer's session now.
    /// The old node is not: the buyer deletes it and queues again under the new session.
    ReconnectChecksOwner,
    /// ZooKeeper only: the next holder's release has its delete lost on a connection loss,
    /// and the release gives up on it, as `InterProcessMutex#release` drops its record of the
    /// hold whatever the delete did (CURATOR-678): the node stays while the instance's
    /// session lives, and nobody else takes the lock. A reset deletes it. Strikes its room
    /// alone.
    ReleaseDeleteLost,
    /// As `release-delete-lost`, with the delete guaranteed (Curator's `guaranteed()`): sent
    /// again until it lands or the session ends. Strikes its room alone.
    ReleaseDeleteRetried,
    /// As the work starts, the next holder renews its lock to the room's lease with the
    /// owner-checked extend (a new lease only while the key holds the holder's value), whose
    /// script reads the lease in milliseconds, but the client passes it as a number of
    /// seconds, as Foundatio's `RenewAsync` did (Foundatio.Redis #73): a 3 s lease renewed
    /// as 3 ms. For a lock whose key holds its owner's value (`lua-release`, `uuid-owner`).
    /// Strikes its room alone.
    RenewInSeconds,
    /// As `renew-in-seconds`, with the lease passed in milliseconds, as the script reads it
    /// (Foundatio.Redis #75). Strikes its room alone.
    RenewInMilliseconds,
    /// A fleet with `--network netns` only: the next holder, after reading the stock, cuts
    /// the members named in `isolate` off from the rest of the network, both ways, for `ms`
    /// (real packet drops; the resource store and nginx are never cut off).
    Partition,
}

impl FaultKind {
    pub const ALL: [FaultKind; 38] = [
        FaultKind::CrashHolding,
        FaultKind::CrashBeforeExpire,
        FaultKind::ReleaseGap,
        FaultKind::Freeze,
        FaultKind::CpuStarve,
        FaultKind::Failover,
        FaultKind::ReplicaLag,
        FaultKind::LockStoreRestart,
        FaultKind::LockStoreDown,
        FaultKind::RenewalOutage,
        FaultKind::RenewalGivesUp,
        FaultKind::NodeDown,
        FaultKind::NodeRestart,
        FaultKind::ClockJump,
        FaultKind::NodeSlow,
        FaultKind::ValidityUnchecked,
        FaultKind::ZkNodeDown,
        FaultKind::HolderDies,
        FaultKind::HolderDiesBetweenSteps,
        FaultKind::HolderPause,
        FaultKind::NestedLock,
        FaultKind::WaiterDies,
        FaultKind::RenewalOutlivesRelease,
        FaultKind::LateSubscriber,
        FaultKind::SubscribeGap,
        FaultKind::WorkerDies,
        FaultKind::AcquireReplyLost,
        FaultKind::UncheckedWrite,
        FaultKind::ExtendRetakes,
        FaultKind::ExtendChecked,
        FaultKind::TokenPerInstance,
        FaultKind::ReconnectKeepsNode,
        FaultKind::ReconnectChecksOwner,
        FaultKind::ReleaseDeleteLost,
        FaultKind::ReleaseDeleteRetried,
        FaultKind::RenewInSeconds,
        FaultKind::RenewInMilliseconds,
        FaultKind::Partition,
    ];

    pub fn id(self) -> &'static str {
        match self {
            FaultKind::CrashHolding => "crash-holding",
            FaultKind::CrashBeforeExpire => "crash-before-expire",
            FaultKind::ReleaseGap => "release-gap",
            FaultKind::Freeze => "freeze",
            FaultKind::CpuStarve => "cpu-starve",
            FaultKind::Failover => "failover",
            FaultKind::ReplicaLag => "replica-lag",
            FaultKind::LockStoreRestart => "lock-store-restart",
            FaultKind::LockStoreDown => "lock-store-down",
            FaultKind::RenewalOutage => "renewal-outage",
            FaultKind::RenewalGivesUp => "renewal-gives-up",
            FaultKind::NodeDown => "node-down",
            FaultKind::NodeRestart => "node-restart",
            FaultKind::ClockJump => "clock-jump",
            FaultKind::NodeSlow => "node-slow",
            FaultKind::ValidityUnchecked => "validity-unchecked",
            FaultKind::ZkNodeDown => "zk-node-down",
            FaultKind::HolderDies => "holder-dies",
            FaultKind::HolderDiesBetweenSteps => "holder-dies-between-steps",
            FaultKind::HolderPause => "holder-pause",
            FaultKind::NestedLock => "nested-lock",
            FaultKind::WaiterDies => "waiter-dies",
            FaultKind::RenewalOutlivesRelease => "renewal-outlives-release",
            FaultKind::LateSubscriber => "late-subscriber",
            FaultKind::SubscribeGap => "subscribe-gap",
            FaultKind::WorkerDies => "worker-dies",
            FaultKind::AcquireReplyLost => "acquire-reply-lost",
            FaultKind::UncheckedWrite => "unchecked-write",
            FaultKind::ExtendRetakes => "extend-retakes",
            FaultKind::ExtendChecked => "extend-checked",
            FaultKind::TokenPerInstance => "token-per-instance",
            FaultKind::ReconnectKeepsNode => "reconnect-keeps-node",
            FaultKind::ReconnectChecksOwner => "reconnect-checks-owner",
            FaultKind::ReleaseDeleteLost => "release-delete-lost",
            FaultKind::ReleaseDeleteRetried => "release-delete-retried",
            FaultKind::RenewInSeconds => "renew-in-seconds",
            FaultKind::RenewInMilliseconds => "renew-in-milliseconds",
            FaultKind::Partition => "partition",
        }
    }

    /// The lock store a fault needs, when it strikes the store itself.
    pub fn needs_lock_store(self) -> Option<LockStoreKind> {
        match self {
            FaultKind::Failover | FaultKind::ReplicaLag => Some(LockStoreKind::Sentinel),
            FaultKind::LockStoreRestart
            | FaultKind::LockStoreDown
            | FaultKind::RenewalOutage
            | FaultKind::RenewalGivesUp => Some(LockStoreKind::Single),
            FaultKind::NodeDown
            | FaultKind::NodeRestart
            | FaultKind::ClockJump
            | FaultKind::NodeSlow
            | FaultKind::ValidityUnchecked => Some(LockStoreKind::Redlock),
            _ => None,
        }
    }

    /// Whether the fault can strike a lock store of kind `here`: a failover needs replicas a
    /// failover promotes (Sentinel's, or a Redis Cluster's for the master owning the lock).
    pub fn fits_lock_store(self, here: LockStoreKind) -> bool {
        match self.needs_lock_store() {
            None => true,
            Some(LockStoreKind::Sentinel) => {
                matches!(here, LockStoreKind::Sentinel | LockStoreKind::Cluster)
            }
            Some(needed) => needed == here,
        }
    }

    /// Whether the fault needs ZooKeeper: it strikes its servers, a session, or the recipe.
    pub fn needs_zookeeper(self) -> bool {
        self.strikes_zookeeper_session()
            || matches!(
                self,
                FaultKind::ReleaseDeleteLost | FaultKind::ReleaseDeleteRetried
            )
    }

    /// Whether the fault strikes ZooKeeper's servers or an instance's session with them,
    /// around the claimant's acquire.
    fn strikes_zookeeper_session(self) -> bool {
        matches!(
            self,
            FaultKind::ZkNodeDown | FaultKind::ReconnectKeepsNode | FaultKind::ReconnectChecksOwner
        )
    }

    /// Whether the fault strikes where the locks live (a Redis lock store or ZooKeeper, or an
    /// instance's session with it), not a sale: the claimant strikes around its acquire, and
    /// other buyers wait for it.
    pub fn strikes_lock_store(self) -> bool {
        self.needs_lock_store().is_some() || self.strikes_zookeeper_session()
    }

    /// Whether the fault strikes only the sale of its own room (a pause inside that sale's
    /// task). The others stop a whole process (every room's sales on an instance) or a lock
    /// store that every room shares, so a room token may not arm them.
    pub fn strikes_room_only(self) -> bool {
        matches!(
            self,
            FaultKind::ReleaseGap
                | FaultKind::HolderDies
                | FaultKind::HolderDiesBetweenSteps
                | FaultKind::HolderPause
                | FaultKind::NestedLock
                | FaultKind::WaiterDies
                | FaultKind::RenewalOutlivesRelease
                | FaultKind::LateSubscriber
                | FaultKind::SubscribeGap
                | FaultKind::WorkerDies
                | FaultKind::AcquireReplyLost
                | FaultKind::UncheckedWrite
                | FaultKind::ExtendRetakes
                | FaultKind::ExtendChecked
                | FaultKind::TokenPerInstance
                | FaultKind::ReleaseDeleteLost
                | FaultKind::ReleaseDeleteRetried
                | FaultKind::RenewInSeconds
                | FaultKind::RenewInMilliseconds
        )
    }

    /// Whether the fault needs a duration (for `clock-jump`: how far the clock jumps).
    pub fn takes_ms(self) -> bool {
        matches!(
            self,
            FaultKind::ReleaseGap
                | FaultKind::Freeze
                | FaultKind::CpuStarve
                | FaultKind::ReplicaLag
                | FaultKind::LockStoreDown
                | FaultKind::RenewalOutage
                | FaultKind::RenewalGivesUp
                | FaultKind::NodeDown
                | FaultKind::ClockJump
                | FaultKind::NodeSlow
                | FaultKind::ValidityUnchecked
                | FaultKind::ZkNodeDown
                | FaultKind::ReconnectKeepsNode
                | FaultKind::ReconnectChecksOwner
                | FaultKind::HolderPause
                | FaultKind::UncheckedWrite
                | FaultKind::ExtendRetakes
                | FaultKind::ExtendChecked
                | FaultKind::LateSubscriber
                | FaultKind::SubscribeGap
                | FaultKind::Partition
        )
    }

    /// Whether the fault strikes a number of servers (`nodes`): Redlock masters, or
    /// ZooKeeper servers.
    pub fn takes_nodes(self) -> bool {
        matches!(
            self,
            FaultKind::NodeDown
                | FaultKind::ClockJump
                | FaultKind::NodeSlow
                | FaultKind::ValidityUnchecked
                | FaultKind::ZkNodeDown
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Fault {
    pub kind: FaultKind,
    /// Duration for `release-gap`, `freeze`, `cpu-starve`, `replica-lag`, `lock-store-down`, the outage of
    /// `renewal-outage` and `renewal-gives-up`, `node-down`, `node-slow`,
    /// `zk-node-down`, `holder-pause`, `unchecked-write`, `partition`, the old session's
    /// life of `reconnect-keeps-node` and `reconnect-checks-owner`, the pause of
    /// `extend-retakes` and `extend-checked`, the subscription gap of `late-subscriber`
    /// and `subscribe-gap`, the jump of `clock-jump`; 0 otherwise.
    pub ms: u64,
    /// The instance it targets; `None` = the next holder anywhere.
    pub instance: Option<String>,
    /// How many Redlock masters `node-down`, `clock-jump`, `node-slow` and
    /// `validity-unchecked` strike; 0 = their default.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nodes: u32,
    /// The members `partition` cuts off (`app1`, `lock1`, `redlock2`, `zk1`, …), as one side;
    /// [`HOLDER`] names the instance of the holder it strikes, [`LOCK_PRIMARY`] the lock
    /// store's primary as the strike finds it. Empty for other faults.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub isolate: Isolate,
}

/// In `isolate`: the instance whose holder the partition strikes.
pub const HOLDER: &str = "holder";
/// In `isolate`: the lock store's primary (`sentinel`) or its Redis (`single`) at the strike.
pub const LOCK_PRIMARY: &str = "lock-primary";

/// The members a partition isolates: borrowed in the catalog's constants, owned when parsed.
pub type Isolate = Cow<'static, [Cow<'static, str>]>;

impl Fault {
    /// A fault for the next holder on any instance.
    pub const fn new(kind: FaultKind, ms: u64) -> Fault {
        Fault {
            kind,
            ms,
            instance: None,
            nodes: 0,
            isolate: Cow::Borrowed(&[]),
        }
    }

    /// A fault on `nodes` servers of the lock store (Redlock masters, ZooKeeper servers).
    pub const fn on_nodes(kind: FaultKind, ms: u64, nodes: u32) -> Fault {
        Fault {
            kind,
            ms,
            instance: None,
            nodes,
            isolate: Cow::Borrowed(&[]),
        }
    }

    /// `partition`: as the next holder works (after its read), cut `isolate` off from the
    /// rest of the network for `ms`.
    pub const fn partition(isolate: &'static [Cow<'static, str>], ms: u64) -> Fault {
        Fault {
            kind: FaultKind::Partition,
            ms,
            instance: None,
            nodes: 0,
            isolate: Cow::Borrowed(isolate),
        }
    }

    /// Whether this armed fault is for `kind` at `instance` (its own, or the next holder
    /// anywhere).
    pub fn matches(&self, kind: FaultKind, instance: &str) -> bool {
        self.kind == kind && self.instance.as_deref().is_none_or(|i| i == instance)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_and_an_unknown_one_lists_them() {
        for kind in FaultKind::ALL {
            assert_eq!(kind.id().parse::<FaultKind>(), Ok(kind));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        let err = "meteor".parse::<FaultKind>().unwrap_err();
        assert!(
            err.contains("crash-holding") && err.contains("zk-node-down"),
            "{err}"
        );
    }

    #[test]
    fn a_fault_for_anyone_matches_every_instance_of_its_kind() {
        let anyone = Fault {
            kind: FaultKind::Freeze,
            ms: 100,
            instance: None,
            nodes: 0,
            isolate: Default::default(),
        };
        assert!(anyone.matches(FaultKind::Freeze, "app7"));
        assert!(!anyone.matches(FaultKind::CrashHolding, "app7"));
        let mine = Fault {
            instance: Some("app1".into()),
            ..anyone
        };
        assert!(mine.matches(FaultKind::Freeze, "app1"));
        assert!(!mine.matches(FaultKind::Freeze, "app2"));
    }
}
