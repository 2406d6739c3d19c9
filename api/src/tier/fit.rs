//! What a tier needs of a fleet beyond one Redis, read from its row's `needs`: the stores it
//! cannot work without, why a fleet cannot run it, and the `oversell up` flags that give it.

use super::{Needs, Tier};
use crate::store::LockStoreKind;

impl Tier {
    /// The lock store a tier cannot work without: Redlock's quorum needs its masters.
    pub fn needs_lock_store(self) -> Option<LockStoreKind> {
        (self.facts().needs == Needs::RedlockMasters).then_some(LockStoreKind::Redlock)
    }

    /// Whether the tier's lock lives in ZooKeeper.
    pub fn needs_zookeeper(self) -> bool {
        self.facts().needs == Needs::ZooKeeper
    }

    /// Whether the tier's lock lives in PostgreSQL.
    pub fn needs_postgres(self) -> bool {
        self.facts().needs == Needs::PostgreSQL
    }

    /// Whether the tier runs students' scripts (the lab's).
    pub fn needs_lab(self) -> bool {
        self.facts().needs == Needs::LabStore
    }

    /// Why this tier cannot run on a lock store of kind `here` (with ZooKeeper or PostgreSQL
    /// beside it or not), as one sentence; `None` if it can.
    pub fn misfit(self, here: LockStoreKind, beside: Beside) -> Option<String> {
        match self.facts().needs {
            Needs::LabStore if !matches!(here, LockStoreKind::Single | LockStoreKind::Sentinel) => {
                Some(format!(
                    "tier {self} runs students' scripts, which only a lock store apart from the \
                     stock may hold; this fleet's lock store is `{here}` (start it with: oversell \
                     up --lab, or --lock-store single|sentinel)"
                ))
            }
            Needs::ZooKeeper if !beside.zookeeper => Some(format!(
                "tier {self} needs ZooKeeper, and this fleet has none (start it with: oversell \
                 up --tier {self}, or give each instance --zookeeper HOST:PORT)"
            )),
            Needs::PostgreSQL if !beside.postgres => Some(format!(
                "tier {self} needs PostgreSQL, and this fleet has none (start it with: oversell \
                 up --tier {self}, or give each instance --postgres postgres://USER@HOST:PORT/DB)"
            )),
            _ => {
                let needed = self.needs_lock_store().filter(|k| *k != here)?;
                Some(format!(
                    "tier {self} needs `--lock-store {needed}`; this fleet's lock store is \
                     `{here}` (start it with: oversell up --lock-store {needed} --tier {self})"
                ))
            }
        }
    }

    /// The `oversell up` flags that give a fleet what this tier needs beyond one Redis.
    pub fn up_flags(self) -> Option<&'static str> {
        match self.facts().needs {
            Needs::Redis => None,
            Needs::RedlockMasters => Some("--lock-store redlock"),
            Needs::ZooKeeper => Some("--zookeeper"),
            Needs::PostgreSQL => Some("--postgres"),
            Needs::LabStore => Some("--lab"),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
