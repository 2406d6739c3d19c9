//! What the poll looks like to its readers, built from a [`Snapshot`]: the public view
//! (students, the stream: how many voted, never what, until the reveal), the admin view (the
//! counts of every round) and the reveal (the run's figures, the option they landed in, the
//! share right per round and the gain; after a run in every room, where each room's run
//! landed).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use explore::ladder::RungBreak;
use serde::Serialize;
use workshop::scenario::{self, question, Question};

use super::ballot_box::{Note, Notes, Poll, RoomRun, RoomRuns, RunRecord, Snapshot, Votes};

/// The reasons the presenter sees per option and round: a sample, enough to read aloud.
pub const REASONS_SHOWN: usize = 5;

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
    /// The poll's version it was read at: it grows with every change of the poll, fleet-wide,
    /// so a page drops a view older than the one it drew (an event may arrive after an answer).
    pub version: u64,
    pub state: PollState,
    /// The chapter the question runs, once revealed: before, its id may name the outcome.
    pub chapter: Option<String>,
    /// The question's neutral label, "Question N": N is its place in the deck.
    pub number: Option<usize>,
    pub round: Option<u8>,
    /// The question and its options' words, nothing that tells the chapter or the answer.
    pub question: Option<Asked>,
    /// The question's id, for this instance's vote (not sent: it may name the outcome).
    #[serde(skip)]
    pub question_id: Option<String>,
    /// Rooms that voted in the round in progress.
    pub voted: usize,
    /// Rooms in the class.
    pub rooms: usize,
    pub reveal: Option<Reveal>,
}

/// A question as the class is asked it.
#[derive(Debug, Clone, Serialize)]
pub struct Asked {
    pub en: &'static str,
    pub zh: &'static str,
    pub options: Vec<Words>,
}

/// An option's words.
#[derive(Debug, Clone, Serialize)]
pub struct Words {
    pub en: &'static str,
    pub zh: &'static str,
}

impl Asked {
    fn of(question: &'static Question) -> Asked {
        Asked {
            en: question.en,
            zh: question.zh,
            options: question
                .options
                .iter()
                .map(|o| Words { en: o.en, zh: o.zh })
                .collect(),
        }
    }
}

/// The neutral number of a question: a label of three digits drawn from its id, not its
/// place in the deck. The course's order is no secret (`GET /scenarios` lists it between
/// votes), so "question 18" would name the eighteenth; a label drawn from the id says nothing
/// of where the question sits. Each question its own (a claim and its chapter's question are
/// told apart on the projector), the same on every instance and after every restart.
pub fn number(question_id: &str) -> Option<usize> {
    LABELS.get(question_id).copied()
}

/// The labels run from 100 to 999: three digits on every screen.
const LABEL_FIRST: usize = 100;
const LABEL_COUNT: usize = 900;

/// Every question's label, drawn once: FNV-1a of the id onto the labels, and a label taken
/// by a question earlier in the deck passed on to the next free one.
static LABELS: LazyLock<BTreeMap<&'static str, usize>> = LazyLock::new(|| {
    let mut taken = vec![false; LABEL_COUNT];
    let mut labels = BTreeMap::new();
    for q in scenario::deck() {
        let hash = q.id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let mut at = usize::try_from(hash % LABEL_COUNT as u64).unwrap_or_default();
        while taken[at] {
            at = (at + 1) % LABEL_COUNT;
        }
        taken[at] = true;
        labels.insert(q.id, LABEL_FIRST + at);
    }
    labels
});

/// The chapter a question runs.
pub fn chapter_of(question_id: &str) -> &str {
    question(question_id).map_or(question_id, |q| q.chapter)
}

/// The poll as the presenter sees it: the public view, the question's id and every round's
/// counts, how sure the voters were and a sample of their reasons.
#[derive(Debug, Clone, Serialize)]
pub struct AdminView {
    #[serde(flatten)]
    pub view: PublicView,
    /// The question polled (the admin token may see what the chapter is).
    pub question_id: Option<String>,
    pub rounds: Vec<RoundCounts>,
}

/// One round's votes per option.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundCounts {
    pub round: u8,
    /// Votes per option, in the question's order.
    pub counts: Vec<usize>,
    /// Votes per option that said "sure".
    pub sure: Vec<usize>,
    pub voters: usize,
    pub open: bool,
    /// Per option, up to [`REASONS_SHOWN`] of its voters' reasons (the rooms' text, as typed).
    pub reasons: Vec<Vec<Reason>>,
}

/// One voter's reason.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reason {
    pub room: String,
    pub sure: Option<bool>,
    pub why: String,
}

/// The answer of a reveal: what the run showed beside what the class predicted.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reveal {
    /// The chapter run.
    pub chapter: String,
    /// The question polled.
    pub question_id: String,
    /// The figures the question's rule read, in the order it names them: what decided the
    /// option (the other figures follow in `figures`).
    pub decided_by: Vec<Figure>,
    /// A picture of the run's first violation, where the chapter has one (SVG).
    pub svg: Option<String>,
    /// The room the chapter ran in.
    pub room: String,
    /// The run's history, kept in `room` under this id: its viewer is
    /// `GET /admin/runs/{id}/view?room=` (the admin token, or the room's own); `null` when the
    /// run left none.
    pub history: Option<String>,
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
    /// The article line whose claim the question put on trial (`002:582`), when it did: the
    /// run just shown is the verdict on it.
    pub claim: Option<&'static str>,
    /// Where the runs in the class's rooms landed, when the presenter ran it in every room;
    /// the figures above are the one room's (`room`).
    pub every_room: Option<EveryRoom>,
    /// After a chapter on a rung of the ladder, the shortest way the rung breaks, as the search
    /// of every schedule says it (`fenced`: that none sells a unit twice); `null` off the
    /// ladder. Part of the reveal only, never of an open or closed round's view.
    pub shortest_break: Option<&'static RungBreak>,
}

/// Where a chapter's runs in the class's rooms landed: each room runs it on the same fleet,
/// and a run may land elsewhere than the one shown (a timing, a busy fleet): counted, not
/// hidden.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EveryRoom {
    /// The class's rooms it runs in, beside the room of the figures.
    pub rooms: usize,
    /// Rooms whose run ended, per option it landed in, in the question's order.
    pub landed: Vec<usize>,
    /// Rooms whose run landed in no option.
    pub landed_none: usize,
    /// Rooms whose run did not show what the chapter expects.
    pub not_passed: usize,
    /// Rooms whose run failed, and why.
    pub failed: Vec<RoomFailed>,
    /// Rooms without an outcome: still to run, or never (the vote moved on, or the instance
    /// running them was killed; one stopped keeps them as failed).
    pub pending: usize,
}

/// A room whose run failed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoomFailed {
    pub room: String,
    pub error: String,
}

/// A figure of the run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Figure {
    pub name: String,
    /// `null`: the run did not measure it (and then landed in no option).
    pub value: Option<f64>,
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
    /// Votes per option that said "sure".
    pub sure: Vec<usize>,
}

impl PublicView {
    pub fn idle(version: u64, rooms: usize) -> PublicView {
        PublicView {
            version,
            state: PollState::Idle,
            chapter: None,
            number: None,
            round: None,
            question: None,
            question_id: None,
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
        return PublicView::idle(snapshot.version, rooms);
    };
    let state = match poll {
        Poll { revealed: true, .. } => PollState::Revealed,
        Poll { open: true, .. } => PollState::Open,
        Poll { .. } => PollState::Closed,
    };
    let reveal = match (state, &snapshot.run) {
        (PollState::Revealed, Some(run)) => Some(reveal(
            &poll.chapter,
            run,
            &snapshot.votes,
            &snapshot.notes,
            &snapshot.room_runs,
        )),
        _ => None,
    };
    PublicView {
        version: snapshot.version,
        state,
        chapter: (state == PollState::Revealed).then(|| chapter_of(&poll.chapter).to_owned()),
        number: number(&poll.chapter),
        round: Some(poll.round),
        question: question(&poll.chapter).map(Asked::of),
        question_id: Some(poll.chapter.clone()),
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
            let no_notes = Notes::new();
            (1..)
                .zip(&snapshot.votes)
                .enumerate()
                .map(|(i, (round, votes))| {
                    let notes = snapshot.notes.get(i).unwrap_or(&no_notes);
                    RoundCounts {
                        round,
                        counts: counts(votes, options),
                        sure: sure_counts(votes, notes, options),
                        voters: votes.len(),
                        open: poll.open && round == poll.round,
                        reasons: reasons(votes, notes, options, REASONS_SHOWN),
                    }
                })
                .collect()
        }
    };
    AdminView {
        view: public(snapshot),
        question_id: snapshot.poll.as_ref().map(|p| p.chapter.clone()),
        rounds,
    }
}

/// Votes per option whose voter said "sure".
pub fn sure_counts(votes: &Votes, notes: &Notes, options: usize) -> Vec<usize> {
    let mut sure = vec![0; options];
    for (room, &option) in votes {
        let said_sure = notes.get(room).and_then(|n| n.sure) == Some(true);
        if let Some(count) = sure.get_mut(option).filter(|_| said_sure) {
            *count += 1;
        }
    }
    sure
}

/// Per option, up to `most` reasons of its voters, in the rooms' order.
pub fn reasons(votes: &Votes, notes: &Notes, options: usize, most: usize) -> Vec<Vec<Reason>> {
    let mut reasons = vec![Vec::new(); options];
    for (room, &option) in votes {
        let Some(Note {
            sure,
            why: Some(why),
        }) = notes.get(room)
        else {
            continue;
        };
        if let Some(these) = reasons.get_mut(option).filter(|r| r.len() < most) {
            these.push(Reason {
                room: room.clone(),
                sure: *sure,
                why: why.clone(),
            });
        }
    }
    reasons
}

/// The reveal of the poll of the question `id` with `run`, whose rounds' votes are `votes`
/// (and notes `notes`; its runs in the class's rooms, `room_runs`).
pub fn reveal(
    id: &str,
    run: &RunRecord,
    votes: &[Votes],
    notes: &[Notes],
    room_runs: &RoomRuns,
) -> Reveal {
    let rounds = round_results(id, run.landed, votes, notes);
    let chapter = chapter_of(id);
    let scenario = scenario::find(chapter);
    let decided_by = question(id)
        .map(|q| q.reads)
        .unwrap_or_default()
        .iter()
        .map(|name| Figure {
            name: (*name).to_owned(),
            value: run.figures.get(*name).copied(),
        })
        .collect();
    Reveal {
        chapter: chapter.to_owned(),
        question_id: id.to_owned(),
        decided_by,
        svg: run.svg.clone(),
        room: run.room.clone(),
        history: run.history.clone(),
        landed: run.landed,
        passed: run.passed,
        expectation: scenario.map(|s| s.expectation()).unwrap_or_default(),
        figures: run.figures.clone(),
        gain: gain(&rounds),
        rounds,
        en: scenario.map_or("", |s| s.en),
        zh: scenario.map_or("", |s| s.zh),
        source: scenario.map_or("", |s| s.source),
        claim: question(id).and_then(|q| q.claim),
        every_room: every_room(id, run, votes, room_runs),
        shortest_break: scenario.and_then(|s| super::rung_break::of(s.tier)),
    }
}

/// The tally of the runs in the class's rooms; `None` when the chapter ran in one room only.
pub fn every_room(
    chapter: &str,
    run: &RunRecord,
    votes: &[Votes],
    room_runs: &RoomRuns,
) -> Option<EveryRoom> {
    if run.every_room.is_empty() {
        return None;
    }
    let mut tally = EveryRoom {
        rooms: run.every_room.len(),
        landed: vec![0; options_of(chapter, votes)],
        landed_none: 0,
        not_passed: 0,
        failed: Vec::new(),
        pending: 0,
    };
    for room in &run.every_room {
        match room_runs.get(room) {
            None => tally.pending += 1,
            Some(RoomRun::Failed { error }) => tally.failed.push(RoomFailed {
                room: room.clone(),
                error: error.clone(),
            }),
            Some(RoomRun::Ran { landed, passed }) => {
                match landed.and_then(|option| tally.landed.get_mut(option)) {
                    Some(count) => *count += 1,
                    None => tally.landed_none += 1,
                }
                tally.not_passed += usize::from(!passed);
            }
        }
    }
    Some(tally)
}

/// Each round's counts and share right, given the option the run landed in.
pub fn round_results(
    chapter: &str,
    landed: Option<usize>,
    votes: &[Votes],
    notes: &[Notes],
) -> Vec<RoundResult> {
    let options = options_of(chapter, votes);
    let no_notes = Notes::new();
    (1..)
        .zip(votes)
        .enumerate()
        .map(|(i, (round, votes))| {
            let counts = counts(votes, options);
            RoundResult {
                round,
                share_right: share_right(&counts, votes.len(), landed),
                sure: sure_counts(votes, notes.get(i).unwrap_or(&no_notes), options),
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
mod tests;
