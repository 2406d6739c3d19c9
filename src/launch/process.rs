//! Process plumbing shared by the supervisor and nginx: spawning a child in its own process
//! group, signalling the group, prefixing its output, and probing it over HTTP.

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// Makes `command` a supervised child: its own process group (so a terminal's Ctrl-C reaches
/// only `up`, which then stops everything in order, and so one signal reaches the child and
/// any helper it forked), killed if `up` itself dies, and its output piped for prefixing.
pub fn supervised(command: &mut Command) -> &mut Command {
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and only makes async-signal-safe
    // system calls (prctl, getppid).
    //
    // PR_SET_PDEATHSIG fires when the *thread* that forked exits, not the process: children
    // are spawned from the main thread or tokio worker threads, which live as long as `up`.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // `up` died between fork and prctl: nobody would kill us later.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        })
    };
    command
}

/// Kills a process group once `up` itself is gone, however it went (even `kill -9`).
///
/// PR_SET_PDEATHSIG (see [`supervised`]) takes down the direct children, but nginx's worker
/// processes are nginx's children, not ours: killed only in their master, they would live on
/// and keep the port. So a small `sh`, in a process group of its own and with no parent-death
/// signal, watches `up`'s pid and kills the whole group when it is gone. Dropping the reaper
/// (after a clean stop) ends it.
pub struct Reaper(std::process::Child);

impl Reaper {
    pub fn for_group(pgid: u32) -> Option<Reaper> {
        let parent = std::process::id();
        let script = format!(
            "while kill -0 {parent} 2>/dev/null; do sleep 0.5; done; kill -KILL -{pgid} 2>/dev/null"
        );
        let spawned = std::process::Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match spawned {
            Ok(child) => Some(Reaper(child)),
            Err(err) => {
                tracing::warn!(%err, "no reaper for nginx's workers");
                None
            }
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        // Its group: the `sh` and the `sleep` it may be in.
        signal_group(self.0.id(), libc::SIGKILL);
        let _ = self.0.wait();
    }
}

/// Copies each line the child prints to our stdout or stderr, after `name | `.
pub fn prefix_output(child: &mut Child, name: &str) {
    let label = format!("{name:<5} | ");
    if let Some(out) = child.stdout.take() {
        tokio::spawn(copy_lines(out, label.clone(), false));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(copy_lines(err, label, true));
    }
}

/// Keeps reading to the end even when our own output is gone, so a child never blocks on a
/// full pipe.
async fn copy_lines(from: impl AsyncRead + Unpin, label: String, to_stderr: bool) {
    let mut lines = BufReader::new(from).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let line = String::from_utf8_lossy(&line);
        let _ = if to_stderr {
            writeln!(std::io::stderr().lock(), "{label}{line}")
        } else {
            writeln!(std::io::stdout().lock(), "{label}{line}")
        };
    }
}

/// Prints one line of `up`'s own on stdout. A closed stdout (`oversell up | head`) is not a
/// reason to stop supervising, so write errors are ignored, unlike `println!`.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Sends `signal` to every process in the group `pgid`. A group that is already gone is fine.
pub fn signal_group(pgid: u32, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid names a process group.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), signal);
    }
}

/// Stops a child and everything in its process group: `signal`, then SIGCONT (a stopped
/// process only acts on SIGTERM once resumed), up to `grace` to exit, then SIGKILL. Finally
/// SIGKILL to the group again, for a helper the child forked and left behind.
pub async fn stop_group(child: &mut Child, signal: libc::c_int, grace: Duration) {
    let Some(pgid) = child.id() else {
        return; // already reaped
    };
    signal_group(pgid, signal);
    signal_group(pgid, libc::SIGCONT);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        signal_group(pgid, libc::SIGKILL);
        let _ = child.wait().await;
    }
    signal_group(pgid, libc::SIGKILL);
}

/// `exit code 1`, `signal 6`: how a child ended, as the restart log says it.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// True if `GET path` on `addr` answers 200 within a second.
pub async fn http_ok(addr: SocketAddr, path: &str) -> bool {
    let probe = async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.ok()?;
        Some(head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), probe).await,
        Ok(Some(true))
    )
}

/// Raises the soft open-files limit to the hard one (at most 65536), for nginx and the
/// instances under load; they inherit it.
pub fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit/setrlimit to read and write.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max.min(65_536).max(limit.rlim_cur);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
