//! The faults a holder meets in its critical section, each where the articles place it: at the
//! read, as the work starts, and between the work and the write (the section's moments,
//! `hook.rs`).

use std::time::Duration;

use super::super::hook::Interrupted;
use super::super::{LockError, Section};
use super::extend::{extend, extend_by, Extend};
use super::partition;
use crate::faults::{self, FaultKind, FaultPoints};

/// With the read done: the process dies holding the lock (`crash-holding`), or the holder
/// alone (`holder-dies`: nothing more is sent), or the holder's task alone while the
/// process, its watchdog included, lives on (`worker-dies`: the renewals go on for nobody).
pub(super) async fn at_the_read(
    faults: &FaultPoints<'_>,
    section: &mut Section<'_>,
) -> Result<(), Interrupted> {
    if faults.claim(FaultKind::CrashHolding).await.is_some() {
        faults::crash("holding the lock");
    }
    if faults.claim(FaultKind::HolderDies).await.is_some() {
        return Err(Interrupted::Died);
    }
    if faults.claim(FaultKind::WorkerDies).await.is_some() {
        section.orphan_renewals();
        return Err(Interrupted::Died);
    }
    Ok(())
}

/// As the work starts: a helper that locks too (`nested-lock`, the step `reentrant-nested`
/// makes on every sale, here for any tier: a lock that does not know its owner waits for
/// itself), a partition (the holder works on, cut off or not), and a renewal of the lock to
/// the room's lease with the lease in seconds or in milliseconds (`renew-in-seconds`,
/// `renew-in-milliseconds`). `Err`: the nested acquire or the renewal failed and the sale
/// gives up, leaving without its write.
pub(super) async fn as_the_work_starts(
    faults: &FaultPoints<'_>,
    section: &Section<'_>,
) -> Result<(), LockError> {
    if faults.claim(FaultKind::NestedLock).await.is_some() {
        let (lock, lcx) = (section.lock(), section.cx());
        let again = lock.acquire_again(&lcx).await?;
        lock.release(&lcx, again).await?;
    }
    if let Some(fault) = faults.claim(FaultKind::Partition).await {
        partition::strike(&section.cx(), &fault).await;
    }
    for (kind, per_ms) in [
        (FaultKind::RenewInSeconds, 1_000),
        (FaultKind::RenewInMilliseconds, 1),
    ] {
        if faults.claim(kind).await.is_some() {
            let cx = section.cx();
            // The lease as the client computed it: in seconds, it is a thousand times too
            // short for a script that reads milliseconds (and 0 below a second, which Redis
            // refuses).
            let lease = cx.settings.ttl_ms / per_ms;
            if !extend_by(&cx, Extend::Checked, lease).await? {
                return Err(LockError::Lost);
            }
        }
    }
    Ok(())
}

/// Read done, write not yet: the articles' GC pause (`freeze`, the whole process), the
/// instance's CPU running out (`cpu-starve`: its renewals wait for a worker), or the holder
/// alone paused (`holder-pause`: its renewals stop with it; `unchecked-write`: the same, and
/// the write then goes without its fencing token, to a resource that could not check it;
/// `extend-retakes`, `extend-checked`: the same, and the holder then extends its lease before
/// it writes). `Err`: the extend said the lock is no longer the holder's, and the sale gives
/// up, leaving without its write.
pub(super) async fn before_the_write(
    faults: &FaultPoints<'_>,
    section: &mut Section<'_>,
) -> Result<(), Interrupted> {
    if let Some(fault) = faults.claim(FaultKind::Freeze).await {
        faults::freeze(Duration::from_millis(fault.ms));
    }
    if let Some(fault) = faults.claim(FaultKind::CpuStarve).await {
        faults::starve_runtime(Duration::from_millis(fault.ms)).await;
    }
    if let Some(fault) = faults.claim(FaultKind::HolderPause).await {
        section.stop_renewing();
        tokio::time::sleep(Duration::from_millis(fault.ms)).await;
    }
    if let Some(fault) = faults.claim(FaultKind::UncheckedWrite).await {
        section.stop_renewing();
        tokio::time::sleep(Duration::from_millis(fault.ms)).await;
        section.fence = None;
    }
    for (kind, how) in [
        (FaultKind::ExtendRetakes, Extend::Retakes),
        (FaultKind::ExtendChecked, Extend::Checked),
    ] {
        if let Some(fault) = faults.claim(kind).await {
            section.stop_renewing();
            tokio::time::sleep(Duration::from_millis(fault.ms)).await;
            // The client's own question before it goes on: is the lock still mine? Only the
            // extend's answer tells it; it does not look at the clock.
            match extend(&section.cx(), how).await {
                Ok(true) => {}
                Ok(false) => return Err(Interrupted::GaveUp(LockError::Lost)),
                Err(err) => return Err(Interrupted::GaveUp(err.into())),
            }
        }
    }
    Ok(())
}
