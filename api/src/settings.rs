//! The run-time settings of a room: which tier, how long the lease and the business work are,
//! and how a buyer waits for a held lock. The service stores them in Redis so the whole fleet
//! shares them; `PUT /admin/config` takes a [`SettingsPatch`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::tier::Tier;

/// How a buyer waits when the lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitStrategy {
    /// Sleep this many milliseconds, then retry (the articles' loop uses 20).
    Spin { sleep_ms: u64 },
    /// Sleep until the holder publishes its release, at most the lock's remaining lease.
    PubSub,
    /// Lock cohorting (Dice, Marathe, Shavit, PPoPP 2012): the buyers of one instance queue
    /// locally, one of them waits for the lock as `pubsub` does, and a holder hands the lock
    /// it holds to the next local buyer, at most `passes` times in a row and only while half
    /// the lease is left, before releasing it to the other instances (`src/lock/cohort.rs`).
    /// Not the articles' technique: an optimisation of its own, never the default.
    Cohort { passes: u32 },
}

/// Hand-offs a cohort makes before giving the lock back, when `cohort` names no number.
/// Measured (BENCHMARKS.md section 3, 64 buyers on 3 instances): 32 sold 5–15 % more than 8
/// with a lower p99, since each release and re-acquire across instances costs several round
/// trips; beyond 32 an instance's queue usually empties before the bound is reached.
pub const DEFAULT_COHORT_PASSES: u32 = 32;
/// The most `cohort:<passes>` accepts: beyond it one instance could keep the lock for a long
/// time while the others wait.
pub const MAX_COHORT_PASSES: u32 = 1_000;

impl fmt::Display for WaitStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitStrategy::Spin { sleep_ms } => write!(f, "spin:{sleep_ms}"),
            WaitStrategy::PubSub => f.write_str("pubsub"),
            WaitStrategy::Cohort { passes } => write!(f, "cohort:{passes}"),
        }
    }
}

impl FromStr for WaitStrategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!(
                "invalid wait `{s}`: expected `pubsub`, `spin:<ms>` (e.g. spin:20) or \
                 `cohort[:<passes>]` (e.g. cohort:32)"
            )
        };
        if s == "pubsub" {
            return Ok(WaitStrategy::PubSub);
        }
        if s == "cohort" {
            return Ok(WaitStrategy::Cohort {
                passes: DEFAULT_COHORT_PASSES,
            });
        }
        // A number too large for its type is out of range, not malformed.
        let number = |n: &str| -> Result<Option<u64>, String> {
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            Ok(n.parse().ok())
        };
        if let Some(n) = s.strip_prefix("cohort:") {
            return match number(n)?.and_then(|p| u32::try_from(p).ok()) {
                Some(passes) if passes <= MAX_COHORT_PASSES => Ok(WaitStrategy::Cohort { passes }),
                _ => Err(format!(
                    "invalid wait `{s}`: cohort passes must be 0..={MAX_COHORT_PASSES}"
                )),
            };
        }
        let ms = s.strip_prefix("spin:").ok_or_else(bad)?;
        let sleep_ms = match number(ms)? {
            Some(ms) if (1..=10_000).contains(&ms) => ms,
            _ => {
                return Err(format!(
                    "invalid wait `{s}`: spin sleep must be 1..=10000 ms"
                ))
            }
        };
        Ok(WaitStrategy::Spin { sleep_ms })
    }
}

impl Serialize for WaitStrategy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for WaitStrategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// In the API's document: a string, as it is written (`pubsub`, `spin:<ms>`, `cohort[:<passes>]`).
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for WaitStrategy {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(r"^(pubsub|spin:[0-9]+|cohort(:[0-9]+)?)$"))
            .description(Some(
                "How a buyer waits for a held lock: `pubsub`, `spin:<ms>` (1..=10000) or \
                 `cohort[:<passes>]` (0..=1000)",
            ))
            .examples(["pubsub", "spin:20", "cohort:32"])
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for WaitStrategy {}

/// How the reentrant tiers keep their lease, as Redisson offers both; and whether the database
/// tiers' sessions time out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum LeaseMode {
    /// `lock()`: a watchdog renews the lease every TTL/3 while the holder lives. A database
    /// lock lasts as long as its session, which never times out.
    #[default]
    Watchdog,
    /// `lock(leaseTime)`: the lease is fixed; nothing renews it, as in Redisson when an
    /// explicit lease is given. A database session idle for the TTL inside its transaction is
    /// ended by the server (`idle_in_transaction_session_timeout`), and its lock with it.
    Fixed,
}

/// Bounds that keep a workshop from wedging itself (a 0 ms lease, a one-hour business step).
pub const TTL_MS_RANGE: std::ops::RangeInclusive<u64> = 10..=600_000;
pub const BUSINESS_MS_RANGE: std::ops::RangeInclusive<u64> = 0..=60_000;
pub const WAIT_DEADLINE_MS_RANGE: std::ops::RangeInclusive<u64> = 1..=120_000;
pub const SYNC_REPLICAS_RANGE: std::ops::RangeInclusive<u64> = 0..=4;
pub const SYNC_TIMEOUT_MS_RANGE: std::ops::RangeInclusive<u64> = 1..=10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Settings {
    pub tier: Tier,
    /// Lease of the lock, for the tiers that have one.
    pub ttl_ms: u64,
    /// Work done inside the critical section, between reading and writing the stock.
    pub business_ms: u64,
    pub wait: WaitStrategy,
    /// How long a buyer may wait for the lock before getting a 503.
    pub wait_deadline_ms: u64,
    /// After each lock write, wait until this many replicas have it (`WAIT`), or fail the
    /// acquire: Redisson's `checkLockSyncedSlaves`. 0 = off (the default).
    #[serde(default)]
    pub sync_replicas: u32,
    /// How long that wait may take.
    #[serde(default = "default_sync_timeout_ms")]
    pub sync_timeout_ms: u64,
    /// Whether `reentrant-watchdog` and `fenced` renew their lease (the other Redis tiers'
    /// leases are always fixed), and whether the database tiers' sessions time out.
    #[serde(default)]
    pub lease: LeaseMode,
}

/// Redisson's `slavesSyncTimeout` default.
pub const DEFAULT_SYNC_TIMEOUT_MS: u64 = 1_000;

fn default_sync_timeout_ms() -> u64 {
    DEFAULT_SYNC_TIMEOUT_MS
}

impl Settings {
    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms)
    }
    pub fn business(&self) -> Duration {
        Duration::from_millis(self.business_ms)
    }
    pub fn wait_deadline(&self) -> Duration {
        Duration::from_millis(self.wait_deadline_ms)
    }

    /// Checks every field against its range; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        check("ttl_ms", self.ttl_ms, TTL_MS_RANGE)?;
        check("business_ms", self.business_ms, BUSINESS_MS_RANGE)?;
        check(
            "wait_deadline_ms",
            self.wait_deadline_ms,
            WAIT_DEADLINE_MS_RANGE,
        )?;
        check(
            "sync_replicas",
            u64::from(self.sync_replicas),
            SYNC_REPLICAS_RANGE,
        )?;
        check(
            "sync_timeout_ms",
            self.sync_timeout_ms,
            SYNC_TIMEOUT_MS_RANGE,
        )
    }

    /// Applies the fields a patch sets, then validates the result.
    pub fn patched(mut self, patch: &SettingsPatch) -> Result<Self, String> {
        if let Some(tier) = patch.tier {
            self.tier = tier;
        }
        if let Some(ttl_ms) = patch.ttl_ms {
            self.ttl_ms = ttl_ms;
        }
        if let Some(business_ms) = patch.business_ms {
            self.business_ms = business_ms;
        }
        if let Some(wait) = patch.wait {
            self.wait = wait;
        }
        if let Some(deadline) = patch.wait_deadline_ms {
            self.wait_deadline_ms = deadline;
        }
        if let Some(replicas) = patch.sync_replicas {
            self.sync_replicas = replicas;
        }
        if let Some(timeout) = patch.sync_timeout_ms {
            self.sync_timeout_ms = timeout;
        }
        if let Some(lease) = patch.lease {
            self.lease = lease;
        }
        self.validate()?;
        Ok(self)
    }
}

fn check(name: &str, value: u64, range: std::ops::RangeInclusive<u64>) -> Result<(), String> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{name} = {value} is out of range {}..={}",
            range.start(),
            range.end()
        ))
    }
}

/// A partial update from `PUT /admin/config`; unknown fields are refused, and a field left
/// out is not sent.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SettingsPatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 10, maximum = 600000))]
    pub ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 60000))]
    pub business_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 120000))]
    pub wait_deadline_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 4))]
    pub sync_replicas: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10000))]
    pub sync_timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseMode>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_strategy_parses_both_forms() {
        assert_eq!("pubsub".parse(), Ok(WaitStrategy::PubSub));
        assert_eq!("spin:20".parse(), Ok(WaitStrategy::Spin { sleep_ms: 20 }));
        assert!("spin:".parse::<WaitStrategy>().is_err());
        assert!("spin:0".parse::<WaitStrategy>().is_err());
        assert!("poll".parse::<WaitStrategy>().is_err());
    }

    #[test]
    fn a_number_too_large_is_out_of_range_not_malformed() {
        let range = |s: &str| s.parse::<WaitStrategy>().unwrap_err();
        assert!(range("cohort:99999999999").contains("must be 0..=1000"));
        assert!(range("cohort:99999999999999999999999").contains("must be 0..=1000"));
        assert!(range("spin:99999999999999999999999").contains("must be 1..=10000"));
        assert!(range("spin:+5").contains("expected `pubsub`"));
        assert!(range("cohort: 5").contains("expected `pubsub`"));
    }

    #[test]
    fn cohort_parses_with_and_without_passes_and_prints_them() {
        let default = WaitStrategy::Cohort {
            passes: DEFAULT_COHORT_PASSES,
        };
        assert_eq!("cohort".parse(), Ok(default));
        assert_eq!(
            default.to_string(),
            format!("cohort:{DEFAULT_COHORT_PASSES}")
        );
        assert_eq!("cohort:0".parse(), Ok(WaitStrategy::Cohort { passes: 0 }));
        assert_eq!("cohort:16".parse(), Ok(WaitStrategy::Cohort { passes: 16 }));
        assert!("cohort:".parse::<WaitStrategy>().is_err());
        assert!("cohort:1001".parse::<WaitStrategy>().is_err());
        assert!("cohort:-1".parse::<WaitStrategy>().is_err());
        let json = serde_json::to_string(&WaitStrategy::Cohort { passes: 4 }).unwrap();
        assert_eq!(json, r#""cohort:4""#);
    }

    #[test]
    fn a_patch_outside_the_ranges_names_the_field() {
        let base = Settings {
            tier: Tier::LuaRelease,
            ttl_ms: 1000,
            business_ms: 2,
            wait: WaitStrategy::PubSub,
            wait_deadline_ms: 5000,
            sync_replicas: 0,
            sync_timeout_ms: DEFAULT_SYNC_TIMEOUT_MS,
            lease: LeaseMode::Watchdog,
        };
        let patch = SettingsPatch {
            ttl_ms: Some(0),
            ..Default::default()
        };
        assert!(base.patched(&patch).unwrap_err().contains("ttl_ms"));
        let ok = SettingsPatch {
            business_ms: Some(50),
            ..Default::default()
        };
        assert_eq!(base.patched(&ok).unwrap().business_ms, 50);
        let fixed: SettingsPatch = serde_json::from_str(r#"{"lease":"fixed"}"#).unwrap();
        assert_eq!(base.patched(&fixed).unwrap().lease, LeaseMode::Fixed);
        assert!(serde_json::from_str::<SettingsPatch>(r#"{"lease":"forever"}"#).is_err());
    }
}
