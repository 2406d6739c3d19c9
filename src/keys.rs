//! Every Redis key and channel the service uses, built in one place from a room name.
//!
//! A room is one independent experiment: its own stock, tier, ledger and counters. Keys carry
//! the room in a `{hash tag}` so one room's keys share a slot on a Redis Cluster, which the
//! multi-key scripts need. The fleet's own keys (rooms, instances, tokens, the class, the store
//! epoch) share one fixed tag, [`FLEET_TAG`], so a script or pipeline over several of them stays
//! in one slot too; no script mixes the two (a cluster would refuse it with `CROSSSLOT`).

/// The room used when a request names none.
pub const DEFAULT_ROOM: &str = "default";

/// The hash tag of every fleet-wide key. A room name is letters, digits, `-` and `_` only,
/// so no room's tag can be this one.
const FLEET_TAG: &str = "{.fleet}";

macro_rules! fleet_key {
    ($name:literal) => {
        concat!("oversell:{.fleet}:", $name)
    };
}

/// Fleet-wide control messages (JSON, see `control::Control`): reload a room's settings and
/// faults, crash or freeze one instance.
/// A channel, not a key: on a Redis Cluster a plain `PUBLISH` reaches the subscribers of
/// every node whatever the channel's slot, so it needs no tag.
pub const CONTROL_CHANNEL: &str = "oversell:control";

/// Instances seen recently: a sorted set of instance id by last heartbeat (ms).
pub const INSTANCES: &str = fleet_key!("instances");

/// Rooms in use: a sorted set of room name by the time (ms) it expires unless used again. It
/// bounds how many rooms the fleet holds (`--max-rooms`).
pub const ROOMS: &str = fleet_key!("rooms");

/// The identity of the resource store's current contents: a random id written once. When
/// Redis restarts empty it is gone (and a new one is written), which is how an instance tells a
/// room that lost its state from one that expired or never existed (see `rooms`). On a Redis
/// Cluster it lives on the master owning the fleet's slot only: it tells that the *fleet's*
/// master came back empty, not another one (see `rooms` for what that means).
pub const STORE_EPOCH: &str = fleet_key!("epoch");

/// Room tokens: a hash of token digest (SHA-256, hex) -> the room it opens. Only digests are
/// stored, so a copy of the store hands out no token.
pub const ROOM_TOKENS: &str = fleet_key!("room-tokens");

/// The other way round: room -> its token's digest, so a new token replaces the old one.
pub const ROOM_TOKEN_OF: &str = fleet_key!("room-token-of");

/// Join codes (the short code on a room's slip): a hash of code digest -> the room it opens.
pub const ROOM_CODES: &str = fleet_key!("room-codes");

/// The other way round: room -> its code's digest, so a new code replaces the old one.
pub const ROOM_CODE_OF: &str = fleet_key!("room-code-of");

/// The sessions a room's code was exchanged for: room -> their digests, space-separated (each
/// is in [`ROOM_TOKENS`] too), so a new token or a revocation ends them with the token.
pub const ROOM_SESSIONS_OF: &str = fleet_key!("room-sessions-of");

/// Join-code attempts of the whole fleet in the current window (see `room_tokens::join`).
pub const JOIN_TRIES: &str = fleet_key!("join-tries");

/// Join-code attempts of one client address in the current window.
pub fn join_tries_of(address: &str) -> String {
    format!("{JOIN_TRIES}:{address}")
}

/// The class: its room-name prefix and its rooms (see `routes::class`).
pub const CLASS: &str = fleet_key!("class");

/// The lab's gradings, one line for the fleet (see `grading_queue`): the rooms waiting, a
/// sorted set of room by job number (the order they pressed in) …
pub const GRADING_LINE: &str = fleet_key!("grading:line");
/// … each waiting room's place, by the time (ms) it lapses unless its instance asks again …
pub const GRADING_PLACES: &str = fleet_key!("grading:places");
/// … the rooms being graded (the slots taken), by the time (ms) each slot lapses …
pub const GRADING_RUNNING: &str = fleet_key!("grading:running");
/// … their jobs, room -> `<job>:<started ms>` …
pub const GRADING_JOB: &str = fleet_key!("grading:job");
/// … the job counter …
pub const GRADING_SEQ: &str = fleet_key!("grading:seq");
/// … and the last gradings' durations (ms), newest first, for the estimates.
pub const GRADING_TIMES: &str = fleet_key!("grading:times");

/// The class's vote (see `poll`): the poll in progress, a hash (chapter, round, whether the
/// round is open, whether it was revealed, how many options). Gone with the class.
pub const POLL: &str = fleet_key!("class:poll");

/// Every chapter this class was polled on: a sorted set of chapter id by when it was first
/// polled (ms), the order of the results.
pub const POLL_CHAPTERS: &str = fleet_key!("class:poll:chapters");

/// How many rounds each chapter polled has had: a hash chapter -> 1 or 2.
pub const POLL_ROUNDS: &str = fleet_key!("class:poll:rounds");

/// The run each revealed chapter was revealed with: a hash chapter -> JSON (the room it ran
/// in, its figures, the option it landed in, whether it passed).
pub const POLL_RUNS: &str = fleet_key!("class:poll:runs");

/// The lease of the instance running the class's rooms after a reveal in every room (see
/// `poll::room_run_lease`): the reveal's run id and the holder, a line each, with a TTL its
/// holder renews. Lapsed, another instance takes the rooms left.
pub const POLL_ROOMS_LEASE: &str = fleet_key!("class:poll:rooms-lease");

/// The class vote's version: one more with every change of the poll (opened, a vote counted,
/// closed, a round, revealed, a room's run, deleted), in the script that makes the change, so
/// every view carries the version it was read at and a page drops one older than what it drew.
/// Not under `class:poll`: it outlives a class (a new class goes on from it). A store that
/// restarted empty starts it from its clock, in microseconds (see `poll/version.lua`).
pub const POLL_VERSION: &str = fleet_key!("poll-version");

/// The votes of one round of one chapter: a hash room -> option (from 0), one vote per room.
pub fn poll_votes(chapter: &str, round: u8) -> String {
    format!("oversell:{FLEET_TAG}:class:poll:votes:{chapter}:{round}")
}

/// How sure each room was of its vote in one round of one chapter, and why: a hash room ->
/// JSON `{"sure"?, "why"?}`, one per room (a room's new vote replaces it), so at most a
/// class's rooms × 140 characters per round.
pub fn poll_notes(chapter: &str, round: u8) -> String {
    format!("oversell:{FLEET_TAG}:class:poll:notes:{chapter}:{round}")
}

/// A chapter's runs in every room of the class after its reveal: a hash room -> JSON (the
/// option the room's run landed in and whether it passed, or why it failed).
pub fn poll_room_runs(chapter: &str) -> String {
    format!("oversell:{FLEET_TAG}:class:poll:rooms:{chapter}")
}

/// Told of every change of the poll (opened, a vote, closed, a round, revealed, deleted), so
/// each instance re-reads it once for all its `/poll/events` streams. Like
/// [`CONTROL_CHANNEL`], a channel needs no tag.
pub const POLL_CHANNEL: &str = "oversell:poll";

/// Each instance's open `/events` streams per room: a hash per instance (room -> count),
/// rewritten with every heartbeat and expiring soon after an instance stops.
pub fn viewers(instance: &str) -> String {
    format!("oversell:{FLEET_TAG}:viewers:{instance}")
}

/// The instances that have read a room again after one change (`control::Control::Reload`'s
/// `ack`): a list of instance ids, expiring soon after the change is answered.
pub fn reload_acks(ack: &str) -> String {
    format!("oversell:{FLEET_TAG}:reloaded:{ack}")
}

/// Pattern matching every room's lock-release channel.
pub const RELEASED_PATTERN: &str = "oversell:{*}:released";

/// The keys of one room.
#[derive(Debug, Clone)]
pub struct Keys {
    room: String,
    prefix: String,
}

impl Keys {
    pub fn for_room(room: &str) -> Self {
        Self {
            room: room.to_owned(),
            prefix: format!("oversell:{{{room}}}:"),
        }
    }

    pub fn room(&self) -> &str {
        &self.room
    }

    /// Extracts the room from a key or channel name built here.
    pub fn room_of(name: &str) -> Option<&str> {
        let rest = name.strip_prefix("oversell:{")?;
        rest.split_once('}').map(|(room, _)| room)
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The stock counter (002's `inventory001`).
    pub fn stock(&self) -> String {
        self.key("stock")
    }
    /// The stock the last reset started from.
    pub fn initial_stock(&self) -> String {
        self.key("initial")
    }
    /// The distributed lock guarding the deduct step (string or hash, by tier).
    pub fn lock(&self) -> String {
        self.key("lock")
    }
    /// The leases a lab lock's steps stamp (grant, renew, release, refused release), a stream
    /// beside the lock in the lock store (`src/lab/step.lua`), read by `GET /leases`; under
    /// the lock's name, so the room's lock-store user may write it.
    pub fn lock_leases(&self) -> String {
        format!("{}:leases", self.lock())
    }
    /// The hash lock of the reentrant tiers (owner -> hold count); a key of its own so a
    /// string lock left by another tier cannot give it the wrong type.
    pub fn reentrant_lock(&self) -> String {
        self.key("rlock")
    }
    /// The waiters' queue of a lock kept in `lock` (a list of owners, first come first
    /// served): `fair`'s, and a lab lock's that queues. Named after its lock, so a lab user
    /// allowed the room's lock keys (`acl.rs`) is allowed it.
    pub fn queue_of(lock: &str) -> String {
        format!("{lock}:queue")
    }
    /// How long each waiter in [`Keys::queue_of`] keeps its place: a sorted set of owner by
    /// the lock store's time (ms) at which the place lapses unless its owner looks again.
    pub fn timeouts_of(lock: &str) -> String {
        format!("{lock}:timeouts")
    }
    /// Where the release of a queueing lock (`fair`) calls `owner`, queued in
    /// [`Keys::queue_of`], when its turn comes: a list the release pushes to and the owner's
    /// parked attempt pops (`lock/parked.rs`).
    pub fn call_of(lock: &str, owner: &str) -> String {
        format!("{lock}:call:{owner}")
    }
    /// Set while an owner's next attempt waits in the store behind a pop of its `call` list
    /// ([`Keys::call_of`]), for as long as the pop may wait: the release that calls it then
    /// publishes no message, since the store itself runs the attempt.
    pub fn parked_mark_of(call: &str) -> String {
        format!("{call}:parked")
    }
    /// Published to when a lock is released, to wake waiters.
    pub fn released_channel(&self) -> String {
        self.key("released")
    }
    /// The room's own lock for the `custom` tier (the lab): its steps' sources and the
    /// password of the room's lock-store user. In the resource store, out of the scripts' reach.
    pub fn lab(&self) -> String {
        self.key("lab")
    }
    /// The room's last runs' histories (JSON Lines), by run id, and their ids newest first:
    /// kept across resets, gone with the room.
    pub fn histories(&self) -> String {
        self.key("histories")
    }
    pub fn history_ids(&self) -> String {
        self.key("history_ids")
    }
    /// The room's last grading's answer: its job number, HTTP status and body (the card, or
    /// the error), for a student who comes back for it.
    pub fn lab_grading(&self) -> String {
        self.key("lab:grading")
    }
    /// Run-time settings of the room (tier, TTL, business time, wait), as JSON.
    pub fn settings(&self) -> String {
        self.key("settings")
    }
    /// One JSON entry per acknowledged sale, appended atomically with the stock write.
    pub fn ledger(&self) -> String {
        self.key("ledger")
    }
    /// Items in the ledger (orders may carry qty > 1).
    pub fn items_sold(&self) -> String {
        self.key("items_sold")
    }
    /// Critical sections that have exited (the overlap clock, see `sale/commit.lua`).
    pub fn exits(&self) -> String {
        self.key("exits")
    }
    /// Pairs of critical sections that ran at the same time.
    pub fn overlaps(&self) -> String {
        self.key("overlaps")
    }
    /// Releases that deleted a lock some other holder had taken.
    pub fn foreign_releases(&self) -> String {
        self.key("foreign_releases")
    }
    /// Releases that found the lock gone or someone else's (the holder had lost it).
    pub fn lost_releases(&self) -> String {
        self.key("lost_releases")
    }
    /// Lock-store faults that struck (a primary killed for `failover`/`lock-store-restart`).
    pub fn store_faults(&self) -> String {
        self.key("store_faults")
    }
    /// Redlock acquires whose majority came in after the lease's validity was spent.
    pub fn validity_lapsed(&self) -> String {
        self.key("validity_lapsed")
    }
    /// Set (with a short expiry) while a claimed lock-store fault has not struck yet: the
    /// other buyers wait for it, so the fault strikes the next holder (see `sale`).
    pub fn store_fault_pending(&self) -> String {
        self.key("store_fault_pending")
    }
    /// Writes refused by the fencing check.
    pub fn stale_writes_rejected(&self) -> String {
        self.key("stale_writes_rejected")
    }
    /// The lock timeline: a bounded stream of enter / exit / renew / foreign-release events,
    /// for the dashboard. Written by the same scripts as the ground truth.
    pub fn timeline(&self) -> String {
        self.key("timeline")
    }
    /// Armed one-shot faults: field = kind, value = `<instance or *>|<ms>|<nodes>`.
    pub fn faults(&self) -> String {
        self.key("faults")
    }
    /// One scenario at a time per room (see `scenario_guard`). Not reset by a reset: the
    /// scenario holding it resets the room itself.
    pub fn scenario_guard(&self) -> String {
        self.key("scenario")
    }

    /// Buyers who gave up waiting for the lock.
    pub fn lock_timeouts(&self) -> String {
        self.key("lock_timeouts")
    }
    /// Source of fencing tokens (monotonic).
    pub fn fence_counter(&self) -> String {
        self.key("fence")
    }
    /// Highest fencing token the stock has seen.
    pub fn fence_seen(&self) -> String {
        self.key("fence_seen")
    }

    /// Set when a room is found to have lost its state (the store restarted empty), so every
    /// instance answers `state_lost` until a reset; cleared by the reset.
    pub fn lost(&self) -> String {
        self.key("lost")
    }
    /// A new random id at every reset, so a reader can tell a reset from a ledger that grew.
    pub fn generation(&self) -> String {
        self.key("generation")
    }

    /// Every key of a room that takes the room's time to live, the stock first. Not the lock
    /// keys: their lease (or its absence, the `setnx` deadlock) is the lesson, and a held lock
    /// is released or expires long before an idle room does.
    pub fn all(&self) -> Vec<String> {
        // The pending mark keeps its own short expiry.
        let locks = [
            self.lock(),
            self.reentrant_lock(),
            self.store_fault_pending(),
        ];
        let mut all = self.resettable();
        all.retain(|key| !locks.contains(key));
        all.extend([
            self.settings(),
            self.generation(),
            self.lab(),
            self.histories(),
            self.history_ids(),
        ]);
        all
    }

    /// What a reset clears in the resource store (settings survive a reset).
    pub fn resettable(&self) -> Vec<String> {
        vec![
            self.stock(),
            self.initial_stock(),
            self.ledger(),
            self.items_sold(),
            self.exits(),
            self.overlaps(),
            self.foreign_releases(),
            self.lost_releases(),
            self.store_faults(),
            self.validity_lapsed(),
            self.store_fault_pending(),
            self.stale_writes_rejected(),
            self.lock_timeouts(),
            self.fence_seen(),
            self.timeline(),
            self.faults(),
            self.lost(),
        ]
    }

    /// What a reset clears in the lock store: the locks and the fencing-token source.
    pub fn lock_store_keys(&self) -> Vec<String> {
        let mut keys = vec![
            self.lock(),
            self.reentrant_lock(),
            self.fence_counter(),
            self.lock_leases(),
        ];
        for lock in [self.lock(), self.reentrant_lock()] {
            keys.extend([Keys::queue_of(&lock), Keys::timeouts_of(&lock)]);
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_room_in_a_hash_tag() {
        let keys = Keys::for_room("alice");
        assert_eq!(keys.stock(), "oversell:{alice}:stock");
        assert_eq!(Keys::room_of(&keys.released_channel()), Some("alice"));
        assert_eq!(Keys::room_of("other"), None);
    }

    #[test]
    fn fleet_keys_share_one_tag_no_room_can_have() {
        for key in [
            INSTANCES,
            ROOMS,
            STORE_EPOCH,
            ROOM_TOKENS,
            ROOM_TOKEN_OF,
            ROOM_CODES,
            ROOM_CODE_OF,
            ROOM_SESSIONS_OF,
            JOIN_TRIES,
            CLASS,
            POLL,
            POLL_CHAPTERS,
            POLL_ROUNDS,
            POLL_RUNS,
            POLL_VERSION,
        ] {
            assert!(key.starts_with("oversell:{.fleet}:"), "{key}");
        }
        assert!(viewers("app1").starts_with("oversell:{.fleet}:"));
        assert!(join_tries_of("192.0.2.7").starts_with("oversell:{.fleet}:"));
        assert!(poll_votes("none-race", 1).starts_with("oversell:{.fleet}:class:poll"));
        assert!(poll_room_runs("none-race").starts_with("oversell:{.fleet}:class:poll"));
        assert!(FLEET_TAG.contains('.'), "room names have no dot");
    }

    #[test]
    fn the_room_ttl_never_touches_a_lock() {
        let keys = Keys::for_room("r");
        let all = keys.all();
        assert_eq!(all[0], keys.stock());
        assert!(!all.contains(&keys.lock()) && !all.contains(&keys.reentrant_lock()));
        assert!(all.contains(&keys.settings()) && all.contains(&keys.ledger()));
    }
}
