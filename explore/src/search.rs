//! Breadth-first over every choice of the adversary, from the start (every buyer about to
//! send its first acquire step), states hashed so that each is expanded once: the first state
//! found breaking a property is at the least depth any schedule breaks it, so its schedule is
//! a shortest one. The search goes on until every property is broken, every reachable state
//! is seen, or a bound is met (depth, states), and says which.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashSet, VecDeque};
use std::hash::Hasher;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::adversary::{actions, apply, Action};
use crate::commands::NotModelled;
use crate::judge::{broken, Property};
use crate::said::Lang;
use crate::sale::Machine;
use crate::world::World;

/// One step of a schedule: the adversary's choice and what it did, in English and Chinese.
#[derive(Debug, Clone, Serialize)]
pub struct Stepped {
    #[serde(flatten)]
    pub action: Action,
    pub note: String,
    pub note_zh: String,
}

/// The shortest schedule found to break one property.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub property: Property,
    pub depth: usize,
    pub schedule: Vec<Stepped>,
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ended {
    /// Every property was broken: nothing more to find.
    AllBroken,
    /// Every reachable state was seen.
    Exhausted,
    /// States were left unexpanded at the depth bound.
    DepthBound,
    /// The state bound was met.
    StateBound,
    /// The time budget ran out.
    TimeBound,
}

/// How many states between two looks at the clock: a look costs more than a state.
const CLOCK_EVERY: usize = 256;

#[derive(Debug, Clone, Serialize)]
pub struct Searched {
    pub found: Vec<Found>,
    pub states: usize,
    pub ended: Ended,
    #[serde(skip)]
    pub elapsed: Duration,
}

struct Node {
    parent: usize,
    action: Option<Action>,
}

fn fingerprint(m: &Machine, w: &World) -> u64 {
    let mut h = DefaultHasher::new();
    w.fingerprint(&mut h, !m.absolute_time);
    h.finish()
}

/// The start: every buyer about to acquire, the stock one unit per buyer.
pub fn start(m: &Machine) -> World {
    let b = &m.bounds;
    World::new(
        b.clients,
        b.budget,
        b.allows(crate::world::FaultKind::Failover),
    )
}

/// Searches every schedule within `m`'s bounds.
pub fn search(m: &Machine) -> Result<Searched, NotModelled> {
    let began = Instant::now();
    let first = start(m);
    let mut nodes = vec![Node {
        parent: 0,
        action: None,
    }];
    let mut seen = HashSet::new();
    seen.insert(fingerprint(m, &first));
    let mut found: Vec<Found> = Vec::new();
    let record = |found: &mut Vec<Found>, nodes: &[Node], at: usize, w: &World| {
        for property in broken(m, w)? {
            if !found.iter().any(|f| f.property == property) {
                found.push(Found {
                    property,
                    depth: 0,
                    schedule: schedule(m, nodes, at)?,
                });
                let last = found.last_mut().expect("just pushed");
                last.depth = last.schedule.len();
            }
        }
        Ok::<(), NotModelled>(())
    };
    record(&mut found, &nodes, 0, &first)?;
    let mut frontier = VecDeque::from([(0usize, 0usize, first)]);
    let mut ended = Ended::Exhausted;
    'search: while let Some((at, depth, w)) = frontier.pop_front() {
        let choices = actions(m, &w);
        if depth >= m.bounds.max_depth {
            if !choices.is_empty() {
                ended = Ended::DepthBound;
            }
            continue;
        }
        for action in choices {
            let (next, _) = apply(m, &w, action)?;
            if !seen.insert(fingerprint(m, &next)) {
                continue;
            }
            nodes.push(Node {
                parent: at,
                action: Some(action),
            });
            let here = nodes.len() - 1;
            record(&mut found, &nodes, here, &next)?;
            if found.len() == Property::ALL.len() {
                ended = Ended::AllBroken;
                break 'search;
            }
            if seen.len() >= m.bounds.max_states {
                ended = Ended::StateBound;
                break 'search;
            }
            let out_of_time = m.bounds.time_budget_ms.is_some_and(|ms| {
                seen.len() % CLOCK_EVERY == 0 && began.elapsed() >= Duration::from_millis(ms)
            });
            if out_of_time {
                ended = Ended::TimeBound;
                break 'search;
            }
            frontier.push_back((here, depth + 1, next));
        }
    }
    found.sort_by_key(|f| f.property);
    Ok(Searched {
        found,
        states: seen.len(),
        ended,
        elapsed: began.elapsed(),
    })
}

/// The schedule that reached node `at`, replayed from the start for its words.
fn schedule(m: &Machine, nodes: &[Node], at: usize) -> Result<Vec<Stepped>, NotModelled> {
    let mut path = Vec::new();
    let mut i = at;
    while let Some(action) = nodes[i].action {
        path.push(action);
        i = nodes[i].parent;
    }
    path.reverse();
    let mut w = start(m);
    let mut steps = Vec::with_capacity(path.len());
    for action in path {
        let (next, said) = apply(m, &w, action)?;
        steps.push(Stepped {
            action,
            note: said.words(Lang::En),
            note_zh: said.words(Lang::Zh),
        });
        w = next;
    }
    Ok(steps)
}
