//! Where `up` keeps a class between its runs, so that a class survives `up`'s own crash: the
//! resource store's data (`redis/`: the rooms, their tokens' digests, the votes, the stock),
//! the admin token and the rooms' tokens as files only their owner may read, and `up.lock`.
//!
//! By default it is named by nginx's port (`$XDG_STATE_HOME/oversell/up-8080`, or
//! `~/.local/state/oversell/up-8080`): the fleet started again on the same port finds its class
//! again, and two fleets side by side, which cannot share a port, never share a class. `up.lock`
//! is held (`flock`) for as long as its `up` lives, so a second `up` given the same directory is
//! refused; the kernel releases it when `up` dies, even by `kill -9`, so a restart is never
//! locked out by the crash it recovers from.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

const LOCK_FILE: &str = "up.lock";
/// The resource store's data directory, inside the class dir.
const REDIS_DIR: &str = "redis";

/// A class dir this `up` holds.
pub(super) struct ClassDir {
    path: PathBuf,
    /// Held open, with its `flock`, for as long as `up` runs.
    _lock: File,
}

/// The class dir of a fleet on nginx's `port`: `$XDG_STATE_HOME/oversell/up-<port>`, or
/// `$HOME/.local/state/oversell/up-<port>`. `None` for a port picked at random (`--port 0`):
/// no later start would find it again.
pub(super) fn default_path(port: u16) -> Option<PathBuf> {
    if port == 0 {
        return None;
    }
    let nonempty = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let state = nonempty("XDG_STATE_HOME")
        .or_else(|| nonempty("HOME").map(|home| home.join(".local").join("state")))?;
    Some(state.join("oversell").join(format!("up-{port}")))
}

impl ClassDir {
    /// Makes the directory if need be (mode 0700: it holds the fleet's secrets) and takes its
    /// lock, or says which `up` holds it.
    pub(super) fn open(path: &Path) -> anyhow::Result<ClassDir> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .with_context(|| format!("cannot make the class dir {}", path.display()))?;
        // A directory made earlier by hand may be wider: it holds the tokens.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot narrow {} to its owner", path.display()))?;
        let lock_path = path.join(LOCK_FILE);
        let mut lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        // SAFETY: flock on a descriptor this function owns; no memory is shared.
        let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !locked {
            let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
            bail!(
                "the class dir {} is in use by another oversell up (pid {}): stop it, or start \
                 this fleet on another --port or with a --class-dir of its own",
                path.display(),
                holder.trim()
            );
        }
        lock.set_len(0)?;
        write!(lock, "{}", std::process::id())?;
        Ok(ClassDir {
            path: path.to_owned(),
            _lock: lock,
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Where the resource store keeps its data.
    pub(super) fn redis_dir(&self) -> PathBuf {
        self.path.join(REDIS_DIR)
    }

    /// The file `name` in the class dir, if an earlier run left it.
    pub(super) fn existing(&self, name: &str) -> Option<PathBuf> {
        Some(self.path.join(name)).filter(|p| p.is_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_on_a_port_picked_at_random_keeps_no_class_and_others_one_per_port() {
        assert_eq!(default_path(0), None);
        let a = default_path(8080).unwrap();
        let b = default_path(8081).unwrap();
        assert_ne!(a, b);
        assert!(a.ends_with("oversell/up-8080"), "{}", a.display());
    }

    #[test]
    fn a_class_dir_held_by_one_up_is_refused_to_another_and_freed_when_it_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("class");
        let held = ClassDir::open(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // flock belongs to the open file, so a second open in this process contends as
        // another process would.
        let err = ClassDir::open(&path).err().expect("refused while held");
        let message = err.to_string();
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        assert!(message.contains("--class-dir"), "{message}");
        drop(held);
        ClassDir::open(&path).expect("free once its holder is gone");
    }
}
