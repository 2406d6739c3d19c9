//! The ledger (the sections that sold) and which request each sale answers.
//!
//! A request that names an order id is settled by that id alone: a buyer's name is not an
//! order, and settling by it would let one of the buyer's sales stand in for another that
//! is missing. Only a request the answer gave no order id (a timeout, a 503, a 409) is
//! settled by its buyer, against the sales no order id claimed, as Jepsen settles an `:info`
//! operation against what the store holds; a buyer's sales go first to its acknowledged
//! answers, then to its unanswered calls, and only what is left over is held against a 409.

use std::collections::VecDeque;

// Order ids hashed by the hundred thousand: foldhash, not SipHash (see exclusion.rs).
use foldhash::{HashMap, HashMapExt};

use super::parse::History;
use oversell_api::history::Outcome;

pub(crate) struct Ledger {
    /// For each request, the sold section its order is (when the ledger has it).
    pub of_request: Vec<Option<usize>>,
    /// For each request, whether that was found by order id (not by buyer).
    pub by_order: Vec<bool>,
    /// For each section, the request its sale answers (when one does).
    pub request_of: Vec<Option<usize>>,
    /// Sold sections may be missing (the sections are cut): what is not found may have sold.
    pub sections_cut: bool,
    /// Requests may be missing: a sale nobody is seen to ask for may have a request after all.
    pub requests_cut: bool,
}

/// Which of a buyer's calls without an order id takes a sale first.
fn rank(status: u16) -> Option<u8> {
    match status {
        200 => Some(0),
        0 | 500.. => Some(1),
        409 => Some(2),
        _ => None,
    }
}

impl Ledger {
    pub(crate) fn of(history: &History) -> Ledger {
        let (requests, sections) = (&history.requests, &history.sections);
        let mut ledger = Ledger {
            of_request: vec![None; requests.len()],
            by_order: vec![false; requests.len()],
            request_of: vec![None; sections.len()],
            sections_cut: history.is_cut("section"),
            requests_cut: history.is_cut("request"),
        };
        let sold = |i: &usize| sections[*i].outcome == Outcome::Sold;
        let mut orders: HashMap<&str, usize> = HashMap::with_capacity(sections.len());
        for i in (0..sections.len()).filter(sold) {
            if let Some(order) = &sections[i].order_id {
                orders.entry(order.as_str()).or_insert(i);
            }
        }
        for (i, r) in requests.iter().enumerate() {
            let Some(order) = &r.order_id else { continue };
            if let Some(&s) = orders.get(order.as_str()) {
                if ledger.request_of[s].is_none() {
                    ledger.request_of[s] = Some(i);
                    ledger.of_request[i] = Some(s);
                    ledger.by_order[i] = true;
                }
            }
        }
        // The sales no order id claimed, each buyer's in commit order.
        let mut unclaimed: HashMap<&str, VecDeque<usize>> = HashMap::new();
        let mut left: Vec<usize> = (0..sections.len())
            .filter(|i| sold(i) && ledger.request_of[*i].is_none())
            .collect();
        left.sort_unstable_by_key(|&i| (sections[i].exit_us, i));
        for i in left {
            if let Some(buyer) = &sections[i].buyer {
                unclaimed.entry(buyer.as_str()).or_default().push_back(i);
            }
        }
        if unclaimed.is_empty() {
            return ledger;
        }
        let mut calls: Vec<(u8, i64, usize)> = requests
            .iter()
            .enumerate()
            .filter(|(_, r)| r.order_id.is_none() && unclaimed.contains_key(r.buyer.as_str()))
            .filter_map(|(i, r)| rank(r.status).map(|k| (k, r.call_us, i)))
            .collect();
        calls.sort_unstable();
        for (_, _, i) in calls {
            let queue = unclaimed.get_mut(requests[i].buyer.as_str());
            if let Some(s) = queue.and_then(VecDeque::pop_front) {
                ledger.request_of[s] = Some(i);
                ledger.of_request[i] = Some(s);
            }
        }
        ledger
    }
}
