//! Where a sold section's time inside goes: the store's answer reaching the instance (the
//! read's `enter_us` to `read_us`), the instance's own work (`read_us` to `write_us`, the
//! business step included) and the write reaching the store (`write_us` to `exit_us`).
//!
//! `enter_us` and `exit_us` are stamped by the resource store's `TIME`, `read_us` and
//! `write_us` by the instance's clock. On one host those are one clock, and the three legs add
//! up to the section's time inside. On several hosts they are not: a leg that runs backwards by
//! more than [`CLOCK_SLACK_US`] says the clocks disagree, and then no split is given, rather
//! than a wrong one.

use serde::{Deserialize, Serialize};

use crate::spread::{spread, Spread};

/// How far a leg may run backwards and still be read as the same clock's rounding: the
/// store's `TIME` and the instance's clock are both µs, read at different moments.
pub const CLOCK_SLACK_US: i64 = 1_000;

/// The three legs of a sold section, each's spread in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InsideSplit {
    /// Sections that carried the instance's times.
    pub sections: u64,
    pub to_instance_ms: Spread,
    pub in_instance_ms: Spread,
    pub to_store_ms: Spread,
}

impl InsideSplit {
    /// The split of sections given as `(enter_us, read_us, write_us, exit_us)`, of those that
    /// carry the instance's times; `None` when none does (a server older than these times, or
    /// a lock-free sale) or the clocks disagree.
    pub fn measure(
        sections: impl IntoIterator<Item = (i64, Option<i64>, Option<i64>, i64)>,
    ) -> Option<InsideSplit> {
        let mut legs: [Vec<u64>; 3] = Default::default();
        for (enter, read, write, exit) in sections {
            let (Some(read), Some(write)) = (read, write) else {
                continue;
            };
            let steps = [read - enter, write - read, exit - write];
            if steps.iter().any(|&us| us < -CLOCK_SLACK_US) {
                return None;
            }
            for (leg, us) in legs.iter_mut().zip(steps) {
                leg.push(us.max(0) as u64);
            }
        }
        for leg in &mut legs {
            leg.sort_unstable();
        }
        Some(InsideSplit {
            sections: legs[0].len() as u64,
            to_instance_ms: spread(&legs[0])?,
            in_instance_ms: spread(&legs[1])?,
            to_store_ms: spread(&legs[2])?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Stamps = (i64, Option<i64>, Option<i64>, i64);

    fn timed(enter_us: i64, read_us: i64, write_us: i64, exit_us: i64) -> Stamps {
        (enter_us, Some(read_us), Some(write_us), exit_us)
    }

    #[test]
    fn each_leg_is_the_time_between_two_of_the_sections_stamps() {
        let split = InsideSplit::measure([
            timed(0, 200, 205, 300),
            timed(1_000, 1_100, 1_110, 1_200),
            // Stamped by an older server: left out.
            (2_000, None, None, 2_100),
        ])
        .unwrap();
        assert_eq!(split.sections, 2);
        assert_eq!(
            (
                split.to_instance_ms.max,
                split.in_instance_ms.max,
                split.to_store_ms.max
            ),
            (0.2, 0.01, 0.095)
        );
        assert_eq!(split.to_instance_ms.p50, 0.1);
    }

    #[test]
    fn clocks_that_disagree_give_no_split_and_rounding_is_not_disagreement() {
        // The instance's clock 5 ms behind the store's: its read "before" the store's.
        assert_eq!(
            InsideSplit::measure([timed(10_000, 5_200, 5_205, 10_300)]),
            None
        );
        // A few µs backwards is the two clocks read at different moments.
        let split = InsideSplit::measure([timed(1_000, 998, 1_000, 1_100)]).unwrap();
        assert_eq!(split.to_instance_ms.max, 0.0);
        // Nothing stamped: nothing to split.
        assert_eq!(InsideSplit::measure([(0, None, None, 0)]), None);
    }
}
