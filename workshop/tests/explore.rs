//! `loadtest explore`: the binary's answer and exit status for each built-in rung (JSON: the
//! outcomes its row of the tier table gives), a lab lock from files, and bad input.

use std::path::PathBuf;
use std::process::Command;

use oversell_api::tier::Tier;

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

const RUNGS: [Tier; 7] = [
    Tier::Setnx,
    Tier::SetnxExpire,
    Tier::AtomicExpiry,
    Tier::UuidOwner,
    Tier::LuaRelease,
    Tier::ReentrantWatchdog,
    Tier::Fenced,
];

#[test]
fn each_rung_answers_the_outcomes_of_its_row_as_json_with_its_depth_and_exit_status() {
    use oversell_api::grade::Outcome::{Deadlock, ForeignRelease, Overlap};
    for tier in RUNGS {
        let (code, out, err) = loadtest(&["explore", "--tier", tier.id(), "--json"]);
        let answer: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let row = tier.facts().outcomes.unwrap();
        let expected: Vec<&str> = [Overlap, ForeignRelease, Deadlock]
            .into_iter()
            .filter(|o| row.contains(o))
            .map(|o| o.id())
            .collect();
        let got: Vec<&str> = answer["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        assert_eq!(got, expected, "{}: {out}", tier.id());
        let broken = !expected.is_empty();
        assert_eq!(code, if broken { 1 } else { 0 }, "{}: {err}", tier.id());
        assert_eq!(answer["depth"].is_u64(), broken, "{}", tier.id());
        assert!(answer["states"].as_u64().unwrap() > 0);
        assert!(answer["states_per_s"].as_u64().unwrap() > 0);
    }
}

#[test]
fn fenced_sells_nothing_twice_and_says_its_two_holders_were_held() {
    let (code, out, _) = loadtest(&["explore", "--tier", "fenced"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("fenced: no break within these bounds ("),
        "{out}"
    );
    assert!(
        out.contains("the stock refused the stale holder, which is held"),
        "{out}"
    );
    assert!(out.contains("states/s"), "{out}");
}

fn lua(dir: &std::path::Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    path
}

#[test]
fn a_lab_lock_from_files_is_searched_and_one_calling_an_unknown_command_refused() {
    let dir = std::env::temp_dir().join(format!("explore-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let setnx = lua(
        &dir,
        "setnx.lua",
        "return redis.call('SETNX', KEYS[1], ARGV[1])",
    );
    let expire = lua(
        &dir,
        "expire.lua",
        "return redis.call('PEXPIRE', KEYS[1], ARGV[2])",
    );
    let del = lua(&dir, "del.lua", "return redis.call('DEL', KEYS[1])");
    let object = lua(
        &dir,
        "object.lua",
        "return redis.call('OBJECT', 'ENCODING', KEYS[1])",
    );
    let path = |p: &PathBuf| p.to_str().unwrap().to_owned();
    let (code, out, _) = loadtest(&[
        "explore",
        "--acquire",
        &path(&setnx),
        "--acquire",
        &path(&expire),
        "--release",
        &path(&del),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("deadlock"), "{out}");
    assert!(out.contains("A dies between two acquire steps"), "{out}");
    let (code, _, err) = loadtest(&[
        "explore",
        "--acquire",
        &path(&object),
        "--release",
        &path(&del),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not modelled: OBJECT"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_2_with_the_reason() {
    let (code, _, err) = loadtest(&["explore", "--tier", "redlock"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("not a Redis rung of Lua steps; one of setnx"),
        "{err}"
    );
    let (code, _, err) = loadtest(&["explore", "--tier", "fenced", "--faults", "meteor"]);
    assert_eq!(code, 2);
    assert!(err.contains("--faults meteor"), "{err}");
    let (code, _, err) = loadtest(&["explore", "--release", "/nonexistent/r.lua"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read /nonexistent/r.lua"), "{err}");
}

#[test]
fn a_search_cut_by_its_state_bound_exits_3() {
    let (code, out, _) = loadtest(&[
        "explore",
        "--tier",
        "fenced",
        "--budget",
        "0",
        "--max-states",
        "50",
    ]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("a bound reached"), "{out}");
}

#[test]
fn a_counterexample_written_as_a_history_is_judged_by_the_checker_as_the_search_judged_it() {
    use oversell_api::grade::Outcome::Overlap;
    let dir = std::env::temp_dir().join(format!("explore-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for tier in RUNGS {
        let file = dir.join(format!("{}.jsonl", tier.id()));
        let file = file.to_str().unwrap();
        let (_, out, err) = loadtest(&["explore", "--tier", tier.id(), "--history", file]);
        assert!(
            out.contains("written as a history"),
            "{}: {out}{err}",
            tier.id()
        );
        let history = std::fs::read_to_string(file).unwrap();
        assert!(history.contains(r#""request":"model"#), "{history}");
        // The checker reads the sale a unit was sold twice in as violated, and nothing else.
        let sold_twice = tier.facts().outcomes.unwrap().contains(&Overlap);
        let (code, out, err) = loadtest(&["check", file]);
        assert_eq!(
            code,
            if sold_twice { 1 } else { 0 },
            "{}: {out}{err}",
            tier.id()
        );
        if tier == Tier::Fenced {
            assert!(out.contains("stale refused 1"), "{out}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_models_card_under_the_graders_attacks_is_each_rungs_row() {
    for tier in RUNGS {
        let (code, out, err) = loadtest(&["explore", "--tier", tier.id(), "--attacks", "--json"]);
        let graded: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let got: Vec<&str> = graded
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["outcome"].as_str().unwrap())
            .collect();
        let row: Vec<&str> = tier
            .facts()
            .outcomes
            .unwrap()
            .iter()
            .map(|o| o.id())
            .collect();
        assert_eq!(got, row, "{}", tier.id());
        let held = row.iter().all(|o| *o == "held" || *o == "not-applicable");
        assert_eq!(code, if held { 0 } else { 1 }, "{}: {err}", tier.id());
    }
}

#[test]
fn the_answer_reads_in_chinese_with_lang_zh_and_an_unknown_language_is_bad_input() {
    let (code, out, _) = loadtest(&["explore", "--tier", "uuid-owner", "--lang", "zh"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("解锁删掉了别人的锁"), "{out}");
    assert!(out.contains("A 执行 release-2 → 1：删掉了 B 的锁"), "{out}");
    let (code, _, err) = loadtest(&["explore", "--tier", "uuid-owner", "--lang", "fr"]);
    assert_eq!(code, 2);
    assert!(err.contains("--lang fr: en or zh"), "{err}");
}

#[test]
fn a_card_every_attack_holds_says_the_schedule_none_of_them_made_and_exits_broken() {
    let dir = std::env::temp_dir().join(format!("explore-beyond-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fenced = concat!(env!("CARGO_MANIFEST_DIR"), "/../static/locks/fenced/");
    let acquire = PathBuf::from(format!("{fenced}acquire-1.lua"));
    let renew = PathBuf::from(format!("{fenced}renew.lua"));
    // The lease taken off before the delete: a buyer dead between the two never lets go.
    let persist = lua(
        &dir,
        "persist.lua",
        "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end\n\
         redis.call('PERSIST', KEYS[1])\nreturn 1",
    );
    let del = lua(&dir, "del.lua", "redis.call('DEL', KEYS[1])\nreturn 1");
    let path = |p: &PathBuf| p.to_str().unwrap().to_owned();
    let (code, out, err) = loadtest(&[
        "explore",
        "--acquire",
        &path(&acquire),
        "--release",
        &path(&persist),
        "--release",
        &path(&del),
        "--renew",
        &path(&renew),
        "--attacks",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("holder-pause               held"), "{out}");
    assert!(out.contains("a schedule none of the attacks made"), "{out}");
    assert!(out.contains("A dies between two release steps"), "{out}");
    assert_eq!(
        err.trim(),
        "error: broken by a schedule none of the attacks made: deadlock"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
