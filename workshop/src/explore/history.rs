//! A schedule the search found, written as a run's history (JSON Lines, the format of
//! [`oversell_api::history`]) with every clock named `model`: `loadtest check` judges it as it
//! judges a fleet's run, and the viewer draws it.

use explore::trace::{Event, Trace};
use explore::world::{End, World};

use oversell_api::history::{
    Clocks, End as EndLine, Fault, Lease, Line, Outcome, Renewal, Request, Run, Section, VERSION,
};

/// The clocks' name: one clock, the model's.
const MODEL: &str = "model (the schedule search: ms of model time, the step's place in µs)";

/// How a section ended. A section ends sold, sold out or refused as stale; a sale that gave
/// up waiting or whose lock step failed never entered one.
fn outcome(end: End) -> Outcome {
    match end {
        End::Sold => Outcome::Sold,
        End::SoldOut => Outcome::SoldOut,
        End::Stale | End::GaveUp | End::Failed => Outcome::StaleRefused,
    }
}

/// The status the sale answers: 409 sold out; a stale write (`lock_lost`), a wait that gave
/// up (`lock_timeout`) and a failed lab step are the service's 503s.
fn status(end: End) -> u16 {
    match end {
        End::Sold => 200,
        End::SoldOut => 409,
        End::Stale | End::GaveUp | End::Failed => 503,
    }
}

fn order(client: usize) -> String {
    format!("o-{}", World::owner(client))
}

/// The history's lines for `trace`, a schedule of `tier` (a rung's id, or `custom` for a lab
/// lock) named `property`.
pub fn lines(trace: &Trace, tier: &str, property: &str, lease_ms: u64) -> Vec<Line> {
    let clients = 1 + trace
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Call { client, .. } => Some(*client),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut lines = vec![Line::Run(Run {
        v: VERSION,
        id: format!("explore-{tier}-{property}"),
        room: "model".into(),
        chapter: None,
        tier: tier.to_owned(),
        stock: trace.initial_stock,
        ttl_ms: lease_ms,
        business_ms: 0,
        clocks: Clocks {
            request: MODEL.into(),
            section: MODEL.into(),
            lease: MODEL.into(),
            fault: MODEL.into(),
            // One clock for every time: the model's.
            bound_us: Some(0),
        },
    })];
    for client in 0..clients {
        lines.extend(of_client(trace, client));
    }
    for event in &trace.events {
        if let Event::Fault {
            kind,
            client,
            from_us,
            to_us,
        } = event
        {
            lines.push(Line::Fault(Fault {
                kind: kind.id().to_owned(),
                target: client.map_or("lock-store".to_owned(), World::owner),
                from_us: *from_us,
                to_us: *to_us,
            }));
        }
    }
    lines.push(Line::End(EndLine {
        at_us: trace.end_us,
        stock: Some(trace.final_stock),
    }));
    lines
}

/// One client's request, section and lease.
fn of_client(trace: &Trace, client: usize) -> Vec<Line> {
    let owner = World::owner(client);
    let mine = || {
        trace
            .events
            .iter()
            .filter(move |e| event_client(e) == Some(client))
    };
    let mut lines = Vec::new();
    let call = mine().find_map(|e| match e {
        Event::Call { at_us, .. } => Some(*at_us),
        _ => None,
    });
    let Some(call_us) = call else {
        return lines;
    };
    let answer = mine().find_map(|e| match e {
        Event::Answered {
            at_us,
            end,
            stock_left,
            ..
        } => Some((*at_us, *end, *stock_left)),
        _ => None,
    });
    let fence = mine().find_map(|e| match e {
        Event::Granted { fence, .. } => *fence,
        _ => None,
    });
    let sold = matches!(answer, Some((_, End::Sold, _)));
    lines.push(Line::Request(Request {
        buyer: owner.clone(),
        qty: 1,
        call_us,
        return_us: answer.map_or(trace.end_us, |a| a.0),
        status: answer.map_or(0, |a| status(a.1)),
        order_id: sold.then(|| order(client)),
        stock_left: answer.and_then(|a| a.2),
        fence,
        instance: answer.map(|_| owner.clone()),
    }));
    let entered = mine().find_map(|e| match e {
        Event::Entered {
            at_us, read, fence, ..
        } => Some((*at_us, *read, *fence)),
        _ => None,
    });
    if let Some((enter_us, read, fence)) = entered {
        let left = mine().find_map(|e| match e {
            Event::Left {
                at_us, wrote, end, ..
            } => Some((*at_us, *wrote, *end)),
            _ => None,
        });
        let sold_here = matches!(left, Some((_, _, End::Sold)));
        lines.push(Line::Section(Section {
            owner: owner.clone(),
            instance: owner.clone(),
            enter_us,
            exit_us: left.map(|l| l.0),
            fence,
            order_id: sold_here.then(|| order(client)),
            buyer: sold_here.then(|| owner.clone()),
            qty: sold_here.then_some(1),
            read,
            wrote: left.and_then(|l| l.1),
            outcome: match left {
                Some((_, _, end)) => outcome(end),
                None if trace.crashed.contains(&client) => Outcome::Crashed,
                None => Outcome::Open,
            },
        }));
    }
    let granted = mine().find_map(|e| match e {
        Event::Granted {
            at_us, deadline_us, ..
        } => Some((*at_us, *deadline_us)),
        _ => None,
    });
    if let Some((granted_us, deadline_us)) = granted {
        lines.push(Line::Lease(Lease {
            owner: owner.clone(),
            granted_us,
            deadline_us,
            renewals: mine()
                .filter_map(|e| match e {
                    Event::Renewed {
                        at_us, deadline_us, ..
                    } => Some(Renewal {
                        renew_us: *at_us,
                        deadline_us: *deadline_us,
                    }),
                    _ => None,
                })
                .collect(),
            released_us: mine().find_map(|e| match e {
                Event::Released { at_us, .. } => Some(*at_us),
                _ => None,
            }),
            refused_release_us: None,
            // The model's times are exact, as a derived lease's are taken to be: no
            // millisecond of doubt around a deadline.
            source: oversell_api::history::LeaseSource::Derived,
        }));
    }
    lines
}

fn event_client(e: &Event) -> Option<usize> {
    match e {
        Event::Call { client, .. }
        | Event::Granted { client, .. }
        | Event::Renewed { client, .. }
        | Event::Entered { client, .. }
        | Event::Left { client, .. }
        | Event::Released { client, .. }
        | Event::Answered { client, .. } => Some(*client),
        Event::Fault { .. } => None,
    }
}

/// The lines as the file holds them, one JSON object a line.
pub fn text(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|l| serde_json::to_string(l).expect("a history line serializes") + "\n")
        .collect()
}
