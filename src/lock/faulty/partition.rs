//! The `partition` fault as the holder meets it: after its read, as it starts its work, the
//! members the fault names are cut off from the rest of the fleet's network. The holder is
//! not paused: it works on and writes, cut off or not, as a process on the far side of a real
//! partition does.

use oversell_api::fault::LOCK_PRIMARY;
use oversell_api::PartitionRequest;

use super::super::LockCx;
use crate::faults::Fault;
use crate::ground_truth::record;
use crate::lock_store::node_faults::primary_ip;
use crate::member::cut::{self, CutError};

/// Cuts the network as the fault says (`holder`: this instance; `lock-primary`: the lock
/// store's primary as it is now) and marks it on the timeline.
pub(super) async fn strike(lcx: &LockCx<'_>, fault: &Fault) {
    match cut_off(lcx, fault).await {
        Ok(what) => {
            tracing::warn!(%what, "fault: partition");
            let recorded = record::store_fault(
                lcx.resource,
                lcx.keys,
                lcx.instance,
                lcx.owner,
                fault.kind.id(),
                &what,
            );
            if let Err(err) = recorded.await {
                tracing::warn!(%err, "partition not recorded");
            }
        }
        Err(err) => tracing::error!(%err, "fault: partition could not strike"),
    }
}

async fn cut_off(lcx: &LockCx<'_>, fault: &Fault) -> Result<String, CutError> {
    let (network, links) = crate::member::fleet_network().ok_or(CutError::NoNetwork)?;
    let primary = match fault.isolate.iter().any(|id| id == LOCK_PRIMARY) {
        true => primary_ip(lcx.store.pool()).await,
        false => None,
    };
    let isolate = cut::resolve(&network, &fault.isolate, lcx.instance, primary)?;
    let request = PartitionRequest {
        isolate,
        ms: fault.ms,
    };
    let done = cut::partition(&network, links.as_ref(), lcx.resource, &request).await?;
    Ok(format!(
        "{} cut off from {} for {} ms",
        done.isolate.join(", "),
        done.rest.join(", "),
        done.ms
    ))
}
