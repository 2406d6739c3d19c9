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
//!
//! It also declares the lock tiers' modules: one per file of `src/lock/tiers/`, each of which
//! says which tiers it locks for (`fn locks()`). So a tier is its file, and adding one edits
//! no list (see `src/lock/mod.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/launch/netns/needs.rs"]
mod needs;

fn main() {
    netns_tests();
    println!("cargo::rerun-if-changed=src/launch/netns/needs.rs");
    tier_modules();
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
/// Writes `$OUT_DIR/lock_tiers.rs`: a `mod` for each file of `src/lock/tiers/` (by its path),
/// and `tier_locks()`, which gathers every file's `locks()`. Included by `src/lock/mod.rs`.
fn tier_modules() {
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&root).join("src/lock/tiers");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable directory").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    // Sorted, so the generated file changes only when the folder does.
    files.sort();
    let mut code = String::new();
    let mut gather = String::new();
    for path in &files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name");
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            code,
            "#[path = {:?}]\nmod {name};",
            path.display().to_string()
        )
        .unwrap();
        writeln!(gather, "    all.extend({name}::locks());").unwrap();
    }
    writeln!(
        code,
        "\n/// Every tier file's locks.\nfn tier_locks() -> Vec<(Tier, TierLock)> {{\n    \
         let mut all = Vec::new();\n{gather}    all\n}}"
    )
    .unwrap();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("lock_tiers.rs"), code).expect("OUT_DIR is writable");
}
