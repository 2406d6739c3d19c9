//! The adversary: in each state it may choose any client's next step, a watchdog's renewal
//! when it is due, time passing to the next instant that matters (a lease's end, a renewal
//! due), or, while its budget lasts, a fault. It is the scheduler of every interleaving at
//! once; the search tries all its choices.
//!
//! Time moves only to instants where something can change, so it is discrete without losing
//! a schedule: between two such instants no lease ends and no renewal falls due. A watchdog
//! renews on time unless its client is paused or dead (time cannot pass a live watchdog's due
//! renewal). A waiter may retry at any moment, which covers every wake-up a `PUBLISH` to the
//! release channel would give it, so a publish is a no-op in the model.

use serde::Serialize;

use crate::bounds::{CrashAt, TimePasses};
use crate::commands::NotModelled;
use crate::lock::Key;
use crate::said::{Died, Said};
use crate::sale::{Machine, Note};
use crate::world::{FaultKind, Phase, World};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "action", content = "client", rename_all = "kebab-case")]
pub enum Action {
    /// Client i's next step.
    Step(usize),
    /// Client i's watchdog renews (it is due).
    Renew(usize),
    /// Time passes to the next instant that matters.
    Advance,
    Pause(usize),
    Resume(usize),
    Crash(usize),
    /// The lock store's replica copies the primary (replication caught up).
    Replicate,
    Failover,
    ClockJump,
}

/// The next instant something can happen by itself: a key's lease ends, or a live
/// watchdog's renewal falls due. `None`: waiting changes nothing, or a renewal is due now
/// (it must run before time passes it).
fn next_instant(w: &World) -> Option<u64> {
    let mut next = w
        .store
        .next_expiry()
        .map(|at| at.saturating_sub(w.store_ahead).max(w.now));
    for c in &w.clients {
        if c.crashed || c.paused {
            continue;
        }
        if let Some(due) = c.renewal {
            if due <= w.now {
                return None;
            }
            next = Some(next.map_or(due, |n: u64| n.min(due)));
        }
    }
    next.filter(|n| *n > w.now)
}

/// Whether the bounds let time pass now: a live buyer in the middle of the lock holds it
/// back unless its gap is the one the bounds open.
fn time_may_pass(m: &Machine, w: &World) -> bool {
    let rule = m.bounds.time;
    rule == TimePasses::Freely
        || w.clients.iter().all(|c| {
            let opened = match rule {
                TimePasses::InBusiness => c.phase == Phase::Write,
                TimePasses::InReleaseGap => c.phase == (Phase::Release { step: 1 }),
                _ => false,
            };
            c.paused || !c.may_touch_the_lock() || opened
        })
}

/// Whether the bounds let client `c` crash now.
fn may_crash(m: &Machine, c: &crate::world::Client) -> bool {
    match m.bounds.crash_at {
        CrashAt::Anywhere => true,
        CrashAt::InSection => c.holds(),
        CrashAt::BetweenAcquireSteps => matches!(c.phase, Phase::Acquire { step: 1.., .. }),
    }
}

/// Every choice the adversary has in `w`.
pub fn actions(m: &Machine, w: &World) -> Vec<Action> {
    let mut all = Vec::new();
    for (i, c) in w.clients.iter().enumerate() {
        if c.can_step() {
            all.push(Action::Step(i));
        }
        if !c.crashed && !c.paused && c.renewal.is_some_and(|due| due <= w.now) {
            all.push(Action::Renew(i));
        }
        if c.paused {
            all.push(Action::Resume(i));
        }
    }
    if next_instant(w).is_some() && time_may_pass(m, w) {
        all.push(Action::Advance);
    }
    if w.faults_left > 0 {
        let b = &m.bounds;
        for (i, c) in w.clients.iter().enumerate() {
            if !c.can_step() {
                continue;
            }
            if b.allows(FaultKind::Pause) {
                all.push(Action::Pause(i));
            }
            if b.allows(FaultKind::Crash) && may_crash(m, c) {
                all.push(Action::Crash(i));
            }
        }
        if let Some(replica) = &w.replica {
            if *replica != w.store {
                all.push(Action::Replicate);
                all.push(Action::Failover);
            }
        }
        if b.allows(FaultKind::ClockJump) && w.store.any_expiry() {
            all.push(Action::ClockJump);
        }
    }
    all
}

/// The world after `action`, and what happened in words.
pub fn apply(m: &Machine, w: &World, action: Action) -> Result<(World, Note), NotModelled> {
    let mut w = w.clone();
    let owner = World::owner;
    let note = match action {
        Action::Step(i) => m.step(&mut w, i)?,
        Action::Renew(i) => m.renew(&mut w, i)?,
        Action::Advance => {
            let to = next_instant(&w).unwrap_or(w.now);
            let by = to - w.now;
            w.set_time(to);
            Said::Passes {
                by,
                to,
                lock_gone: !w.store.exists(Key::Lock.name()),
            }
        }
        Action::Pause(i) => {
            w.faults_left -= 1;
            w.clients[i].paused = true;
            Said::Pauses { who: owner(i) }
        }
        Action::Resume(i) => {
            w.clients[i].paused = false;
            Said::Wakes { who: owner(i) }
        }
        Action::Crash(i) => {
            w.faults_left -= 1;
            let c = &mut w.clients[i];
            c.crashed = true;
            c.renewal = None;
            let at = match c.phase {
                Phase::Read | Phase::Write => Died::Holding,
                Phase::Acquire { step: 1.., .. } => Died::BetweenAcquireSteps,
                Phase::Release { step: 1.. } => Died::BetweenReleaseSteps,
                _ => Died::Elsewhere,
            };
            Said::Dies { who: owner(i), at }
        }
        Action::Replicate => {
            w.replica = Some(w.store.clone());
            Said::Replicates
        }
        Action::Failover => {
            w.faults_left -= 1;
            w.store = w.replica.clone().unwrap_or_default();
            Said::FailsOver
        }
        Action::ClockJump => {
            w.faults_left -= 1;
            let store_now = w.store.now_ms;
            let by = w.store.next_expiry().map_or(0, |at| at - store_now);
            w.store_ahead += by;
            let now = w.now;
            w.set_time(now);
            Said::ClockJumps { by }
        }
    };
    Ok((w, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Bounds;
    use crate::lock;
    use crate::said::Lang;
    use crate::search::start;
    use oversell_api::tier::Tier;

    fn machine(tier: Tier) -> Machine {
        Machine::new(&lock::rung(tier).unwrap(), Bounds::default()).unwrap()
    }

    #[test]
    fn time_cannot_pass_a_live_watchdogs_due_renewal_but_passes_a_paused_ones() {
        let m = machine(Tier::ReentrantWatchdog);
        let (w, _) = apply(&m, &start(&m), Action::Step(0)).unwrap();
        assert_eq!(w.clients[0].renewal, Some(100));
        let (w, note) = apply(&m, &w, Action::Advance).unwrap();
        assert_eq!(
            (w.now, note.words(Lang::En).as_str()),
            (100, "100 ms pass (t = 100 ms)")
        );
        assert!(
            !actions(&m, &w).contains(&Action::Advance),
            "the renewal is due"
        );
        assert!(actions(&m, &w).contains(&Action::Renew(0)));
        let (paused, _) = apply(&m, &w, Action::Pause(0)).unwrap();
        let (lapsed, note) = apply(&m, &paused, Action::Advance).unwrap();
        let note = note.words(Lang::En);
        assert_eq!(lapsed.now, 300, "{note}");
        assert!(note.ends_with("the lock is gone"), "{note}");
    }

    #[test]
    fn a_fault_spends_the_budget_and_none_is_offered_once_it_is_spent() {
        let m = machine(Tier::LuaRelease);
        let first = start(&m);
        assert!(actions(&m, &first).contains(&Action::Crash(1)));
        let (w, note) = apply(&m, &first, Action::Crash(1)).unwrap();
        assert_eq!(note.words(Lang::En), "B dies");
        assert_eq!(w.faults_left, 0);
        let left = actions(&m, &w);
        assert!(
            !left
                .iter()
                .any(|a| matches!(a, Action::Crash(_) | Action::Pause(_))),
            "{left:?}"
        );
        assert!(
            !left.contains(&Action::Step(1)),
            "a dead client takes no step"
        );
    }

    #[test]
    fn a_clock_jump_ends_the_lease_early_for_everyone_but_not_the_clients_time() {
        let b = Bounds {
            faults: vec![FaultKind::ClockJump],
            ..Bounds::default()
        };
        let m = Machine::new(&lock::rung(Tier::AtomicExpiry).unwrap(), b).unwrap();
        let (w, _) = apply(&m, &start(&m), Action::Step(0)).unwrap();
        let (w, note) = apply(&m, &w, Action::ClockJump).unwrap();
        assert_eq!(
            note.words(Lang::En),
            "the lock store's clock jumps 300 ms ahead"
        );
        assert_eq!(w.now, 0);
        assert!(w.store.keys().next().is_none(), "the lock's lease ended");
    }
}
