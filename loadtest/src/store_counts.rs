//! What the lock store counts of its own traffic, for `loadtest matrix --store-counts`: Redis'
//! `INFO commandstats` (reset with `CONFIG RESETSTAT` before each row) and ZooKeeper's `mntr`
//! (`zk_packets_received`, read before and after). The stores count, not the load generator:
//! a retry that the service never reports still shows as a command the store ran.
//!
//! Why a few lines of RESP over a socket and not the redis crate: two commands, one reply
//! each, and the load generator stays free of a Redis client it otherwise never needs.

use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use oversell_api::LockStoreKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use oversell_client::admin::AdminClient;

const TIMEOUT: Duration = Duration::from_secs(5);

/// Where the counts are read: the lock store's first node, and ZooKeeper's first server.
pub struct StoreProbe {
    redis: String,
    zookeeper: Option<String>,
}

/// What a store ran between two reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    /// `SET` calls: one per acquire attempt of the tiers that take the lock with `SET NX PX`.
    pub set_calls: u64,
    /// Every command but the probe's own (`INFO`, `CONFIG`).
    pub redis_commands: u64,
    pub zk_packets: u64,
}

impl StoreProbe {
    /// The fleet's lock store as `/state` names it. It must be a Redis of its own: in the
    /// shared one, the stock's and the ledger's commands would count as the lock's.
    pub async fn of(admin: &AdminClient) -> anyhow::Result<StoreProbe> {
        let store = admin.state().await?.lock_store;
        if store.kind == LockStoreKind::Shared {
            bail!(
                "--store-counts needs a lock store of its own (`oversell up --lock-store \
                 single`): in the shared one the sale's own commands would count as the lock's"
            );
        }
        let redis = store
            .nodes
            .first()
            .map(|n| n.addr.clone())
            .ok_or_else(|| anyhow!("/state lists no lock-store node"))?;
        let zookeeper = store
            .zookeeper
            .and_then(|z| z.servers.first().map(|s| s.addr.clone()));
        Ok(StoreProbe { redis, zookeeper })
    }

    /// Resets Redis' command counts; the ZooKeeper count to subtract later.
    pub async fn start(&self) -> anyhow::Result<Counts> {
        resp(&self.redis, &["CONFIG", "RESETSTAT"]).await?;
        Ok(Counts {
            zk_packets: self.zk_packets().await?,
            ..Counts::default()
        })
    }

    /// What ran since [`StoreProbe::start`] returned `start`.
    pub async fn since(&self, start: &Counts) -> anyhow::Result<Counts> {
        let stats = resp(&self.redis, &["INFO", "commandstats"]).await?;
        let (set_calls, redis_commands) = command_calls(&stats);
        // The probe's own `mntr` connection is one packet.
        let zk_packets = self
            .zk_packets()
            .await?
            .saturating_sub(start.zk_packets + 1);
        Ok(Counts {
            set_calls,
            redis_commands,
            zk_packets,
        })
    }

    async fn zk_packets(&self) -> anyhow::Result<u64> {
        let Some(addr) = &self.zookeeper else {
            return Ok(0);
        };
        let answer = exchange(addr, b"mntr").await?;
        answer
            .lines()
            .find_map(|l| l.strip_prefix("zk_packets_received"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| anyhow!("{addr}: no zk_packets_received in its `mntr` answer"))
    }
}

/// `SET` calls and every call but `INFO` and `CONFIG`, from `INFO commandstats`.
fn command_calls(stats: &str) -> (u64, u64) {
    let mut set = 0;
    let mut all = 0;
    for line in stats.lines() {
        let Some((name, rest)) = line
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        let calls: u64 = rest
            .split(',')
            .find_map(|kv| kv.strip_prefix("calls="))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if name == "set" {
            set = calls;
        }
        if name != "info" && !name.starts_with("config") {
            all += calls;
        }
    }
    (set, all)
}

/// One command in RESP; its reply's text (a bulk string or a status).
async fn resp(addr: &str, args: &[&str]) -> anyhow::Result<String> {
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request += &format!("${}\r\n{arg}\r\n", arg.len());
    }
    let reply = exchange_until(addr, request.as_bytes(), complete_reply).await?;
    match reply.as_bytes().first() {
        Some(b'+') => Ok(reply[1..].trim_end().to_owned()),
        Some(b'$') => Ok(reply
            .split_once("\r\n")
            .map_or("", |(_, body)| body)
            .trim_end()
            .to_owned()),
        _ => bail!("{addr}: {} answered {reply:?}", args.join(" ")),
    }
}

/// Whether `buf` holds a whole status or bulk-string reply.
fn complete_reply(buf: &[u8]) -> bool {
    let text = String::from_utf8_lossy(buf);
    match buf.first() {
        Some(b'$') => text.split_once("\r\n").is_some_and(|(len, body)| {
            len[1..].parse::<usize>().is_ok_and(|n| body.len() >= n + 2)
        }),
        Some(_) => text.ends_with("\r\n"),
        None => false,
    }
}

/// ZooKeeper's four-letter words: the server answers and closes.
async fn exchange(addr: &str, request: &[u8]) -> anyhow::Result<String> {
    exchange_until(addr, request, |_| false).await
}

async fn exchange_until(
    addr: &str,
    request: &[u8],
    done: fn(&[u8]) -> bool,
) -> anyhow::Result<String> {
    let talk = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(request).await?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            if done(&buf) {
                break;
            }
        }
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&buf).into_owned())
    };
    tokio::time::timeout(TIMEOUT, talk)
        .await
        .map_err(|_| anyhow!("{addr} did not answer within {TIMEOUT:?}"))?
        .with_context(|| format!("talking to {addr}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_calls_and_all_but_the_probes_own_commands_are_counted() {
        let stats = "# Commandstats\r\n\
            cmdstat_set:calls=40,usec=80,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_pttl:calls=40,usec=20,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_evalsha:calls=10,usec=90,usec_per_call=9.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_info:calls=3,usec=9,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_config|resetstat:calls=1,usec=1,usec_per_call=1.00\r\n";
        assert_eq!(command_calls(stats), (40, 90));
    }

    #[test]
    fn a_bulk_reply_is_complete_only_with_its_whole_body() {
        assert!(!complete_reply(b"$10\r\nabc"));
        assert!(complete_reply(b"$3\r\nabc\r\n"));
        assert!(complete_reply(b"+OK\r\n"));
        assert!(!complete_reply(b""));
    }
}
