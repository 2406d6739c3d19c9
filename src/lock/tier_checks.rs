//! The tier files against the lab's presets and the sale: every preset is the very script its
//! built-in tier sends, every locking tier has its lock from one file, and nothing here calls
//! back into the sale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::steps::{On, Request, Step, Technique};
use super::tiers::tier_locks;
use super::*;
use oversell_api::tier::Tier;

fn static_locks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("static/locks")
}

/// The scripts a tier sends, by the name of the lab file each step is: `acquire-1.lua`…
fn sent(technique: &dyn Technique) -> BTreeMap<String, &'static str> {
    let keys = Keys::for_room("presets");
    let on = On {
        keys: &keys,
        owner: "holder",
        ttl_ms: 1_000,
        wait_ms: 5_000,
    };
    let source = |step: &Step| match &step.request {
        Request::Script(call) => call.source(),
        Request::Lab(_) => panic!("a built-in tier sent a lab step"),
    };
    let mut named = BTreeMap::new();
    for (what, steps) in [
        ("acquire", technique.acquire(&on)),
        ("release", technique.release(&on)),
    ] {
        for (i, step) in steps.iter().enumerate() {
            named.insert(format!("{what}-{}.lua", i + 1), source(step));
        }
    }
    if let Some(renew) = technique.renew(&on) {
        named.insert("renew.lua".into(), source(&renew));
    }
    named
}

/// A preset folder's scripts, by file name.
fn presets(dir: &Path) -> BTreeMap<String, String> {
    let mut named = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "lua") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            named.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    named
}

/// The code of a script or source file without its `--` comments and whitespace: what a
/// copy would keep even with its comments reworded.
fn code(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("--"))
        .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
        .collect()
}

#[test]
fn every_preset_is_the_very_script_its_built_in_tier_sends() {
    let locks = Locks::default();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(static_locks()).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let id = dir.file_name().unwrap().to_string_lossy().into_owned();
        let tier: Tier = id.parse().unwrap_or_else(|_| panic!("{id}: no such tier"));
        let technique = locks.technique(tier);
        let technique = technique.unwrap_or_else(|| panic!("{id}: not a step list"));
        let sent = sent(technique);
        let presets = presets(&dir);
        let names = |m: Vec<&String>| m.into_iter().cloned().collect::<Vec<_>>();
        assert_eq!(
            names(sent.keys().collect()),
            names(presets.keys().collect()),
            "{id}: the tier's steps and the lab's files"
        );
        for (name, source) in &sent {
            // The same bytes, and the same `&'static str`: the file itself, not a copy.
            assert_eq!(*source, presets[name], "{id}/{name}");
        }
        folders.push(tier);
    }
    // Every Redis rung the engine runs as steps is a lab preset, in the folder its row
    // names.
    for tier in Tier::ALL {
        if locks.technique(tier).is_some() {
            assert!(folders.contains(&tier), "{tier}: no static/locks/{tier}/");
        }
        let preset = tier.facts().preset;
        assert_eq!(preset.is_some(), folders.contains(&tier), "{tier}'s row");
        assert!(
            preset.is_none_or(|p| p == tier.id()),
            "{tier}'s preset folder"
        );
    }
}

/// Every tier that takes a lock has one, given by exactly one tier file.
#[test]
fn every_locking_tier_has_its_lock_from_one_file() {
    let locks = Locks::default();
    for tier in Tier::ALL {
        if tier.locks() {
            assert!(locks.get(tier).is_some(), "{tier}: no lock");
        }
    }
    let mut given: Vec<Tier> = tier_locks().into_iter().map(|(t, _)| t).collect();
    let all = given.len();
    given.sort_by_key(|t| t.index());
    given.dedup();
    assert_eq!(given.len(), all, "a tier given by two files");
}

/// The walk from `POST /sale` to Redis goes one way: the sale calls the lock (through the
/// `Lock` trait and the types beside it; the engine, its steps and the round-trip planner
/// are private to this module, so the compiler holds that half), and nothing here calls
/// back into the sale.
#[test]
fn the_lock_never_reaches_into_the_sale() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lock");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // The code, not its tests (this file names what it looks for).
        if path.extension().is_some_and(|e| e == "rs") && !path.ends_with(file!()) {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for needle in ["crate::sale", "super::super::sale"] {
                assert!(!code.contains(needle), "{} names {needle}", path.display());
            }
        }
    }
}

#[test]
fn no_copy_of_a_preset_lives_under_src() {
    let mut scripts = Vec::new();
    for entry in std::fs::read_dir(static_locks()).unwrap() {
        let dir = entry.unwrap().path();
        if dir.is_dir() {
            for (name, text) in presets(&dir) {
                scripts.push((dir.join(name), code(&text)));
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            // A script file is a copy when its code is the preset's; a Rust file, when it
            // holds the preset's code (in a string) anywhere.
            let text = code(&text);
            let lua = path.extension().is_some_and(|e| e == "lua");
            for (preset, script) in &scripts {
                let copies = match lua {
                    true => text == *script,
                    false => text.contains(script.as_str()),
                };
                assert!(
                    !copies,
                    "{} copies {}: include the preset instead",
                    path.display(),
                    preset.display()
                );
            }
        }
    }
}

/// Every file of `tiers/` is declared in `tiers/mod.rs`, so none is left out of the locks
/// (nor from a reader grepping for its `mod` line), and every declared module is a file.
#[test]
fn every_tier_file_is_declared_by_its_mod_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lock/tiers");
    let declared = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            files.push(name);
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    for name in &files {
        let line = |vis: &str| format!("{vis}mod {name};");
        assert!(
            declared
                .lines()
                .any(|l| l == line("") || l == line("pub(super) ")),
            "src/lock/tiers/{name}.rs has no `mod {name};` in tiers/mod.rs"
        );
        assert!(
            declared.contains(&format!("{name}::locks()")),
            "tiers/mod.rs does not gather {name}::locks()"
        );
    }
}
