//! Whether what a class learned on one question carried over to its isomorphic pair: the same
//! concept on another surface (the freeze on a watchdog lock, then on Redlock), marked in the
//! deck with `pair`. Peer instruction's test of learning: the rooms that got the first right
//! after discussing it, asked the second cold, in its first round.

use serde::Serialize;
use workshop::scenario::question;

use super::ballot_box::ChapterRecord;

/// What a question's first round shows of the pair polled before it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Transfer {
    /// The question polled before, of which this one is the pair.
    pub after: String,
    /// Rooms right on `after` in its last round.
    pub right_before: usize,
    /// Of those, rooms right on this question in its first round: the concept carried over.
    pub right_again: usize,
    /// Rooms not right on `after` (wrong, or no vote) that got this one right in its first
    /// round.
    pub right_now_only: usize,
}

/// Whether the questions `a` and `b` are marked as a pair (either way).
fn paired(a: &str, b: &str) -> bool {
    let points = |from: &str, to: &str| question(from).is_some_and(|q| q.pair == Some(to));
    points(a, b) || points(b, a)
}

/// The transfer to `records[at]` from the latest question before it that is its pair, once
/// both runs landed in an option (before, nobody is right or wrong).
pub fn transfer(records: &[ChapterRecord], at: usize) -> Option<Transfer> {
    let later = records.get(at)?;
    let earlier = records[..at]
        .iter()
        .rev()
        .find(|r| paired(&r.chapter, &later.chapter))?;
    let landed = |r: &ChapterRecord| r.run.as_ref().and_then(|run| run.landed);
    let (before, now) = (landed(earlier)?, landed(later)?);
    let right_before: Vec<&String> = earlier
        .votes
        .last()?
        .iter()
        .filter(|(_, &option)| option == before)
        .map(|(room, _)| room)
        .collect();
    let first = later.votes.first()?;
    let right_now = |room: &String| first.get(room) == Some(&now);
    let right_again = right_before.iter().filter(|room| right_now(room)).count();
    let right_now_only = first
        .keys()
        .filter(|room| right_now(room) && !right_before.contains(room))
        .count();
    Some(Transfer {
        after: earlier.chapter.clone(),
        right_before: right_before.len(),
        right_again,
        right_now_only,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::poll::ballot_box::{RoomRuns, RunRecord};

    fn record(id: &str, votes: &[&[(&str, usize)]], landed: Option<usize>) -> ChapterRecord {
        ChapterRecord {
            chapter: id.to_owned(),
            votes: votes
                .iter()
                .map(|round| round.iter().map(|(r, o)| ((*r).to_owned(), *o)).collect())
                .collect(),
            notes: Vec::new(),
            run: landed.map(|landed| RunRecord {
                id: format!("{id}-run"),
                room: "shown".to_owned(),
                svg: None,
                history: None,
                landed: Some(landed),
                passed: true,
                figures: BTreeMap::new(),
                every_room: Vec::new(),
            }),
            room_runs: RoomRuns::default(),
        }
    }

    /// The first pair the deck marks, both ways round.
    fn a_pair() -> (&'static str, &'static str) {
        let q = workshop::scenario::deck()
            .find(|q| q.pair.is_some())
            .expect("the deck marks isomorphic pairs");
        (q.id, q.pair.unwrap())
    }

    #[test]
    fn the_rooms_right_after_discussing_the_first_are_followed_to_the_second() {
        let (first, second) = a_pair();
        let records = [
            // Round 2 of the first: a and b right (option 1), c wrong.
            record(
                first,
                &[
                    &[("a", 0), ("b", 0), ("c", 0)],
                    &[("a", 1), ("b", 1), ("c", 2)],
                ],
                Some(1),
            ),
            // Round 1 of the second: a right (option 0), b wrong, c right.
            record(second, &[&[("a", 0), ("b", 2), ("c", 0)]], Some(0)),
        ];
        assert_eq!(transfer(&records, 0), None, "nothing polled before it");
        let t = transfer(&records, 1).expect("a pair, both landed");
        assert_eq!(
            t,
            Transfer {
                after: first.to_owned(),
                right_before: 2,
                right_again: 1,
                right_now_only: 1,
            }
        );
        // Asked the other way round, the same.
        let swapped = [
            record(second, &[&[("a", 1)]], Some(1)),
            record(first, &[&[("a", 1)]], Some(1)),
        ];
        assert_eq!(transfer(&swapped, 1).map(|t| t.right_again), Some(1));
    }

    #[test]
    fn no_transfer_before_both_runs_landed_nor_between_unpaired_questions() {
        let (first, second) = a_pair();
        let unrun = [
            record(first, &[&[("a", 1)]], Some(1)),
            record(second, &[&[("a", 0)]], None),
        ];
        assert_eq!(transfer(&unrun, 1), None);
        let other = workshop::scenario::deck()
            .find(|q| q.id != first && q.id != second && q.pair.is_none())
            .unwrap()
            .id;
        let unpaired = [
            record(first, &[&[("a", 1)]], Some(1)),
            record(other, &[&[("a", 0)]], Some(0)),
        ];
        assert_eq!(transfer(&unpaired, 1), None);
    }
}
