//! The launcher: every process of a fleet started and kept running, apart from the service
//! it starts. The service serves and the launcher launches: outside this tree only
//! `src/main.rs` names it (and tests: `tests/`, and a module's unit tests, may start a fleet or
//! a private `redis-server` with it). Where both sides need a piece (the fleet network an
//! instance is handed, its cuts, a node's clock offset file, a member's hold-down file), the
//! piece is the service's (`crate::member`) and the launcher uses it. The `tests` below check
//! that no service file names this tree.
//!
//! Two commands launch, and one checks beforehand:
//!
//! - [`up`]: `oversell up`, the whole topology as local processes, for a machine without
//!   Docker; [`local_fleet`]: the same as one value, for `up` and for tests.
//! - [`member_supervisor`]: `oversell member`, what a compose store's container runs: its
//!   store, restarted when it exits, and the faults' acts on it served to the admin token.
//! - [`doctor`]: `oversell doctor`, what this machine has and lacks for `up`, and how to
//!   install what is missing.
//!
//! And their parts:
//!
//! - [`topology`]: ids, instance environment and nginx values, shared with the compose files.
//! - [`supervisor`]: one task per child that restarts it, as `restart: unless-stopped` does.
//! - [`process`]: process groups, signals, prefixed output, HTTP probes.
//! - [`redis_server`]: a private `redis-server` (also what the tests start), free ports, and
//!   finding a program.
//! - [`redis_nodes`]: the Redis processes of `up` (resource store, lock store, Sentinels).
//! - [`zookeeper_servers`]: ZooKeeper servers (standalone or a 3-node ensemble) for the
//!   ZooKeeper tiers.
//! - [`postgres_server`]: the PostgreSQL server for the database tiers.
//! - [`nginx`]: the nginx child.
//! - [`netns`]: `--network netns`: the namespaces made, taken down, and entered by a child.
//! - [`clock_shim`]: the preload library a Redis node runs under, so its clock can jump.

pub(crate) mod clock_shim;
pub mod doctor;
pub mod local_fleet;
pub mod member_supervisor;
pub mod netns;
pub(crate) mod nginx;
pub mod postgres_server;
pub mod process;
pub(crate) mod redis_nodes;
pub mod redis_server;
pub mod supervisor;
pub mod topology;
pub mod up;
pub mod zookeeper_servers;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// Every `.rs` file under `dir`.
    fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }

    /// `text` without its unit tests: from a `#[cfg(test)] mod … {` on (they sit at a file's
    /// end), as `module_cycles.py` reads a file. A test may start a private `redis-server`
    /// with the launcher, as `tests/` does; the module it tests may not reach in.
    fn outside_tests(text: &str) -> &str {
        let mut from = 0;
        while let Some(found) = text[from..].find("#[cfg(test)]") {
            let at = from + found;
            let rest = text[at + "#[cfg(test)]".len()..].trim_start();
            let body = rest.find('{');
            let inline = rest.starts_with("mod ") && body.is_some_and(|b| !rest[..b].contains(';'));
            if inline {
                return &text[..at];
            }
            from = at + 1;
        }
        text
    }

    /// Whether `text` names the launcher as a path: `crate::launch` or `super::launch`, or
    /// `launch` among the names of a grouped `use crate::{…}`. Comments count too: a service
    /// comment that points into the launcher by path is a dependency waiting to happen.
    fn names_launcher(text: &str) -> bool {
        let is_ident = |c: char| c.is_alphanumeric() || c == '_';
        let named_at = |rest: &str| !rest.starts_with(is_ident);
        for root in ["crate::", "super::"] {
            for (at, _) in text.match_indices(root) {
                let after = &text[at + root.len()..];
                if let Some(rest) = after.strip_prefix("launch") {
                    if named_at(rest) {
                        return true;
                    }
                }
                let Some(group) = after.strip_prefix('{') else {
                    continue;
                };
                // The group's own names, at depth 0, up to its closing brace.
                let mut depth = 0;
                let mut names = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        _ if depth == 0 => names.push(c),
                        _ => {}
                    }
                }
                let grouped = names
                    .split(',')
                    .map(str::trim)
                    .any(|name| name.strip_prefix("launch").is_some_and(&named_at));
                if grouped {
                    return true;
                }
            }
        }
        false
    }

    #[test]
    fn a_path_into_the_launcher_is_seen_however_it_is_written() {
        assert!(names_launcher("use crate::launch::netns::Place;"));
        assert!(names_launcher(
            "let p = super::launch::redis_server::find_binary(\"x\");"
        ));
        assert!(names_launcher("use crate::{keys::Keys, launch::up};"));
        assert!(names_launcher(
            "use crate::{\n    launch,\n    keys::{self, Keys},\n};"
        ));
        assert!(names_launcher("/// see `crate::launch::local_fleet`"));
        assert!(!names_launcher("use crate::launcher_free::x;"));
        assert!(!names_launcher("use crate::{keys::{launch, Keys}, lock};"));
        assert!(!names_launcher("// `oversell up` launches the fleet"));
    }

    #[test]
    fn a_unit_test_module_is_left_out_and_nothing_before_it() {
        let text =
            "use crate::keys::Keys;\n#[cfg(test)]\nmod test_cx;\n\n#[cfg(test)]\nmod tests {\n    \
                    use crate::launch::redis_server::RedisServer;\n}\n";
        assert!(names_launcher(text));
        assert!(!names_launcher(outside_tests(text)));
        assert!(outside_tests(text).contains("mod test_cx;"));
        let service = "use crate::launch::up;\n#[cfg(test)]\nmod tests {}\n";
        assert!(names_launcher(outside_tests(service)));
    }

    /// A module's unit tests in a file of their own (`<module>/tests.rs`), declared
    /// `#[cfg(test)] mod tests;` by the module: test code, as a `mod tests { … }` block is.
    fn unit_tests_of_their_own(file: &Path) -> bool {
        let Some(dir) = file.parent().filter(|_| file.ends_with("tests.rs")) else {
            return false;
        };
        let module = dir.with_extension("rs");
        let declared = ["#[cfg(test)]\nmod tests;", "#[cfg(test)]\r\nmod tests;"];
        std::fs::read_to_string(module)
            .or_else(|_| std::fs::read_to_string(dir.join("mod.rs")))
            .is_ok_and(|text| declared.iter().any(|d| text.contains(d)))
    }

    /// The service serves and the launcher launches: no file outside `src/launch/` but
    /// `src/main.rs` (which runs both) names the launcher, unit tests aside. A piece both need belongs on the
    /// service's side (as `member::network` and `member::clock_offset` do) and the launcher
    /// uses it from there.
    #[test]
    fn no_service_module_names_the_launcher() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let launcher = src.join("launch");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let service: Vec<&PathBuf> = files
            .iter()
            .filter(|f| !f.starts_with(&launcher) && **f != src.join("main.rs"))
            .filter(|f| !unit_tests_of_their_own(f))
            .collect();
        // Not a vacuous pass: the service's files were read.
        assert!(service.contains(&&src.join("lib.rs")), "{service:?}");
        assert!(service.contains(&&src.join("member").join("mod.rs")));
        let reaching: Vec<String> = service
            .into_iter()
            .filter(|f| names_launcher(outside_tests(&std::fs::read_to_string(f).unwrap())))
            .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
            .collect();
        assert!(
            reaching.is_empty(),
            "service files name the launcher (crate::launch): {reaching:?}. Move what both \
             need to the service's side (e.g. under src/member/) and let the launcher use it"
        );
    }
}
