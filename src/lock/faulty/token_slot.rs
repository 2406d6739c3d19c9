//! The slot of the `token-per-instance` fault: one owner token per room for the whole
//! instance, where each acquire of the room's lock on this instance writes its own and each
//! release takes the one it finds (and leaves the slot empty, as the library's release sets
//! its token to `None` before it sends it; a release that finds it empty sends nothing, as the
//! library raises "Cannot release an unlocked lock"). It stands for redis-py's lock object under asyncio: its
//! token lives in a `threading.local()`, and every task of an event loop runs on the loop's
//! one thread, so they all share it (aredis #119; the fix, aredis #120, keeps it in a
//! `contextvars.ContextVar`, one per task, which is what every sale here has without the
//! fault: its own owner, [`LockCx::owner`](crate::lock::LockCx::owner)).

use std::collections::HashMap;
use std::sync::Mutex;

/// The instance's token per room. A std `Mutex`, never held across `.await`: one insert or
/// one read per acquire or release of a room that has the fault armed.
#[derive(Default)]
pub struct TokenSlots(Mutex<HashMap<String, String>>);

impl TokenSlots {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An acquire in `room` took the lock as `owner`: its token is the room's now, for every
    /// sale of this instance.
    pub(super) fn keep(&self, room: &str, owner: &str) {
        self.slots().insert(room.to_owned(), owner.to_owned());
    }

    /// The token a release in `room` finds, taken out of the slot: the latest acquirer's on
    /// this instance, unless a release took it since.
    pub(super) fn take(&self, room: &str) -> Option<String> {
        self.slots().remove(room)
    }
}

#[cfg(test)]
mod tests {
    use super::TokenSlots;

    #[test]
    fn a_release_takes_the_token_of_the_latest_acquire_of_its_room_and_the_next_finds_none() {
        let slots = TokenSlots::default();
        assert_eq!(slots.take("a"), None);
        slots.keep("a", "first");
        slots.keep("b", "elsewhere");
        slots.keep("a", "second");
        assert_eq!(slots.take("a").as_deref(), Some("second"));
        assert_eq!(slots.take("a"), None);
        assert_eq!(slots.take("b").as_deref(), Some("elsewhere"));
    }
}
