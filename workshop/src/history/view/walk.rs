//! The store's state before and after every operation, walked once in time order: who the
//! lock store says holds the lock (the leases valid at that instant), the stock the resource
//! store holds (the last write a section made), the highest fence it has seen, beside who
//! *believes* it holds the lock (the owners inside a section). The viewer shows these; it
//! never works them out again.
//!
//! One sweep over the sorted events and the sorted moments asked about: n log n.

use std::collections::BTreeMap;

use serde::Serialize;

use super::super::parse::History;
use oversell_api::history::Outcome;

/// What the stores hold at one instant, and who thinks it holds the lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreState {
    /// The owners whose lease is valid (granted, not released, before its deadline): two
    /// here at once is the lock letting two in.
    pub holders: Vec<String>,
    /// The stock in the resource store: the initial stock, then each section's write.
    pub stock: i64,
    /// The highest fence the resource store has seen (a holder's read raises it to its own).
    pub fence: Option<u64>,
    /// The owners inside a critical section: each believes it holds the lock.
    pub believers: Vec<String>,
}

/// When an operation begins and ends, to be asked the state just before the one and just
/// after the other (`None`: it never ended; the state after it is the state at the end).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub from_us: i64,
    pub to_us: Option<i64>,
}

enum Effect<'h> {
    Grant(&'h str),
    LeaseEnds(&'h str),
    Enter(&'h str, Option<u64>),
    Exit(&'h str, Option<i64>),
}

/// The state just before each span begins and just after it ends, in the spans' order.
pub fn states(history: &History, spans: &[Span]) -> Vec<(StoreState, StoreState)> {
    let mut events: Vec<(i64, Effect)> = Vec::new();
    for lease in &history.leases {
        events.push((lease.granted_us, Effect::Grant(&lease.owner)));
        // Valid until released or until its last deadline, whichever comes first; a lease
        // with neither is held to the end.
        let deadline = lease
            .renewals
            .iter()
            .map(|r| r.deadline_us)
            .max()
            .into_iter()
            .chain(lease.deadline_us)
            .max();
        let end = match (lease.released_us, deadline) {
            (Some(r), Some(d)) => Some(r.min(d)),
            (r, d) => r.or(d),
        };
        if let Some(end) = end {
            events.push((end, Effect::LeaseEnds(&lease.owner)));
        }
    }
    for section in &history.sections {
        events.push((
            section.enter_us,
            Effect::Enter(&section.owner, section.fence),
        ));
        if let Some(exit) = section.exit_us {
            let wrote = match section.outcome {
                Outcome::Sold => section.wrote,
                _ => None,
            };
            events.push((exit, Effect::Exit(&section.owner, wrote)));
        }
    }
    events.sort_by_key(|(at, _)| *at);

    // Each moment asked: (time, after?, span index). "Before" a moment sees the events
    // strictly earlier; "after" sees the events at that moment too.
    let mut moments: Vec<(i64, bool, usize)> = Vec::with_capacity(spans.len() * 2);
    for (i, span) in spans.iter().enumerate() {
        moments.push((span.from_us, false, i));
        moments.push((span.to_us.unwrap_or(i64::MAX), true, i));
    }
    moments.sort_unstable_by_key(|&(at, after, _)| (at, after));

    let mut holders: BTreeMap<&str, u32> = BTreeMap::new();
    let mut believers: BTreeMap<&str, u32> = BTreeMap::new();
    let mut stock = history.run.stock;
    let mut fence: Option<u64> = None;
    let mut out = vec![(StoreState::default(), StoreState::default()); spans.len()];
    let mut next = 0;
    for (at, after, i) in moments {
        while next < events.len() && (events[next].0 < at || (after && events[next].0 == at)) {
            match events[next].1 {
                Effect::Grant(owner) => *holders.entry(owner).or_default() += 1,
                Effect::LeaseEnds(owner) => take(&mut holders, owner),
                Effect::Enter(owner, f) => {
                    *believers.entry(owner).or_default() += 1;
                    fence = fence.max(f);
                }
                Effect::Exit(owner, wrote) => {
                    take(&mut believers, owner);
                    if let Some(w) = wrote {
                        stock = w;
                    }
                }
            }
            next += 1;
        }
        let state = StoreState {
            holders: holders.keys().map(|s| s.to_string()).collect(),
            stock,
            fence,
            believers: believers.keys().map(|s| s.to_string()).collect(),
        };
        if after {
            out[i].1 = state;
        } else {
            out[i].0 = state;
        }
    }
    out
}

fn take(set: &mut BTreeMap<&str, u32>, owner: &str) {
    if let Some(n) = set.get_mut(owner) {
        *n -= 1;
        if *n == 0 {
            set.remove(owner);
        }
    }
}
