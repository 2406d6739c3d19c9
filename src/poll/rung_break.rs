//! The reveal's line on the lock: after a chapter on a rung of the ladder, the shortest way
//! that rung breaks (or, for `fenced`, that no schedule sells a unit twice), in the search's
//! words (`explore::ladder`), English and Chinese.
//!
//! # Why searched in the process, once
//! The words are the search's so that they cannot drift from the steps the fleet runs; a rung's
//! search at the default bounds is a fraction of a second of one core, and its answer never
//! changes while the service runs (the steps are compiled in). So every rung is searched once
//! per process, on the blocking pool, as soon as the instance sees a poll ([`warm_soon`]: a
//! reveal comes minutes later), and a view reads the answer from memory. Not at start: a fleet
//! that never polls (a test's, a bench's) would pay a second of a core per instance for nothing.
//! A view built before the search ended waits for it (the `LazyLock`), once.
//!
//! `fair` says nothing: it is graded as `reentrant-watchdog` and is no rung of the ladder
//! (`explore::lock::RUNGS`), and its search, which keeps each state's instants, meets the depth
//! bound after some 85,000 states (15 s of a debug build), no answer for a reveal to wait on.

use std::collections::HashMap;
use std::sync::LazyLock;

use explore::ladder::{rung_break, RungBreak};
use explore::lock::RUNGS;
use oversell_api::tier::Tier;

/// Every rung's break. A `LazyLock` and not a lock taken per read: written once, then only
/// read, by every view of every reveal.
static BREAKS: LazyLock<HashMap<Tier, RungBreak>> = LazyLock::new(|| {
    let mut breaks = HashMap::new();
    for tier in RUNGS {
        match rung_break(tier) {
            Some(Ok(found)) => {
                breaks.insert(tier, found);
            }
            // The rungs' own steps are compiled in and tested to run on the model
            // (`explore/tests/rungs.rs`): a refusal here is a bug, and the reveal says nothing
            // rather than fail.
            Some(Err(refused)) => tracing::error!(tier = tier.id(), %refused, "rung not searched"),
            None => {}
        }
    }
    breaks
});

/// Searches every rung on the blocking pool, the first time it is called in this process.
pub fn warm_soon() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        tokio::task::spawn_blocking(|| LazyLock::force(&BREAKS));
    });
}

/// The shortest break of `tier`, when it is a rung of the ladder.
pub fn of(tier: Tier) -> Option<&'static RungBreak> {
    if !RUNGS.contains(&tier) {
        return None;
    }
    BREAKS.get(&tier)
}
