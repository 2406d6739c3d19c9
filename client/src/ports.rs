//! Free ports for children that bind them by number: `oversell up`'s processes, the course's
//! fleets, the tests' servers. Here, the lowest crate all of them reach, so it is written once.

use std::net::TcpListener;

/// The lowest port [`free_port`] picks.
const FIRST_PICKED_PORT: u16 = 10_000;

/// A port free right now, picked at random below the kernel's ephemeral range. A port the
/// kernel picks (`bind` to 0) comes from the range outgoing connections take their ports from:
/// handed to a child, it can be taken by any connection before the child binds it. Below the
/// range only a process binding that very port could take it.
pub fn free_port() -> anyhow::Result<u16> {
    let end = ephemeral_range_start().max(FIRST_PICKED_PORT + 1);
    let span = u64::from(end - FIRST_PICKED_PORT);
    let mut seed = random_seed();
    for _ in 0..256 {
        // xorshift64: enough to spread the picks of concurrent tests.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let port = FIRST_PICKED_PORT + (seed % span) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Where the kernel's ephemeral ports start (`ip_local_port_range`; 32768 when unreadable).
fn ephemeral_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish() | 1
}

/// `n` distinct ports that are free right now, for children that bind them by number.
pub fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let mut ports: Vec<u16> = Vec::with_capacity(n);
    while ports.len() < n {
        let port = free_port()?;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_port_lies_below_the_ephemeral_range_and_can_be_bound() {
        let start = ephemeral_range_start();
        for _ in 0..20 {
            let port = free_port().unwrap();
            assert!(
                (FIRST_PICKED_PORT..start).contains(&port),
                "{port} (range from {start})"
            );
            TcpListener::bind(("127.0.0.1", port)).unwrap();
        }
    }
}
