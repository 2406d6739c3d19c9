//! `loadtest course` as CI runs it: one group of chapters, each on the fleet it needs, started
//! and stopped by the course itself with this build's `oversell`, and the report written.

use loadtest::scenario::{group_of, CATALOG};

#[tokio::test(flavor = "multi_thread")]
async fn the_course_rehearses_a_group_on_the_fleets_it_starts_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("course.md");
    let args = [
        "loadtest",
        "course",
        "--only",
        "zookeeper",
        "--oversell",
        env!("CARGO_BIN_EXE_oversell"),
        "--report",
        report.to_str().unwrap(),
    ];
    let out = loadtest::run_cli(args).await;
    let written = std::fs::read_to_string(&report).unwrap_or_default();
    let out = out.unwrap_or_else(|err| panic!("{err:#}\n{written}"));
    let chapters: Vec<&str> = CATALOG
        .iter()
        .filter(|s| group_of(s.id) == Some("zookeeper"))
        .map(|s| s.id)
        .collect();
    // One ZooKeeper server for the first chapters, an ensemble of three for the last: two
    // fleets, each started for its chapters.
    assert!(written.contains("oversell up --zookeeper |"), "{written}");
    assert!(
        written.contains("oversell up --zookeeper-nodes 3 |"),
        "{written}"
    );
    for id in &chapters {
        let row = written
            .lines()
            .find(|line| line.contains(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("no row for {id}:\n{written}"));
        assert!(row.contains("| PASS | 1/1 |"), "{row}");
        assert!(out.contains(id), "{out}");
    }
    let n = chapters.len();
    assert!(
        written.contains(&format!(
            "{n} chapters: {n} PASS, 0 FAIL, 0 ERROR, 0 NOT RUN"
        )),
        "{written}"
    );
}

#[tokio::test]
async fn the_course_refuses_a_group_or_chapter_it_does_not_know_in_one_line() {
    let refused = loadtest::run_cli(["loadtest", "course", "--only", "lader"]).await;
    let message = format!("{:#}", refused.unwrap_err());
    assert!(
        message.contains("unknown group `lader`; valid: ladder, beyond"),
        "{message}"
    );
    let refused = loadtest::run_cli(["loadtest", "course", "--from", "setnx-crush"]).await;
    let message = format!("{:#}", refused.unwrap_err());
    assert!(
        message.contains("unknown chapter `setnx-crush`"),
        "{message}"
    );
}
