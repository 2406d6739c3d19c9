//! Builds `src/clockshift.c` into `$OUT_DIR/libclockshift.so`, the LD_PRELOAD library that
//! moves a Redis node's wall clock (see `src/launch/clock_shim.rs`, which embeds it in the binary).
//! The `cc` crate only finds the C compiler: it builds static archives, and this is a shared
//! object.

use std::path::PathBuf;

fn main() {
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
