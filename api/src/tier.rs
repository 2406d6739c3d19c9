//! The lock tiers by id: parsing, listing, and what each one is.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::store::LockStoreKind;

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

impl Tier {
    pub const ALL: [Tier; 17] = [
        Tier::None,
        Tier::Local,
        Tier::Setnx,
        Tier::SetnxExpire,
        Tier::AtomicExpiry,
        Tier::UuidOwner,
        Tier::LuaRelease,
        Tier::ReentrantWatchdog,
        Tier::Fair,
        Tier::Fenced,
        Tier::Redlock,
        Tier::Zookeeper,
        Tier::ZookeeperFenced,
        Tier::Postgres,
        Tier::PostgresFenced,
        Tier::AtomicDeduct,
        Tier::Custom,
    ];

    /// The built-in tiers: every tier but `custom`, whose lock a room must submit first.
    pub fn built_in() -> impl Iterator<Item = Tier> {
        Tier::ALL.into_iter().filter(|t| *t != Tier::Custom)
    }

    pub fn id(self) -> &'static str {
        match self {
            Tier::None => "none",
            Tier::Local => "local",
            Tier::Setnx => "setnx",
            Tier::SetnxExpire => "setnx-expire",
            Tier::AtomicExpiry => "atomic-expiry",
            Tier::UuidOwner => "uuid-owner",
            Tier::LuaRelease => "lua-release",
            Tier::ReentrantWatchdog => "reentrant-watchdog",
            Tier::Fair => "fair",
            Tier::Fenced => "fenced",
            Tier::Redlock => "redlock",
            Tier::Zookeeper => "zookeeper",
            Tier::ZookeeperFenced => "zookeeper-fenced",
            Tier::Postgres => "postgres",
            Tier::PostgresFenced => "postgres-fenced",
            Tier::AtomicDeduct => "atomic-deduct",
            Tier::Custom => "custom",
        }
    }

    /// Position in `ALL`, for per-tier metric arrays.
    pub fn index(self) -> usize {
        Tier::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The lock store a tier cannot work without: Redlock's quorum needs its masters.
    pub fn needs_lock_store(self) -> Option<LockStoreKind> {
        match self {
            Tier::Redlock => Some(LockStoreKind::Redlock),
            _ => None,
        }
    }

    /// Whether the tier's lock lives in ZooKeeper.
    pub fn needs_zookeeper(self) -> bool {
        matches!(self, Tier::Zookeeper | Tier::ZookeeperFenced)
    }

    /// Whether the tier's lock lives in PostgreSQL.
    pub fn needs_postgres(self) -> bool {
        matches!(self, Tier::Postgres | Tier::PostgresFenced)
    }

    /// Whether the lock store keeps its own first-come-first-served queue of waiters
    /// (ZooKeeper's sequential nodes, PostgreSQL's lock queue): an instance passes nothing on
    /// in memory.
    pub fn queues_in_store(self) -> bool {
        self.needs_zookeeper() || self.needs_postgres()
    }

    /// Why this tier cannot run on a lock store of kind `here` (with ZooKeeper or PostgreSQL
    /// beside it or not), as one sentence; `None` if it can.
    pub fn misfit(self, here: LockStoreKind, beside: Beside) -> Option<String> {
        if self == Tier::Custom && !matches!(here, LockStoreKind::Single | LockStoreKind::Sentinel)
        {
            return Some(format!(
                "tier custom runs students' scripts, which only a lock store apart from the \
                 stock may hold; this fleet's lock store is `{here}` (start it with: oversell \
                 up --lab, or --lock-store single|sentinel)"
            ));
        }
        if self.needs_zookeeper() && !beside.zookeeper {
            return Some(format!(
                "tier {self} needs ZooKeeper, and this fleet has none (start it with: oversell \
                 up --tier {self}, or give each instance --zookeeper HOST:PORT)"
            ));
        }
        if self.needs_postgres() && !beside.postgres {
            return Some(format!(
                "tier {self} needs PostgreSQL, and this fleet has none (start it with: oversell \
                 up --tier {self}, or give each instance --postgres postgres://USER@HOST:PORT/DB)"
            ));
        }
        let needed = self.needs_lock_store().filter(|k| *k != here)?;
        Some(format!(
            "tier {self} needs `--lock-store {needed}`; this fleet's lock store is `{here}` \
             (start it with: oversell up --lock-store {needed} --tier {self})"
        ))
    }

    /// Whether the lock has a lease that runs out by itself (an expiry worth marking on the
    /// dashboard's timeline). ZooKeeper's lock lasts as long as its session instead.
    pub fn leased(self) -> bool {
        matches!(
            self,
            Tier::SetnxExpire
                | Tier::AtomicExpiry
                | Tier::UuidOwner
                | Tier::LuaRelease
                | Tier::ReentrantWatchdog
                | Tier::Fair
                | Tier::Fenced
                | Tier::Redlock
                | Tier::Custom
        )
    }

    /// Whether the tier even claims mutual exclusion across instances (`none` has no lock,
    /// `local` a lock per process).
    pub fn excludes_across_instances(self) -> bool {
        !matches!(self, Tier::None | Tier::Local)
    }

    /// The `oversell up` flags that give a fleet what this tier needs beyond one Redis.
    pub fn up_flags(self) -> Option<&'static str> {
        if self.needs_zookeeper() {
            return Some("--zookeeper");
        }
        if self.needs_postgres() {
            return Some("--postgres");
        }
        if self == Tier::Custom {
            return Some("--lab");
        }
        self.needs_lock_store().map(|_| "--lock-store redlock")
    }

    /// The valid ids, comma separated, for error messages and `--help`.
    pub fn valid_ids() -> String {
        Tier::ALL.map(Tier::id).join(", ")
    }
}

/// The lock stores a fleet has beside its Redis lock store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Beside {
    pub zookeeper: bool,
    pub postgres: bool,
}

impl Beside {
    pub const NOTHING: Beside = Beside {
        zookeeper: false,
        postgres: false,
    };
    pub const ZOOKEEPER: Beside = Beside {
        zookeeper: true,
        postgres: false,
    };
    pub const BOTH: Beside = Beside {
        zookeeper: true,
        postgres: true,
    };
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
    fn redlock_needs_its_masters_and_zookeeper_its_servers() {
        assert!(Tier::Redlock
            .misfit(LockStoreKind::Redlock, Beside::NOTHING)
            .is_none());
        let why = Tier::Redlock
            .misfit(LockStoreKind::Shared, Beside::ZOOKEEPER)
            .unwrap();
        assert!(why.contains("--lock-store redlock"), "{why}");
        assert!(Tier::LuaRelease
            .misfit(LockStoreKind::Redlock, Beside::NOTHING)
            .is_none());
        let why = Tier::Zookeeper
            .misfit(LockStoreKind::Shared, Beside::NOTHING)
            .unwrap();
        assert!(why.contains("--zookeeper"), "{why}");
        let why = Tier::Custom
            .misfit(LockStoreKind::Shared, Beside::NOTHING)
            .unwrap();
        assert!(why.contains("--lab"), "{why}");
        assert!(Tier::Custom
            .misfit(LockStoreKind::Single, Beside::NOTHING)
            .is_none());
        assert!(Tier::ZookeeperFenced
            .misfit(LockStoreKind::Single, Beside::ZOOKEEPER)
            .is_none());
        let why = Tier::Postgres
            .misfit(LockStoreKind::Shared, Beside::ZOOKEEPER)
            .unwrap();
        assert!(why.contains("--postgres"), "{why}");
        assert!(Tier::PostgresFenced
            .misfit(LockStoreKind::Shared, Beside::BOTH)
            .is_none());
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
