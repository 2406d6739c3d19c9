//! The class vote: a chapter's question before it runs, voted on from the students' phones
//! with their room tokens, in one or two rounds (peer instruction: predict, discuss, predict
//! again), then revealed beside what the run measured.
//!
//! - [`store`]: the poll and its votes in the resource store, beside the class; every change
//!   one script, so a vote racing a close is counted in the round it closed or refused;
//! - [`view`]: what students, the presenter and the reveal see;
//! - [`watch`]: one watcher per instance, told of changes over pub/sub, for every stream;
//! - [`stream`]: one `/poll/events` connection;
//! - [`results`]: the class's results as JSON, CSV and Markdown.
//!
//! No option is stored as the answer: the right one is the option the run's figures landed
//! in (`loadtest::scenario::question`), and no vote is scored for speed.

pub mod results;
pub mod store;
pub mod stream;
pub mod view;
pub mod watch;

pub use watch::PollWatch;
