//! How evenly a run shared the lock: the acquires each client got, a client being one worker of
//! the generator (one connection at a time), and an acquire one sale it was answered 200 for
//! (every sale is one critical section: under `cohort` too, where one lock passes through
//! several). Min, max, min/max, and Jain's index (Σx)² / (n·Σx²): 1 when every client got as
//! many, 1/n when one got them all. Beside it the sales of each instance, from the ledger.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::round;

/// Acquires per client, and sales per instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Clients (workers) in the run, those that got nothing included.
    pub clients: u64,
    pub min: u64,
    pub max: u64,
    /// `min / max`: absent when no client got any.
    pub min_over_max: Option<f64>,
    /// Jain's index: absent when no client got any.
    pub jain: Option<f64>,
    /// `[acquires, clients]`: how many clients got each count, fewest first (a run of 1000
    /// one-request buyers is two pairs, not a thousand numbers).
    pub clients_by_acquires: Vec<[u64; 2]>,
    /// Sales per instance, from the run's ledger entries; empty when the ledger was not read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub per_instance: BTreeMap<String, u64>,
}

impl Fairness {
    /// From the 200s each client got (any order).
    pub fn of(per_client: &[u64]) -> Fairness {
        let mut by: BTreeMap<u64, u64> = BTreeMap::new();
        for &x in per_client {
            *by.entry(x).or_default() += 1;
        }
        let min = by.keys().next().copied().unwrap_or(0);
        let max = by.keys().next_back().copied().unwrap_or(0);
        Fairness {
            clients: per_client.len() as u64,
            min,
            max,
            min_over_max: (max > 0).then(|| round(min as f64 / max as f64, 4)),
            jain: jain(per_client).map(|j| round(j, 4)),
            clients_by_acquires: by.into_iter().map(|(x, n)| [x, n]).collect(),
            per_instance: BTreeMap::new(),
        }
    }

    pub fn with_instances(mut self, per_instance: BTreeMap<String, u64>) -> Fairness {
        self.per_instance = per_instance;
        self
    }

    /// Every client's count, fewest first (for the chart).
    pub fn sorted(&self) -> Vec<u64> {
        self.clients_by_acquires
            .iter()
            .flat_map(|&[x, n]| std::iter::repeat_n(x, n as usize))
            .collect()
    }

    /// Acquires over all clients.
    pub fn total(&self) -> u64 {
        self.clients_by_acquires.iter().map(|[x, n]| x * n).sum()
    }
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²); `None` for no clients or all zeros.
pub fn jain(xs: &[u64]) -> Option<f64> {
    let sum: u128 = xs.iter().map(|&x| u128::from(x)).sum();
    let squares: u128 = xs.iter().map(|&x| u128::from(x) * u128::from(x)).sum();
    match squares {
        0 => None,
        _ => Some((sum * sum) as f64 / (xs.len() as u128 * squares) as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jains_index_is_one_when_equal_and_one_over_n_when_one_client_takes_all() {
        assert_eq!(jain(&[7, 7, 7, 7]), Some(1.0));
        assert_eq!(jain(&[12, 0, 0, 0]), Some(0.25));
        // (1+2+3)² / (3·(1+4+9)) = 36/42.
        assert!((jain(&[1, 2, 3]).unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert_eq!(jain(&[0, 0]), None);
        assert_eq!(jain(&[]), None);
        // Large counts do not overflow.
        assert_eq!(jain(&[u64::from(u32::MAX); 3]), Some(1.0));
    }

    #[test]
    fn acquires_per_client_keep_min_max_and_the_clients_who_got_nothing() {
        let f = Fairness::of(&[3, 0, 5, 3]);
        assert_eq!((f.clients, f.min, f.max), (4, 0, 5));
        assert_eq!(f.min_over_max, Some(0.0));
        assert_eq!(f.clients_by_acquires, [[0, 1], [3, 2], [5, 1]]);
        assert_eq!(f.sorted(), [0, 3, 3, 5]);
        assert_eq!(f.total(), 11);
        // 121 / (4·43)
        assert_eq!(f.jain, Some(round(121.0 / 172.0, 4)));
        let f = Fairness::of(&[2, 4]);
        assert_eq!((f.min_over_max, f.jain), (Some(0.5), Some(0.9)));
    }

    #[test]
    fn a_run_with_no_sale_has_no_ratio_to_give() {
        let f = Fairness::of(&[0, 0, 0]);
        assert_eq!((f.min_over_max, f.jain), (None, None));
        let f = Fairness::of(&[]);
        assert_eq!((f.clients, f.min, f.max, f.jain), (0, 0, 0, None));
    }
}
