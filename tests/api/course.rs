//! `loadtest course` as CI runs it: one group of chapters, each on the fleet it needs, started
//! and stopped by the course itself with this build's `oversell`, and the report written.

use workshop::scenario::{group_of, CATALOG};

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
    let out = workshop::run_cli(args).await;
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
    let refused = workshop::run_cli(["loadtest", "course", "--only", "lader"]).await;
    let message = format!("{:#}", refused.unwrap_err());
    assert!(
        message.contains("unknown group `lader`; valid: ladder, beyond"),
        "{message}"
    );
    let refused = workshop::run_cli(["loadtest", "course", "--from", "setnx-crush"]).await;
    let message = format!("{:#}", refused.unwrap_err());
    assert!(
        message.contains("unknown chapter `setnx-crush`"),
        "{message}"
    );
}

/// `--class URL`: a fleet that does not answer, refuses the token or has no class stops the
/// course in one line, before its first fleet starts.
#[tokio::test]
async fn the_course_refuses_a_class_it_cannot_read_before_any_fleet_starts() {
    let fleet = crate::helpers::spawn_fleet(1).await;
    let url = fleet.url(0).to_owned();
    let course = |url: String, token: &'static str| async move {
        let args = [
            "loadtest", "course", "--only", "ladder", "--class", &url, "--token", token,
        ];
        let refused = workshop::run_cli(args).await;
        format!("{:#}", refused.expect_err("the course must not start"))
    };
    let message = course(url.clone(), crate::helpers::TOKEN).await;
    assert!(message.contains("has no class"), "{message}");
    let message = course(url.clone(), "not-the-token").await;
    assert!(message.contains("admin token rejected (401)"), "{message}");
    let port = oversell_client::ports::free_port().unwrap();
    let message = course(format!("http://127.0.0.1:{port}"), "t").await;
    assert!(message.contains("cannot read the class at"), "{message}");
}

/// `--class URL`: the class's votes and its run beside the rehearsal's, chapter by chapter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_course_sets_the_class_votes_beside_the_chapters_it_rehearses() {
    use crate::poll::{make_class, ok, vote};
    use oversell::lock_store::{LockStoreKind, Persistence};
    use reqwest::Method;
    use serde_json::json;

    let class_fleet =
        crate::scenarios::start_fleet_with(3, LockStoreKind::Single, Persistence::None).await;
    let token = crate::scenarios::TOKEN;
    let client = crate::helpers::http_client();
    let base = class_fleet.url().to_owned();
    let seats = make_class(&client, &base, token, 2).await;
    let admin = |path: &'static str, body: Option<serde_json::Value>| {
        ok(&client, &base, Method::POST, path, Some(token), body)
    };
    // One chapter the course rehearses, voted in two rounds and revealed; one it does not.
    admin(
        "/admin/class/poll",
        Some(json!({ "chapter": "atomic-deduct" })),
    )
    .await;
    for (seat, option) in [(0, 0), (1, 1)] {
        assert!(vote(&client, &base, &seats[seat], option)
            .await
            .0
            .is_success());
    }
    admin("/admin/class/poll/round", None).await;
    for seat in &seats {
        assert!(vote(&client, &base, seat, 0).await.0.is_success());
    }
    let reveal = admin("/admin/class/poll/reveal", Some(json!({ "run": true }))).await;
    admin("/admin/class/poll", Some(json!({ "chapter": "none-race" }))).await;

    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("course.md");
    let args = [
        "loadtest",
        "course",
        "--only",
        "ladder",
        "--from",
        "fenced-freeze",
        "--oversell",
        env!("CARGO_BIN_EXE_oversell"),
        "--report",
        report.to_str().unwrap(),
        "--class",
        &base,
        "--token",
        token,
    ];
    let out = workshop::run_cli(args).await;
    let written = std::fs::read_to_string(&report).unwrap_or_default();
    let out = out.unwrap_or_else(|err| panic!("{err:#}\n{written}"));
    class_fleet.stop().await;
    assert!(
        written.contains(&format!("## The class's votes ({base})")),
        "{written}"
    );
    let row = written
        .lines()
        .find(|l| l.starts_with("| `atomic-deduct` |") && l.contains("voted"))
        .unwrap_or_else(|| panic!("no class row for atomic-deduct:\n{written}"));
    assert!(row.contains("| A 1 · B 1 "), "{row}");
    assert!(row.contains("| A 2 · B 0 "), "{row}");
    let landed = reveal["landed"]
        .as_u64()
        .expect("atomic-deduct lands in an option");
    let letter = char::from(b'A' + landed as u8);
    assert!(row.contains(&format!("| {letter} |")), "{row}");
    assert!(
        row.ends_with("| agree |") || row.contains("mismatch"),
        "{row}"
    );
    assert!(
        written.contains("| `fenced-freeze` | not polled by the class |"),
        "{written}"
    );
    assert!(
        written.contains("not rehearsed here: `none-race`."),
        "{written}"
    );
    assert!(
        out.contains("class: polled 1 of the 3 chapters rehearsed"),
        "{out}"
    );
}
