//! How far a run got. The library only reports to a [`Progress`] and draws nothing; with the
//! `cli` feature, [`Bar`] is the binary's live bar (rate, elapsed time) on stderr, drawn only
//! when stdout is a terminal: piped or captured output (`--json > file`, tests, CI) stays silent.

#[cfg(feature = "cli")]
pub use bar::Bar;

/// Where a run reports how far it got. Each method does nothing unless implemented.
pub trait Progress: Sync {
    /// Names what runs now (the matrix: the tier).
    fn set_message(&self, _msg: &str) {}

    /// The current run has finished `done` requests.
    fn set_run(&self, _done: u64) {}

    /// The current run is over after `done` requests; the next one counts on from there.
    fn end_run(&self, _done: u64) {}
}

/// Reports nowhere: the server, the scenarios, tests.
pub struct Silent;

impl Progress for Silent {}

#[cfg(feature = "cli")]
mod bar {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

    use super::Progress;

    pub struct Bar {
        bar: ProgressBar,
        /// Requests of the runs already finished, when one bar spans several runs (the
        /// matrix). An atomic only so `&Bar` can be shared with the coordinator's future.
        base: AtomicU64,
    }

    impl Bar {
        /// A bar over `total` requests (a spinner when the total is unknown), shown only when
        /// `enabled` and stdout is a terminal.
        pub fn new(total: Option<u64>, enabled: bool) -> Bar {
            let bar = match enabled && std::io::stdout().is_terminal() {
                true => ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr()),
                false => ProgressBar::hidden(),
            };
            let template = match total {
                Some(_) => {
                    "{msg:>18} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} ({per_sec})"
                }
                None => "{spinner} {msg} [{elapsed_precise}] {human_pos} requests ({per_sec})",
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            Bar {
                bar,
                base: AtomicU64::new(0),
            }
        }

        /// Removes the bar, so the report starts on a clean line.
        pub fn finish(&self) {
            self.bar.finish_and_clear();
        }
    }

    impl Progress for Bar {
        fn set_message(&self, msg: &str) {
            self.bar.set_message(msg.to_owned());
        }

        fn set_run(&self, done: u64) {
            self.bar.set_position(self.base.load(Relaxed) + done);
        }

        fn end_run(&self, done: u64) {
            self.base.fetch_add(done, Relaxed);
            self.bar.set_position(self.base.load(Relaxed));
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_disabled_bar_is_hidden_and_still_counts() {
            let p = Bar::new(Some(10), false);
            assert!(p.bar.is_hidden());
            p.end_run(4);
            p.set_run(3);
            assert_eq!(p.bar.position(), 7);
        }
    }
}
