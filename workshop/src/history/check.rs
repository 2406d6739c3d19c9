//! The checker: four verdicts read from the history alone (never from the service's own
//! counters), each holds, violated or unknown, naming the operations that break it or that
//! leave it undecided.
//!
//! A general linearizability search (Wing–Gong–Lowe, as Porcupine and Knossos do) is
//! exponential in the worst case; the sale does not need one, because every answer names its
//! unit (a 200's `stock_left`) and every section says what it read and wrote. So each verdict
//! here is a sort and a sweep: n log n for a million operations.

use super::ledger::Ledger;
use super::parse::History;
use super::{acks, exclusion, fencing, stock};

pub use super::findings::{CheckReport, Counts, Finding, Kind, Lang, Op, State, Verdict};

/// Checks a history: the four verdicts and the figures.
pub fn check(history: &History) -> CheckReport {
    let origin = history.origin_us();
    // The sections' verdicts on one core, the ledger's on another: a million operations are
    // checked in about half the time on two cores.
    let (
        ((mut mutual_exclusion, overlaps, open, lapses), (fencing, stale)),
        ((stock, figures), (acknowledged, lost)),
    ) = std::thread::scope(|scope| {
        let sections = scope.spawn(|| {
            (
                exclusion::check(history, origin),
                fencing::check(history, origin),
            )
        });
        let ledger = Ledger::of(history);
        let rest = (
            stock::check(history, &ledger, origin),
            acks::check(history, &ledger, origin),
        );
        (
            sections.join().expect("the sections' check does not panic"),
            rest,
        )
    });
    // A lapse the fence contained is the fenced tier working as designed; said whole only
    // when the stock shows it did.
    if lapses.count > 0 && mutual_exclusion.state != State::Violated && stock.holds {
        mutual_exclusion.en += "; nothing oversold";
        mutual_exclusion.zh += "；没有超卖";
    }
    let state = [&mutual_exclusion, &stock, &fencing, &acknowledged]
        .iter()
        .map(|v| v.state)
        .max()
        .unwrap_or(State::Holds);
    CheckReport {
        run_id: history.run.id.clone(),
        tier: history.run.tier.clone(),
        chapter: history.run.chapter.clone(),
        initial_stock: history.run.stock,
        state,
        ok: state == State::Holds,
        mutual_exclusion,
        stock,
        fencing,
        acknowledged,
        counts: Counts {
            requests: history.requests.len() as u64,
            sections: history.sections.len() as u64,
            overlaps,
            lapses: lapses.count,
            oversold: figures.oversold,
            lost_updates: figures.lost_updates,
            stale_refused: stale,
            acknowledged_lost: lost,
            indeterminate_settled: figures.settled,
            indeterminate_unsettled: figures.unsettled,
            open_sections: open,
        },
        cuts: history.cuts.clone(),
        origin_us: origin,
    }
}
