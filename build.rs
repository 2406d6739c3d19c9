//! Builds `src/clockshift.c` into `$OUT_DIR/libclockshift.so`, the LD_PRELOAD library that
//! moves a Redis node's wall clock (see `src/launch/clock_shim.rs`, which embeds it in the binary).
//! The `cc` crate only finds the C compiler: it builds static archives, and this is a shared
//! object.
//!
//! It also says whether this machine can run the tests that make network namespaces (root,
//! `ip` and `nft`): when it cannot, it sets the cfg `no_netns`, and those tests carry
//! `#[cfg_attr(no_netns, ignore = "needs root, ip and nft")]`, so the runner counts them as
//! ignored, never as passed. `OVERSELL_NETNS_TESTS` overrides the finding: `require` fails
//! the build when they cannot run (CI, which runs as root, sets it), `skip` sets the cfg
//! whatever the machine (how to see the non-root run as root).

use std::path::PathBuf;

#[path = "src/launch/netns/needs.rs"]
mod needs;

fn main() {
    netns_tests();
    println!("cargo::rerun-if-changed=src/launch/netns/needs.rs");
    let source = "src/clockshift.c";
    println!("cargo:rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libclockshift.so");
    let mut command = cc::Build::new()
        .cargo_metadata(false)
        .get_compiler()
        .to_command();
    command
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o"])
        .arg(&lib)
        .arg(source);
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler ({command:?}): {e}"));
    assert!(status.success(), "{command:?} failed: {status}");
}

/// Sets `no_netns` when the namespace tests cannot run here; see the file's comment.
fn netns_tests() {
    println!("cargo::rustc-check-cfg=cfg(no_netns)");
    println!("cargo::rerun-if-env-changed=OVERSELL_NETNS_TESTS");
    // Who builds is who runs the tests: another user (or `sudo`) builds anew.
    println!("cargo::rerun-if-env-changed=USER");
    let why_not = match std::env::var("OVERSELL_NETNS_TESTS").as_deref() {
        Ok("skip") => Some("OVERSELL_NETNS_TESTS=skip".to_owned()),
        _ => cannot_make_namespaces(),
    };
    let Some(why) = why_not else { return };
    if std::env::var("OVERSELL_NETNS_TESTS").as_deref() == Ok("require") {
        panic!("OVERSELL_NETNS_TESTS=require, but the namespace tests cannot run here: {why}");
    }
    println!("cargo::rustc-cfg=no_netns");
    println!("cargo::warning=the network-namespace tests will be ignored: {why}");
}

/// Why this machine cannot make network namespaces, if so (the launcher's own judgement).
fn cannot_make_namespaces() -> Option<String> {
    Some(match needs::missing()? {
        needs::Missing::Root => "not root".to_owned(),
        needs::Missing::Tool { tool, package } => format!("no `{tool}` (package {package})"),
    })
}
