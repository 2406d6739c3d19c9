//! The questions of the chapters beyond one Redis: Sentinel failover, restarts and
//! persistence, Redlock.

use super::Question;

pub(super) static QUESTIONS: &[Question] = &[];
