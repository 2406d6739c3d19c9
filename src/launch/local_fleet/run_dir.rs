//! The fleet's run dir in the temp dir, owned by the `up` that made it, and the run dirs of
//! earlier `up`s killed before they could remove theirs.

use crate::launch::process;

pub(super) const RUN_DIR_PREFIX: &str = "oversell-up-";
pub(super) const OWNER_FILE: &str = "up.pid";

/// Removes the run dirs of earlier `up`s that were killed before they could clean up: those
/// whose owner pid is gone. A run dir without an owner file is left alone (not ours to judge).
pub(super) fn remove_stale_run_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for dir in entries.flatten().map(|e| e.path()) {
        let ours = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(RUN_DIR_PREFIX));
        let owner = std::fs::read_to_string(dir.join(OWNER_FILE))
            .ok()
            .and_then(|pid| pid.trim().parse::<i32>().ok());
        let Some(owner) = owner.filter(|_| ours) else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(owner, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive && std::fs::remove_dir_all(&dir).is_ok() {
            process::say(&format!(
                "removed {}: the run dir of an up (pid {owner}) killed before it could clean up",
                dir.display()
            ));
        }
    }
}
