//! What a scenario needs of the fleet it runs on (a lock store of a kind, its persistence,
//! ZooKeeper servers, a network a partition can cut, and the replica sync it runs with), the
//! `oversell up` flags that start such a fleet, and whether a running fleet fits. Its own file
//! because the catalog and the lab state it as data, while the runner asks it one question:
//! can this fleet run the scenario, and if not, how to start one that can.

use oversell_api::{LockStoreKind, Persistence, StateView, Tier};
use serde::Serialize;

/// What a scenario needs of the fleet's lock store (`oversell up --lock-store …`), and the
/// replica sync (`sync_replicas`) it runs with.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StoreSetup {
    /// `None`: any lock store; else `single`, `sentinel`, `redlock` or `cluster`.
    pub lock_store: Option<LockStoreKind>,
    /// The persistence its Redis must have; `None`: any.
    pub persistence: Option<Persistence>,
    pub sync_replicas: u32,
    /// ZooKeeper servers it needs beside the lock store (0: none).
    pub zookeeper: u32,
    /// Whether it needs PostgreSQL beside the lock store (the database tiers).
    pub postgres: bool,
    /// Whether it needs a fleet network whose links a partition can cut (`--network netns`).
    pub netns: bool,
    /// `min-replicas-to-write` on a Sentinel store while it runs (0: Redis' default, none).
    pub min_replicas: u32,
}

impl StoreSetup {
    pub const ANY: StoreSetup = StoreSetup {
        lock_store: None,
        persistence: None,
        sync_replicas: 0,
        zookeeper: 0,
        postgres: false,
        netns: false,
        min_replicas: 0,
    };

    /// ZooKeeper with at least `servers` servers (1, or 3 for an ensemble).
    pub const fn zookeeper(servers: u32) -> StoreSetup {
        StoreSetup {
            zookeeper: servers,
            ..StoreSetup::ANY
        }
    }

    /// PostgreSQL beside the lock store.
    pub const fn postgres() -> StoreSetup {
        StoreSetup {
            postgres: true,
            ..StoreSetup::ANY
        }
    }

    /// Whether the fleet must have something beyond the default: a lock store of its own,
    /// ZooKeeper, PostgreSQL, or a network of its own.
    pub fn is_special(&self) -> bool {
        self.lock_store.is_some() || self.zookeeper > 0 || self.postgres || self.netns
    }

    /// The same, on a fleet network a partition can cut (`--network netns`).
    pub const fn partitioned(self) -> StoreSetup {
        StoreSetup {
            netns: true,
            ..self
        }
    }

    /// The same, with `min-replicas-to-write` set on the Sentinel store's nodes.
    pub const fn min_replicas(self, replicas: u32) -> StoreSetup {
        StoreSetup {
            min_replicas: replicas,
            ..self
        }
    }

    pub const fn sentinel(sync_replicas: u32) -> StoreSetup {
        StoreSetup {
            lock_store: Some(LockStoreKind::Sentinel),
            persistence: None,
            sync_replicas,
            zookeeper: 0,
            postgres: false,
            netns: false,
            min_replicas: 0,
        }
    }

    /// A Redis Cluster (three masters, a replica each), the lock writes waiting for
    /// `sync_replicas` replicas.
    pub const fn cluster(sync_replicas: u32) -> StoreSetup {
        StoreSetup {
            lock_store: Some(LockStoreKind::Cluster),
            persistence: None,
            sync_replicas,
            zookeeper: 0,
            postgres: false,
            netns: false,
            min_replicas: 0,
        }
    }

    pub const fn single(persistence: Persistence) -> StoreSetup {
        StoreSetup {
            lock_store: Some(LockStoreKind::Single),
            persistence: Some(persistence),
            sync_replicas: 0,
            zookeeper: 0,
            postgres: false,
            netns: false,
            min_replicas: 0,
        }
    }

    /// A Redis of its own, with any persistence: a chapter that kills it for a while and
    /// needs nothing of what it keeps.
    pub const fn single_any() -> StoreSetup {
        StoreSetup {
            lock_store: Some(LockStoreKind::Single),
            persistence: None,
            sync_replicas: 0,
            zookeeper: 0,
            postgres: false,
            netns: false,
            min_replicas: 0,
        }
    }

    /// Redlock masters; `persistence` `None`: any.
    pub const fn redlock(persistence: Option<Persistence>) -> StoreSetup {
        StoreSetup {
            lock_store: Some(LockStoreKind::Redlock),
            persistence,
            sync_replicas: 0,
            zookeeper: 0,
            postgres: false,
            netns: false,
            min_replicas: 0,
        }
    }

    /// This setup with what `tier` needs beyond one Redis (its row of the tier table): its
    /// stores are the fleet's too, whether the scenario names them or not.
    pub fn with_needs_of(mut self, tier: Tier) -> StoreSetup {
        if tier.needs_zookeeper() {
            self.zookeeper = self.zookeeper.max(1);
        }
        self.postgres |= tier.needs_postgres();
        if let Some(kind) = tier.needs_lock_store() {
            self.lock_store = Some(kind);
        }
        self
    }

    /// The `oversell up` flags a fleet needs for this setup.
    pub fn up_flags(&self) -> String {
        let mut flags = String::new();
        if let Some(store) = self.lock_store {
            flags += &format!("--lock-store {store}");
        }
        if let Some(persistence) = self.persistence {
            flags += &format!(" --lock-persistence {persistence}");
        }
        match self.zookeeper {
            0 => {}
            1 => flags += " --zookeeper",
            n => flags += &format!(" --zookeeper-nodes {n}"),
        }
        if self.postgres {
            flags += " --postgres";
        }
        if self.netns {
            flags += " --network netns";
        }
        flags.trim().to_owned()
    }

    /// Why a fleet whose `/state` is `state` cannot run this, if it cannot.
    pub fn misfit(&self, state: &StateView) -> Option<String> {
        let store = &state.lock_store;
        let kind = store.kind;
        let persistence = store.nodes.first().and_then(|n| n.persistence.as_deref());
        let servers = store
            .zookeeper
            .as_ref()
            .map_or(0, |z| z.servers.len() as u32);
        let fits = self.lock_store.is_none_or(|k| k == kind)
            && self.persistence.is_none_or(|p| Some(p.id()) == persistence)
            && servers >= self.zookeeper
            && (!self.postgres || store.postgres.is_some())
            && (!self.netns || state.network.is_some());
        let persistence = persistence.unwrap_or("?");
        (!fits).then(|| {
            format!(
                "needs a fleet started with `{}oversell up {}`; this one's lock store is \
                 `{kind}` (persistence {persistence}) with {servers} ZooKeeper servers{}{}",
                if self.netns { "sudo " } else { "" },
                self.up_flags(),
                match store.postgres {
                    Some(_) => " and PostgreSQL",
                    None => "",
                },
                match state.network {
                    Some(_) => ", on a network of its own",
                    None => ", on loopback",
                }
            )
        })
    }
}
