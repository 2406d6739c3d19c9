//! How a run broke, checked: a run's whole history ([`format`]) and a checker of our own that
//! reads only that history.

pub mod format;

pub use format::{Clocks, Cut, End, Fault, Lease, Line, Outcome, Renewal, Request, Run, Section};
