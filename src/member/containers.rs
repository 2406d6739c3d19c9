//! The compose fleet as the dashboard shows it: which members run (the services of the
//! profiles that are up) and their addresses on the compose network. Compose's own DNS is the
//! source: a member whose name resolves runs. Asked again every few seconds in the background,
//! so `/state` reads a copy and never waits for a look-up.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oversell_api::state::{ContainerView, ContainersView};

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
        let seen = Arc::new(Containers::default());
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
