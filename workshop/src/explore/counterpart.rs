//! A schedule the search found, read for the fleet: which of the fleet's own faults (those
//! `POST /admin/faults` arms) makes the same break, or which step of the schedule has none.
//!
//! The model's adversary moves time as it likes; the fleet's time runs on. What the schedule
//! needs of the fleet is therefore read where a lease runs out under a buyer that still acts
//! on it (it needed that buyer stalled there: a pause at that step), and where a buyer dies
//! or the lock store fails over. A pause or a step order that lets no lease run out is only
//! the order of the buyers' steps, which the fleet's two buyers racing for one lock make on
//! their own.

use explore::adversary::{apply, Action};
use explore::lock::Key;
use explore::sale::Machine;
use explore::search::{start, Found};
use explore::world::{Phase, World};
use oversell_api::{Fault, FaultKind, Tier};

/// What the fleet runs for a schedule: its buyers, its stock, the one fault it arms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub buyers: usize,
    pub stock: i64,
    pub ttl_ms: u64,
    /// `None`: the schedule is an order of steps alone, with no fault.
    pub fault: Option<Fault>,
    /// What the fault stands for in the schedule, in words.
    pub because: String,
}

/// Why the fleet cannot make the schedule: the step, in words, that none of its faults makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoCounterpart(pub String);

/// What one step of the schedule needs of the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Need {
    /// The buyer the fault strikes; `None`: the lock store.
    client: Option<usize>,
    kind: FaultKind,
    because: String,
}

/// How long the fleet's pause lasts, in leases: the lease runs out in the first, and the other
/// buyer takes the lock and sells well inside the rest, however loaded the machine.
const PAUSE_LEASES: u64 = 3;

/// The fleet's plan for `found`, a schedule of the built-in rung `tier` searched on `m`.
pub fn plan(m: &Machine, tier: Tier, found: &Found) -> Result<Plan, NoCounterpart> {
    let lease_ms = m.bounds.lease_ms;
    let mut w = start(m);
    let stock = w.stock.left;
    let mut first_holder: Option<usize> = None;
    let mut needs: Vec<Need> = Vec::new();
    for stepped in &found.schedule {
        let (next, _) = apply(m, &w, stepped.action)
            .map_err(|e| NoCounterpart(format!("the schedule does not replay: {e}")))?;
        let need = match stepped.action {
            Action::Step(i) => {
                let took = matches!(
                    next.clients[i].phase,
                    Phase::Read | Phase::Acquire { step: 1.., .. }
                );
                if took && first_holder.is_none() {
                    first_holder = Some(i);
                }
                None
            }
            Action::Advance => lapsed_under(&w, &next, tier, lease_ms)?,
            Action::Crash(i) => Some(death(&w, i)?),
            Action::Failover => Some(Need {
                client: None,
                kind: FaultKind::Failover,
                because: "the lock store fails over to a replica that never saw the lock".into(),
            }),
            Action::ClockJump => {
                return Err(NoCounterpart(
                    "the lock store's clock jumps ahead: the fleet's clock-jump moves the clocks \
                     of Redlock masters, not of one Redis"
                        .into(),
                ))
            }
            Action::Renew(_) | Action::Pause(_) | Action::Resume(_) | Action::Replicate => None,
        };
        if let Some(need) = need {
            if !needs.contains(&need) {
                needs.push(need);
            }
        }
        w = next;
    }
    if needs.len() > 1 {
        let all: Vec<String> = needs.iter().map(|n| n.kind.id().to_owned()).collect();
        return Err(NoCounterpart(format!(
            "the fleet arms one fault for a run, and this schedule needs {}: {}",
            needs.len(),
            all.join(", ")
        )));
    }
    let Some(need) = needs.pop() else {
        return Ok(Plan {
            buyers: m.bounds.clients,
            stock,
            ttl_ms: lease_ms,
            fault: None,
            because: "no fault: the buyers' steps in this order, as two buyers racing make it"
                .into(),
        });
    };
    if let (Some(struck), Some(first)) = (need.client, first_holder) {
        if struck != first {
            return Err(NoCounterpart(format!(
                "the fleet's faults strike the next buyer to take the lock, and this schedule \
                 strikes {}, who took it after {}",
                World::owner(struck),
                World::owner(first)
            )));
        }
    }
    let ms = match need.kind {
        FaultKind::HolderPause | FaultKind::ReleaseGap => PAUSE_LEASES * lease_ms,
        _ => 0,
    };
    Ok(Plan {
        buyers: m.bounds.clients,
        stock,
        ttl_ms: lease_ms,
        fault: Some(Fault::new(need.kind, ms)),
        because: need.because,
    })
}

/// Time passed in `before` and the lock's lease ran out: what it needed of the buyer it ran
/// out under, if one still acts on it.
fn lapsed_under(
    before: &World,
    after: &World,
    tier: Tier,
    lease_ms: u64,
) -> Result<Option<Need>, NoCounterpart> {
    let lock = Key::Lock.name();
    let (mut was, mut now) = (before.store.clone(), after.store.clone());
    if !was.exists(lock) || now.exists(lock) {
        return Ok(None);
    }
    let under = before
        .clients
        .iter()
        .enumerate()
        .find(|(_, c)| !c.crashed && c.may_touch_the_lock());
    let Some((i, c)) = under else {
        return Ok(None);
    };
    let who = World::owner(i);
    let need = |kind, because: String| Need {
        client: Some(i),
        kind,
        because,
    };
    match c.phase {
        Phase::Write => Ok(Some(need(
            FaultKind::HolderPause,
            format!(
                "{who} read the stock and its {lease_ms} ms lease ran out before it wrote: \
                 {who} paused after its read"
            ),
        ))),
        Phase::Release { step: 1 } if tier == Tier::UuidOwner => Ok(Some(need(
            FaultKind::ReleaseGap,
            format!(
                "{who}'s release saw its own value and its {lease_ms} ms lease ran out before \
                 the delete: {who} paused between GET and DEL"
            ),
        ))),
        Phase::Read => Err(NoCounterpart(format!(
            "{who}'s lease runs out before it reads the stock: the fleet's pauses strike a \
             holder after its read"
        ))),
        _ => Err(NoCounterpart(format!(
            "{who}'s lease runs out between two of its lock's steps: the fleet pauses a buyer \
             there only between uuid-owner's GET and DEL"
        ))),
    }
}

/// Client `i` dies in `w`: the fleet's death at that step.
fn death(w: &World, i: usize) -> Result<Need, NoCounterpart> {
    let who = World::owner(i);
    let need = |kind, because: String| Need {
        client: Some(i),
        kind,
        because,
    };
    match w.clients[i].phase {
        Phase::Read | Phase::Write => Ok(need(
            FaultKind::HolderDies,
            format!("{who} dies holding the lock"),
        )),
        Phase::Acquire { step: 1.., .. } => Ok(need(
            FaultKind::HolderDiesBetweenSteps,
            format!("{who} dies between two acquire steps"),
        )),
        _ => Err(NoCounterpart(format!(
            "{who} dies outside its section and its acquire: the fleet's deaths strike a holder \
             inside its section or between its acquire steps"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use explore::bounds::Bounds;
    use explore::judge::Property;
    use explore::lock;

    fn found(tier: Tier, bounds: &Bounds, property: Property) -> (Machine, Found) {
        let lock = lock::rung(tier).unwrap();
        let answer = explore::explore(&lock, bounds.clone()).unwrap();
        let found = answer.found(property).expect("found").clone();
        (Machine::new(&lock, bounds.clone()).unwrap(), found)
    }

    #[test]
    fn a_lease_that_runs_out_between_read_and_write_is_the_fleets_holder_pause() {
        let (m, f) = found(Tier::LuaRelease, &Bounds::default(), Property::SoldTwice);
        let plan = plan(&m, Tier::LuaRelease, &f).unwrap();
        assert_eq!(
            plan.fault,
            Some(Fault::new(FaultKind::HolderPause, 3 * m.bounds.lease_ms))
        );
        assert_eq!((plan.buyers, plan.stock), (2, 2));
        assert!(plan.because.starts_with("A read the stock"), "{plan:?}");
    }

    #[test]
    fn uuid_owners_foreign_release_is_the_release_gap_and_a_death_between_steps_its_own() {
        let bounds = Bounds::default();
        let (m, f) = found(Tier::UuidOwner, &bounds, Property::ForeignRelease);
        let gap = plan(&m, Tier::UuidOwner, &f).unwrap().fault.unwrap();
        assert_eq!(gap.kind, FaultKind::ReleaseGap);
        let (m, f) = found(Tier::SetnxExpire, &bounds, Property::Deadlock);
        let died = plan(&m, Tier::SetnxExpire, &f).unwrap().fault.unwrap();
        assert_eq!(died, Fault::new(FaultKind::HolderDiesBetweenSteps, 0));
    }

    #[test]
    fn a_clock_jump_has_no_counterpart_on_one_redis() {
        let bounds = Bounds {
            faults: vec![explore::world::FaultKind::ClockJump],
            time: explore::bounds::TimePasses::Calmly,
            ..Bounds::default()
        };
        let lock = lock::rung(Tier::AtomicExpiry).unwrap();
        let answer = explore::explore(&lock, bounds.clone()).unwrap();
        let m = Machine::new(&lock, bounds).unwrap();
        let jumped = answer
            .found
            .iter()
            .find(|f| f.schedule.iter().any(|s| s.action == Action::ClockJump))
            .expect("a break by a clock jump");
        let why = plan(&m, Tier::AtomicExpiry, jumped).unwrap_err().0;
        assert!(why.contains("Redlock masters"), "{why}");
    }
}
