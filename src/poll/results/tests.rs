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
        lines[0].ends_with(",gain,sure_right,sure_wrong,unsure_right,unsure_wrong,s-01,s-02,s-03"),
        "{csv}"
    );
    assert!(lines[1].starts_with("none-race,1,2,1,0,1"), "{csv}");
    assert!(
        lines[1].ends_with(",C,true,0.500,1.000,0,1,0,0,A,C,"),
        "{csv}"
    );
    assert!(
        lines[2].ends_with(",C,true,1.000,1.000,0,0,1,0,C,C,"),
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
