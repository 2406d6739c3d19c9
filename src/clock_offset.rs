//! The clock-offset file a Redis node's clock shim reads: how many milliseconds its wall clock
//! runs ahead. Exactly 8 bytes, a little-endian `i64`, which the shim maps into memory once
//! and reads on every clock call, so a new value takes effect at once, with no restart.
//!
//! Written in place, never truncated: a file shorter than 8 bytes under a live mapping would
//! kill the node with SIGBUS on its next clock read.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The offset file of a node whose data dir is `node_dir`.
pub fn offset_file(node_dir: &Path) -> PathBuf {
    node_dir.join("clock-offset")
}

/// Creates the file at offset 0, unless it exists (a running node may have it mapped).
pub fn create_offset_file(path: &Path) -> std::io::Result<()> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => file.write_all(&0i64.to_le_bytes()),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(err),
    }
}

pub fn read_offset(path: &Path) -> std::io::Result<i64> {
    let mut bytes = [0u8; 8];
    std::fs::File::open(path)?.read_exact(&mut bytes)?;
    Ok(i64::from_le_bytes(bytes))
}

/// Sets the offset in place (no truncation; see the module doc).
pub fn set_offset(path: &Path, ms: i64) -> std::io::Result<()> {
    let mut file = OpenOptions::new().write(true).open(path)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&ms.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_round_trips_and_creation_never_resets_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = offset_file(dir.path());
        assert!(read_offset(&file).is_err(), "no file yet");
        create_offset_file(&file).unwrap();
        assert_eq!(read_offset(&file).unwrap(), 0);
        set_offset(&file, 120_000).unwrap();
        create_offset_file(&file).unwrap();
        assert_eq!(read_offset(&file).unwrap(), 120_000);
        set_offset(&file, -5).unwrap();
        assert_eq!(read_offset(&file).unwrap(), -5);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 8);
    }
}
