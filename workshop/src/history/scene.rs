//! What the drawing shows: the window around the violation, the lanes (one per instance), and
//! each section with its request placed in a row, so what overlaps in one instance stays
//! visible.

use std::collections::HashMap;

use super::check::{Finding, Op};
use super::parse::History;
use oversell_api::history::{Request, Section};

/// The most sections drawn around the violation (the nearest ones), so bars stay readable.
const MAX_SECTIONS: usize = 30;

/// What is drawn: the window, the lanes, the items (a section and its request, or a request
/// alone) placed in rows, and the offending operations.
pub(super) struct Scene {
    pub(super) t0: i64,
    pub(super) t1: i64,
    pub(super) lanes: Vec<Lane>,
    pub(super) items: Vec<Item>,
    pub(super) focus_sections: Vec<usize>,
    pub(super) focus_order: Vec<Focus>,
}

pub(super) struct Lane {
    pub(super) name: String,
    pub(super) rows: usize,
}

pub(super) struct Item {
    pub(super) lane: usize,
    pub(super) row: usize,
    pub(super) section: Option<usize>,
    pub(super) request: Option<usize>,
}

#[derive(Clone, Copy)]
pub(super) enum Focus {
    Section(usize),
    Request(usize),
}

impl Scene {
    pub(super) fn new(history: &History, first: Option<&Finding>) -> Scene {
        let sections = &history.sections;
        let requests = &history.requests;
        // A section's request, by order id or by buyer.
        let mut request_of_order: HashMap<&str, usize> = HashMap::new();
        let mut request_of_buyer: HashMap<&str, usize> = HashMap::new();
        for (i, r) in requests.iter().enumerate() {
            if let Some(o) = &r.order_id {
                request_of_order.insert(o, i);
            }
            request_of_buyer.entry(&r.buyer).or_insert(i);
        }
        let request_of = |s: &Section| -> Option<usize> {
            s.order_id
                .as_deref()
                .and_then(|o| request_of_order.get(o))
                .or_else(|| s.buyer.as_deref().and_then(|b| request_of_buyer.get(b)))
                .copied()
        };
        let section_of = |r: &Request| -> Option<usize> {
            sections.iter().position(|s| {
                (r.order_id.is_some() && s.order_id == r.order_id)
                    || s.buyer.as_deref() == Some(r.buyer.as_str())
            })
        };

        let mut focus_order = Vec::new();
        for op in first.map(|f| f.ops.as_slice()).unwrap_or_default() {
            match op {
                Op::Section(s) => {
                    if let Some(i) = sections.iter().position(|x| x == s) {
                        focus_order.push(Focus::Section(i));
                    }
                }
                Op::Request(r) => {
                    if let Some(i) = requests.iter().position(|x| x == r) {
                        focus_order.push(Focus::Request(i));
                    }
                }
            }
        }
        let mut focus_sections: Vec<usize> = Vec::new();
        let mut focus_requests: Vec<usize> = Vec::new();
        for f in &focus_order {
            match *f {
                Focus::Section(s) => focus_sections.push(s),
                Focus::Request(r) => {
                    focus_requests.push(r);
                    if let Some(s) = section_of(&requests[r]) {
                        focus_sections.push(s);
                    }
                }
            }
        }

        // The window: the focus, padded; with no focus, the run's first sections.
        let mut spans: Vec<(i64, i64)> = focus_sections
            .iter()
            .map(|&s| {
                (
                    sections[s].enter_us,
                    sections[s].exit_us.unwrap_or(sections[s].enter_us),
                )
            })
            .collect();
        if spans.is_empty() {
            spans.extend(
                focus_requests
                    .iter()
                    .map(|&r| (requests[r].call_us, requests[r].return_us)),
            );
        }
        if spans.is_empty() {
            let mut order: Vec<usize> = (0..sections.len()).collect();
            order.sort_by_key(|&i| sections[i].enter_us);
            spans.extend(order.iter().take(6).map(|&s| {
                (
                    sections[s].enter_us,
                    sections[s].exit_us.unwrap_or(sections[s].enter_us),
                )
            }));
        }
        let lo = spans.iter().map(|s| s.0).min().unwrap_or(0);
        let hi = spans
            .iter()
            .map(|s| s.1)
            .max()
            .unwrap_or(lo)
            .max(lo + 1_000);
        let pad = (hi - lo) / 4;
        let (t0, t1) = (lo - pad, hi + pad);

        // The sections in it, the nearest to the focus first, then in time.
        let middle = (lo + hi) / 2;
        let mut shown: Vec<usize> = (0..sections.len())
            .filter(|&i| sections[i].enter_us <= t1 && sections[i].exit_us.unwrap_or(t1) >= t0)
            .collect();
        shown.sort_by_key(|&i| (sections[i].enter_us - middle).abs());
        shown.truncate(MAX_SECTIONS);
        for &s in &focus_sections {
            if !shown.contains(&s) {
                shown.push(s);
            }
        }
        shown.sort_by_key(|&i| (sections[i].enter_us, i));

        let mut items: Vec<Item> = Vec::new();
        let mut lanes: Vec<Lane> = Vec::new();
        let lane_of = |name: &str, lanes: &mut Vec<Lane>| -> usize {
            lanes
                .iter()
                .position(|l| l.name == name)
                .unwrap_or_else(|| {
                    lanes.push(Lane {
                        name: name.to_string(),
                        rows: 0,
                    });
                    lanes.len() - 1
                })
        };
        let mut with_request = Vec::new();
        for &s in &shown {
            let r = request_of(&sections[s]);
            with_request.extend(r);
            let lane = lane_of(&sections[s].instance, &mut lanes);
            items.push(Item {
                lane,
                row: 0,
                section: Some(s),
                request: r,
            });
        }
        for &r in &focus_requests {
            if !with_request.contains(&r) {
                let name = requests[r].instance.clone().unwrap_or_else(|| "—".into());
                let lane = lane_of(&name, &mut lanes);
                items.push(Item {
                    lane,
                    row: 0,
                    section: None,
                    request: Some(r),
                });
            }
        }
        lanes.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<String> = lanes.iter().map(|l| l.name.clone()).collect();
        // Rows inside a lane, so what overlaps in one instance stays visible.
        let extent = |item: &Item| -> (i64, i64) {
            let s = item
                .section
                .map(|s| (sections[s].enter_us, sections[s].exit_us.unwrap_or(t1)));
            let r = item
                .request
                .map(|r| (requests[r].call_us, requests[r].return_us));
            match (s, r) {
                (Some(s), Some(r)) => (s.0.min(r.0), s.1.max(r.1)),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => (0, 0),
            }
        };
        items.sort_by_key(|i| extent(i).0);
        let mut row_ends: Vec<Vec<i64>> = vec![Vec::new(); lanes.len()];
        for item in &mut items {
            let name = &lane_name_of(item, sections, requests);
            item.lane = names.iter().position(|n| n == name).unwrap_or(0);
            let (from, to) = extent(item);
            let ends = &mut row_ends[item.lane];
            let gap = (t1 - t0) / 100;
            match ends.iter().position(|&e| e + gap <= from) {
                Some(r) => {
                    ends[r] = to;
                    item.row = r;
                }
                None => {
                    ends.push(to);
                    item.row = ends.len() - 1;
                }
            }
        }
        for (lane, ends) in lanes.iter_mut().zip(&row_ends) {
            lane.rows = ends.len();
        }
        Scene {
            t0,
            t1,
            lanes,
            items,
            focus_sections,
            focus_order,
        }
    }
}

pub(super) fn lane_name_of(item: &Item, sections: &[Section], requests: &[Request]) -> String {
    match (item.section, item.request) {
        (Some(s), _) => sections[s].instance.clone(),
        (None, Some(r)) => requests[r].instance.clone().unwrap_or_else(|| "—".into()),
        (None, None) => String::new(),
    }
}
