//! The `partition` fault: real packet drops, both ways, between the isolated members and the
//! rest of the fleet's network, healed after `ms` or at once by `heal`.
//!
//! Each namespace holds one `nft` table with a set of addresses it may not talk to; a
//! partition adds the other side's addresses to each side's set, each element with the
//! partition's timeout. The kernel forgets an element when its timeout ends, so the heal
//! happens on time even if the instance that made the cut freezes, crashes or is itself cut
//! off. The gateway address (the resource store, nginx) is never put in a set.
//!
//! What the dashboard shows of it is kept in the resource store, under a key that expires
//! with the cut.

use std::time::{SystemTime, UNIX_EPOCH};

use oversell_api::fault::{HOLDER, LOCK_PRIMARY};
use oversell_api::{PartitionRequest, PartitionView};
use serde::{Deserialize, Serialize};

use super::network::Network;
use crate::redis_pool::{RedisPool, StoreError};

/// The table each namespace holds, and its drop set.
pub const TABLE: &str = "oversell";
const SET: &str = "cut";

/// The longest cut one request may ask for: a workshop's minutes, not a fleet left split.
pub const MAX_MS: u64 = 600_000;

/// The resource-store key of the partition in force (fleet-wide: a partition cuts every
/// room's lock store).
const KEY: &str = "oversell:partition";

/// The table a namespace starts with: an empty drop set, checked on the way in and out.
pub fn table() -> String {
    table_sparing(None)
}

/// The same, letting TCP to and from `port` through whatever the set holds: a compose
/// store's supervisor is asked for the cut and the heal over the fleet's network, and must
/// still hear and answer. That port is the fleet's management plane, not the store's
/// traffic: the store itself stays cut off.
pub fn table_sparing(port: Option<u16>) -> String {
    let (spare_in, spare_out) = match port {
        Some(port) => (
            format!("tcp dport {port} accept; "),
            format!("tcp sport {port} accept; "),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "table inet {TABLE} {{\n\
           set {SET} {{ type ipv4_addr; flags timeout; }}\n\
           chain input {{ type filter hook input priority 0; {spare_in}ip saddr @{SET} drop; }}\n\
           chain output {{ type filter hook output priority 0; {spare_out}ip daddr @{SET} drop; }}\n\
         }}\n"
    )
}

/// Empties the drop set: every link of the namespace open again.
pub fn flush() -> String {
    format!("flush set inet {TABLE} {SET}\n")
}

/// Drops packets to and from `addrs` for `ms`, then lets them through again (the kernel
/// forgets each element when its timeout ends).
pub fn add(addrs: &[std::net::Ipv4Addr], ms: u64) -> String {
    let elements: Vec<String> = addrs
        .iter()
        .map(|a| format!("{a} timeout {ms}ms"))
        .collect();
    format!(
        "add element inet {TABLE} {SET} {{ {} }}\n",
        elements.join(", ")
    )
}

/// Where the drops are made: what a partition asks of each member's end of its links.
/// `oversell up --network netns` makes them in each member's namespace ([`Namespaces`]); a
/// compose fleet asks each store's supervisor (`member::containers`).
#[async_trait::async_trait]
pub trait Links: Send + Sync {
    /// Drops packets between member `id` and `addrs`, both ways, for `ms`.
    async fn drop_between(
        &self,
        id: &str,
        addrs: &[std::net::Ipv4Addr],
        ms: u64,
    ) -> Result<(), CutError>;
    /// Lets every packet of member `id` through again.
    async fn open(&self, id: &str) -> Result<(), CutError>;
}

/// The drops made in each member's own namespace, on this machine.
pub struct Namespaces(pub Network);

#[async_trait::async_trait]
impl Links for Namespaces {
    async fn drop_between(
        &self,
        id: &str,
        addrs: &[std::net::Ipv4Addr],
        ms: u64,
    ) -> Result<(), CutError> {
        nft(&self.0, id, &add(addrs, ms)).await
    }

    async fn open(&self, id: &str) -> Result<(), CutError> {
        nft(&self.0, id, &flush()).await
    }
}

/// Why a partition request cannot be done, in words for a 4xx.
#[derive(Debug, thiserror::Error)]
pub enum CutError {
    #[error(
        "a partition needs a fleet whose members each have a network of their own: start it \
         with `sudo oversell up --network netns`, or on docker compose (deploy/compose.sh)"
    )]
    NoNetwork,
    #[error("{0}")]
    Invalid(String),
    #[error("nft failed: {0}")]
    Nft(String),
}

/// The cut as stored for the dashboard.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    isolate: Vec<String>,
    rest: Vec<String>,
    ms: u64,
    until_ms: u64,
}

/// The two sides of a request: the isolated members, and every other one.
pub fn sides(
    network: &Network,
    request: &PartitionRequest,
) -> Result<(Vec<String>, Vec<String>), CutError> {
    if request.ms == 0 || request.ms > MAX_MS {
        return Err(CutError::Invalid(format!(
            "`ms` must be 1..={MAX_MS} (how long the cut lasts before it heals); got {}",
            request.ms
        )));
    }
    if request.isolate.is_empty() {
        return Err(CutError::Invalid(
            "`isolate` is empty: name the members to cut off, e.g. [\"lock1\", \"app1\"]".into(),
        ));
    }
    let known: Vec<&str> = network.members.iter().map(|m| m.id.as_str()).collect();
    if let Some(unknown) = request
        .isolate
        .iter()
        .find(|id| !known.contains(&id.as_str()))
    {
        return Err(CutError::Invalid(format!(
            "unknown member `{unknown}` in `isolate`; this fleet's members: {}",
            known.join(", ")
        )));
    }
    let rest: Vec<String> = known
        .iter()
        .filter(|id| !request.isolate.iter().any(|i| i == *id))
        .map(|id| id.to_string())
        .collect();
    if rest.is_empty() {
        return Err(CutError::Invalid(
            "`isolate` names every member: nothing would be left on the other side".into(),
        ));
    }
    let mut isolate = request.isolate.clone();
    isolate.dedup();
    Ok((isolate, rest))
}

/// Checks a `partition` fault as it is armed, its aliases standing for any member they may
/// name at the strike ([`oversell_api::fault::HOLDER`]: an instance, [`LOCK_PRIMARY`]: a lock
/// store node).
pub fn check_armed(network: &Network, isolate: &[String], ms: u64) -> Result<(), CutError> {
    let first = |prefix: &str| {
        network
            .members
            .iter()
            .find(|m| m.id.starts_with(prefix))
            .map(|m| m.id.clone())
    };
    let mut named = Vec::new();
    for id in isolate {
        let stand_in = match id.as_str() {
            HOLDER => first("app"),
            LOCK_PRIMARY => Some(first("lock").ok_or_else(|| {
                CutError::Invalid(format!(
                    "`{LOCK_PRIMARY}` names the lock store's primary, and this fleet's lock store \
                     has no node of its own (start it with --lock-store sentinel or single)"
                ))
            })?),
            _ => Some(id.clone()),
        };
        named.extend(stand_in);
    }
    sides(network, &PartitionRequest { isolate: named, ms }).map(|_| ())
}

/// Puts the members in place of the aliases: `holder` is `instance`, `lock-primary` the
/// member at `primary` (the lock store's primary as the strike found it).
pub fn resolve(
    network: &Network,
    isolate: &[impl AsRef<str>],
    instance: &str,
    primary: Option<std::net::Ipv4Addr>,
) -> Result<Vec<String>, CutError> {
    isolate
        .iter()
        .map(|id| match id.as_ref() {
            HOLDER => Ok(instance.to_owned()),
            LOCK_PRIMARY => primary
                .and_then(|ip| network.members.iter().find(|m| m.addr == ip))
                .map(|m| m.id.clone())
                .ok_or_else(|| CutError::Invalid("the lock store's primary was not found".into())),
            other => Ok(other.to_owned()),
        })
        .collect()
}

/// Cuts `isolate` off from `rest` for `ms`, both ways, and notes it for the dashboard.
pub async fn partition(
    network: &Network,
    links: &dyn Links,
    redis: &RedisPool,
    request: &PartitionRequest,
) -> Result<PartitionView, CutError> {
    let (isolate, rest) = sides(network, request)?;
    let ms = request.ms;
    // Heal first: a new cut replaces the one in force, it does not add to it.
    heal_sets(network, links).await?;
    for (side, other) in [(&isolate, &rest), (&rest, &isolate)] {
        let addrs: Vec<std::net::Ipv4Addr> = other
            .iter()
            .filter_map(|id| network.member(id))
            .map(|m| m.addr)
            .collect();
        for id in side {
            links.drop_between(id, &addrs, ms).await?;
        }
    }
    let stored = Stored {
        isolate: isolate.clone(),
        rest: rest.clone(),
        ms,
        until_ms: now_ms() + ms,
    };
    if let Err(err) = store(redis, Some(&stored)).await {
        tracing::warn!(%err, "partition in force, but not noted for the dashboard");
    }
    Ok(PartitionView {
        isolate,
        rest,
        ms,
        left_ms: ms,
    })
}

/// Ends the partition in force, if any.
pub async fn heal(network: &Network, links: &dyn Links, redis: &RedisPool) -> Result<(), CutError> {
    heal_sets(network, links).await?;
    if let Err(err) = store(redis, None).await {
        tracing::warn!(%err, "partition healed, but the dashboard's note of it stays until it expires");
    }
    Ok(())
}

/// The partition in force, as noted in the resource store.
pub async fn in_force(redis: &RedisPool) -> Result<Option<PartitionView>, StoreError> {
    let mut conn = redis.conn().await?;
    let text: Option<String> = redis::cmd("GET").arg(KEY).query_async(&mut conn).await?;
    let Some(stored) = text.and_then(|t| serde_json::from_str::<Stored>(&t).ok()) else {
        return Ok(None);
    };
    let left_ms = stored.until_ms.saturating_sub(now_ms());
    Ok((left_ms > 0).then_some(PartitionView {
        isolate: stored.isolate,
        rest: stored.rest,
        ms: stored.ms,
        left_ms,
    }))
}

async fn heal_sets(network: &Network, links: &dyn Links) -> Result<(), CutError> {
    for member in &network.members {
        links.open(&member.id).await?;
    }
    Ok(())
}

async fn store(redis: &RedisPool, stored: Option<&Stored>) -> Result<(), StoreError> {
    let mut conn = redis.conn().await?;
    let cmd = match stored {
        Some(stored) => {
            let mut cmd = redis::cmd("SET");
            let text = serde_json::to_string(stored).unwrap_or_default();
            cmd.arg(KEY).arg(text).arg("PX").arg(stored.ms);
            cmd
        }
        None => {
            let mut cmd = redis::cmd("DEL");
            cmd.arg(KEY);
            cmd
        }
    };
    let _: () = cmd.query_async(&mut conn).await?;
    Ok(())
}

/// Runs an `nft` script inside member `id`'s namespace.
async fn nft(network: &Network, id: &str, script: &str) -> Result<(), CutError> {
    use tokio::io::AsyncWriteExt;
    let ns = network.namespace(id);
    let mut child = tokio::process::Command::new("ip")
        .args(["netns", "exec", &ns, "nft", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| CutError::Nft(format!("cannot run `ip netns exec {ns} nft`: {err}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .await
            .map_err(|err| CutError::Nft(err.to_string()))?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|err| CutError::Nft(err.to_string()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(CutError::Nft(format!("in {ns}: {}", err.trim())));
    }
    Ok(())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;
    use crate::member::network::Member;

    fn network() -> Network {
        let member = |id: &str, last| Member {
            id: id.into(),
            addr: Ipv4Addr::new(10, 231, 1, last),
        };
        Network {
            run: "o1x0".into(),
            gateway: Ipv4Addr::new(10, 231, 1, 1),
            members: vec![member("lock1", 2), member("lock2", 3), member("app1", 4)],
        }
    }

    fn ask(isolate: &[&str], ms: u64) -> PartitionRequest {
        PartitionRequest {
            isolate: isolate.iter().map(|s| s.to_string()).collect(),
            ms,
        }
    }

    #[test]
    fn a_supervisors_port_is_let_through_before_the_drop_and_only_when_asked() {
        let spared = table_sparing(Some(7070));
        let accept = spared.find("tcp dport 7070 accept").unwrap();
        assert!(
            accept < spared.find("ip saddr @cut drop").unwrap(),
            "{spared}"
        );
        assert!(spared.contains("tcp sport 7070 accept; ip daddr @cut drop"));
        assert!(!table().contains("accept"), "{}", table());
    }

    #[test]
    fn the_rest_is_every_member_not_isolated() {
        let (isolate, rest) = sides(&network(), &ask(&["lock1", "app1"], 500)).unwrap();
        assert_eq!(isolate, ["lock1", "app1"]);
        assert_eq!(rest, ["lock2"]);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let err = |isolate: &[&str], ms| sides(&network(), &ask(isolate, ms)).unwrap_err();
        let unknown = err(&["redis9"], 500).to_string();
        assert!(
            unknown.contains("redis9") && unknown.contains("lock1, lock2, app1"),
            "{unknown}"
        );
        assert!(err(&[], 500).to_string().contains("empty"));
        assert!(err(&["lock1"], 0).to_string().contains("ms"));
        assert!(err(&["lock1"], MAX_MS + 1).to_string().contains("ms"));
        assert!(err(&["lock1", "lock2", "app1"], 5)
            .to_string()
            .contains("every"));
    }
}
