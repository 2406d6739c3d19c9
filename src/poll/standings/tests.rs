use super::*;
use crate::poll::ballot_box::{ClassRooms, Poll};

fn votes(pairs: &[(&str, usize)]) -> Votes {
    pairs.iter().map(|(r, o)| ((*r).to_owned(), *o)).collect()
}

fn result(share_right: Option<f64>) -> RoundResult {
    RoundResult {
        round: 1,
        counts: vec![],
        voters: 0,
        share_right,
        sure: vec![],
    }
}

#[test]
fn the_share_right_counts_the_landed_option_among_voters() {
    assert_eq!(share_right(&[1, 3], 4, Some(1)), Some(0.75));
    assert_eq!(share_right(&[1, 3], 4, None), None);
    assert_eq!(share_right(&[0, 0], 0, Some(0)), None);
    assert_eq!(share_right(&[1, 3], 4, Some(7)), None);
}

#[test]
fn the_gain_is_normalised_and_needs_two_rounds() {
    let gained = gain(&[result(Some(0.25)), result(Some(0.625))]).unwrap();
    assert!((gained - 0.5).abs() < 1e-9, "{gained}");
    assert_eq!(gain(&[result(Some(0.25))]), None);
    assert_eq!(gain(&[result(Some(1.0)), result(Some(1.0))]), None);
    assert_eq!(gain(&[result(None), result(Some(0.5))]), None);
    let lost = gain(&[result(Some(0.5)), result(Some(0.25))]).unwrap();
    assert!((lost + 0.5).abs() < 1e-9, "{lost}");
}

#[test]
fn an_option_past_the_question_is_counted_nowhere() {
    let v = votes(&[("a", 0), ("b", 2), ("c", 2), ("d", 9)]);
    assert_eq!(counts(&v, 3), [1, 0, 2]);
}

#[test]
fn the_public_view_says_how_many_voted_and_not_what() {
    let snapshot = Snapshot {
        version: 7,
        counted: true,
        poll: Some(Poll {
            chapter: "none-race".into(),
            round: 2,
            open: true,
            revealed: false,
        }),
        class: Some(ClassRooms {
            prefix: "student".into(),
            students: 30,
        }),
        votes: vec![votes(&[("a", 0), ("b", 1)]), votes(&[("a", 1)])],
        notes: vec![Notes::new(), Notes::new()],
        run: None,
        room_runs: RoomRuns::new(),
    };
    let view = public(&snapshot);
    assert_eq!(
        (view.state, view.voted, view.rooms),
        (PollState::Open, 1, 30)
    );
    assert!(view.reveal.is_none());
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["version"], 7);
    assert!(json.get("rounds").is_none() && json.get("counts").is_none());
    let admin = admin(&snapshot);
    assert_eq!(admin.rounds.len(), 2);
    assert_eq!(serde_json::to_value(&admin).unwrap()["version"], 7);
    assert!(!admin.rounds[0].open && admin.rounds[1].open);
    assert_eq!(admin.rounds[0].counts[..2], [1, 1]);
}

#[test]
fn every_room_counts_each_room_once_and_names_the_failed() {
    let run = RunRecord {
        svg: None,
        history: None,
        id: "i1:1".into(),
        room: "default".into(),
        landed: Some(2),
        passed: true,
        figures: Default::default(),
        every_room: ["s-01", "s-02", "s-03", "s-04", "s-05"]
            .map(String::from)
            .into(),
    };
    let ran = |landed, passed| RoomRun::Ran { landed, passed };
    let room_runs: RoomRuns = [
        ("s-01", ran(Some(2), true)),
        ("s-02", ran(Some(1), false)),
        ("s-03", ran(None, false)),
        (
            "s-04",
            RoomRun::Failed {
                error: "busy".into(),
            },
        ),
        // A room no longer asked is not counted.
        ("other", ran(Some(0), true)),
    ]
    .into_iter()
    .map(|(room, run)| (room.to_owned(), run))
    .collect();
    let tally = every_room("none-race", &run, &[], &room_runs).unwrap();
    assert_eq!(tally.rooms, 5);
    assert_eq!(tally.landed.iter().sum::<usize>(), 2);
    assert_eq!((tally.landed[2], tally.landed[1]), (1, 1));
    assert_eq!(
        (tally.landed_none, tally.not_passed, tally.pending),
        (1, 2, 1)
    );
    assert_eq!(tally.failed[0].room, "s-04");
    let one_room = RunRecord {
        svg: None,
        history: None,
        every_room: Vec::new(),
        ..run
    };
    assert_eq!(every_room("none-race", &one_room, &[], &room_runs), None);
}

#[test]
fn each_question_has_a_number_of_its_own_and_a_claim_is_cited_at_its_reveal() {
    let deck: Vec<_> = workshop::scenario::deck().collect();
    let numbers: Vec<usize> = deck
        .iter()
        .map(|q| number(q.id).unwrap_or_else(|| panic!("{} has no number", q.id)))
        .collect();
    let distinct: std::collections::BTreeSet<usize> = numbers.iter().copied().collect();
    assert_eq!(distinct.len(), deck.len(), "two questions share a number");
    assert!(
        numbers.iter().all(|n| (100..=999).contains(n)),
        "{numbers:?}"
    );
    // The number says nothing of the place: in the deck's order, the numbers go up about as
    // often as down (a place would make them all go up).
    let up = numbers.windows(2).filter(|w| w[0] < w[1]).count();
    assert!(
        (deck.len() / 4..deck.len() * 3 / 4).contains(&up),
        "{up} of {} steps go up: {numbers:?}",
        deck.len() - 1
    );
    assert_eq!(number("no-such-question"), None);
    // A claim shares its chapter's run, not its chapter's label.
    let claim = deck
        .iter()
        .find(|q| q.claim.is_some())
        .expect("the deck puts claims on trial");
    assert_ne!(number(claim.id), number(claim.chapter));
    let run = RunRecord {
        svg: None,
        history: None,
        id: "i1:1".into(),
        room: "default".into(),
        landed: Some(0),
        passed: true,
        figures: Default::default(),
        every_room: Vec::new(),
    };
    let revealed = reveal(claim.id, &run, &[], &[], &RoomRuns::default());
    assert_eq!(revealed.claim, claim.claim);
    assert_eq!(revealed.chapter, claim.chapter);
    let own = reveal(claim.chapter, &run, &[], &[], &RoomRuns::default());
    assert_eq!(own.claim, None, "a chapter's own question cites no claim");
}

#[test]
fn a_reveal_on_a_ladder_rung_says_its_shortest_break_and_one_off_the_ladder_none() {
    let run = RunRecord {
        svg: None,
        history: Some("run-7".into()),
        id: "i1:1".into(),
        room: "default".into(),
        landed: None,
        passed: true,
        figures: Default::default(),
        every_room: Vec::new(),
    };
    let rung = |chapter: &str| scenario::find(chapter).map(|s| s.tier);
    // A chapter on atomic-expiry: the search's break of that rung, both languages.
    let on_rung = reveal(
        "unlock-after-expiry-plain-del",
        &run,
        &[],
        &[],
        &RoomRuns::new(),
    );
    let said = on_rung.shortest_break.expect("a ladder rung's break");
    let searched = explore::ladder::rung_break(rung("unlock-after-expiry-plain-del").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(*said, searched);
    assert!(said.en.contains("deletes B's lock") && said.zh.contains("删掉了 B 的锁"));
    assert_eq!(on_rung.history.as_deref(), Some("run-7"));
    // ZooKeeper is no Redis rung: nothing said.
    let zookeeper = reveal("zookeeper-session-expiry", &run, &[], &[], &RoomRuns::new());
    assert_eq!(
        rung("zookeeper-session-expiry"),
        Some(oversell_api::tier::Tier::Zookeeper)
    );
    assert_eq!(zookeeper.shortest_break, None);
}
