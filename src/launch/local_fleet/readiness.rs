//! The fleet's start: ports checked free or picked, and waits until each child listens or
//! answers, within a deadline.

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use anyhow::bail;

use crate::launch::process;
use crate::launch::redis_server;
use crate::launch::supervisor::Supervisor;

/// How long the instances may take to answer `/health` at start-up.
pub(super) const START_DEADLINE: Duration = Duration::from_secs(30);

/// Waits until each `(id, address)` accepts connections.
pub(super) async fn wait_answering(children: &[(String, SocketAddr)]) -> anyhow::Result<()> {
    let deadline = Instant::now() + START_DEADLINE;
    for (id, addr) in children {
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            if Instant::now() > deadline {
                bail!("{id} did not listen on {addr} within {START_DEADLINE:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(())
}

/// Waits until every instance answers `GET /health` (which needs Redis); fails at once if one
/// exits meanwhile: its error is then in its output, just above.
pub(super) async fn wait_healthy(supervisors: &[Supervisor]) -> anyhow::Result<()> {
    let deadline = Instant::now() + START_DEADLINE;
    for supervisor in supervisors {
        let instance = supervisor.instance();
        let addr = SocketAddr::from((instance.ip, instance.port));
        loop {
            let instance = supervisor.instance();
            if let Some(how) = instance.last_exit {
                bail!(
                    "{} exited at start-up ({how}); its error is above",
                    instance.id
                );
            }
            if process::http_ok(addr, "/health").await {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "{} did not answer /health on {addr} within {START_DEADLINE:?}",
                    instance.id
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(())
}

pub(super) fn ensure_free(host: IpAddr, port: u16, what: &str, flag: &str) -> anyhow::Result<()> {
    match TcpListener::bind((host, port)) {
        Ok(_) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => {
            bail!("port {port} is in use ({what}); pick another with {flag}")
        }
        Err(err) => bail!("cannot use port {port} ({what}): {err}"),
    }
}

/// `n` listening sockets on distinct free ports, kept open so the port stays ours.
pub(super) fn free_listeners(n: usize) -> anyhow::Result<Vec<TcpListener>> {
    Ok((0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?)
}

/// `n` distinct ports that are free right now, for children that bind them by number.
pub(super) fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let mut ports: Vec<u16> = Vec::with_capacity(n);
    while ports.len() < n {
        let port = redis_server::free_port()?;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    Ok(ports)
}
