//! Whether what a class learned on one question carried over to its isomorphic pair: the same
//! concept on another surface (the freeze on a watchdog lock, then on Redlock), marked in the
//! deck with `pair`. Peer instruction's test of learning: the rooms that got the first right
//! after discussing it, asked the second cold, in its first round.
//!
//! Over the same three answers, Smith et al.'s paired design (Q1 alone, Q1 again after
//! discussion, an isomorphic Q2 alone), the Weighted Learning Gain of Porter, Bailey Lee, Simon
//! and Zingaro (ICER 2011): see [`weighted_learning_gain`]. Here Q1 is the pair's first round,
//! Q1ad its last, Q2 this question's first round; the unit is a room (a room votes once).

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
    /// Rooms that voted in `after`'s first round and this one's, wrong on `after` alone: the
    /// potential learners (they had something to learn from the discussion).
    pub potential_learners: usize,
    /// Of those, rooms right on this question alone: they learned.
    pub learned: usize,
    /// Rooms that voted in both first rounds, right on `after` alone and after discussing it:
    /// they knew the concept before, so their share right here is this question's own
    /// difficulty.
    pub knew: usize,
    /// Of those, rooms right on this question too.
    pub knew_right: usize,
    /// `(learned / potential_learners) / (knew_right / knew)` ([`weighted_learning_gain`]);
    /// `null` when a share is undefined or the knowers' is 0.
    pub weighted_learning_gain: Option<f64>,
}

/// The Weighted Learning Gain: the potential learners' share right on Q2, weighted by Q2's
/// difficulty as the rooms that already knew the concept met it, i.e. divided by the knowers'
/// share right on Q2. 1 means the discussion brought the potential learners as far as those
/// who knew; above 1 is possible (not capped: a class may show it) and says the pair was easier
/// for those who had just learned the concept than for those who knew it.
///
/// **Unverified reading.** Porter, Bailey Lee, Simon & Zingaro, "Peer Instruction: Do Students
/// Really Learn from Peer Discussion in Computing?" (ICER 2011), define the metric in their
/// analysis of the paired questions; its text could not be read here (only the abstract: "the
/// learning value of discussion", "85-89% of 'potential learners' benefit"), so no section is
/// cited. This is the reading that abstract and Smith et al.'s design support: *potential
/// learners* are those wrong on Q1 alone (those right on it had nothing to learn), *learning*
/// is answering Q2 right alone, and the *weight* corrects for an isomorphic Q2 that is harder
/// (or easier) than Q1, measured on those right on Q1 before and after the discussion, so a
/// class whose every knower misses a hard Q2 is not said to have learned nothing. `None`: no
/// potential learner, no knower, or no knower right on Q2 (nothing to weigh by).
pub fn weighted_learning_gain(
    potential_learners: usize,
    learned: usize,
    knew: usize,
    knew_right: usize,
) -> Option<f64> {
    if potential_learners == 0 || knew == 0 || knew_right == 0 {
        return None;
    }
    let share = |part: usize, of: usize| part as f64 / of as f64;
    Some(share(learned, potential_learners) / share(knew_right, knew))
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
    // Q1 alone is the pair's first round, Q1ad its last (the same round when it had one): a
    // room counts only when it answered Q1 and Q2 alone.
    let (alone, discussed) = (earlier.votes.first()?, earlier.votes.last()?);
    let (mut potential_learners, mut learned, mut knew, mut knew_right) = (0, 0, 0, 0);
    for room in first.keys() {
        let Some(&q1) = alone.get(room) else { continue };
        if q1 != before {
            potential_learners += 1;
            learned += usize::from(right_now(room));
        } else if discussed.get(room) == Some(&before) {
            knew += 1;
            knew_right += usize::from(right_now(room));
        }
    }
    Some(Transfer {
        after: earlier.chapter.clone(),
        right_before: right_before.len(),
        right_again,
        right_now_only,
        potential_learners,
        learned,
        knew,
        knew_right,
        weighted_learning_gain: weighted_learning_gain(
            potential_learners,
            learned,
            knew,
            knew_right,
        ),
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
                // Every room wrong alone on the first: three potential learners, a and c
                // learned; nobody knew it before, so nothing weighs Q2's difficulty.
                potential_learners: 3,
                learned: 2,
                knew: 0,
                knew_right: 0,
                weighted_learning_gain: None,
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

    /// A class of seven rooms on a pair, Q1 landing in B (1), Q2 in A (0):
    ///
    /// | room | Q1 alone | Q1 after discussion | Q2 alone |
    /// |------|----------|---------------------|----------|
    /// | a    | B right  | B right             | A right  |
    /// | b    | B right  | B right             | `q2_b`   |
    /// | c    | B right  | A wrong             | A right  |
    /// | d    | A wrong  | B right             | A right  |
    /// | e    | C wrong  | B right             | A right  |
    /// | f    | A wrong  | B right             | C wrong  |
    /// | g    | A wrong  | C wrong             | no vote  |
    fn seven_rooms(q2_b: usize) -> Vec<ChapterRecord> {
        let (first, second) = a_pair();
        vec![
            record(
                first,
                &[
                    &[
                        ("a", 1),
                        ("b", 1),
                        ("c", 1),
                        ("d", 0),
                        ("e", 2),
                        ("f", 0),
                        ("g", 0),
                    ],
                    &[
                        ("a", 1),
                        ("b", 1),
                        ("c", 0),
                        ("d", 1),
                        ("e", 1),
                        ("f", 1),
                        ("g", 2),
                    ],
                ],
                Some(1),
            ),
            record(
                second,
                &[&[
                    ("a", 0),
                    ("b", q2_b),
                    ("c", 0),
                    ("d", 0),
                    ("e", 0),
                    ("f", 2),
                ]],
                Some(0),
            ),
        ]
    }

    #[test]
    fn the_weighted_learning_gain_is_the_learners_share_over_the_knowers_share() {
        // Potential learners: wrong on Q1 alone and answering Q2: d, e, f (g gave no Q2, so it
        // is not counted); learned: d and e, 2 of 3. Knew: right on Q1 alone and after it, a
        // and b (c, right alone then wrong, is neither). b wrong on Q2: the knowers' share is
        // 1 of 2, and the gain (2/3) / (1/2) = 4/3: above 1, not capped.
        let t = transfer(&seven_rooms(3), 1).expect("a pair, both landed");
        assert_eq!(
            (t.potential_learners, t.learned, t.knew, t.knew_right),
            (3, 2, 2, 1)
        );
        let wlg = t.weighted_learning_gain.expect("defined");
        assert!((wlg - 4.0 / 3.0).abs() < 1e-12, "{wlg}");
        // b right on Q2 as well: the knowers' share 2 of 2, the gain (2/3) / 1 = 2/3.
        let t = transfer(&seven_rooms(0), 1).unwrap();
        assert_eq!((t.knew, t.knew_right), (2, 2));
        let wlg = t.weighted_learning_gain.unwrap();
        assert!((wlg - 2.0 / 3.0).abs() < 1e-12, "{wlg}");
    }

    #[test]
    fn the_weighted_learning_gain_is_undefined_without_learners_knowers_or_landed_runs() {
        let (first, second) = a_pair();
        // Every room right on Q1 alone: no potential learner.
        let all_knew = [
            record(
                first,
                &[&[("a", 1), ("b", 1)], &[("a", 1), ("b", 1)]],
                Some(1),
            ),
            record(second, &[&[("a", 0), ("b", 2)]], Some(0)),
        ];
        let t = transfer(&all_knew, 1).unwrap();
        assert_eq!((t.potential_learners, t.knew, t.knew_right), (0, 2, 1));
        assert_eq!(t.weighted_learning_gain, None);
        // The only knower wrong on Q2: the weight would divide by 0.
        let knower_wrong = [
            record(
                first,
                &[&[("a", 1), ("b", 0)], &[("a", 1), ("b", 1)]],
                Some(1),
            ),
            record(second, &[&[("a", 2), ("b", 0)]], Some(0)),
        ];
        let t = transfer(&knower_wrong, 1).unwrap();
        assert_eq!((t.potential_learners, t.learned, t.knew_right), (1, 1, 0));
        assert_eq!(t.weighted_learning_gain, None);
        // Q2's run not landed: nobody is right or wrong, no transfer and no gain.
        let unlanded = [
            record(first, &[&[("a", 0)], &[("a", 1)]], Some(1)),
            record(second, &[&[("a", 0)]], None),
        ];
        assert_eq!(transfer(&unlanded, 1), None);
        assert_eq!(weighted_learning_gain(0, 0, 3, 2), None);
        assert_eq!(weighted_learning_gain(4, 1, 0, 0), None);
        assert_eq!(weighted_learning_gain(4, 1, 2, 1), Some(0.5));
    }
}
