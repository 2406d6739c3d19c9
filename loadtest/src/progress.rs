//! A live progress bar (rate, elapsed time) on stderr, drawn only when stdout is a terminal:
//! piped or captured output (`--json > file`, tests, CI) stays silent.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    /// Requests of the runs already finished, when one bar spans several runs (the matrix).
    /// An atomic only so `&Progress` can be shared with the coordinator's future.
    base: AtomicU64,
}

impl Progress {
    /// A bar that draws nothing.
    pub fn hidden() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            base: AtomicU64::new(0),
        }
    }

    /// A bar over `total` requests (a spinner when the total is unknown), shown only when
    /// `enabled` and stdout is a terminal.
    pub fn new(total: Option<u64>, enabled: bool) -> Progress {
        if !enabled || !std::io::stdout().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        let template = match total {
            Some(_) => {
                "{msg:>18} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} ({per_sec})"
            }
            None => "{spinner} {msg} [{elapsed_precise}] {human_pos} requests ({per_sec})",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        Progress {
            bar,
            base: AtomicU64::new(0),
        }
    }

    pub fn set_message(&self, msg: impl Into<String>) {
        self.bar.set_message(msg.into());
    }

    /// The current run has finished `done` requests.
    pub fn set_run(&self, done: u64) {
        self.bar.set_position(self.base.load(Relaxed) + done);
    }

    /// The current run is over after `done` requests; the next one counts on from there.
    pub fn end_run(&self, done: u64) {
        self.base.fetch_add(done, Relaxed);
        self.bar.set_position(self.base.load(Relaxed));
    }

    /// Removes the bar, so the report starts on a clean line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_bar_is_hidden_and_still_counts() {
        let p = Progress::new(Some(10), false);
        assert!(p.bar.is_hidden());
        p.end_run(4);
        p.set_run(3);
        assert_eq!(p.bar.position(), 7);
    }
}
