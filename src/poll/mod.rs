//! The class vote: a chapter's question before it runs, voted on from the students' phones
//! with their room tokens, in one or two rounds (peer instruction: predict, discuss, predict
//! again), then revealed beside what the run measured.
//!
//! - [`ballot_box`]: the poll and its votes in the resource store, beside the class; every change
//!   one script, so a vote racing a close is counted in the round it closed or refused;
//! - [`standings`]: what students, the presenter and the reveal see;
//! - [`watch`]: one watcher per instance, told of changes over pub/sub, for every stream;
//! - [`poll_events`]: one `/poll/events` connection;
//! - [`results`]: the class's results as JSON, CSV and Markdown;
//! - [`transfer`]: whether a class right on a question got its isomorphic pair right too, and
//!   its Weighted Learning Gain;
//! - [`room_run_lease`]: who runs the class's rooms after a reveal in every room;
//! - [`rung_break`]: the reveal's shortest break of the chapter's rung, searched once.
//!
//! No option is stored as the answer: the right one is the option the run's figures landed
//! in (`workshop::scenario::question`), and no vote is scored for speed.

pub mod ballot_box;
pub mod poll_events;
pub mod results;
pub mod room_run_lease;
pub mod rung_break;
pub mod standings;
pub mod transfer;
pub mod watch;

pub use watch::PollWatch;
