//! Which crate stands on which: the service reaches fleets through the fleet client
//! (`oversell-client`) and has the generator fire only through the workshop's own calls, so
//! neither its manifest's `[dependencies]` nor its sources name the generator, and no crate
//! hands the generator's items on under another name.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn the_service_names_no_generator_and_nobody_re_exports_it() {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a [dependencies] table");
    assert!(
        !dependencies
            .lines()
            .any(|l| l.trim_start().starts_with("loadtest")),
        "the service's [dependencies] name the generator"
    );
    assert!(dependencies.contains("oversell-client"), "{dependencies}");

    let mut files = Vec::new();
    sources(&Path::new(ROOT).join("src"), &mut files);
    assert!(files.len() > 50, "too few sources found: {}", files.len());
    let naming: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("loadtest::"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        naming.is_empty(),
        "the service names the generator: {naming:?}"
    );

    let mut everywhere = Vec::new();
    for dir in ["src", "api/src", "client/src", "workshop/src", "bench/src"] {
        sources(&Path::new(ROOT).join(dir), &mut everywhere);
    }
    let re_exporting: Vec<String> = everywhere
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("pub use loadtest")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(re_exporting.is_empty(), "{re_exporting:?}");
}
