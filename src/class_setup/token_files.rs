//! The fleet's secrets as files only their owner may read, so that `up`'s banner and
//! `oversell class`'s log can name a file instead of printing a token in a terminal (or a
//! compose log) the class may be reading off the projector.
//!
//! - `admin-token`: the admin token alone, no newline, so `$(cat admin-token)` is the token;
//!   read back when `up` starts again on the same class dir (`up` alone writes it: `oversell
//!   class` is given the token).
//! - `room-tokens`: one row per room of a class just made, `room token join-link code`,
//!   under a header row that starts with `#` ([`MadeClass::table`]).
//! - `slips.html`: the class's join slips to print (`super::slips`): each link carries its
//!   room's token, so it is as private as the table.
//!
//! `up --class` writes them into its class dir, `oversell class --out DIR` into `DIR`; both
//! through [`write_class`], so the two commands leave the same files.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::class_setup::MadeClass;

pub const ADMIN_TOKEN_FILE: &str = "admin-token";
pub const ROOM_TOKENS_FILE: &str = "room-tokens";
pub const SLIPS_FILE: &str = "slips.html";

/// Read and write for the owner, nothing for anyone else.
const OWNER_ONLY: u32 = 0o600;

/// Writes `admin-token` in `dir`; its path.
pub fn write_admin_token(dir: &Path, token: &str) -> anyhow::Result<PathBuf> {
    write_private(&dir.join(ADMIN_TOKEN_FILE), token)
}

/// The admin token an earlier run kept in `path`, so that a restart keeps the token the
/// class page's tab and the teacher's shell already hold.
pub fn read_admin_token(path: &Path) -> anyhow::Result<String> {
    let token = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the admin token kept in {}", path.display()))?;
    let token = token.trim();
    if token.is_empty() {
        anyhow::bail!(
            "{} is empty: remove it (a new token is made) or give --admin-token",
            path.display()
        );
    }
    Ok(token.to_owned())
}

/// Writes `room-tokens` in `dir`; its path.
fn write_room_tokens(dir: &Path, class: &MadeClass) -> anyhow::Result<PathBuf> {
    write_private(&dir.join(ROOM_TOKENS_FILE), &class.table())
}

/// The two files of a class just made, as [`write_class`] wrote them.
#[derive(Debug, Clone)]
pub struct ClassFiles {
    pub room_tokens: PathBuf,
    pub slips: PathBuf,
    /// The join page each slip prints: the one address the projector shows.
    pub join_page: String,
}

/// Writes `room-tokens` and `slips.html` of `class` in `dir`. Each slip prints the join page
/// at the join links' own address, or `fleet_url`'s when the class has no room.
pub fn write_class(dir: &Path, class: &MadeClass, fleet_url: &str) -> anyhow::Result<ClassFiles> {
    let join_page = class
        .join_page()
        .unwrap_or_else(|| crate::class_setup::join_page(fleet_url));
    Ok(ClassFiles {
        room_tokens: write_room_tokens(dir, class)?,
        slips: write_slips(dir, class, &join_page)?,
        join_page,
    })
}

/// Writes `slips.html` in `dir`, the join page printed on each slip at `join_page`; its path.
fn write_slips(dir: &Path, class: &MadeClass, join_page: &str) -> anyhow::Result<PathBuf> {
    write_private(
        &dir.join(SLIPS_FILE),
        &super::slips::page(class, join_page)?,
    )
}

/// Makes `dir` (and its parents) if missing, mode 0700: it is to hold tokens. A directory
/// that exists is left as it is (it may be the caller's working directory); the files in it
/// are the owner's alone whatever its mode.
pub fn make_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot make the directory {}", dir.display()))
}

/// Writes `text` to `path`, mode 0600 from the moment the file exists: a file created with
/// the umask's mode and narrowed afterwards would be readable by others in between. A file
/// left from before is replaced, and narrowed too, whatever mode it had.
fn write_private(path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let context = || format!("cannot write {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(OWNER_ONLY)
        .open(path)
        .with_context(context)?;
    file.set_permissions(std::fs::Permissions::from_mode(OWNER_ONLY))
        .with_context(context)?;
    file.write_all(text.as_bytes()).with_context(context)?;
    Ok(path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_admin_token_file_holds_the_token_alone_for_its_owner_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_admin_token(dir.path(), "s3cret").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "s3cret");
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn a_file_left_readable_by_others_is_narrowed_when_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ADMIN_TOKEN_FILE);
        std::fs::write(&path, "old token, longer than the new").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_admin_token(dir.path(), "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn a_class_is_written_as_a_row_per_room_under_a_commented_header_and_its_slips() {
        let dir = tempfile::tempdir().unwrap();
        let class = MadeClass::two_rooms("");
        let files = write_class(dir.path(), &class, "http://fleet").unwrap();
        let path = files.room_tokens;
        let text = std::fs::read_to_string(&path).unwrap();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().take(3).collect())
            .collect();
        assert_eq!(
            rows,
            [
                [
                    "student-01",
                    "room-1",
                    "http://h/?room=student-01#token=room-1"
                ],
                [
                    "student-02",
                    "room-2",
                    "http://h/?room=student-02#token=room-2"
                ],
            ]
        );
        assert!(text.starts_with("# room"), "{text}");
        let codes: Vec<&str> = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(3))
            .collect();
        assert_eq!(codes, ["AAAA-0001", "AAAA-0002"]);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&files.slips), 0o600);
        let slips = std::fs::read_to_string(&files.slips).unwrap();
        assert!(slips.contains("AAAA-0002"), "{slips}");
        // The join page at the links' own address, not the fleet's.
        assert!(slips.contains("http://h/join"), "{slips}");
        assert!(!slips.contains("http://fleet"), "{slips}");
    }

    #[test]
    fn a_directory_made_for_the_files_is_its_owners_alone_and_one_given_is_left_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let made = tmp.path().join("a").join("class");
        make_dir(&made).unwrap();
        assert_eq!(mode(&made), 0o700);
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        make_dir(tmp.path()).unwrap();
        assert_eq!(mode(tmp.path()), 0o755);
    }
}
