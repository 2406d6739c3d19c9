//! How each load shape hands out request slots: dealt to the workers in advance (a burst, and
//! a closed loop that runs for a duration), or taken from one shared budget (a closed loop of
//! `n` requests, and the open loop, whose slots are also due at the rate).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use super::load::{Model, Stop};

/// A request slot: its number (for the buyer id) and, in an open loop, when it is due.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) index: u64,
    pub(super) due: Option<Instant>,
}

/// The request budget shared by a pool. An atomic counter, not a lock: taking a slot is one
/// `fetch_add` on the hot path.
#[derive(Debug)]
pub(super) struct Schedule {
    /// Slots are dealt to workers in advance instead of taken from `next` (see `take`).
    dealt: bool,
    next: AtomicU64,
    limit: Option<u64>,
    deadline: Option<Instant>,
    /// Open loop: seconds between due times.
    interval: Option<f64>,
    pub(super) start: Instant,
}

impl Schedule {
    pub(super) fn new(model: Model) -> Schedule {
        let start = Instant::now();
        let (stop, rate) = match model {
            Model::Burst { buyers } => (Stop::Requests(buyers), None),
            Model::Closed { stop } => (stop, None),
            Model::Open { rate, stop } => (stop, Some(rate)),
        };
        let (limit, deadline) = match stop {
            Stop::Requests(n) => (Some(n), None),
            Stop::After(d) => (None, Some(start + d)),
        };
        Schedule {
            dealt: matches!(
                model,
                Model::Burst { .. }
                    | Model::Closed {
                        stop: Stop::After(_)
                    }
            ),
            next: AtomicU64::new(0),
            limit,
            deadline,
            interval: rate.map(|r| 1.0 / r),
            start,
        }
    }

    /// The same schedule, ending after `cap` requests too (if given) should it not end before.
    pub(super) fn at_most(mut self, cap: Option<u64>) -> Schedule {
        if let Some(cap) = cap {
            self.limit = Some(self.limit.map_or(cap, |n| n.min(cap)));
        }
        self
    }

    /// The next slot for worker `w` of `workers`.
    ///
    /// Dealt schedules give worker `w` the slots `w`, `w + workers`, … with no shared counter:
    /// a burst, so each buyer's connection carries its own request and no early finisher takes
    /// a slot from a buyer still being released; and a closed loop that runs for a duration,
    /// where the index only has to be unique. The others share one counter: an exact request
    /// budget (a fast connection simply sends more), and the open loop's due times.
    pub(super) fn take(
        &self,
        w: usize,
        workers: usize,
        sent: &mut u64,
        now: Instant,
    ) -> Option<Slot> {
        if !self.dealt {
            return self.take_next(now);
        }
        let index = w as u64 + *sent * workers as u64;
        *sent += 1;
        if self.limit.is_some_and(|n| index >= n) || self.deadline.is_some_and(|d| now >= d) {
            return None;
        }
        Some(Slot { index, due: None })
    }

    fn take_next(&self, now: Instant) -> Option<Slot> {
        if self.interval.is_none() && self.deadline.is_some_and(|d| now >= d) {
            return None;
        }
        let index = self.next.fetch_add(1, Relaxed);
        if self.limit.is_some_and(|n| index >= n) {
            return None;
        }
        let due = self
            .interval
            .map(|every| self.start + Duration::from_secs_f64(index as f64 * every));
        if let (Some(due), Some(deadline)) = (due, self.deadline) {
            if due >= deadline {
                return None;
            }
        }
        Some(Slot { index, due })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_budget_hands_out_each_slot_once() {
        let schedule = Schedule::new(Model::Closed {
            stop: Stop::Requests(3),
        });
        let slots: Vec<u64> = std::iter::from_fn(|| schedule.take_next(Instant::now()))
            .map(|s| s.index)
            .collect();
        assert_eq!(slots, [0, 1, 2]);
        assert!(schedule.take_next(Instant::now()).is_none());
    }

    #[test]
    fn a_run_for_a_duration_ends_at_its_cap_dealt_or_shared() {
        let minute = Stop::After(Duration::from_secs(60));
        let dealt = Schedule::new(Model::Closed { stop: minute }).at_most(Some(5));
        let mut sent = [0, 0];
        let mut taken = Vec::new();
        for round in 0..10 {
            let w = round % 2;
            taken.extend(
                dealt
                    .take(w, 2, &mut sent[w], Instant::now())
                    .map(|s| s.index),
            );
        }
        taken.sort_unstable();
        assert_eq!(taken, [0, 1, 2, 3, 4]);

        let open = Schedule::new(Model::Open {
            rate: 1e6,
            stop: minute,
        })
        .at_most(Some(3));
        let slots = std::iter::from_fn(|| open.take_next(Instant::now())).count();
        assert_eq!(slots, 3);
        // A smaller budget of its own stays the budget.
        let small = Schedule::new(Model::Closed {
            stop: Stop::Requests(2),
        })
        .at_most(Some(3));
        assert_eq!(
            std::iter::from_fn(|| small.take_next(Instant::now())).count(),
            2
        );
    }

    #[test]
    fn a_burst_deals_each_worker_its_own_slots() {
        let schedule = Schedule::new(Model::Burst { buyers: 5 });
        let slots = |w| {
            let mut sent = 0;
            std::iter::from_fn(|| schedule.take(w, 2, &mut sent, Instant::now()))
                .map(|s| s.index)
                .collect::<Vec<_>>()
        };
        assert_eq!((slots(0), slots(1)), (vec![0, 2, 4], vec![1, 3]));
    }

    #[test]
    fn an_open_loop_spaces_due_times_by_the_rate_and_stops_at_the_deadline() {
        let schedule = Schedule::new(Model::Open {
            rate: 100.0,
            stop: Stop::After(Duration::from_millis(50)),
        });
        let due: Vec<Duration> = std::iter::from_fn(|| schedule.take_next(Instant::now()))
            .map(|s| s.due.unwrap() - schedule.start)
            .collect();
        assert_eq!(due.len(), 5);
        assert_eq!(due[1], Duration::from_millis(10));
    }
}
