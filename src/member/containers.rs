//! The compose fleet: which members run (the services of the profiles that are up) and their
//! addresses on the compose network, for the dashboard and for the `partition` fault. Compose's
//! own DNS is the source: a member whose name resolves runs. Asked again every few seconds in
//! the background, so `/state` and a partition read a copy and never wait for a look-up.
//!
//! A partition on compose: each side's stores are asked, through their supervisors, to drop
//! packets from and to the other side's addresses inside their own network namespace. The
//! instances have no supervisor and no `NET_ADMIN`, and need none: an instance talks only to
//! stores (cut at the store's end), the resource store and nginx (never cut).

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use oversell_api::member::Cut;
use oversell_api::state::{ContainerView, ContainersView};

use super::cut::{CutError, Links};
use super::network::{Member, Network};
use super::remote::Remote;

/// The members this process saw last, once [`Containers::watch`] runs: the one list of this
/// process' fleet, reached from deep inside a sale (a partition strikes there).
static SEEN: OnceLock<Arc<Containers>> = OnceLock::new();

/// The environment variable compose sets on the instances: `compose`.
pub const ENV: &str = "OVERSELL_FLEET";

/// Every member the compose file can run, as `oversell up` names the same processes; the
/// resource store and nginx last.
const CANDIDATES: &[&str] = &[
    "app1",
    "app2",
    "app3",
    "lock",
    "lock1",
    "lock2",
    "sentinel1",
    "sentinel2",
    "sentinel3",
    "redlock1",
    "redlock2",
    "redlock3",
    "redlock4",
    "redlock5",
    "zk",
    "zk1",
    "zk2",
    "zk3",
    "redis",
    "nginx",
];

/// The members under a supervisor of their own (`oversell member`): every store of a lock.
fn supervised(id: &str) -> bool {
    !matches!(id, "redis" | "nginx") && !id.starts_with("app")
}

const REFRESH: Duration = Duration::from_secs(5);

/// The members seen last. A std `Mutex`: held only to copy or replace the list.
#[derive(Default)]
pub struct Containers(Mutex<Vec<ContainerView>>);

impl Containers {
    /// On a compose fleet (`OVERSELL_FLEET=compose`), the members, looked up now and every
    /// few seconds from here on; `None` elsewhere.
    pub fn watch() -> Option<Arc<Containers>> {
        if std::env::var(ENV).ok()? != "compose" {
            return None;
        }
        let seen = SEEN.get_or_init(|| Arc::new(Containers::default())).clone();
        let weak = Arc::downgrade(&seen);
        tokio::spawn(async move {
            // Ends when the state holding the list is gone.
            while let Some(seen) = weak.upgrade() {
                let found = look_up().await;
                *seen.0.lock().unwrap_or_else(PoisonError::into_inner) = found;
                drop(seen);
                tokio::time::sleep(REFRESH).await;
            }
        });
        Some(seen)
    }

    fn members(&self) -> Vec<ContainerView> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn view(&self) -> ContainersView {
        ContainersView {
            members: self
                .0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }
}

async fn look_up() -> Vec<ContainerView> {
    let asked = CANDIDATES.iter().map(|id| async move {
        let addr = tokio::time::timeout(Duration::from_secs(1), tokio::net::lookup_host((*id, 0)))
            .await
            .ok()?
            .ok()?
            .next()?;
        Some(ContainerView {
            id: (*id).to_owned(),
            addr: addr.ip().to_string(),
            supervised: supervised(id),
        })
    });
    futures_util::future::join_all(asked)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The compose fleet as a network a partition can cut: the instances and the stores (never
/// the resource store or nginx), with the drops asked of the stores' supervisors. `None` off
/// compose, or before the first look-up.
pub fn network() -> Option<(Network, Supervisors)> {
    let seen = SEEN.get()?.members();
    let members: Vec<Member> = seen
        .iter()
        .filter(|m| m.supervised || m.id.starts_with("app"))
        .filter_map(|m| {
            Some(Member {
                id: m.id.clone(),
                addr: m.addr.parse().ok()?,
            })
        })
        .collect();
    if members.is_empty() {
        return None;
    }
    let supervised = seen
        .into_iter()
        .filter(|m| m.supervised)
        .map(|m| m.id)
        .collect();
    let network = Network {
        run: "compose".into(),
        gateway: Ipv4Addr::UNSPECIFIED,
        members,
    };
    Some((network, Supervisors { supervised }))
}

/// The drops of a compose partition, asked of each store's supervisor; an instance's end is
/// left open (its store's end drops the packets).
pub struct Supervisors {
    supervised: Vec<String>,
}

#[async_trait::async_trait]
impl Links for Supervisors {
    async fn drop_between(&self, id: &str, addrs: &[Ipv4Addr], ms: u64) -> Result<(), CutError> {
        if !self.supervised.iter().any(|s| s == id) || addrs.is_empty() {
            return Ok(());
        }
        let cut = Cut {
            drop: addrs.iter().map(Ipv4Addr::to_string).collect(),
            ms,
        };
        Remote::beside(id)
            .cut(&cut)
            .await
            .map(drop)
            .map_err(CutError::Nft)
    }

    async fn open(&self, id: &str) -> Result<(), CutError> {
        if !self.supervised.iter().any(|s| s == id) {
            return Ok(());
        }
        Remote::beside(id)
            .heal()
            .await
            .map(drop)
            .map_err(CutError::Nft)
    }
}
