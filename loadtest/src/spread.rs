//! Percentiles of a set of measured times, as the reports print them: exact nearest-rank
//! values, in ms.

use serde::{Deserialize, Serialize};

use crate::stats::round;

/// Percentiles of a set of times, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub p50: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    pub max: f64,
}

/// p50, p99, p99.9 and max of sorted µs, in ms; `None` when empty.
pub fn spread(sorted_us: &[u64]) -> Option<Spread> {
    let ms = |q| percentile(sorted_us, q).map(|us| round(us as f64 / 1000.0, 3));
    Some(Spread {
        p50: ms(0.5)?,
        p99: ms(0.99)?,
        p99_9: ms(0.999)?,
        max: ms(1.0)?,
    })
}

/// The nearest-rank percentile of sorted values: the smallest value at least a share `q` of
/// them are at or below. Exact, not estimated: the value is one that was measured.
pub fn percentile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_are_values_that_were_measured() {
        let xs: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile(&xs, 0.5), Some(500));
        assert_eq!(percentile(&xs, 0.99), Some(990));
        assert_eq!(percentile(&xs, 0.999), Some(999));
        assert_eq!(percentile(&xs, 1.0), Some(1000));
        assert_eq!(percentile(&xs, 0.0), Some(1));
        assert_eq!(percentile(&[7], 0.999), Some(7));
        assert_eq!(percentile(&[1, 2, 3, 4], 0.5), Some(2));
        assert_eq!(percentile(&[], 0.5), None);
        let s = spread(&[1_000, 2_000, 250_000]).unwrap();
        assert_eq!((s.p50, s.p99, s.p99_9, s.max), (2.0, 250.0, 250.0, 250.0));
    }
}
