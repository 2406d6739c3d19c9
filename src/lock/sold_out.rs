//! Which rooms this instance has seen sold out: a hint that lets a buyer look at the stock
//! before queueing for the lock (`sale::sell`), so that once nothing is left, buyers are told
//! so at the door instead of each waiting for the lock to learn it.
//!
//! # What it guarantees
//! Nothing is ever sold on the hint. It only makes a buyer read the stock without the lock
//! first; a read that finds too little is a real read of the stock at that moment, so the 409
//! it gives is as true as the locked read's would have been a moment later. A read that finds
//! enough forgets the hint, and the sale goes the usual way: lock, locked read, write.
//!
//! # What breaks it
//! Nothing the ground truth can see: a restock (reset) is found by the next buyer's read. The
//! price is one unlocked read per buyer while the hint stands, and no timeline section for a
//! buyer turned away at the door. Sales with faults armed skip the door, so a fault always
//! meets a buyer that took the lock.
//!
//! # Why it exists
//! Without it, after the stock ran out every buyer still queued for the lock to learn that, at
//! the locked tiers' rate. A shop puts a "sold out" sign on the door.

use std::collections::HashSet;
use std::sync::Mutex;

/// A std `Mutex`: touched for an instant per sale, never across an `.await`.
#[derive(Default)]
pub struct SoldOutHints {
    rooms: Mutex<HashSet<String>>,
}

impl SoldOutHints {
    /// Whether a locked read in this room last found nothing left.
    pub fn seen(&self, room: &str) -> bool {
        self.lock().contains(room)
    }

    /// A locked read found nothing left.
    pub fn saw(&self, room: &str) {
        if !self.seen(room) {
            self.lock().insert(room.to_owned());
        }
    }

    /// A read found stock again (a restock).
    pub fn forget(&self, room: &str) {
        self.lock().remove(room);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.rooms.lock().unwrap_or_else(|p| p.into_inner())
    }
}
