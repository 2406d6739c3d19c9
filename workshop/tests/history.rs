//! `loadtest check FILE`: the binary's output and exit status on a hand-written history with a
//! violation (1), a clean one (0), and a file that is not a history (2).

use std::path::PathBuf;
use std::process::Command;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/histories")
        .join(name)
}

fn loadtest(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_loadtest"))
        .args(args)
        .output()
        .expect("loadtest runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_violation_exits_1_and_names_the_pair() {
    let file = sample("lua-release-slow-business.jsonl");
    let (code, out, err) = loadtest(&["check", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("✗ mutual exclusion: 1 section came in while a holder was still inside (1 overlapping pair of closed sections)"), "{out}");
    assert!(
        out.contains("B (app2) was granted at 0.106 s while A (app1) was still inside (0.010 s → 0.170 s); A's lease ran out at 0.105 s; A was still working"),
        "{out}"
    );
    assert!(out.contains("only a fence helps"), "{out}");
    assert!(out.contains("unit 5 was sold twice: to buyer b1"), "{out}");
    assert!(out.contains("lost updates 1"), "{out}");
    assert!(
        out.contains("indeterminate 2 settled / 0 unsettled"),
        "{out}"
    );
    assert!(
        err.contains("violated: mutual exclusion, stock linearizable"),
        "{err}"
    );

    let (code, out, _) = loadtest(&["check", file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(json["counts"]["overlaps"], 1);
    assert_eq!(
        json["mutual_exclusion"]["violations"][0]["ops"][0]["owner"],
        "app1:1"
    );
    assert_eq!(
        json["mutual_exclusion"]["violations"][0]["ops"][1]["owner"],
        "app2:1"
    );
    assert_eq!(json["acknowledged"]["holds"], true);

    let (_, out, _) = loadtest(&["check", file.to_str().unwrap(), "--lang", "zh"]);
    assert!(out.contains("B（app2）在 0.106 s 获得锁"), "{out}");
}

#[test]
fn the_svg_names_the_pair() {
    let file = sample("lua-release-slow-business.jsonl");
    let out = std::env::temp_dir().join(format!("check-{}.svg", std::process::id()));
    let (code, _, _) = loadtest(&[
        "check",
        file.to_str().unwrap(),
        "--svg",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    let svg = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains("Where it broke: mutual exclusion"));
    assert!(svg.contains("B (app2) was granted at 0.106 s"));
    assert!(svg.contains("owner app1:1") && svg.contains("owner app2:1"));
    assert!(!svg.contains("<script") && !svg.contains("href=\"http"));
}

#[test]
fn a_clean_history_exits_0() {
    let file = sample("clean-fenced.jsonl");
    let (code, out, err) = loadtest(&["check", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("all four hold"), "{out}");
    assert!(
        out.contains("3 accepted writes, none below a fence already let in"),
        "{out}"
    );
}

#[test]
fn a_bad_file_exits_2_with_one_line() {
    let dir = std::env::temp_dir().join(format!("check-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read_to_string(sample("clean-fenced.jsonl")).unwrap();
    let bad = good.replacen(
        "\"enter_us\": 1796000000010000",
        "\"enter_us\": \"early\"",
        1,
    );
    assert_ne!(good, bad);
    let file = dir.join("bad.jsonl");
    std::fs::write(&file, bad).unwrap();
    let (code, out, err) = loadtest(&["check", file.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("line 6: section.enter_us: expected an integer, found string \"early\""),
        "{err}"
    );
}
