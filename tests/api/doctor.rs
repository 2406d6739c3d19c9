//! `oversell doctor` as a teacher runs it: what is missing, with the lines that install it, and
//! an exit status that says whether `up` can start.

use std::path::Path;
use std::process::{Command, Output};

/// `oversell doctor` with `PATH` set to `path` alone.
fn doctor(path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oversell"))
        .arg("doctor")
        .env("PATH", path)
        .output()
        .expect("run oversell doctor")
}

/// `up` also looks in the sbin directories, so a redis-server there is found whatever PATH is.
fn redis_server_in_sbin() -> bool {
    ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        .iter()
        .any(|dir| Path::new(dir).join("redis-server").exists())
}

#[test]
fn doctor_with_an_empty_path_reports_redis_server_missing_with_both_install_lines() {
    assert!(
        !redis_server_in_sbin(),
        "this machine keeps redis-server in an sbin directory, which an empty PATH cannot hide"
    );
    let empty = tempfile::tempdir().unwrap();
    let out = doctor(empty.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("missing redis-server, for every chapter"))
        .unwrap_or_else(|| panic!("no missing redis-server line:\n{stdout}"));
    assert_eq!(lines[at + 1].trim(), "redis-server not found on PATH");
    assert_eq!(
        lines[at + 2].trim(),
        "Debian/Ubuntu: sudo apt-get install -y redis-server"
    );
    assert_eq!(lines[at + 3].trim(), "macOS (Homebrew): brew install redis");
    // rustc lives on PATH only (rustup's ~/.cargo/bin): missing too, with rustup's line.
    assert!(
        lines.iter().any(|l| l.starts_with("missing rustc, ")),
        "{stdout}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("not ready: `oversell up` cannot start without redis-server"),
        "{stdout}"
    );
}

#[test]
fn doctor_passes_with_the_essentials_even_when_rust_and_the_chapters_stores_are_missing() {
    // A PATH holding redis-server and nginx alone: no rustc on it.
    let essentials = tempfile::tempdir().unwrap();
    for program in ["redis-server", "nginx"] {
        let found = oversell::launch::redis_server::find_binary(program)
            .unwrap_or_else(|| panic!("{program} is installed where the tests run"));
        std::os::unix::fs::symlink(&found, essentials.path().join(program)).unwrap();
    }
    let out = doctor(essentials.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("ok      redis-server, "))
        .unwrap_or_else(|| panic!("no ok redis-server line:\n{stdout}"));
    let found = lines[at + 1].trim();
    assert!(
        found.starts_with("found: ") && found.contains("redis-server") && found.contains("v="),
        "its path and version: {found}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("missing rustc, ")),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("ready: the essentials are here; `oversell up` can start a fleet"),
        "{stdout}"
    );
}
