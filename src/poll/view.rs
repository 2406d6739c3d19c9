//! What the poll looks like to its readers, built from a [`Snapshot`]: the public view
//! (students, the stream: how many voted, never what, until the reveal), the admin view (the
//! counts of every round) and the reveal (the run's figures, the option they landed in, the
//! share right per round and the gain).

use std::collections::BTreeMap;

use loadtest::scenario::{self, question, Question};
use serde::Serialize;

use super::store::{Poll, RunRecord, Snapshot, Votes};

/// Where the poll stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PollState {
    /// No poll.
    Idle,
    /// A round takes votes.
    Open,
    /// The round closed; no reveal yet.
    Closed,
    Revealed,
}

/// The poll as anyone may see it.
#[derive(Debug, Clone, Serialize)]
pub struct PublicView {
    pub state: PollState,
    pub chapter: Option<String>,
    pub round: Option<u8>,
    pub question: Option<&'static Question>,
    /// Rooms that voted in the round in progress.
    pub voted: usize,
    /// Rooms in the class.
    pub rooms: usize,
    pub reveal: Option<Reveal>,
}

/// The poll as the presenter sees it: the public view and every round's counts.
#[derive(Debug, Clone, Serialize)]
pub struct AdminView {
    #[serde(flatten)]
    pub view: PublicView,
    pub rounds: Vec<RoundCounts>,
}

/// One round's votes per option.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundCounts {
    pub round: u8,
    /// Votes per option, in the question's order.
    pub counts: Vec<usize>,
    pub voters: usize,
    pub open: bool,
}

/// The answer of a reveal: what the run showed beside what the class predicted.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reveal {
    pub chapter: String,
    /// The room the chapter ran in.
    pub room: String,
    /// The option the run's figures landed in, by the question's rule; `null`: none of them.
    pub landed: Option<usize>,
    /// Whether the run showed what the chapter expects.
    pub passed: bool,
    /// The chapter's expectation, in words.
    pub expectation: String,
    pub figures: BTreeMap<String, f64>,
    pub rounds: Vec<RoundResult>,
    /// The normalised gain from round 1 to round 2, (post − pre) / (1 − pre); `null` with one
    /// round, or when round 1 was all right already.
    pub gain: Option<f64>,
    /// The chapter's explanation.
    pub en: &'static str,
    pub zh: &'static str,
    /// Where in the articles the chapter comes from.
    pub source: &'static str,
}

/// One round's votes and how many were right.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundResult {
    pub round: u8,
    pub counts: Vec<usize>,
    pub voters: usize,
    /// Votes for the option the run landed in ÷ voters; `null` when it landed in none or
    /// nobody voted.
    pub share_right: Option<f64>,
}

impl PublicView {
    pub fn idle(rooms: usize) -> PublicView {
        PublicView {
            state: PollState::Idle,
            chapter: None,
            round: None,
            question: None,
            voted: 0,
            rooms,
            reveal: None,
        }
    }
}

/// The public view of a snapshot.
pub fn public(snapshot: &Snapshot) -> PublicView {
    let rooms = snapshot.class.as_ref().map_or(0, |c| c.students);
    let Some(poll) = &snapshot.poll else {
        return PublicView::idle(rooms);
    };
    let state = match poll {
        Poll { revealed: true, .. } => PollState::Revealed,
        Poll { open: true, .. } => PollState::Open,
        Poll { .. } => PollState::Closed,
    };
    let reveal = match (state, &snapshot.run) {
        (PollState::Revealed, Some(run)) => Some(reveal(&poll.chapter, run, &snapshot.votes)),
        _ => None,
    };
    PublicView {
        state,
        chapter: Some(poll.chapter.clone()),
        round: Some(poll.round),
        question: question(&poll.chapter),
        voted: snapshot.votes.last().map_or(0, |votes| votes.len()),
        rooms,
        reveal,
    }
}

/// The admin view of a snapshot.
pub fn admin(snapshot: &Snapshot) -> AdminView {
    let rounds = match &snapshot.poll {
        None => Vec::new(),
        Some(poll) => {
            let options = options_of(&poll.chapter, &snapshot.votes);
            (1..)
                .zip(&snapshot.votes)
                .map(|(round, votes)| RoundCounts {
                    round,
                    counts: counts(votes, options),
                    voters: votes.len(),
                    open: poll.open && round == poll.round,
                })
                .collect()
        }
    };
    AdminView {
        view: public(snapshot),
        rounds,
    }
}

/// The reveal of `chapter`'s poll with `run`, whose rounds' votes are `votes`.
pub fn reveal(chapter: &str, run: &RunRecord, votes: &[Votes]) -> Reveal {
    let rounds = round_results(chapter, run.landed, votes);
    let scenario = scenario::find(chapter);
    Reveal {
        chapter: chapter.to_owned(),
        room: run.room.clone(),
        landed: run.landed,
        passed: run.passed,
        expectation: scenario.map(|s| s.expectation()).unwrap_or_default(),
        figures: run.figures.clone(),
        gain: gain(&rounds),
        rounds,
        en: scenario.map_or("", |s| s.en),
        zh: scenario.map_or("", |s| s.zh),
        source: scenario.map_or("", |s| s.source),
    }
}

/// Each round's counts and share right, given the option the run landed in.
pub fn round_results(chapter: &str, landed: Option<usize>, votes: &[Votes]) -> Vec<RoundResult> {
    let options = options_of(chapter, votes);
    (1..)
        .zip(votes)
        .map(|(round, votes)| {
            let counts = counts(votes, options);
            RoundResult {
                round,
                share_right: share_right(&counts, votes.len(), landed),
                counts,
                voters: votes.len(),
            }
        })
        .collect()
}

/// How many options the chapter's question has; for a chapter the catalog no longer has, as
/// many as the votes name.
pub fn options_of(chapter: &str, votes: &[Votes]) -> usize {
    question(chapter).map_or_else(
        || {
            votes
                .iter()
                .flat_map(|v| v.values())
                .max()
                .map_or(0, |&o| o + 1)
        },
        |q| q.options.len(),
    )
}

/// Votes per option.
pub fn counts(votes: &Votes, options: usize) -> Vec<usize> {
    let mut counts = vec![0; options];
    for &option in votes.values() {
        if let Some(count) = counts.get_mut(option) {
            *count += 1;
        }
    }
    counts
}

/// Votes for the landed option ÷ voters.
pub fn share_right(counts: &[usize], voters: usize, landed: Option<usize>) -> Option<f64> {
    let right = *counts.get(landed?)?;
    (voters > 0).then(|| right as f64 / voters as f64)
}

/// Hake's normalised gain from the first round to the last: how much of what round 1 left
/// to learn round 2 learned.
pub fn gain(rounds: &[RoundResult]) -> Option<f64> {
    let [first, .., last] = rounds else {
        return None;
    };
    let (pre, post) = (first.share_right?, last.share_right?);
    (pre < 1.0).then(|| (post - pre) / (1.0 - pre))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll::store::{ClassRooms, Poll};

    fn votes(pairs: &[(&str, usize)]) -> Votes {
        pairs.iter().map(|(r, o)| ((*r).to_owned(), *o)).collect()
    }

    fn result(share_right: Option<f64>) -> RoundResult {
        RoundResult {
            round: 1,
            counts: vec![],
            voters: 0,
            share_right,
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
            run: None,
        };
        let view = public(&snapshot);
        assert_eq!(
            (view.state, view.voted, view.rooms),
            (PollState::Open, 1, 30)
        );
        assert!(view.reveal.is_none());
        let json = serde_json::to_value(&view).unwrap();
        assert!(json.get("rounds").is_none() && json.get("counts").is_none());
        let admin = admin(&snapshot);
        assert_eq!(admin.rounds.len(), 2);
        assert!(!admin.rounds[0].open && admin.rounds[1].open);
        assert_eq!(admin.rounds[0].counts[..2], [1, 1]);
    }
}
