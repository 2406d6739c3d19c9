//! The lock tiers by id: parsing, listing, and what each one is and needs, one row per tier
//! ([`TABLE`]). Adding a tier is a variant and a row here; its lock is a file of the service's
//! `src/lock/tiers/`, its steps a folder of `static/locks/`, its text a paragraph of the page.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

mod fit;
pub use fit::Beside;

use crate::grade::{Outcome::*, RungOutcomes};

/// Which technique guards the deduct step. The order is the workshop's ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    None,
    Local,
    Setnx,
    SetnxExpire,
    AtomicExpiry,
    UuidOwner,
    LuaRelease,
    ReentrantWatchdog,
    /// `reentrant-watchdog` handed out first come first served, by a queue in Redis.
    Fair,
    Fenced,
    Redlock,
    Zookeeper,
    ZookeeperFenced,
    /// The third answer: a lock held by a PostgreSQL session (an advisory lock).
    Postgres,
    PostgresFenced,
    AtomicDeduct,
    /// The lab: a lock whose steps are a room's own Lua scripts (see `oversell::lab`).
    Custom,
}

/// One tier's facts: its row of [`TABLE`]. Everything about a tier that is not how its lock
/// works (that is its own file under the service's `src/lock/tiers/`) is here, read by the
/// sale, the launcher, the course, the grader and the page (`GET /tiers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Facts {
    #[serde(skip)]
    pub tier: Tier,
    /// Its name: in flags, settings, URLs, and the key of its paragraph on the page
    /// (`static/tier-text.js`'s `TIER_TEXT`).
    pub id: &'static str,
    /// The articles' rung or technique it stands for.
    pub rung: &'static str,
    /// The stores it needs beyond the one Redis every fleet has.
    pub needs: Needs,
    /// What keeps its lock from being held forever.
    pub lease: Lease,
    /// How its buyers wait for a held lock.
    pub waits: Waits,
    /// Its folder of Lua steps under `static/locks/`: the lab's preset for this rung, the very
    /// scripts the tier sends.
    pub preset: Option<&'static str>,
    /// The ladder rung whose outcomes the lab's grader expects of it (its own, or a twin's
    /// the attacks cannot tell it from); `None`: the grader does not grade it.
    pub graded_as: Option<Tier>,
    /// On a rung of the ladder: the outcome the grader's attacks get on it, per telling attack
    /// (`grade::RUNG_ATTACKS`), which calibrates the grader and names a student's card.
    #[serde(skip)]
    pub outcomes: Option<RungOutcomes>,
    /// The same lock without its queue, racing for the store: what a chapter sets this tier's
    /// order beside (the `race_*` figures).
    pub race: Option<Tier>,
    /// Whether each acquire try is one `SET … NX PX` in the lock store (Redlock's on each
    /// master), so that the store's count of `SET` calls counts the tries.
    pub set_per_try: bool,
}

/// What a tier needs beyond one Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Needs {
    /// Nothing: any lock store will do.
    Redis,
    /// The independent masters of a Redlock quorum (`--lock-store redlock`).
    RedlockMasters,
    ZooKeeper,
    PostgreSQL,
    /// A Redis lock store apart from the stock, where students' scripts may run (`--lab`).
    LabStore,
}

/// What ends a hold the holder never gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lease {
    /// There is no lock, and nothing else keeps two buyers apart.
    NoLock,
    /// There is no lock: the deduct itself is one atomic script, which is what keeps buyers
    /// apart, on every instance at once.
    AtomicDeduct,
    /// A mutex in each process: it goes with its process.
    InProcess,
    /// Nothing: a dead holder's lock stays forever.
    Never,
    /// A lease that runs out by itself (fixed, or renewed while held).
    Expires,
    /// The holder's session with the store (ZooKeeper's, PostgreSQL's).
    Session,
}

/// How a tier's buyers wait for a held lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Waits {
    /// Nothing to wait for.
    Never,
    /// In the process's own mutex queue.
    InProcess,
    /// As the settings say: spin, pub/sub, or in a cohort (an instance's buyers passing the
    /// lock from one to the next in memory).
    AnyWay,
    /// Spin or pub/sub, in the order of a queue the lock keeps in its store: a pass within one
    /// instance would jump it, so never in a cohort.
    InStoreOrder,
    /// In the store's own queue (ZooKeeper's sequential nodes, PostgreSQL's lock queue), whose
    /// places are bound to their owners: the settings' wait does not apply.
    StoreQueue,
}

/// The tier a room's own lock runs as in the lab: its steps are the room's scripts.
pub const LAB_LOCK: Tier = Tier::Custom;

/// The tiers' facts, one row per tier, in the order of [`Tier`]'s variants: the workshop's
/// ladder.
pub const TABLE: [Facts; 17] = [
    Facts {
        tier: Tier::None,
        id: "none",
        rung: "no lock: the race the articles open with",
        needs: Needs::Redis,
        lease: Lease::NoLock,
        waits: Waits::Never,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::Local,
        id: "local",
        rung: "an in-process lock (Java's synchronized)",
        needs: Needs::Redis,
        lease: Lease::InProcess,
        waits: Waits::InProcess,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::Setnx,
        id: "setnx",
        rung: "bronze (000): SETNX and DEL",
        needs: Needs::Redis,
        lease: Lease::Never,
        waits: Waits::AnyWay,
        preset: Some("setnx"),
        graded_as: Some(Tier::Setnx),
        outcomes: Some([Held, Deadlock, NotApplicable, Held, NotApplicable, Held]),
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::SetnxExpire,
        id: "setnx-expire",
        rung: "silver (000): SETNX, then EXPIRE",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: Some("setnx-expire"),
        graded_as: Some(Tier::SetnxExpire),
        outcomes: Some([Held, Held, Deadlock, ForeignRelease, NotApplicable, Overlap]),
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::AtomicExpiry,
        id: "atomic-expiry",
        rung: "gold (000): SET NX PX",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: Some("atomic-expiry"),
        graded_as: Some(Tier::AtomicExpiry),
        outcomes: Some([
            Held,
            Held,
            NotApplicable,
            ForeignRelease,
            NotApplicable,
            Overlap,
        ]),
        race: None,
        set_per_try: true,
    },
    Facts {
        tier: Tier::UuidOwner,
        id: "uuid-owner",
        rung: "platinum (000): a unique value, GET then DEL",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: Some("uuid-owner"),
        graded_as: Some(Tier::UuidOwner),
        outcomes: Some([Held, Held, NotApplicable, Overlap, ForeignRelease, Overlap]),
        race: None,
        set_per_try: true,
    },
    Facts {
        tier: Tier::LuaRelease,
        id: "lua-release",
        rung: "diamond (000): a Lua compare-and-delete",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: Some("lua-release"),
        graded_as: Some(Tier::LuaRelease),
        outcomes: Some([Held, Held, NotApplicable, Overlap, NotApplicable, Overlap]),
        race: None,
        set_per_try: true,
    },
    Facts {
        tier: Tier::ReentrantWatchdog,
        id: "reentrant-watchdog",
        rung: "Redisson's RLock: a reentrant hash, a watchdog renewing its lease",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: Some("reentrant-watchdog"),
        graded_as: Some(Tier::ReentrantWatchdog),
        outcomes: Some([Held, Held, NotApplicable, Held, NotApplicable, Overlap]),
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::Fair,
        id: "fair",
        rung: "Redisson's fair lock: RLock served first come first served",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::InStoreOrder,
        preset: Some("fair"),
        // The attacks try a lock's safety, not the order it serves its waiters in.
        graded_as: Some(Tier::ReentrantWatchdog),
        outcomes: None,
        race: Some(Tier::ReentrantWatchdog),
        set_per_try: false,
    },
    Facts {
        tier: Tier::Fenced,
        id: "fenced",
        rung: "Kleppmann's fencing token on RLock",
        needs: Needs::Redis,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: Some("fenced"),
        graded_as: Some(Tier::Fenced),
        outcomes: Some([Held, Held, NotApplicable, Held, NotApplicable, Held]),
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::Redlock,
        id: "redlock",
        rung: "Redlock: a quorum of independent masters",
        needs: Needs::RedlockMasters,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: true,
    },
    Facts {
        tier: Tier::Zookeeper,
        id: "zookeeper",
        rung: "ZooKeeper, as Curator locks it",
        needs: Needs::ZooKeeper,
        lease: Lease::Session,
        waits: Waits::StoreQueue,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::ZookeeperFenced,
        id: "zookeeper-fenced",
        rung: "ZooKeeper with its node's sequence as a fencing token",
        needs: Needs::ZooKeeper,
        lease: Lease::Session,
        waits: Waits::StoreQueue,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::Postgres,
        id: "postgres",
        rung: "the database's answer: a PostgreSQL advisory lock",
        needs: Needs::PostgreSQL,
        lease: Lease::Session,
        waits: Waits::StoreQueue,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::PostgresFenced,
        id: "postgres-fenced",
        rung: "a PostgreSQL advisory lock with a sequence as a fencing token",
        needs: Needs::PostgreSQL,
        lease: Lease::Session,
        waits: Waits::StoreQueue,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::AtomicDeduct,
        id: "atomic-deduct",
        rung: "no lock at all: one script that decrements if positive",
        needs: Needs::Redis,
        lease: Lease::AtomicDeduct,
        waits: Waits::Never,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
    Facts {
        tier: Tier::Custom,
        id: "custom",
        rung: "the lab: the students' own Lua steps",
        needs: Needs::LabStore,
        lease: Lease::Expires,
        waits: Waits::AnyWay,
        preset: None,
        graded_as: None,
        outcomes: None,
        race: None,
        set_per_try: false,
    },
];

// The table is indexed by the variant: row `i` is the `i`-th variant's.
const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        assert!(
            TABLE[i].tier as usize == i,
            "TABLE's rows follow Tier's variants"
        );
        i += 1;
    }
};

impl Tier {
    pub const ALL: [Tier; TABLE.len()] = {
        let mut all = [Tier::None; TABLE.len()];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].tier;
            i += 1;
        }
        all
    };

    /// This tier's row of [`TABLE`].
    pub fn facts(self) -> &'static Facts {
        static ROWS: [Facts; TABLE.len()] = TABLE;
        &ROWS[self as usize]
    }

    /// The built-in tiers: every tier but the lab's, whose lock a room must submit first.
    pub fn built_in() -> impl Iterator<Item = Tier> {
        Tier::ALL
            .into_iter()
            .filter(|t| t.facts().needs != Needs::LabStore)
    }

    pub fn id(self) -> &'static str {
        self.facts().id
    }

    /// Position in `ALL`, for per-tier metric arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the tier has a lock at all, for a buyer to queue for.
    pub fn locks(self) -> bool {
        !matches!(self.facts().lease, Lease::NoLock | Lease::AtomicDeduct)
    }

    /// Whether an instance's buyers may pass the lock from one to the next in memory
    /// (`wait: cohort`): not without a lock beyond the instance, nor past a queue the lock
    /// store keeps in order.
    pub fn may_pass_in_cohort(self) -> bool {
        self.facts().waits == Waits::AnyWay
    }

    /// Whether the lock has a lease that runs out by itself (an expiry worth marking on the
    /// dashboard's timeline). ZooKeeper's lock lasts as long as its session instead.
    pub fn leased(self) -> bool {
        self.facts().lease == Lease::Expires
    }

    /// Whether the tier even claims mutual exclusion across instances (`none` has no lock,
    /// `local` a lock per process).
    pub fn excludes_across_instances(self) -> bool {
        !matches!(self.facts().lease, Lease::NoLock | Lease::InProcess)
    }

    /// The valid ids, comma separated, for error messages and `--help`.
    pub fn valid_ids() -> String {
        Tier::ALL.map(Tier::id).join(", ")
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Tier {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Tier::ALL
            .into_iter()
            .find(|t| t.id() == s)
            .ok_or_else(|| format!("unknown tier `{s}`; valid tiers: {}", Tier::valid_ids()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_round_trips() {
        for tier in Tier::ALL {
            assert_eq!(tier.id().parse::<Tier>(), Ok(tier));
            assert_eq!(serde_json::to_string(&tier).unwrap(), format!("\"{tier}\""));
        }
    }

    #[test]
    fn unknown_tier_lists_the_valid_ids() {
        let err = "chubby".parse::<Tier>().unwrap_err();
        assert!(
            err.contains("lua-release") && err.contains("atomic-deduct"),
            "{err}"
        );
    }
}
