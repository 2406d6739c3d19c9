//! What `/state` shows of the lock store: every node, its role as the node itself reports it,
//! whether it answers, its persistence, and which node holds the room's lock right now. Behind
//! Sentinel the nodes are the ones the Sentinels know, so a killed primary still shows, as down;
//! in a Redis Cluster every node the cluster knows, and the room's lock on the master owning
//! its slot (and on that master's replica once replicated, which a failover then keeps).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::Value;

use super::LockStore;
use crate::keys::Keys;

/// How long one node may take to answer before it is shown as down.
const NODE_TIMEOUT: Duration = Duration::from_millis(300);

pub use oversell_api::state::{
    LockStoreView, NodeView, SentinelView, ZooKeeperQueued, ZooKeeperServerView, ZooKeeperView,
};

/// Connections kept open to each node, so describing the store every tick does not open
/// sockets. A std `Mutex`: held only to clone or replace an entry, never across `.await`.
#[derive(Default)]
pub struct NodeConnections(Mutex<HashMap<String, MultiplexedConnection>>);

impl NodeConnections {
    async fn get(&self, addr: &str) -> Option<MultiplexedConnection> {
        if let Some(conn) = self.lock().get(addr) {
            return Some(conn.clone());
        }
        let client = redis::Client::open(format!("redis://{addr}")).ok()?;
        let conn = tokio::time::timeout(NODE_TIMEOUT, client.get_multiplexed_async_connection())
            .await
            .ok()?
            .ok()?;
        self.lock().insert(addr.to_owned(), conn.clone());
        Some(conn)
    }

    fn forget(&self, addr: &str) {
        self.lock().remove(addr);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, MultiplexedConnection>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(super) async fn describe(store: &LockStore, keys: &Keys) -> LockStoreView {
    let masters = store.quorum.nodes();
    let (addrs, sentinels) = match store.pool.sentinels() {
        Some((sentinels, master)) => from_sentinels(store, sentinels, master).await,
        None if store.pool.cluster_seeds().is_some() => {
            let seeds = store.pool.cluster_seeds().unwrap_or_default();
            (cluster_nodes(store, seeds).await, vec![])
        }
        None if !masters.is_empty() => (
            masters.iter().map(|m| m.addr().to_owned()).collect(),
            vec![],
        ),
        None => {
            let addr = match store.pool.client().await {
                Ok(client) => client.get_connection_info().addr().to_string(),
                Err(_) => "?".into(),
            };
            (vec![addr], vec![])
        }
    };
    let nodes = futures_util::future::join_all(addrs.iter().map(|a| node(store, a, keys))).await;
    let zookeeper = match store.zookeeper() {
        Some(zk) => Some(zookeeper(zk, keys).await),
        None => None,
    };
    let postgres = match store.postgres() {
        Some(pg) => Some(
            pg.describe(crate::pg_store::room_key(keys.room()), NODE_TIMEOUT)
                .await,
        ),
        None => None,
    };
    LockStoreView {
        kind: store.kind,
        nodes,
        sentinels,
        zookeeper,
        postgres,
    }
}

/// Each ZooKeeper server's mode, and the room's queue (only once this instance has a session:
/// describing the store never opens one).
async fn zookeeper(zk: &crate::zookeeper_recipe::ZkStore, keys: &Keys) -> ZooKeeperView {
    let servers = zk
        .server_modes()
        .await
        .into_iter()
        .map(|(addr, mode)| ZooKeeperServerView { addr, mode })
        .collect();
    let queue = match zk.opened() {
        Some(session) => tokio::time::timeout(NODE_TIMEOUT, session.queue(keys.room()))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
            .into_iter()
            .map(|node| ZooKeeperQueued {
                owner: node.owner,
                sequence: node.sequence,
                czxid: node.czxid,
            })
            .collect(),
        None => vec![],
    };
    ZooKeeperView { servers, queue }
}

/// One entry of `SENTINEL replicas`: field → value.
type Fields = HashMap<String, String>;

/// The data nodes the Sentinels know (primary first), and each Sentinel's view.
async fn from_sentinels(
    store: &LockStore,
    sentinels: &[String],
    master: &str,
) -> (Vec<String>, Vec<SentinelView>) {
    let mut views = Vec::new();
    let mut addrs: Vec<String> = Vec::new();
    for addr in sentinels {
        let asked = async {
            let mut conn = store.nodes.get(addr).await?;
            let (primary, replicas): (Option<(String, String)>, Vec<Fields>) = redis::pipe()
                .cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(master)
                .cmd("SENTINEL")
                .arg("replicas")
                .arg(master)
                .query_async(&mut conn)
                .await
                .ok()?;
            Some((primary.map(|(ip, port)| format!("{ip}:{port}")), replicas))
        };
        match tokio::time::timeout(NODE_TIMEOUT, asked).await {
            Ok(Some((primary, replicas))) => {
                if addrs.is_empty() {
                    addrs.extend(primary.clone());
                    addrs.extend(
                        replicas
                            .iter()
                            .filter_map(|r| Some(format!("{}:{}", r.get("ip")?, r.get("port")?))),
                    );
                }
                views.push(SentinelView {
                    addr: addr.clone(),
                    up: true,
                    primary,
                });
            }
            _ => {
                store.nodes.forget(addr);
                views.push(SentinelView {
                    addr: addr.clone(),
                    up: false,
                    primary: None,
                });
            }
        }
    }
    addrs.dedup();
    (addrs, views)
}

/// Every node of the cluster, as the first seed that answers `CLUSTER NODES` lists them (a
/// node that died stays listed, flagged `fail`, so it shows as down); the seeds themselves
/// when none answers. The listing names nodes by the address they announce, which on compose
/// is not the seed's name.
async fn cluster_nodes(store: &LockStore, seeds: &[String]) -> Vec<String> {
    for seed in seeds {
        let asked = async {
            let mut conn = store.nodes.get(seed).await?;
            let listed: String = redis::cmd("CLUSTER")
                .arg("NODES")
                .query_async(&mut conn)
                .await
                .ok()?;
            Some(listed)
        };
        if let Ok(Some(listed)) = tokio::time::timeout(NODE_TIMEOUT, asked).await {
            // `<id> <ip:port@bus[,hostname]> <flags> …`
            let mut addrs: Vec<String> = listed
                .lines()
                .filter_map(|line| line.split(' ').nth(1)?.split('@').next())
                .filter(|addr| !addr.starts_with(':'))
                .map(str::to_owned)
                .collect();
            addrs.sort();
            return addrs;
        }
        store.nodes.forget(seed);
    }
    seeds.to_vec()
}

async fn node(store: &LockStore, addr: &str, keys: &Keys) -> NodeView {
    // A kept connection may be to a node killed and restarted since: one fresh try more.
    match ask_node(store, addr, keys).await {
        Some(view) => view,
        None => ask_node(store, addr, keys)
            .await
            .unwrap_or_else(|| down(addr)),
    }
}

fn down(addr: &str) -> NodeView {
    NodeView {
        addr: addr.to_owned(),
        up: false,
        role: None,
        persistence: None,
        holds_lock: false,
        lock_ttl_ms: None,
        holder: None,
        clock_skew_ms: None,
    }
}

/// What one pipeline asks each node.
type NodeAnswer = (
    Value,
    i64,
    i64,
    Option<String>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    (i64, i64),
);

async fn ask_node(store: &LockStore, addr: &str, keys: &Keys) -> Option<NodeView> {
    // A cluster's node answers only for its own slots: a shared lock store on a cluster
    // resource store is one too.
    if store.pool.cluster_seeds().is_some() {
        return ask_cluster_node(store, addr, keys).await;
    }
    let asked = async {
        let mut conn = store.nodes.get(addr).await?;
        let mut pipe = redis::pipe();
        pipe.cmd("ROLE")
            .pttl(keys.lock())
            .pttl(keys.reentrant_lock())
            // The reentrant tiers' lock is a hash: GET would fail on it, so a Lua guard.
            .cmd("EVAL")
            .arg("if redis.call('TYPE', KEYS[1]).ok == 'string' then return redis.call('GET', KEYS[1]) end")
            .arg(1)
            .arg(keys.lock());
        let answer: NodeAnswer = with_settings_and_clock(&mut pipe)
            .query_async(&mut conn)
            .await
            .ok()?;
        Some(answer)
    };
    match tokio::time::timeout(NODE_TIMEOUT, asked).await {
        Ok(Some(answer)) => Some(view_of(addr, answer)),
        _ => {
            store.nodes.forget(addr);
            None
        }
    }
}

fn view_of(addr: &str, answer: NodeAnswer) -> NodeView {
    let (role, lock_ttl, rlock_ttl, holder, aof, fsync, save, (secs, micros)) = answer;
    // PTTL: -2 no key, -1 no lease. At most one of the two lock keys exists.
    let ttl = if lock_ttl != -2 { lock_ttl } else { rlock_ttl };
    let snapshots = save.get(1).is_some_and(|rules| !rules.is_empty());
    let persistence = match aof.get(1).map(String::as_str) {
        // `appendfsync no` is what `oversell up` calls `written`.
        Some("yes") => fsync.get(1).map(|f| match f.as_str() {
            "no" => oversell_api::store::Persistence::Written.id().to_owned(),
            other => other.to_owned(),
        }),
        Some(_) if snapshots => Some("rdb".into()),
        Some(_) => Some("none".into()),
        None => None,
    };
    NodeView {
        addr: addr.to_owned(),
        up: true,
        role: role_of(&role),
        persistence,
        holds_lock: ttl != -2,
        lock_ttl_ms: (ttl != -2).then_some(ttl),
        holder,
        clock_skew_ms: Some(skew_ms(secs * 1000 + micros / 1000)),
    }
}

/// A Redis Cluster node: its role and settings, then the room's lock apart, read with
/// `READONLY` (a replica answers for its master's slots) — a node outside the slot answers
/// `MOVED`, which means it does not hold the lock.
async fn ask_cluster_node(store: &LockStore, addr: &str, keys: &Keys) -> Option<NodeView> {
    let asked = async {
        let mut conn = store.nodes.get(addr).await?;
        type Unkeyed = (Value, Vec<String>, Vec<String>, Vec<String>, (i64, i64));
        let (role, aof, fsync, save, (secs, micros)): Unkeyed =
            with_settings_and_clock(redis::pipe().cmd("ROLE"))
                .query_async(&mut conn)
                .await
                .ok()?;
        let keyed: Option<((), i64, i64)> = redis::pipe()
            .cmd("READONLY")
            .pttl(keys.lock())
            .pttl(keys.reentrant_lock())
            .query_async(&mut conn)
            .await
            .ok();
        let (_, lock_ttl, rlock_ttl) = keyed.unwrap_or(((), -2, -2));
        Some((
            role,
            lock_ttl,
            rlock_ttl,
            None,
            aof,
            fsync,
            save,
            (secs, micros),
        ))
    };
    match tokio::time::timeout(NODE_TIMEOUT, asked).await {
        Ok(Some(answer)) => Some(view_of(addr, answer)),
        _ => {
            store.nodes.forget(addr);
            None
        }
    }
}

/// `asked` followed by what a node says of its persistence (`appendonly`, `appendfsync`,
/// `save`) and its clock (`TIME`).
fn with_settings_and_clock(asked: &mut redis::Pipeline) -> &mut redis::Pipeline {
    for setting in ["appendonly", "appendfsync", "save"] {
        asked.cmd("CONFIG").arg("GET").arg(setting);
    }
    asked.cmd("TIME")
}

/// A node's clock reading against ours, rounded to 100 ms.
fn skew_ms(node_ms: i64) -> i64 {
    let ours = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    ((node_ms - ours) as f64 / 100.0).round() as i64 * 100
}

/// `ROLE`'s first element, in this project's words.
fn role_of(role: &Value) -> Option<String> {
    let Value::Array(parts) = role else {
        return None;
    };
    let first: String = redis::from_redis_value(parts.first()?.clone()).ok()?;
    Some(match first.as_str() {
        "master" => "primary".into(),
        "slave" => "replica".into(),
        other => other.to_owned(),
    })
}
