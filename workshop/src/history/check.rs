//! The checker: four verdicts read from the history alone (never from the service's own
//! counters), each naming the operations that break it.
//!
//! A general linearizability search (Wing–Gong–Lowe, as Porcupine and Knossos do) is
//! exponential in the worst case; the sale does not need one, because every answer names its
//! unit (a 200's `stock_left`) and every section says what it read and wrote. So each verdict
//! here is a sort and a sweep: n log n for a million operations.

use super::findings::Ledger;
use super::parse::History;
use super::{acks, exclusion, fencing, stock};

pub use super::findings::{CheckReport, Counts, Finding, Kind, Lang, Op, Verdict};

/// Checks a history: the four verdicts and the figures.
pub fn check(history: &History) -> CheckReport {
    let origin = history.origin_us();
    // The sections' verdicts on one core, the ledger's on another: a million operations are
    // checked in about half the time on two cores.
    let (
        ((mutual_exclusion, overlaps, open), (fencing, stale)),
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
    let ok = mutual_exclusion.holds && stock.holds && fencing.holds && acknowledged.holds;
    CheckReport {
        run_id: history.run.id.clone(),
        tier: history.run.tier.clone(),
        chapter: history.run.chapter.clone(),
        initial_stock: history.run.stock,
        ok,
        mutual_exclusion,
        stock,
        fencing,
        acknowledged,
        counts: Counts {
            requests: history.requests.len() as u64,
            sections: history.sections.len() as u64,
            overlaps,
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
