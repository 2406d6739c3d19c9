//! Where the locks live: the kind of lock store an instance talks to, and how a lock-store
//! Redis keeps its data.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which kind of lock store the instance talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum LockStoreKind {
    /// The locks live in the resource store's Redis.
    Shared,
    /// One Redis of its own.
    Single,
    /// A primary and replica behind Sentinels.
    Sentinel,
    /// Independent masters for a Redlock quorum.
    Redlock,
    /// A Redis Cluster: masters each owning a share of the hash slots, each with a replica
    /// that a failover promotes. A room's lock lives on the master owning its slot.
    Cluster,
}

impl LockStoreKind {
    pub const ALL: [LockStoreKind; 5] = [
        LockStoreKind::Shared,
        LockStoreKind::Single,
        LockStoreKind::Sentinel,
        LockStoreKind::Redlock,
        LockStoreKind::Cluster,
    ];

    pub fn id(self) -> &'static str {
        match self {
            LockStoreKind::Shared => "shared",
            LockStoreKind::Single => "single",
            LockStoreKind::Sentinel => "sentinel",
            LockStoreKind::Redlock => "redlock",
            LockStoreKind::Cluster => "cluster",
        }
    }
}

impl fmt::Display for LockStoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for LockStoreKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        LockStoreKind::ALL
            .into_iter()
            .find(|k| k.id() == s)
            .ok_or_else(|| {
                format!(
                    "unknown lock store `{s}`; valid: shared, single, sentinel, redlock, cluster"
                )
            })
    }
}

/// How a lock-store Redis keeps its data (RDB snapshots, or AOF `appendfsync`), as
/// `oversell up` starts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Persistence {
    /// Nothing is written to disk: a restart comes back empty.
    None,
    /// RDB snapshots by Redis' classic save rules ([`RDB_SAVE_RULES`]): a restart comes back
    /// with the last snapshot, without whatever changed since.
    Rdb,
    /// An append-only file, fsynced once a second.
    Everysec,
    /// An append-only file, fsynced before every reply.
    Always,
    /// An append-only file each write reaches before its reply (Redis' `appendfsync no`),
    /// flushed to the disk by the kernel in its own time. A killed store loses nothing it
    /// answered, since the kernel already holds the file, and no reply waits on the disk; a
    /// machine that loses power loses what the kernel had not yet flushed (`always` keeps that
    /// too). Unlike `everysec`, no background fsync is ever in progress, so Redis never
    /// postpones a write past its reply when the disk is busy.
    Written,
}

/// `save` for [`Persistence::Rdb`]: a snapshot after 900 s with a change, 300 s with 10, or 60 s
/// with 10,000 (Redis' long-standing defaults, the rules article 002 lists).
pub const RDB_SAVE_RULES: &str = "900 1 300 10 60 10000";

impl Persistence {
    pub const ALL: [Persistence; 5] = [
        Persistence::None,
        Persistence::Rdb,
        Persistence::Everysec,
        Persistence::Always,
        Persistence::Written,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Persistence::None => "none",
            Persistence::Rdb => "rdb",
            Persistence::Everysec => "everysec",
            Persistence::Always => "always",
            Persistence::Written => "written",
        }
    }
}

impl fmt::Display for Persistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Persistence {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Persistence::ALL
            .into_iter()
            .find(|p| p.id() == s)
            .ok_or_else(|| {
                format!("unknown persistence `{s}`; valid: none, rdb, everysec, always, written")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_text_and_json() {
        for kind in LockStoreKind::ALL {
            assert_eq!(kind.id().parse::<LockStoreKind>(), Ok(kind));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        for p in Persistence::ALL {
            assert_eq!(p.id().parse::<Persistence>(), Ok(p));
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
        }
        assert!("raft"
            .parse::<LockStoreKind>()
            .unwrap_err()
            .contains("sentinel"));
    }
}
