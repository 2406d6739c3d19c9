//! `setnx-expire` — `SETNX lock v`, then `EXPIRE` as a second command; `DEL` to release.
//!
//! | step | sends | reply |
//! |---|---|---|
//! | acquire 1 | `SETNX lock owner` | 1 taken, 0 busy (for at most one lease) |
//! | acquire 2 | `PEXPIRE lock ttl` | — |
//! | release | `DEL lock` | — |
//!
//! Three round trips for the lock.
//!
//! # Guarantee
//! Mutual exclusion across instances, and a holder that dies *after* the `EXPIRE` no longer
//! deadlocks the sale: its lock expires after the lease.
//!
//! # Known defect
//! The two commands are not atomic. A holder that dies between `SETNX` and `EXPIRE` leaves a
//! lock with no lease: the same deadlock as `setnx`.

use super::setnx::setnx;
use super::steps::{On, Reply, Step, Technique};

pub struct SetnxExpire;

impl Technique for SetnxExpire {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        let busy_for = Some(on.ttl());
        // The window: a death between the two leaves the lock without a lease.
        let expire = redis::cmd("PEXPIRE")
            .arg(on.keys.lock())
            .arg(on.ttl_ms)
            .clone();
        vec![
            setnx(on, Reply::Taken { busy_for }),
            Step::command(expire, Reply::Ignored),
        ]
    }

    fn release(&self, _on: &On<'_>) -> Vec<Step> {
        vec![Step::del()]
    }
}
