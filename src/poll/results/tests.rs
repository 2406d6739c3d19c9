use super::*;
use crate::poll::ballot_box::{Note, RoomRun, RunRecord, Votes};

const HOSTILE: &str = "<img src=x onerror=alert(1)> =cmd|' | *x*";

fn votes(pairs: &[(&str, usize)]) -> Votes {
    pairs.iter().map(|(r, o)| ((*r).to_owned(), *o)).collect()
}

fn two_rounds() -> Results {
    let record = ChapterRecord {
        chapter: "none-race".into(),
        votes: vec![
            votes(&[("s-01", 0), ("s-02", 2)]),
            votes(&[("s-01", 2), ("s-02", 2)]),
        ],
        notes: vec![
            [(
                "s-01".to_owned(),
                Note {
                    sure: Some(true),
                    why: Some(HOSTILE.into()),
                },
            )]
            .into(),
            [(
                "s-02".to_owned(),
                Note {
                    sure: Some(false),
                    why: None,
                },
            )]
            .into(),
        ],
        run: Some(RunRecord {
            svg: None,
            history: None,
            id: "app1:1".into(),
            room: "default".into(),
            landed: Some(2),
            passed: true,
            figures: Default::default(),
            every_room: vec!["s-01".into(), "s-02".into(), "s-03".into()],
        }),
        room_runs: [
            (
                "s-01".to_owned(),
                RoomRun::Ran {
                    landed: Some(2),
                    passed: true,
                },
            ),
            (
                "s-02".to_owned(),
                RoomRun::Failed {
                    error: "busy".into(),
                },
            ),
        ]
        .into(),
    };
    results(&[record], &["s-01".into(), "s-02".into(), "s-03".into()])
}

#[test]
fn both_rounds_and_the_gain_are_in_the_results() {
    let results = two_rounds();
    let chapter = &results.chapters[0];
    assert_eq!(chapter.rounds[0].share_right, Some(0.5));
    assert_eq!(chapter.rounds[1].share_right, Some(1.0));
    assert_eq!(chapter.gain, Some(1.0));
    assert_eq!(results.rooms[2].answers[0].votes, [None, None]);
}

#[test]
fn the_csv_has_a_row_per_round_and_a_column_per_room() {
    let csv = csv(&two_rounds());
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("chapter,round,voters,votes_A,"),
        "{csv}"
    );
    assert!(
        lines[0].ends_with(
            ",gain,weighted_learning_gain,sure_right,sure_wrong,unsure_right,unsure_wrong,\
             s-01,s-02,s-03"
        ),
        "{csv}"
    );
    assert!(lines[1].starts_with("none-race,1,2,1,0,1"), "{csv}");
    assert!(
        lines[1].ends_with(",C,true,0.500,1.000,,0,1,0,0,A,C,"),
        "{csv}"
    );
    assert!(
        lines[2].ends_with(",C,true,1.000,1.000,,0,0,1,0,C,C,"),
        "{csv}"
    );
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == columns));
}

#[test]
fn sure_and_wrong_is_counted_and_reasons_stay_text_in_every_export() {
    let results = two_rounds();
    let chapter = &results.chapters[0];
    assert_eq!(
        chapter.confidence[0].sure_wrong, 1,
        "{:?}",
        chapter.confidence
    );
    assert_eq!(chapter.confidence[1].unsure_right, 1);
    assert_eq!(chapter.reasons.len(), 1);
    assert_eq!(chapter.reasons[0].why, HOSTILE);
    assert_eq!(chapter.reasons[0].right, Some(false));
    let csv = reasons_csv(&results);
    assert!(
        csv.ends_with("\"<img src=x onerror=alert(1)> =cmd|' | *x*\"\n"),
        "{csv}"
    );
    assert_eq!(csv_text("=1+1"), "\"'=1+1\"");
    assert_eq!(csv_text("say \"hi\""), "\"say \"\"hi\"\"\"");
    let md = markdown(&results);
    // Every `<` escaped: no tag for a renderer to make.
    assert!(!md.replace("\\<", "").contains('<'), "{md}");
    assert!(
        md.contains(r"\<img src\=x onerror\=alert\(1\)\> \=cmd\|\' \| \*x\*"),
        "{md}"
    );
}

#[test]
fn the_markdown_names_the_landed_option_and_every_room() {
    let md = markdown(&two_rounds());
    assert!(md.contains("the run landed in **C**"), "{md}");
    assert!(md.contains("| s-01 | A → C |"), "{md}");
    assert!(md.contains("| s-03 | – → – |"), "{md}");
    assert!(
        md.contains("1 of 3 rooms ran it, landing 1 in **C**; failed: s-02 (busy); 1 not run."),
        "{md}"
    );
}

/// A pair polled in order: b wrong on Q1 alone, right after discussing it and right on Q2
/// alone (a potential learner who learned); a right throughout (a knower right on Q2). The
/// learners' share 1 of 1 over the knowers' 1 of 1: a Weighted Learning Gain of 1.
#[test]
fn the_weighted_learning_gain_is_in_every_format() {
    let q = workshop::scenario::deck()
        .find(|q| q.pair.is_some())
        .expect("the deck marks isomorphic pairs");
    let record = |id: &str, votes: Vec<Votes>, landed: usize| ChapterRecord {
        chapter: id.to_owned(),
        notes: vec![Default::default(); votes.len()],
        votes,
        run: Some(RunRecord {
            svg: None,
            history: None,
            id: format!("{id}-run"),
            room: "default".into(),
            landed: Some(landed),
            passed: true,
            figures: Default::default(),
            every_room: Vec::new(),
        }),
        room_runs: Default::default(),
    };
    let records = [
        record(
            q.id,
            vec![votes(&[("a", 1), ("b", 0)]), votes(&[("a", 1), ("b", 1)])],
            1,
        ),
        record(q.pair.unwrap(), vec![votes(&[("a", 0), ("b", 0)])], 0),
    ];
    let results = results(&records, &["a".into(), "b".into()]);
    assert_eq!(
        results.chapters[0].weighted_learning_gain, None,
        "no pair before"
    );
    assert_eq!(results.chapters[1].weighted_learning_gain, Some(1.0));
    let json = serde_json::to_value(&results).unwrap();
    assert_eq!(json["chapters"][1]["weighted_learning_gain"], 1.0);
    assert_eq!(json["chapters"][1]["transfer"]["potential_learners"], 1);
    assert!(json["chapters"][0]["weighted_learning_gain"].is_null());
    let csv = csv(&results);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|c| *c == "weighted_learning_gain")
        .expect("a column");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert_eq!((rows[0][column], rows[1][column]), ("", ""), "{csv}");
    assert_eq!(rows[2][column], "1.000", "{csv}");
    let md = markdown(&results);
    assert!(
        md.contains(&format!(
            "Weighted Learning Gain **1.00**: 1 of 1 potential learners (wrong on `{}` alone)",
            q.id
        )),
        "{md}"
    );
}
