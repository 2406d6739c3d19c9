//! `POST /admin/burst`: N buyers fired from the server side, and what they saw.

use serde::{Deserialize, Serialize};

/// Where a burst's buyers come from.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// Through the fleet's URL (nginx): real HTTP requests spread over every instance.
    #[default]
    Fleet,
    /// One instance only, through the same sale path as `POST /sale`: every buyer served by
    /// that one process.
    Instance,
}

/// The most buyers one burst may have, and the most an instance runs at once across the bursts
/// it serves: each is a socket to the fleet (or a task), and several full bursts at once ran an
/// instance out of file descriptors.
pub const MAX_BURST_BUYERS: usize = 5_000;

/// The body of `POST /admin/burst`; unknown fields are refused.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BurstRequest {
    /// Buyers at once, 1–5000.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 5000))]
    pub buyers: usize,
    /// Items per order, 1–10 (1 when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10))]
    pub qty: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
}

/// What the burst saw, by outcome.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BurstReport {
    pub buyers: usize,
    pub ok: usize,
    pub sold_out: usize,
    pub unavailable: usize,
    pub errors: usize,
    /// From the release of the buyers to the last answer: the slowest buyer's latency, as
    /// they all start together.
    pub elapsed_ms: f64,
    pub throughput_rps: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_leaves_out_what_it_does_not_set_and_refuses_strangers() {
        let request = BurstRequest {
            buyers: 30,
            qty: None,
            via: Some(Via::Instance),
        };
        let json = serde_json::to_string(&request).unwrap();
        assert_eq!(json, r#"{"buyers":30,"via":"instance"}"#);
        assert!(serde_json::from_str::<BurstRequest>(r#"{"buyers":1,"via":"moon"}"#).is_err());
        assert!(serde_json::from_str::<BurstRequest>(r#"{"buyers":1,"who":"me"}"#).is_err());
    }
}
