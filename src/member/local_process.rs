//! The acts themselves, on a process found by its pid and its data dir: kill it (and keep it
//! down a while), stop it for a while, move its wall clock. `oversell up` runs them on its own
//! children (the fault's instance finds them by what the node reports); a container's
//! supervisor (`oversell member`) runs the very same functions on its one child.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The file in a member's data dir that keeps it down after `node-down`: a unix time in ms
/// before which its supervisor does not restart it.
pub const HOLD_DOWN_FILE: &str = "down-until";

/// The longest a pause may last: a helper resumes the process by then whatever happens.
pub const MAX_PAUSE: Duration = Duration::from_secs(60);

/// A member's running process: what the acts need to find it.
#[derive(Debug, Clone)]
pub struct Process {
    pub pid: i32,
    /// Where its supervisor looks for the hold-down file and the clock shim its offset.
    pub dir: PathBuf,
}

impl Process {
    /// Kills it (SIGKILL). With `down_for`, its supervisor brings it back only after that
    /// long, as a crashed machine would be; without, at once.
    pub fn kill(&self, down_for: Option<Duration>) -> Result<(), String> {
        if let Some(down_for) = down_for {
            hold_down(&self.dir, down_for)?;
        }
        signal(self.pid, libc::SIGKILL)
    }

    /// Stops it (SIGSTOP) and starts a helper process that resumes it (SIGCONT) after
    /// `stop_for`. The helper first, and a process of its own: the member must come back even
    /// if whoever stopped it dies or stalls meanwhile.
    pub fn pause(&self, stop_for: Duration) -> Result<(), String> {
        let stop_for = stop_for.min(MAX_PAUSE);
        let helper = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "sleep {:.3}; kill -CONT {}",
                stop_for.as_secs_f64(),
                self.pid
            ))
            .spawn()
            .map_err(|err| format!("no helper to resume it: {err}"))?;
        signal(self.pid, libc::SIGSTOP)?;
        // Reap the helper when it is done, so it does not linger as a zombie.
        std::thread::spawn(move || {
            let mut helper = helper;
            let _ = helper.wait();
        });
        Ok(())
    }

    /// Resumes it at once (SIGCONT), before its helper would.
    pub fn resume(&self) -> Result<(), String> {
        signal(self.pid, libc::SIGCONT)
    }

    /// Moves its wall clock `ms` forward (negative: back) through the offset file its clock
    /// shim reads; returns the offset now in force.
    pub fn shift_clock(&self, ms: i64) -> Result<i64, String> {
        let file = super::clock_offset::offset_file(&self.dir);
        super::clock_offset::read_offset(&file)
            .and_then(|before| {
                super::clock_offset::set_offset(&file, before + ms).map(|()| before + ms)
            })
            .map_err(|err| {
                format!(
                    "no clock to move ({}: {err}); it must run under the clock shim",
                    file.display()
                )
            })
    }
}

/// Writes the hold-down file its supervisor honours (see [`HOLD_DOWN_FILE`]) in `dir`.
pub fn hold_down(dir: &Path, down_for: Duration) -> Result<(), String> {
    let until = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        + down_for;
    let file = dir.join(HOLD_DOWN_FILE);
    std::fs::write(&file, until.as_millis().to_string())
        .map_err(|err| format!("{}: {err}", file.display()))
}

/// Until when (unix ms) a hold-down in `dir` keeps its member down, if one does.
pub fn down_until(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join(HOLD_DOWN_FILE)).ok()?;
    text.trim().parse().ok()
}

fn signal(pid: i32, signal: libc::c_int) -> Result<(), String> {
    // SAFETY: kill has no memory-safety preconditions.
    match unsafe { libc::kill(pid, signal) } {
        0 => Ok(()),
        _ => Err(format!(
            "signal {signal} to {pid}: {}",
            std::io::Error::last_os_error()
        )),
    }
}
