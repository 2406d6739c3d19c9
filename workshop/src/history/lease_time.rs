//! When a lease held: the deadline its renewals pushed it to, when it ran out or was released,
//! and where it stood at a moment, as the exclusion check reads a lease line.
//!
//! A lease the lock store stamped (`source: store`) carries the deadline the store set, to the
//! millisecond (Redis keeps a key's expiry in whole milliseconds, and expires it lazily: an
//! expiry is known as its deadline, not as a moment). A grant in the deadline's own millisecond
//! may have come just before the key expired or just after: [`STAMP_PRECISION_US`].

use oversell_api::history::{Lease, LeaseSource};

/// How precisely a stamped deadline is known: Redis keeps an expiry in whole milliseconds and
/// counts a key expired only once the clock has passed that millisecond.
pub const STAMP_PRECISION_US: i64 = 1_000;

/// How far past `lease`'s deadline a grant may still have met it valid: a stamped deadline's
/// millisecond; a derived one is the section's own time, taken as exact (as a v1 file's is).
pub fn precision(lease: &Lease) -> i64 {
    match lease.source {
        LeaseSource::Store => STAMP_PRECISION_US,
        LeaseSource::Derived => 0,
    }
}

/// When `lease` ran out by its deadline: renewals made in time extend it; one made after it
/// ran out does not bring it back. `None`: a lock with no lease.
/// A lease the store granted with none yet (`setnx-expire`'s first step) holds until a renewal
/// sets one.
pub fn ran_out(lease: &Lease) -> Option<i64> {
    let mut deadline = lease.deadline_us;
    let mut renewals: Vec<_> = lease.renewals.iter().collect();
    renewals.sort_by_key(|r| r.renew_us);
    for r in renewals {
        if deadline.is_some_and(|d| r.renew_us >= d) {
            break;
        }
        deadline = Some(r.deadline_us);
    }
    deadline
}

/// When `lease` ran out, if it ran out before it was released (MAX: released first, or never
/// ran out).
pub fn lapse(lease: &Lease) -> i64 {
    match (ran_out(lease), lease.released_us) {
        (Some(d), Some(r)) if r <= d => i64::MAX,
        (Some(d), _) => d,
        (None, _) => i64::MAX,
    }
}

/// When the lock of `lease` stopped holding: released, or ran out (MAX: neither).
pub fn lease_end(lease: &Lease) -> i64 {
    let out = ran_out(lease).unwrap_or(i64::MAX);
    lease.released_us.map_or(out, |r| r.min(out))
}

/// Where the first holder's lock stood when the second was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Still valid (to this deadline; `None`: a lock with no lease, never released): the lock
    /// let two holders in.
    LeaseValid(Option<i64>),
    /// Released (deleted) at this time while its holder still worked.
    Released(i64),
    /// Ran out at this deadline while its holder still worked.
    RanOut(i64),
    /// Ran out at this stamped deadline only `by` µs before: within the millisecond the store
    /// keeps it to, so whether it was still valid is not known.
    Unsure { deadline: i64, by: i64 },
    /// No lease line for the first holder.
    NoLease,
}

/// The state of `lease` at `t`, as the sweep reads it: renewals made in time extend the
/// deadline.
pub fn lease_at(lease: Option<&Lease>, t: i64) -> Why {
    let Some(lease) = lease else {
        return Why::NoLease;
    };
    let out = ran_out(lease);
    if let Some(released) = lease
        .released_us
        .filter(|&r| r <= t && out.is_none_or(|d| r <= d))
    {
        return Why::Released(released);
    }
    match out {
        Some(d) if t - d < precision(lease) && d <= t => Why::Unsure {
            deadline: d,
            by: t - d,
        },
        Some(d) if d <= t => Why::RanOut(d),
        None => Why::LeaseValid(None),
        Some(_) => {
            let mut deadline = lease.deadline_us;
            let mut renewals: Vec<_> = lease.renewals.iter().collect();
            renewals.sort_by_key(|r| r.renew_us);
            for r in renewals.into_iter().filter(|r| r.renew_us <= t) {
                if deadline.is_some_and(|d| r.renew_us >= d) {
                    break;
                }
                deadline = Some(r.deadline_us);
            }
            Why::LeaseValid(deadline)
        }
    }
}
