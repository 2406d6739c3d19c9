//! The fleet's own network, for `oversell up --network netns`: every Redis node, Sentinel,
//! ZooKeeper server and instance in a Linux network namespace of its own, each with one
//! address on a bridge the fleet creates (in a namespace of its own, joined to the host), so
//! that the links between them can be cut for real (the `partition` fault) while the resource
//! store and nginx, on the gateway address in the host's namespace, are never cut off from
//! anything.
//!
//! - this file: the network as a value ([`Network`]), handed to every instance in its
//!   environment (`OVERSELL_NETNS`), and where a child runs ([`Place`]).
//! - [`setup`]: making it and taking it down, even after a `kill -9` of `up`.
//! - [`cut`]: the partition itself: `nft` drop rules with a timeout in each namespace.
//!
//! Why namespaces and `nft`, not a proxy that drops bytes: a partition is packets that never
//! arrive, both ways, on connections that stay open — what Jepsen does with iptables. A proxy
//! would close or stall its own sockets, a different failure.

pub mod cut;
pub mod setup;

use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;

/// One member of the network: a process with a namespace and an address of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The process' id in the fleet (`app1`, `lock1`, `sentinel2`, `redlock3`, `zk1`).
    pub id: String,
    pub addr: Ipv4Addr,
}

/// The fleet's network: a gateway address (the host's side: the resource store and nginx)
/// and the members' namespaces, named `<run>-<id>`, on one bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// `o<pid of up>x<n>`: the prefix of every name the fleet creates (namespaces, links).
    pub run: String,
    /// The host's address on the fleet's bridge.
    pub gateway: Ipv4Addr,
    pub members: Vec<Member>,
}

/// The environment variable that hands the network to every instance.
pub const ENV: &str = "OVERSELL_NETNS";

impl Network {
    /// The namespace a member lives in.
    pub fn namespace(&self, id: &str) -> String {
        format!("{}-{id}", self.run)
    }

    pub fn member(&self, id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.id == id)
    }

    /// Where member `id` runs; `None` if it is not one.
    pub fn place(&self, id: &str) -> Option<Place> {
        self.member(id).map(|m| Place {
            ip: m.addr,
            netns: Some(self.namespace(id)),
        })
    }

    /// Whether `ip` is on this network (a member or the host's side): a process there is on
    /// this machine, for the faults that strike processes by pid.
    pub fn holds(&self, ip: Ipv4Addr) -> bool {
        ip == self.gateway || self.members.iter().any(|m| m.addr == ip)
    }

    /// `run;gateway;id=addr,id=addr,…`: the form [`ENV`] carries.
    pub fn encode(&self) -> String {
        let members: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{}={}", m.id, m.addr))
            .collect();
        format!("{};{};{}", self.run, self.gateway, members.join(","))
    }

    pub fn decode(text: &str) -> Option<Network> {
        let mut parts = text.trim().splitn(3, ';');
        let (run, gateway, members) = (parts.next()?, parts.next()?, parts.next()?);
        let members = members
            .split(',')
            .filter(|m| !m.is_empty())
            .map(|m| {
                let (id, addr) = m.split_once('=')?;
                Some(Member {
                    id: id.to_owned(),
                    addr: addr.parse().ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Network {
            run: run.to_owned(),
            gateway: gateway.parse().ok()?,
            members,
        })
    }

    /// The network this process was given, if any.
    pub fn from_env() -> Option<Network> {
        std::env::var(ENV).ok().and_then(|v| Network::decode(&v))
    }
}

/// Whether a server at `addr` (`host:port`) runs on this machine: on loopback, or in a
/// namespace of the fleet network this process was given. The faults that strike a process
/// by pid (kill, stop, a moved clock) need that.
pub fn on_this_machine(addr: &str) -> bool {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_loopback() => true,
        Ok(std::net::IpAddr::V4(ip)) => Network::from_env().is_some_and(|n| n.holds(ip)),
        Ok(_) => false,
        Err(_) => host == "localhost",
    }
}

/// Where a child process runs: on the host's loopback, or in a namespace of the fleet's with
/// an address of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub ip: Ipv4Addr,
    pub netns: Option<String>,
}

impl Place {
    pub const LOOPBACK: Place = Place {
        ip: Ipv4Addr::LOCALHOST,
        netns: None,
    };

    /// `ip:port`.
    pub fn addr(&self, port: u16) -> std::net::SocketAddr {
        std::net::SocketAddr::from((self.ip, port))
    }

    /// Makes `command` start inside this place's namespace (nothing for loopback). The
    /// namespace is entered in the child between fork and exec, with `setns`.
    pub fn enter(&self, command: &mut tokio::process::Command) -> std::io::Result<()> {
        let Some(netns) = &self.netns else {
            return Ok(());
        };
        let file = std::fs::File::open(setup::netns_path(netns)).map_err(|err| {
            std::io::Error::new(err.kind(), format!("network namespace {netns}: {err}"))
        })?;
        // SAFETY: the closure runs in the forked child before exec and only calls setns
        // (async-signal-safe). It owns the file, so the descriptor stays open until then.
        unsafe {
            command.pre_exec(move || {
                if libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_round_trips_through_its_environment_form() {
        let network = Network {
            run: "o123x0".into(),
            gateway: Ipv4Addr::new(10, 231, 7, 1),
            members: vec![
                Member {
                    id: "lock1".into(),
                    addr: Ipv4Addr::new(10, 231, 7, 2),
                },
                Member {
                    id: "app1".into(),
                    addr: Ipv4Addr::new(10, 231, 7, 3),
                },
            ],
        };
        assert_eq!(Network::decode(&network.encode()), Some(network.clone()));
        assert_eq!(network.namespace("app1"), "o123x0-app1");
        assert!(network.holds(Ipv4Addr::new(10, 231, 7, 1)));
        assert!(!network.holds(Ipv4Addr::new(10, 231, 7, 9)));
        assert_eq!(Network::decode("garbage"), None);
    }
}
