//! How a release message reaches the buyers of this instance who wait for the lock: the
//! subscriber hears it (`lock_store`), and wakes the one it is for.
//!
//! Each waiting buyer has a signal of its own, and stands in this instance's line for the
//! room's lock, oldest first. A release message wakes the buyer at the front of the line, one
//! per instance, as Redisson wakes one waiter per release so a release does not start a
//! stampede; a buyer woken who loses the race in the store keeps its place at the front, and
//! is woken again by the next release, and a newcomer lets the buyers who wait go first. (A `tokio::sync::Notify` per room, which this replaced,
//! wakes the buyer that has waited longest *since its last try*: one that lost went to the
//! back, behind buyers who came after it, and some buyers lost again and again.) A release
//! that calls the next owner by name (`next:<owner>`, `fair`'s) wakes that buyer alone, on the
//! instance where it waits, and nobody anywhere else: a queue in the lock store has already
//! chosen who comes next.
//!
//! The maps are std `Mutex`es because they are only touched briefly and never across an
//! `.await`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::cohort::Cohorts;
use super::sold_out::SoldOutHints;

/// The release message that calls one waiter by name: `next:<owner>` (`fair`'s release).
pub const CALLS: &str = "next:";

#[derive(Default)]
pub struct ReleaseSignals {
    /// One `Notify` per room, told of every release message that calls nobody by name: what a
    /// cohort's next buyer lets go by before trying (`cohort.rs`).
    rooms: Mutex<HashMap<String, Arc<Notify>>>,
    /// Per room, this instance's buyers waiting for its lock, oldest first.
    lines: Mutex<HashMap<String, Line>>,
    /// The next place's number: places are served in this order.
    tickets: AtomicU64,
    /// The same buyers by owner: how a release that calls one by name reaches it.
    owners: Mutex<HashMap<String, Arc<Waiter>>>,
    /// The in-memory queues of `wait: cohort`: the other half of how this instance's buyers
    /// wait for a room's lock.
    pub cohorts: Cohorts,
    /// Rooms this instance saw sold out: whether to wait for the lock at all.
    pub sold_out: SoldOutHints,
}

/// One room's line on this instance. Ordered maps, not a queue: thousands of buyers of a tier
/// that never waits (`none`) pass through it at once, each joining and leaving in O(log n).
#[derive(Default)]
struct Line {
    /// Every buyer in line by its number, oldest first.
    places: BTreeMap<u64, Arc<Waiter>>,
    /// The numbers of those who found the lock busy and wait for a release.
    waiting: BTreeSet<u64>,
}

impl Line {
    fn front(&self) -> Option<&Arc<Waiter>> {
        self.places.first_key_value().map(|(_, w)| w)
    }
}

/// A waiting buyer's own signal.
#[derive(Default)]
pub struct Waiter {
    pub signal: Notify,
}

impl ReleaseSignals {
    pub fn room(&self, room: &str) -> Arc<Notify> {
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        rooms.entry(room.to_owned()).or_default().clone()
    }

    /// Called by the subscriber for every release message of a room: `next:<owner>` wakes
    /// that owner if it waits here (and nobody else: it waits elsewhere, or gave up and its
    /// place in the store's queue lapses at its deadline); any other message wakes the front
    /// of this instance's line.
    pub fn released(&self, room: &str, message: &str) {
        if let Some(owner) = message.strip_prefix(CALLS) {
            let owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(waiter) = owners.get(owner) {
                waiter.signal.notify_one();
            }
            return;
        }
        self.room(room).notify_one();
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(front) = lines.get(room).and_then(|line| line.front()) {
            // Kept as a permit when the front is trying right now: it tries once more.
            front.signal.notify_one();
        }
    }

    /// Wakes every waiter of every room: release messages may have been lost (the subscriber
    /// reconnected), so each must look at the lock again.
    pub fn wake_all(&self) {
        let rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        for signal in rooms.values() {
            signal.notify_waiters();
        }
        let owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        for waiter in owners.values() {
            waiter.signal.notify_one();
        }
    }

    /// Puts `owner` at the back of this instance's line for `room`'s lock, and lets a release
    /// call it by name, until the returned place is dropped.
    pub fn join(&self, room: &str, owner: &str) -> Place<'_> {
        let waiter = Arc::new(Waiter::default());
        let ticket = self.tickets.fetch_add(1, Relaxed);
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let line = lines.entry(room.to_owned()).or_default();
        line.places.insert(ticket, waiter.clone());
        drop(lines);
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        owners.insert(owner.to_owned(), waiter.clone());
        Place {
            signals: self,
            room: room.to_owned(),
            owner: owner.to_owned(),
            ticket,
            waiter,
            served: false,
        }
    }
}

/// A buyer's place in this instance's line while it waits for a room's lock.
pub struct Place<'a> {
    signals: &'a ReleaseSignals,
    room: String,
    owner: String,
    ticket: u64,
    pub waiter: Arc<Waiter>,
    /// Whether it leaves with the lock (set when it got it): then the next in line waits for
    /// its release.
    pub served: bool,
}

impl Place<'_> {
    /// Whether a buyer of this instance who came earlier waits for a release (it found the
    /// lock busy): a buyer behind it lets it go first. One whose lock was free at once (a
    /// tier with no contention, `none`) holds up nobody.
    pub fn behind_a_waiter(&self) -> bool {
        let lines = self.signals.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines
            .get(&self.room)
            .is_some_and(|line| line.waiting.range(..self.ticket).next().is_some())
    }

    /// It found the lock busy, and waits for a release.
    pub fn waits(&self) {
        let mut lines = self.signals.lines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(line) = lines.get_mut(&self.room) {
            line.waiting.insert(self.ticket);
        }
    }

    /// Whether nobody of this instance has waited longer.
    #[cfg(test)]
    pub fn first(&self) -> bool {
        let lines = self.signals.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines
            .get(&self.room)
            .and_then(|line| line.places.first_key_value())
            .is_some_and(|(ticket, _)| *ticket == self.ticket)
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut lines = self.signals.lines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(line) = lines.get_mut(&self.room) {
            let was_first = line
                .places
                .first_key_value()
                .is_some_and(|(ticket, _)| *ticket == self.ticket);
            line.places.remove(&self.ticket);
            line.waiting.remove(&self.ticket);
            // Leaving without the lock (a deadline, an error): the next in line tries now
            // rather than at its next release, which may never come.
            if was_first && !self.served {
                if let Some(next) = line.front() {
                    next.signal.notify_one();
                }
            }
            if line.places.is_empty() {
                lines.remove(&self.room);
            }
        }
        drop(lines);
        let mut owners = self
            .signals
            .owners
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Only its own entry: a nested wait of the same owner may have taken the name since.
        if owners
            .get(&self.owner)
            .is_some_and(|w| Arc::ptr_eq(w, &self.waiter))
        {
            owners.remove(&self.owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    fn woken(place: &Place<'_>) -> bool {
        place.waiter.signal.notified().now_or_never().is_some()
    }

    #[test]
    fn a_release_wakes_the_front_of_the_line_and_it_keeps_its_place_until_served() {
        let signals = ReleaseSignals::default();
        let (mut a, b) = (signals.join("r", "a"), signals.join("r", "b"));
        assert!(a.first() && !b.first());
        // a has not found the lock busy yet: nobody is held up behind it.
        assert!(!b.behind_a_waiter());
        a.waits();
        assert!(b.behind_a_waiter() && !a.behind_a_waiter());
        signals.released("r", "released");
        assert!(woken(&a) && !woken(&b));
        // a lost the race in the store: still first, woken again by the next release.
        signals.released("r", "released");
        assert!(woken(&a) && !woken(&b));
        a.served = true;
        drop(a);
        assert!(b.first());
        assert!(
            !woken(&b),
            "the holder's release wakes it, not the holder's leaving"
        );
        // A newcomer goes behind b.
        let c = signals.join("r", "c");
        signals.released("r", "released");
        assert!(woken(&b) && !woken(&c));
        // b leaves without the lock (its deadline): c's turn at once.
        drop(b);
        assert!(c.first() && woken(&c));
    }

    #[test]
    fn a_release_that_calls_an_owner_wakes_that_waiter_alone() {
        let signals = ReleaseSignals::default();
        let (front, called) = (signals.join("r", "o1"), signals.join("r", "o7"));
        signals.released("r", "next:o7");
        // A waiter of another instance is called: nobody here wakes.
        signals.released("r", "next:somebody-else");
        assert!(woken(&called) && !woken(&front));
        drop(called);
        assert!(!signals.owners.lock().unwrap().contains_key("o7"));
    }
}
