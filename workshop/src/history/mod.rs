//! How a run broke, checked: a run's whole history (its lines, `oversell_api::history`, read by
//! [`read`]) and a checker
//! of our own that reads only that history ([`check`]): four verdicts, each naming the
//! operations that break it, the first violation drawn ([`draw::svg`]), and the whole run in a
//! viewer that steps through it ([`view`]: every operation with the stores' state before and
//! after it, one HTML page).
//!
//! ```no_run
//! use workshop::history::{view, Lang};
//! let history = workshop::history::read_path("run.jsonl".as_ref())?;
//! let report = workshop::history::check(&history);
//! println!("{}", report.text(Lang::En));
//! let svg = workshop::history::draw::svg(&history, &report, Lang::En);
//! let page = view::page(&[view::View::of(&history, &report)], view::Assets::Inline, Lang::En);
//! # Ok::<(), workshop::history::ParseError>(())
//! ```

mod acks;
mod chain;
pub mod check;
#[cfg(feature = "cli")]
pub mod command;
pub mod draw;
mod exclusion;
mod fencing;
mod findings;
mod lease_time;
mod ledger;
mod lines;
mod marks;
mod parse;
mod parse_error;
mod render;
mod scene;
mod stock;
mod svg;
pub mod synth;
mod validate;
pub mod view;
mod words;

#[cfg(test)]
mod tests;

pub use check::{check, CheckReport, Counts, Finding, Kind, Lang, Op, State, Verdict};
pub use parse::{parse, read, read_path, History, ParseError, MAX_LINE};
