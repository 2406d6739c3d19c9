//! The burst's short form, what the server and the scenarios call: `buyers` buyers released
//! at the same instant, one `POST /sale` each.

use std::time::Duration;

use super::load::{Load, Model, RequestSpec};
use super::pool::fire;
use crate::progress::Silent;
use crate::stats::RunStats;
use oversell_client::target::Targets;

/// Options of [`burst`] besides the buyers.
#[derive(Debug, Clone)]
pub struct BurstOptions {
    /// At most this many connections; `None`: one per buyer.
    pub connections: Option<usize>,
    pub timeout: Duration,
    /// Items per order.
    pub qty: u32,
    /// Keep every buyer's request whole ([`RunStats::exchanges`]): for a run's history.
    pub keep_answers: bool,
}

impl Default for BurstOptions {
    fn default() -> Self {
        BurstOptions {
            connections: None,
            timeout: Duration::from_secs(30),
            qty: 1,
            keep_answers: false,
        }
    }
}

/// `buyers` buyers released at the same instant, one `POST /sale` each, connections dealt
/// round robin over the targets.
pub async fn burst(
    targets: &Targets,
    buyers: usize,
    options: &BurstOptions,
) -> anyhow::Result<RunStats> {
    let load = Load {
        model: Model::Burst {
            buyers: buyers as u64,
        },
        connections: options.connections.unwrap_or(buyers),
        request: RequestSpec {
            keep_answers: options.keep_answers,
            ..RequestSpec::sale(options.qty)
        },
        timeout: options.timeout,
    };
    fire(targets, &load, &Silent).await
}
