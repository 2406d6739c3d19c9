//! The fleet's network as the instances see it: its members, each with an address of its own,
//! and the gateway address (the resource store and nginx) that is never cut off. On this
//! machine it is `oversell up --network netns` (a namespace per member, handed to every
//! instance in its environment, [`ENV`]); on compose, the containers ([`super::containers`]).
//! The `partition` fault cuts links between its members ([`super::cut`]).
//!
//! Making the namespaces, and starting a child inside one, is the launcher's
//! (`src/launch/netns.rs`): an instance only reads the network it was given.
//!
//! Why namespaces and `nft`, not a proxy that drops bytes: a partition is packets that never
//! arrive, both ways, on connections that stay open — what Jepsen does with iptables. A proxy
//! would close or stall its own sockets, a different failure.

use std::net::Ipv4Addr;

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
