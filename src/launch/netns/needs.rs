//! What making the fleet's network namespaces needs: root, `ip` (iproute2) and `nft`
//! (nftables). One judgement for two readers: `oversell up --network netns`, which refuses
//! without them, and `build.rs` (which includes this file), which marks the namespace tests
//! ignored where they cannot run.

use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

/// What this machine lacks to make namespaces.
pub enum Missing {
    Root,
    /// A program, and the Debian package that brings it.
    Tool {
        tool: &'static str,
        package: &'static str,
    },
}

/// The first thing missing, if any.
pub fn missing() -> Option<Missing> {
    // /proc/self belongs to this process's effective user.
    let euid = std::fs::metadata("/proc/self").map(|m| m.uid());
    if euid.map_or(true, |uid| uid != 0) {
        return Some(Missing::Root);
    }
    for (tool, package) in [("ip", "iproute2"), ("nft", "nftables")] {
        let found = Command::new(tool)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Some(Missing::Tool { tool, package });
        }
    }
    None
}
