//! `setnx` — `SETNX lock v`, work, `DEL lock`; retry while it is taken.
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire | `SETNX lock owner` | 1 taken, 0 busy (for how long, unknown: there is no lease) |
//! | release | `DEL lock` | — |
//!
//! Two round trips for the lock.
//!
//! # Guarantee
//! Mutual exclusion across every instance, as long as every holder lives to release.
//!
//! # Known defect
//! The lock has no lease. A holder that dies inside the critical section (crash, kill, power
//! loss) never deletes it: every later buyer waits forever — a deadlock that only a manual
//! reset ends.
//!
//! The value is the holder's id; this tier never reads it, it is there so the ground truth can
//! see whose lock a `DEL` removed.

use super::steps::{On, Reply, Step, Technique};

pub struct Setnx;

/// `SETNX lock owner`; shared with `setnx-expire`, which adds its `EXPIRE` afterwards.
pub(super) fn setnx(on: &On<'_>, busy_for: Reply) -> Step {
    let cmd = redis::cmd("SETNX")
        .arg(on.keys.lock())
        .arg(on.owner)
        .clone();
    Step::command(cmd, busy_for)
}

impl Technique for Setnx {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        vec![setnx(on, Reply::Taken { busy_for: None })]
    }

    fn release(&self, _on: &On<'_>) -> Vec<Step> {
        vec![Step::del()]
    }
}
