//! The lab's gradings as one line for the whole fleet: a class pressing "Attack my lock" at
//! once is graded a few rooms at a time (`--grading-slots`), in the order the rooms pressed,
//! each room in line once; the others wait their turn and see their place.
//!
//! # Why in the resource store
//! A grading is asked of any instance behind nginx, and its status (a student's next look)
//! lands on any other: a line kept in each instance would give every instance its own first
//! place, and no student a place that means anything. What a grading costs is the fleet's
//! (every attack's buyers run on every instance), so its slots are the fleet's too. One
//! sorted set in Redis orders the rooms, another holds the slots; both under the fleet's hash
//! tag, changed by one script at a time.
//!
//! # When an instance dies
//! The instance that queued a room drives its grading: it asks for the room's turn every
//! [`POLL`], and each ask renews the room's place (or its slot, while it grades). A place or
//! a slot not renewed within [`LEASE`] lapses: the line never waits for a dead instance, and
//! a student whose grading was lost that way is told so and presses again.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use serde::Serialize;

use crate::keys::{
    GRADING_JOB, GRADING_LINE, GRADING_PLACES, GRADING_RUNNING, GRADING_SEQ, GRADING_TIMES,
};
use crate::redis_pool::{RedisPool, StoreError};

/// How often the driving instance asks for its room's turn (and renews its place).
pub const POLL: Duration = Duration::from_millis(250);
/// How long a place or a slot outlives the last ask of the instance that holds it.
pub const LEASE: Duration = Duration::from_secs(15);
/// The estimate before any grading has been timed: about what one takes on a quiet fleet.
const FIRST_GUESS: Duration = Duration::from_secs(15);
/// How many of the last gradings' durations the estimate averages.
const TIMED: isize = 20;

// Each behind `lapse.lua`, which lets the dead's slots and places go first.
static JOIN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("grading_queue/lapse.lua"),
        include_str!("grading_queue/join.lua")
    ))
});
static TURN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("grading_queue/lapse.lua"),
        include_str!("grading_queue/turn.lua")
    ))
});

/// The fleet's line of gradings, as one instance reaches it.
#[derive(Clone)]
pub struct GradingQueue {
    resource: RedisPool,
    /// How many rooms are graded at once, fleet-wide. Every instance is given the same.
    slots: usize,
    /// [`LEASE`], shorter in the tests.
    lease: Duration,
}

/// A room's place in the line, as the room's student is shown it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Position {
    /// Waiting for a slot: `place` 1 is next.
    Queued {
        job: u64,
        place: u64,
        /// Rooms in line, this one included, and the slots they wait for.
        in_line: u64,
        slots: usize,
        estimate_s: u64,
    },
    /// Being graded, for `elapsed_s` so far.
    Running {
        job: u64,
        elapsed_s: u64,
        estimate_s: u64,
    },
    /// Neither in line nor being graded.
    Idle,
}

/// The driving instance's answer from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// A slot is the room's: grade now.
    Now,
    /// `n`-th in line.
    Waiting(u64),
    /// The room is not in line (its place lapsed).
    Gone,
}

impl GradingQueue {
    pub fn new(resource: RedisPool, slots: usize) -> Self {
        GradingQueue {
            resource,
            slots: slots.max(1),
            lease: LEASE,
        }
    }

    fn keys() -> [&'static str; 4] {
        [GRADING_LINE, GRADING_RUNNING, GRADING_PLACES, GRADING_JOB]
    }

    /// Puts `room` in line unless it is there or being graded. Its job, and whether this call
    /// queued it (then this instance drives it).
    pub async fn join(&self, room: &str) -> Result<(u64, bool), StoreError> {
        let mut conn = self.resource.conn().await?;
        let mut call = JOIN.prepare_invoke();
        for key in Self::keys() {
            call.key(key);
        }
        let (job, joined): (u64, u8) = call
            .key(GRADING_SEQ)
            .arg(room)
            .arg(self.lease.as_millis() as u64)
            .invoke_async(&mut conn)
            .await?;
        Ok((job, joined == 1))
    }

    /// Asks for `room`'s turn, renewing its place or its slot.
    pub async fn turn(&self, room: &str) -> Result<Turn, StoreError> {
        let mut conn = self.resource.conn().await?;
        let mut call = TURN.prepare_invoke();
        for key in Self::keys() {
            call.key(key);
        }
        let answer: i64 = call
            .arg(room)
            .arg(self.lease.as_millis() as u64)
            .arg(self.slots)
            .invoke_async(&mut conn)
            .await?;
        Ok(match answer {
            0 => Turn::Now,
            n if n > 0 => Turn::Waiting(n as u64),
            _ => Turn::Gone,
        })
    }

    /// Gives `room`'s slot back after a grading that took `took`, which the next estimates
    /// average.
    pub async fn finish(&self, room: &str, took: Duration) -> Result<(), StoreError> {
        let mut conn = self.resource.conn().await?;
        redis::pipe()
            .atomic()
            .zrem(GRADING_RUNNING, room)
            .hdel(GRADING_JOB, room)
            .lpush(GRADING_TIMES, took.as_millis() as u64)
            .ltrim(GRADING_TIMES, 0, TIMED - 1)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    /// Takes `room` out of the line and its slot, untimed: its grading was cut short (the
    /// instance driving it is stopping), which says nothing about how long one takes.
    pub async fn leave(&self, room: &str) -> Result<(), StoreError> {
        let mut conn = self.resource.conn().await?;
        redis::pipe()
            .atomic()
            .zrem(GRADING_LINE, room)
            .zrem(GRADING_PLACES, room)
            .zrem(GRADING_RUNNING, room)
            .hdel(GRADING_JOB, room)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    /// Where `room` is: in line (and how far back), being graded, or neither. A slot or a
    /// place past its lease is neither: its instance died, and nobody grades the room.
    pub async fn position(&self, room: &str) -> Result<Position, StoreError> {
        let mut conn = self.resource.conn().await?;
        #[allow(clippy::type_complexity)]
        let (graded, slot, queued, place, rank, in_line, times, now): (
            Option<String>,
            Option<u64>,
            Option<u64>,
            Option<u64>,
            Option<u64>,
            u64,
            Vec<u64>,
            (u64, u64),
        ) = redis::pipe()
            .atomic()
            .hget(GRADING_JOB, room)
            .zscore(GRADING_RUNNING, room)
            .zscore(GRADING_LINE, room)
            .zscore(GRADING_PLACES, room)
            .zrank(GRADING_LINE, room)
            .zcard(GRADING_LINE)
            .lrange(GRADING_TIMES, 0, TIMED - 1)
            .cmd("TIME")
            .query_async(&mut conn)
            .await?;
        let one = average(&times);
        let now_ms = now.0 * 1000 + now.1 / 1000;
        let alive = |lease_end: Option<u64>| lease_end.is_some_and(|end| end > now_ms);
        if let (Some(graded), true) = (graded, alive(slot)) {
            let (job, started) = graded.split_once(':').unwrap_or((&graded, "0"));
            let elapsed = now_ms.saturating_sub(started.parse().unwrap_or(now_ms));
            let elapsed = Duration::from_millis(elapsed);
            return Ok(Position::Running {
                job: job.parse().unwrap_or(0),
                elapsed_s: elapsed.as_secs(),
                estimate_s: one.saturating_sub(elapsed).as_secs().max(1),
            });
        }
        match (queued, rank) {
            (Some(job), Some(rank)) if alive(place) => Ok(Position::Queued {
                job,
                place: rank + 1,
                in_line,
                slots: self.slots,
                estimate_s: wait_estimate(rank + 1, self.slots, one).as_secs(),
            }),
            _ => Ok(Position::Idle),
        }
    }
}

/// How long the `place`-th in line waits for its card with `slots` graded at once: the
/// rounds of gradings before its own and its own, at the recent gradings' average.
fn wait_estimate(place: u64, slots: usize, one: Duration) -> Duration {
    let rounds = place.div_ceil(slots.max(1) as u64) + 1;
    one * rounds as u32
}

/// The mean of the last gradings' durations (ms), or the first guess.
fn average(times_ms: &[u64]) -> Duration {
    match times_ms.len() as u64 {
        0 => FIRST_GUESS,
        n => Duration::from_millis(times_ms.iter().sum::<u64>() / n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_counts_rounds_of_slots_and_the_room_own() {
        let one = Duration::from_secs(10);
        // Next in line: the round under way, then its own.
        assert_eq!(wait_estimate(1, 4, one), Duration::from_secs(20));
        assert_eq!(wait_estimate(4, 4, one), Duration::from_secs(20));
        assert_eq!(wait_estimate(5, 4, one), Duration::from_secs(30));
    }

    /// A room graded by an instance that then died (a SIGKILL: nothing given back), when no
    /// other grading runs to ask for its turn: its slot must lapse for the student's next
    /// look and press too, or the room looks graded for ever and a press again starts nothing.
    #[tokio::test]
    async fn a_dead_driver_slot_and_place_lapse_for_every_look_and_press() {
        let redis = crate::launch::redis_server::RedisServer::start().unwrap();
        let pool = RedisPool::new(&redis.url()).unwrap();
        let lease = Duration::from_millis(300);
        let queue = GradingQueue {
            lease,
            ..GradingQueue::new(pool, 1)
        };
        let (job, joined) = queue.join("a").await.unwrap();
        assert!(joined);
        assert_eq!(queue.turn("a").await.unwrap(), Turn::Now);
        let (_, joined) = queue.join("b").await.unwrap();
        assert!(joined);
        assert_eq!(queue.turn("b").await.unwrap(), Turn::Waiting(1));
        assert!(matches!(
            queue.position("a").await.unwrap(),
            Position::Running { .. }
        ));
        assert!(matches!(
            queue.position("b").await.unwrap(),
            Position::Queued { place: 1, .. }
        ));

        // Both drivers die: nobody asks for a turn again. Time passes beyond the lease.
        tokio::time::sleep(lease * 2).await;
        assert_eq!(queue.position("a").await.unwrap(), Position::Idle);
        assert_eq!(queue.position("b").await.unwrap(), Position::Idle);
        let (again, joined) = queue.join("a").await.unwrap();
        assert!(joined, "a press again must start a grading");
        assert!(again > job);
        assert_eq!(queue.turn("a").await.unwrap(), Turn::Now);
    }

    #[test]
    fn the_average_starts_from_a_first_guess() {
        assert_eq!(average(&[]), FIRST_GUESS);
        assert_eq!(average(&[1_000, 3_000]), Duration::from_secs(2));
    }
}
