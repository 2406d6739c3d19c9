//! A Redlock master made slow for a moment, for real: its process is stopped (SIGSTOP) and a
//! helper process resumes it (SIGCONT) after a set time. Commands sent meanwhile wait in the
//! kernel's socket buffer and are answered once it runs again, late, as a master on a
//! congested network or a swapping machine would answer.
//!
//! Why a helper process resumes it, not a timer in this one: the master must come back even
//! if this instance dies or stalls meanwhile (the same reason `freeze` uses one).
//!
//! Only on this machine: the process is found by the `process_id` the node reports.

use std::time::Duration;

use super::quorum::QuorumNode;
use crate::redis_pool::StoreError;

/// Stops the master at `node` for `stop_for`; returns `host:port pid=N` once it is stopped
/// and its helper is on the clock.
pub async fn stop_node_for(node: &QuorumNode, stop_for: Duration) -> Result<String, StoreError> {
    let unavailable = |why: String| StoreError::Unavailable(format!("{}: {why}", node.addr()));
    if !is_loopback(node.addr()) {
        return Err(unavailable(
            "not on this machine: its process is out of reach (use `oversell up`)".into(),
        ));
    }
    let info: String = node
        .run(|mut conn| async move {
            redis::cmd("INFO")
                .arg("server")
                .query_async(&mut conn)
                .await
        })
        .await?;
    let pid: i32 = info
        .lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
        .ok_or_else(|| unavailable("no process_id".into()))?;
    // The helper first: once it runs, the master is sure to come back.
    let helper = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "sleep {:.3}; kill -CONT {pid}",
            stop_for.as_secs_f64()
        ))
        .spawn()
        .map_err(|err| unavailable(format!("no helper to resume it: {err}")))?;
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(pid, libc::SIGSTOP) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(unavailable(format!("stop {pid}: {err}")));
    }
    // Reap the helper when it is done, so it does not linger as a zombie.
    std::thread::spawn(move || {
        let mut helper = helper;
        let _ = helper.wait();
    });
    Ok(format!("{} pid={pid}", node.addr()))
}

fn is_loopback(addr: &str) -> bool {
    crate::netns::on_this_machine(addr)
}
