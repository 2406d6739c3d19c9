//! A member of the fleet that a fault acts on for real: a store's process (a Redis node, a
//! Sentinel, a ZooKeeper server) killed, kept down, stopped for a while, its wall clock moved,
//! or its links cut. One set of acts, two ways to reach a member:
//!
//! - on this machine (`oversell up`, on loopback or in the fleet's namespaces): the process is
//!   found by what the store reports of itself (its pid, its data dir) and acted on directly
//!   ([`local_process`]);
//! - in a container (docker compose): its supervisor, `oversell member`
//!   (`src/launch/member_supervisor.rs`, beside `oversell up`'s own supervision), runs the same
//!   acts on its one child when asked over the fleet's network with the admin token
//!   ([`remote`]).
//!
//! [`Reach`] picks the way from the member's address, so a fault reads the same on both paths.
//!
//! The links between members are cut the same way: [`network`] is the fleet's network as an
//! instance is handed it (who is a member, at which address), [`cut`] the `partition` fault
//! that drops packets between them, in each namespace on this machine or through the
//! supervisors on compose ([`containers`]).

pub mod clock_offset;
pub mod containers;
pub mod cut;
pub mod local_process;
pub mod network;
pub mod remote;

use std::time::Duration;

pub use local_process::{Process, HOLD_DOWN_FILE};

use cut::{Links, Namespaces};
use network::Network;
pub use remote::Remote;

/// How a member is reached.
#[derive(Debug, Clone)]
pub enum Reach {
    /// A process on this machine.
    Here(Process),
    /// A container's supervisor.
    Supervised(Remote),
}

impl Reach {
    /// Whether the server at `addr` (`host:port`) is out of this machine's reach, so that its
    /// supervisor must be asked.
    pub fn is_remote(addr: &str) -> bool {
        !network::on_this_machine(addr)
    }

    /// Kills it, back at once or after `down_for`; says what was done.
    pub async fn kill(&self, down_for: Option<Duration>) -> Result<String, String> {
        match self {
            Reach::Here(p) => p.kill(down_for).map(|()| format!("pid={}", p.pid)),
            Reach::Supervised(r) => r.kill(down_for).await.map(|v| v.did),
        }
    }

    /// Stops it for `stop_for`, resumed by a helper that does not depend on the caller.
    pub async fn pause(&self, stop_for: Duration) -> Result<String, String> {
        match self {
            Reach::Here(p) => p.pause(stop_for).map(|()| format!("pid={}", p.pid)),
            Reach::Supervised(r) => r.pause(stop_for).await.map(|v| v.did),
        }
    }

    /// Moves its wall clock `ms`; returns the offset now in force.
    pub async fn shift_clock(&self, ms: i64) -> Result<i64, String> {
        match self {
            Reach::Here(p) => p.shift_clock(ms),
            Reach::Supervised(r) => r.shift_clock(ms).await.map(|v| v.clock_offset_ms),
        }
    }
}

/// The fleet's own network and where its drops are made, if it has one: the namespaces of
/// `oversell up --network netns`, or the containers of a compose fleet.
pub fn fleet_network() -> Option<(Network, Box<dyn Links>)> {
    if let Some(network) = Network::from_env() {
        return Some((network.clone(), Box::new(Namespaces(network))));
    }
    containers::network().map(|(network, stores)| (network, Box::new(stores) as Box<dyn Links>))
}
