//! The bound between a history's clocks, measured during the run: `GET /admin/clocks` read on
//! the client's clock around the call, at the run's start and at its end.
//!
//! The store's `TIME` was read somewhere between the call and its answer, so on the client's
//! clock it lies in `[call, answer]`: the two clocks are apart by at most the offset seen from
//! the middle of that span plus half its length. A lock store of its own is read by the instance
//! between two readings of its own clock, which bounds it against the resource store the same
//! way (the two offsets' gap plus both half round trips). The history's bound is the largest of
//! these, at the start or the end: a clock that drifts during the run is caught at one of them.

use http::Method;
use loadtest::stats::wall_clock_us;
use oversell_client::AdminClient;
use serde_json::Value;

/// One reading of the clocks: the bound it gives between every pair of the history's clocks.
pub async fn measure(admin: &AdminClient) -> anyhow::Result<u64> {
    let call_us = wall_clock_us();
    let answer = admin.request(Method::GET, "/admin/clocks", None).await?;
    let return_us = wall_clock_us();
    bound(call_us, &answer, return_us)
        .ok_or_else(|| anyhow::anyhow!("GET /admin/clocks answered no store's clock: {answer}"))
}

/// The bound one answer gives, read between `call_us` and `return_us` on the client's clock:
/// the largest of client–store for each store (from the client's own readings) and, with a lock
/// store of its own, resource–lock (from the instance's).
pub fn bound(call_us: i64, answer: &Value, return_us: i64) -> Option<u64> {
    let client = Span::new(call_us, return_us);
    let mut widest = 0.0_f64;
    // Each store's clock against the instance's: (store, offset, half round trip).
    let mut by_instance: Vec<(&str, f64, f64)> = Vec::new();
    for store in answer["stores"].as_array()? {
        let int = |name: &str| store[name].as_i64();
        let at = int("store_us")?;
        let instance = Span::new(int("instance_before_us")?, int("instance_after_us")?);
        widest = widest.max(client.apart(at));
        by_instance.push((
            store["store"].as_str().unwrap_or(""),
            at as f64 - instance.middle,
            instance.half,
        ));
    }
    let (_, r_offset, r_half) = *by_instance.iter().find(|(s, ..)| *s == "resource")?;
    for &(_, offset, half) in by_instance.iter().filter(|(s, ..)| *s != "resource") {
        widest = widest.max((offset - r_offset).abs() + half + r_half);
    }
    Some(widest.ceil() as u64)
}

/// A span of one clock around a reading of another's.
struct Span {
    middle: f64,
    half: f64,
}

impl Span {
    fn new(from_us: i64, to_us: i64) -> Span {
        Span {
            middle: (from_us as f64 + to_us as f64) / 2.0,
            half: (to_us - from_us).max(0) as f64 / 2.0,
        }
    }

    /// How far apart this clock and the one read inside the span at `at_us` may be.
    fn apart(&self, at_us: i64) -> f64 {
        (at_us as f64 - self.middle).abs() + self.half
    }
}

#[cfg(test)]
mod tests {
    use super::bound;
    use serde_json::json;

    #[test]
    fn the_bound_is_the_offset_seen_plus_half_the_round_trip() {
        // The store read 300 µs after the middle of a 1,000 µs call: 300 + 500.
        let answer = json!({ "stores": [
            { "store": "resource", "instance_before_us": 1_000_100, "store_us": 1_000_800, "instance_after_us": 1_000_900 },
        ] });
        assert_eq!(bound(1_000_000, &answer, 1_001_000), Some(800));
    }

    #[test]
    fn a_lock_store_of_its_own_is_bounded_against_the_resource_store_too() {
        // Client and stores agree closely; the lock store is 5 ms ahead of the resource store
        // by the instance's readings, each read in 100 µs.
        let answer = json!({ "stores": [
            { "store": "resource", "instance_before_us": 2_000_000, "store_us": 2_000_050, "instance_after_us": 2_000_100 },
            { "store": "lock", "instance_before_us": 2_000_200, "store_us": 2_005_250, "instance_after_us": 2_000_300 },
        ] });
        let got = bound(1_999_900, &answer, 2_000_400).unwrap();
        // Client–lock: 2_005_250 − 2_000_150 + 250 = 5_350; resource–lock: 5_000 + 50 + 50.
        assert_eq!(got, 5_350);
        assert!(
            bound(0, &json!({ "stores": [] }), 1).is_none(),
            "no resource store: none"
        );
    }
}
