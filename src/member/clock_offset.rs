//! The file that moves a Redis node's wall clock (the `clock-jump` fault): a little-endian
//! i64, the offset in milliseconds, which the clock shim the node runs under
//! (`src/clockshift.c`) maps shared, so a write is in force at the node's very next clock
//! call, without a restart. The fault writes it ([`super::local_process::Process::shift_clock`]);
//! the launcher creates it before the node starts, and starts the node under the shim
//! (`src/launch/clock_shim.rs`).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Where a node's clock offset lives: `node_dir/clock-offset`.
pub fn offset_file(node_dir: &Path) -> PathBuf {
    node_dir.join("clock-offset")
}

/// Creates the offset file with offset 0 (eight zero bytes), unless it exists: a running node
/// maps it, and truncating a mapped file kills the node with SIGBUS.
pub fn create_offset_file(path: &Path) -> io::Result<()> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => file.write_all(&0i64.to_le_bytes()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Moves the clock of every process that maps `path` to `ms` milliseconds off the real time
/// (positive: ahead), at once and without a restart. Overwrites the eight bytes in place,
/// never truncating (see [`create_offset_file`]).
pub fn set_offset(path: &Path, ms: i64) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.write_all_at(&ms.to_le_bytes(), 0)
}

/// The offset in `path`, in milliseconds.
pub fn read_offset(path: &Path) -> io::Result<i64> {
    let mut bytes = [0u8; 8];
    File::open(path)?.read_exact(&mut bytes)?;
    Ok(i64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_file_round_trips_and_is_never_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let path = offset_file(dir.path());
        create_offset_file(&path).unwrap();
        assert_eq!(read_offset(&path).unwrap(), 0);
        set_offset(&path, -1_234_567).unwrap();
        assert_eq!(read_offset(&path).unwrap(), -1_234_567);
        create_offset_file(&path).unwrap();
        assert_eq!(
            read_offset(&path).unwrap(),
            -1_234_567,
            "create kept the offset"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);
    }
}
