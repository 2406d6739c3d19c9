//! `oversell doctor`: what this machine has and lacks for `oversell up`, found the way `up`
//! finds it, each thing missing with the line that installs it on Debian/Ubuntu and with
//! Homebrew. A teacher runs it the day before, not `up` once per missing package.
//!
//! The essentials (`redis-server`, `nginx`) decide the exit status: without them no chapter
//! runs. Rust is needed to build and update the tools, ZooKeeper, PostgreSQL and the network
//! tools only for the chapters that name them; they are reported and never fail the check.

use std::path::Path;
use std::process::{Command, Stdio};

use super::redis_server::find_binary;

/// The oldest Rust the workspace builds with: the manifests' `rust-version`.
const RUST_VERSION: &str = env!("CARGO_PKG_RUST_VERSION");

/// One thing `up` may need.
struct Need {
    /// What it is, as its line names it.
    name: &'static str,
    /// What needs it.
    used_for: &'static str,
    /// Whether `up` cannot start any fleet without it.
    essential: bool,
    /// Where it was found (and its version), or why it counts as missing.
    found: Result<String, String>,
    /// The line that installs it on Debian or Ubuntu.
    apt: &'static str,
    /// The line that installs it with Homebrew.
    brew: &'static str,
}

/// Checks everything, prints one line per need (and how to install what is missing); the exit
/// status: 0 when the essentials are present, 1 otherwise.
pub fn run() -> i32 {
    let needs = needs();
    print!("{}", report(&needs));
    i32::from(needs.iter().any(|n| n.essential && n.found.is_err()))
}

fn needs() -> Vec<Need> {
    vec![
        Need {
            name: "rustc",
            used_for: "building and updating oversell and loadtest with cargo install",
            essential: false,
            found: rustc(),
            // Debian's and Ubuntu's own rustc packages are older than the workspace needs.
            apt: "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh  \
                  (the distribution's rustc package is older than the workspace needs)",
            brew: "brew install rust",
        },
        Need {
            name: "redis-server",
            used_for: "every chapter: the stock, the ledger and the locks",
            essential: true,
            found: program("redis-server", "--version"),
            apt: "sudo apt-get install -y redis-server",
            brew: "brew install redis",
        },
        Need {
            name: "nginx",
            used_for: "every chapter: the fleet's front door",
            essential: true,
            found: program("nginx", "-v"),
            apt: "sudo apt-get install -y nginx",
            brew: "brew install nginx",
        },
        Need {
            name: "java + ZooKeeper",
            used_for: "the ZooKeeper chapters: --zookeeper, the zookeeper tiers",
            essential: false,
            found: super::zookeeper_servers::installation()
                .map(|found| format!("{} with {}", found.java.display(), found.classpath))
                .map_err(|err| first_clause(&err.to_string())),
            apt: "sudo apt-get install -y zookeeper",
            brew: "brew install zookeeper  (up looks for Debian's jar, \
                   /usr/share/java/zookeeper.jar; elsewhere run these chapters on compose)",
        },
        Need {
            name: "PostgreSQL",
            used_for: "the database chapters: --postgres, the postgres tiers",
            essential: false,
            found: super::postgres_server::installation()
                .map(|bin| bin.display().to_string())
                .map_err(|err| first_clause(&err.to_string())),
            apt: "sudo apt-get install -y postgresql",
            brew: "brew install postgresql  (up looks for Debian's layout, \
                   /usr/lib/postgresql/<version>/bin; elsewhere run these chapters on compose)",
        },
        Need {
            name: "ip + nft, as root",
            used_for: "the partition chapters: --network netns",
            essential: false,
            found: match super::netns::unavailable() {
                None => Ok("present".into()),
                Some(why) => Err(why),
            },
            apt: "sudo apt-get install -y iproute2 nftables  (and run up with sudo)",
            brew: "none: network namespaces are Linux's; run these chapters on compose",
        },
    ]
}

/// The report: per need, `ok` or `missing`, its name and what it is for, then where it was
/// found or why it is missing, and under a missing one the two lines that install it; last,
/// whether `up` can start.
fn report(needs: &[Need]) -> String {
    let mut out = String::from("oversell doctor: what `oversell up` needs on this machine\n");
    for need in needs {
        let mark = if need.found.is_ok() {
            "ok     "
        } else {
            "missing"
        };
        out += &format!("{mark} {}, for {}\n", need.name, need.used_for);
        match &need.found {
            Ok(found) => out += &format!("        found: {found}\n"),
            Err(why) => {
                out += &format!("        {why}\n");
                out += &format!("        Debian/Ubuntu: {}\n", need.apt);
                out += &format!("        macOS (Homebrew): {}\n", need.brew);
            }
        }
    }
    let lacking: Vec<&str> = needs
        .iter()
        .filter(|n| n.essential && n.found.is_err())
        .map(|n| n.name)
        .collect();
    out += &if lacking.is_empty() {
        "ready: the essentials are here; `oversell up` can start a fleet\n".to_owned()
    } else {
        format!(
            "not ready: `oversell up` cannot start without {}\n",
            lacking.join(" and ")
        )
    };
    out
}

/// A program as `up` finds it (on PATH, then the sbin directories), with the first line of
/// what it says its version is.
fn program(name: &str, version_flag: &str) -> Result<String, String> {
    let path = find_binary(name).ok_or_else(|| format!("{name} not found on PATH"))?;
    Ok(match version_of(&path, version_flag) {
        Some(version) => format!("{} ({version})", path.display()),
        None => path.display().to_string(),
    })
}

/// The first line a program prints when asked its version (nginx prints it on stderr).
fn version_of(path: &Path, flag: &str) -> Option<String> {
    let out = Command::new(path)
        .arg(flag)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = [out.stdout, out.stderr].concat();
    let line = String::from_utf8_lossy(&text)
        .lines()
        .next()?
        .trim()
        .to_owned();
    (!line.is_empty()).then_some(line)
}

/// `rustc` on PATH, at least [`RUST_VERSION`].
fn rustc() -> Result<String, String> {
    let path = find_binary("rustc").ok_or_else(|| "rustc not found on PATH".to_owned())?;
    let line = version_of(&path, "--version")
        .ok_or_else(|| format!("{} does not say its version", path.display()))?;
    let version = line.split_whitespace().nth(1).unwrap_or_default();
    if older_than(version, RUST_VERSION) {
        return Err(format!(
            "{line} is older than {RUST_VERSION}, the oldest the workspace builds with \
             (rustup update stable)"
        ));
    }
    Ok(format!("{line}, at least {RUST_VERSION}"))
}

/// Whether dotted version `version` is older than `oldest` (`1.88.0` < `1.89`); a version that
/// does not parse counts as older.
fn older_than(version: &str, oldest: &str) -> bool {
    let parts = |v: &str| -> Option<Vec<u32>> {
        // `1.91.0-nightly`: the numbers before any suffix.
        let numbers = v.split(['-', '+']).next()?;
        numbers.split('.').map(|n| n.parse().ok()).collect()
    };
    match (parts(version), parts(oldest)) {
        (Some(mut version), Some(mut oldest)) => {
            let len = version.len().max(oldest.len());
            version.resize(len, 0);
            oldest.resize(len, 0);
            version < oldest
        }
        _ => true,
    }
}

/// What is missing, without the install hint the launcher's own error carries (the report
/// prints both install lines under it).
fn first_clause(message: &str) -> String {
    message
        .split_once("; install it with")
        .map_or(message, |(what, _)| what)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number_not_by_text() {
        assert!(older_than("1.88.0", "1.89"));
        assert!(!older_than("1.89.0", "1.89"));
        assert!(!older_than("1.100.0", "1.89"));
        assert!(!older_than("1.95.0-nightly", "1.89"));
        assert!(older_than("rustc", "1.89"));
    }

    #[test]
    fn a_missing_essential_gets_both_install_lines_and_a_not_ready_verdict() {
        let need = |name, essential, found: Result<String, String>| Need {
            name,
            used_for: "testing",
            essential,
            found,
            apt: "sudo apt-get install -y thing",
            brew: "brew install thing",
        };
        let needs = [
            need(
                "redis-server",
                true,
                Err("redis-server not found on PATH".into()),
            ),
            need("nginx", true, Ok("/usr/sbin/nginx".into())),
            need("PostgreSQL", false, Err("not here".into())),
        ];
        let text = report(&needs);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "missing redis-server, for testing");
        assert_eq!(lines[2], "        redis-server not found on PATH");
        assert_eq!(
            lines[3],
            "        Debian/Ubuntu: sudo apt-get install -y thing"
        );
        assert_eq!(lines[4], "        macOS (Homebrew): brew install thing");
        assert_eq!(lines[5], "ok      nginx, for testing");
        assert_eq!(lines[6], "        found: /usr/sbin/nginx");
        assert_eq!(
            *lines.last().unwrap(),
            "not ready: `oversell up` cannot start without redis-server"
        );
    }
}
