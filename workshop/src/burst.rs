//! A burst of buyers through a fleet, as the service fires one for `POST /admin/burst`: the
//! generator's burst (every buyer released at once, one connection each), read into the API's
//! own report. The service asks for it here by name and never names the generator.

use std::time::Duration;

use oversell_api::BurstReport;
use oversell_client::Targets;

/// `buyers` sales of `qty` each through `targets` at once; each waits for its answer at most
/// `timeout`. What came back, counted by status.
pub async fn through_fleet(
    targets: &Targets,
    buyers: usize,
    qty: u32,
    timeout: Duration,
) -> anyhow::Result<BurstReport> {
    let options = loadtest::BurstOptions {
        connections: None,
        timeout,
        qty,
        keep_answers: false,
    };
    let stats = loadtest::burst(targets, buyers, &options).await?;
    let (ok, sold_out, unavailable) = (stats.status(200), stats.status(409), stats.status(503));
    Ok(BurstReport {
        buyers,
        ok: ok as usize,
        sold_out: sold_out as usize,
        unavailable: unavailable as usize,
        errors: stats.sent().saturating_sub(ok + sold_out + unavailable) as usize,
        elapsed_ms: stats.elapsed.as_secs_f64() * 1000.0,
        throughput_rps: stats.throughput(),
    })
}
