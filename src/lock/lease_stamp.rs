//! Every lease a Redis tier's lock grants, renews and releases, stamped by the lock store itself,
//! on its clock, with the deadline it set: each step's script runs inside a wrapper
//! (`lease_stamp_before.lua`, the step, `lease_stamp.lua`) that reads whose the lock is and the
//! deadline its key carries before and after the step, and puts what changed on the lock
//! timeline as a `lease` entry (`grant`, `renew`, `release`, `refused_release`). The recorder
//! turns those entries into the history's observed `lease` lines, so the checker judges a second
//! grant against the deadline the store really set, not one derived from a section.
//!
//! # Why in the step's own script
//! No extra round trip on the sale's path: the record is one more stream entry written by the
//! script the tier already sends (composed with the sale's read or write when they ride
//! together). It reads the lock, not the step's reply, so a step that answers wrongly (a lab
//! lock that says busy and took the lock anyway) is still recorded as what it did.
//!
//! # Where it stamps, and where not yet
//! Only where the lock store is the resource store (`--lock-store shared`): the timeline lives
//! there, so the stamp and the section it guards are on one clock. The lab's locks, on a lock
//! store of their own, are stamped by their own wrapper (`src/lab/step.lua`, the same stamp) on a
//! stream beside the lock (`GET /leases`). A built-in tier on a lock store of its own (`single`,
//! `sentinel`, Redlock's masters) is not stamped yet: its leases stay derived from the sections,
//! and the history says so on each line (`source`). The cohort's in-memory hand-over passes a held lock
//! without a step, so a lease passed that way is the first holder's as recorded.
//!
//! The ladder's scripts themselves stay as the lab offers them (`static/locks/`): the wrapper is
//! added as they are sent, never written into them.

use super::steps::{On, Request, Step, Technique};
use crate::composed::{self, Call, Lua};

const BEFORE: &str = include_str!("lease_stamp_before.lua");
/// The stamp, then the step's own reply as the whole script's.
const AFTER: &str = concat!(
    include_str!("lease_stamp.lua"),
    "if reply == nil then reply = false end\nreturn reply\n"
);

/// What a step is to the lease, as `lease_stamp.lua` reads it.
#[derive(Clone, Copy)]
enum Kind {
    Acquire,
    Renew,
    Release,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Acquire => "acquire",
            Kind::Renew => "renew",
            Kind::Release => "release",
        }
    }
}

/// A tier's steps, each stamped with its lease when `stamps` (the lock store is the resource
/// store); as they are otherwise.
pub(super) struct Stamped<'a> {
    pub inner: &'a dyn Technique,
    pub stamps: bool,
}

impl Stamped<'_> {
    fn stamp(&self, steps: Vec<Step>, on: &On<'_>, kind: Kind) -> Vec<Step> {
        if !self.stamps {
            return steps;
        }
        steps
            .into_iter()
            .map(|step| stamped(step, on, kind))
            .collect()
    }
}

/// `step` inside the wrapper, with the timeline and its kind and owner added after its own keys
/// and arguments. A lab step is its students' own script, sent by the lab's contract: as it is.
fn stamped(step: Step, on: &On<'_>, kind: Kind) -> Step {
    let Request::Script(call) = &step.request else {
        return step;
    };
    Step {
        request: Request::Script(stamped_call(call, on, kind)),
        reply: step.reply,
    }
}

fn stamped_call(call: &Call, on: &On<'_>, kind: Kind) -> Call {
    let wrapper: &'static Lua = composed::wrapped(BEFORE, call.lua(), AFTER);
    call.inside(wrapper)
        .key(on.keys.timeline())
        .arg(kind.word())
        .arg(on.owner)
}

impl Technique for Stamped<'_> {
    fn acquire(&self, on: &On<'_>) -> Vec<Step> {
        self.stamp(self.inner.acquire(on), on, Kind::Acquire)
    }

    fn release(&self, on: &On<'_>) -> Vec<Step> {
        self.stamp(self.inner.release(on), on, Kind::Release)
    }

    fn renew(&self, on: &On<'_>) -> Option<Step> {
        let step = self.inner.renew(on)?;
        self.stamp(vec![step], on, Kind::Renew).pop()
    }

    fn reentrant(&self) -> bool {
        self.inner.reentrant()
    }

    fn queues(&self) -> bool {
        self.inner.queues()
    }

    fn call_key(&self, on: &On<'_>) -> Option<String> {
        self.inner.call_key(on)
    }
}
