//! A schedule replayed as what a run's history records: each buyer's call and answer, each
//! grant, renewal and release of the lock, each critical section's enter and exit with what it
//! read and wrote, the faults as marks. The workshop writes it in the run format (its clock
//! named `model`), so the history checker judges a counterexample as it judges a fleet's run.
//!
//! The history goes on past the break: once the schedule is over, every buyer still in its sale
//! runs to its end, the newest holder first, a paused one woken only when nobody else can step
//! (so a fenced lock's stale holder meets the fence), time passing only when nothing else can
//! happen. A history then has its answers, not only its break.
//!
//! The model's steps take no time, so a step's instant is its time in the model (ms) plus its
//! place in the schedule (µs): order is kept, and every time is a real instant of the model.

use serde::Serialize;

use crate::adversary::{apply, Action};
use crate::commands::NotModelled;
use crate::lock::Key;
use crate::sale::Machine;
use crate::search::{start, Found};
use crate::world::{End, FaultKind, Phase, World};

/// Where the model's clock starts, µs since the Unix epoch (the history's times are epoch
/// times; this one is 2026-12-01, chosen, not read).
pub const EPOCH_US: i64 = 1_796_083_200_000_000;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    Call {
        client: usize,
        at_us: i64,
    },
    Granted {
        client: usize,
        at_us: i64,
        deadline_us: Option<i64>,
        fence: Option<u64>,
    },
    Renewed {
        client: usize,
        at_us: i64,
        deadline_us: i64,
    },
    Entered {
        client: usize,
        at_us: i64,
        read: Option<i64>,
        fence: Option<u64>,
    },
    Left {
        client: usize,
        at_us: i64,
        wrote: Option<i64>,
        end: End,
    },
    /// The client's release deleted its own lock.
    Released {
        client: usize,
        at_us: i64,
    },
    Answered {
        client: usize,
        at_us: i64,
        end: End,
        stock_left: Option<i64>,
    },
    Fault {
        kind: FaultKind,
        client: Option<usize>,
        from_us: i64,
        to_us: Option<i64>,
    },
}

/// The replayed schedule: its events, the stock before and after, and when it ended.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub events: Vec<Event>,
    pub initial_stock: i64,
    pub final_stock: i64,
    pub end_us: i64,
    /// A holder that died inside its section, by client.
    pub crashed: Vec<usize>,
}

/// The most steps a history's ending takes after the schedule.
const ENDING_STEPS: usize = 200;

/// The adversary's choice for the ending: the newest buyer that can step, else a paused one
/// woken, else a renewal due, else time passing.
fn ending_choice(m: &Machine, w: &World) -> Option<Action> {
    use crate::adversary::actions;
    let all = actions(m, w);
    let pick = |f: &dyn Fn(&Action) -> bool| all.iter().rev().find(|a| f(a)).copied();
    pick(&|a| matches!(a, Action::Step(_)))
        .or_else(|| pick(&|a| matches!(a, Action::Resume(_))))
        .or_else(|| pick(&|a| matches!(a, Action::Renew(_))))
        .or_else(|| pick(&|a| matches!(a, Action::Advance)))
}

/// `found`'s schedule, then its ending.
pub fn with_ending(m: &Machine, found: &Found) -> Result<Vec<Action>, NotModelled> {
    let mut w = start(m);
    let mut all = Vec::new();
    for stepped in &found.schedule {
        w = apply(m, &w, stepped.action)?.0;
        all.push(stepped.action);
    }
    for _ in 0..ENDING_STEPS {
        let Some(action) = ending_choice(m, &w) else {
            break;
        };
        w = apply(m, &w, action)?.0;
        all.push(action);
    }
    Ok(all)
}

/// Replays `found`'s schedule and its ending on `m`.
pub fn trace(m: &Machine, found: &Found) -> Result<Trace, NotModelled> {
    let schedule = with_ending(m, found)?;
    let mut w = start(m);
    let initial_stock = w.stock.left;
    let mut events = Vec::new();
    let mut paused_at: Vec<Option<usize>> = vec![None; w.clients.len()];
    let at = |w: &World, k: usize| EPOCH_US + w.now as i64 * 1_000 + k as i64 + 1;
    let lease_us = m.bounds.lease_ms as i64 * 1_000;
    for (k, action) in schedule.iter().enumerate() {
        let (next, _) = apply(m, &w, *action)?;
        let t = at(&next, k);
        match *action {
            Action::Step(i) => {
                let (before, after) = (&w.clients[i], &next.clients[i]);
                if before.phase
                    == (Phase::Acquire {
                        step: 0,
                        attempt: 1,
                    })
                {
                    events.push(Event::Call {
                        client: i,
                        at_us: t,
                    });
                }
                match (&before.phase, &after.phase) {
                    (Phase::Acquire { .. } | Phase::Waiting { .. }, Phase::Read) => {
                        let mut store = next.store.clone();
                        let deadline_us = match store.pttl(Key::Lock.name()) {
                            ms if ms >= 0 => Some(t + ms * 1_000),
                            _ => None,
                        };
                        events.push(Event::Granted {
                            client: i,
                            at_us: t,
                            deadline_us,
                            fence: after.token,
                        });
                    }
                    (Phase::Read, Phase::Write) => events.push(Event::Entered {
                        client: i,
                        at_us: t,
                        read: after.read,
                        fence: after.token,
                    }),
                    (Phase::Read, Phase::Release { .. }) => {
                        // The read was refused: a section entered and left with nothing.
                        events.push(Event::Entered {
                            client: i,
                            at_us: t,
                            read: None,
                            fence: after.token,
                        });
                        events.push(Event::Left {
                            client: i,
                            at_us: t,
                            wrote: None,
                            end: End::Stale,
                        });
                    }
                    (Phase::Write, _) => {
                        let end = after.end.unwrap_or(End::Sold);
                        let wrote = (end == End::Sold).then_some(next.stock.left);
                        events.push(Event::Left {
                            client: i,
                            at_us: t,
                            wrote,
                            end,
                        });
                    }
                    _ => {}
                }
                if matches!(before.phase, Phase::Release { .. }) {
                    let owner = World::owner(i);
                    let (mut was, mut now) = (w.store.clone(), next.store.clone());
                    if was.holder(Key::Lock.name()) == owner
                        && now.holder(Key::Lock.name()) != owner
                    {
                        events.push(Event::Released {
                            client: i,
                            at_us: t,
                        });
                    }
                }
                if after.phase == Phase::Done && before.phase != Phase::Done {
                    let end = after.end.unwrap_or(End::GaveUp);
                    let stock_left = match end {
                        End::Sold => Some(next.stock.left),
                        End::SoldOut => after.read,
                        _ => None,
                    };
                    events.push(Event::Answered {
                        client: i,
                        at_us: t,
                        end,
                        stock_left,
                    });
                }
            }
            Action::Renew(i) => {
                if next.clients[i].renewal.is_some() {
                    events.push(Event::Renewed {
                        client: i,
                        at_us: t,
                        deadline_us: t + lease_us,
                    });
                }
            }
            Action::Pause(i) => {
                paused_at[i] = Some(events.len());
                events.push(Event::Fault {
                    kind: FaultKind::Pause,
                    client: Some(i),
                    from_us: t,
                    to_us: None,
                });
            }
            Action::Resume(i) => {
                if let Some(Event::Fault { to_us, .. }) =
                    paused_at[i].take().map(|e| &mut events[e])
                {
                    *to_us = Some(t);
                }
            }
            Action::Crash(i) => events.push(Event::Fault {
                kind: FaultKind::Crash,
                client: Some(i),
                from_us: t,
                to_us: None,
            }),
            Action::Failover => events.push(Event::Fault {
                kind: FaultKind::Failover,
                client: None,
                from_us: t,
                to_us: None,
            }),
            Action::ClockJump => events.push(Event::Fault {
                kind: FaultKind::ClockJump,
                client: None,
                from_us: t,
                to_us: None,
            }),
            Action::Advance | Action::Replicate => {}
        }
        w = next;
    }
    let crashed = w
        .clients
        .iter()
        .enumerate()
        .filter(|(_, c)| c.crashed && c.holds())
        .map(|(i, _)| i)
        .collect();
    Ok(Trace {
        events,
        initial_stock,
        final_stock: w.stock.left,
        end_us: at(&w, schedule.len()),
        crashed,
    })
}
