//! A lock as the model runs it: its steps (acquire 1–3, release 1–2, renew 0–1), each a Lua
//! script with the keys and arguments it is sent. A built-in rung's steps are the very files of
//! `static/locks/<tier>/` and are sent what its file under `src/lock/tiers/` sends (each tier
//! sends a subset of the lab's contract); a lab lock's steps get the whole contract:
//! `KEYS[1..4]` the lock, the fencing-token counter, the waiters' queue and when each place
//! lapses, `ARGV[1..4]` the holder, the lease in ms, the release channel, how much longer the
//! buyer waits.
//!
//! The model follows the separate steps, never the ride: where the lock shares the stock's
//! Redis the service may send a one-step acquire together with the sale's read as one script
//! (`src/lock/riding.rs`), which only removes a gap in which nothing a lock decides happens
//! (the read is fenced by the token the acquire returned either way).

use oversell_api::tier::Tier;

/// A key a step is sent, by what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Lock,
    FenceCounter,
    Queue,
    Timeouts,
}

impl Key {
    pub fn name(self) -> &'static str {
        match self {
            Key::Lock => "lock",
            Key::FenceCounter => "lock:fence",
            Key::Queue => "lock:queue",
            Key::Timeouts => "lock:timeouts",
        }
    }
}

/// An argument a step is sent, by what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Owner,
    LeaseMs,
    Channel,
    WaitMs,
}

/// The release channel's name in the model.
pub const CHANNEL: &str = "lock:released";

/// One step: its name (`acquire-1`), its Lua, what it is sent.
#[derive(Debug, Clone)]
pub struct StepSource {
    pub name: String,
    pub source: String,
    pub keys: Vec<Key>,
    pub args: Vec<Arg>,
}

/// A lock's steps.
#[derive(Debug, Clone)]
pub struct LockSource {
    /// What the answer calls it: a tier's id, or `lab`.
    pub name: String,
    pub acquire: Vec<StepSource>,
    pub release: Vec<StepSource>,
    pub renew: Option<StepSource>,
}

/// The lab's contract: every key and every argument.
const ALL_KEYS: [Key; 4] = [Key::Lock, Key::FenceCounter, Key::Queue, Key::Timeouts];
const ALL_ARGS: [Arg; 4] = [Arg::Owner, Arg::LeaseMs, Arg::Channel, Arg::WaitMs];

fn step(name: &str, source: &str, keys: &[Key], args: &[Arg]) -> StepSource {
    StepSource {
        name: name.to_owned(),
        source: source.to_owned(),
        keys: keys.to_vec(),
        args: args.to_vec(),
    }
}

use Arg::{Channel, LeaseMs, Owner};
use Key::{FenceCounter, Lock};

/// What a string lock's release is sent (`setnx`'s … `lua-release`'s).
const RELEASE_ARGS: [Arg; 3] = [Owner, LeaseMs, Channel];

/// The Redis rungs the model runs, in the ladder's order.
pub const RUNGS: [Tier; 7] = [
    Tier::Setnx,
    Tier::SetnxExpire,
    Tier::AtomicExpiry,
    Tier::UuidOwner,
    Tier::LuaRelease,
    Tier::ReentrantWatchdog,
    Tier::Fenced,
];

/// Every tier the search runs: the ladder's rungs, and `fair` (reentrant-watchdog served in
/// the order of a queue in the store; its parked pops are not modelled, its waiters retry).
pub const SEARCHABLE: [Tier; 8] = [
    Tier::Setnx,
    Tier::SetnxExpire,
    Tier::AtomicExpiry,
    Tier::UuidOwner,
    Tier::LuaRelease,
    Tier::ReentrantWatchdog,
    Tier::Fair,
    Tier::Fenced,
];

macro_rules! rung_file {
    ($rung:literal, $file:literal) => {
        include_str!(concat!("../../static/locks/", $rung, "/", $file))
    };
}

/// A built-in rung's steps, sent as its tier file sends them; `None` for a tier that is not a
/// Redis rung of Lua steps.
pub fn rung(tier: Tier) -> Option<LockSource> {
    let id = tier.id().to_owned();
    let string_lock = |acquire: Vec<StepSource>, release: Vec<StepSource>| LockSource {
        name: id.clone(),
        acquire,
        release,
        renew: None,
    };
    Some(match tier {
        Tier::Setnx => string_lock(
            vec![step(
                "acquire-1",
                rung_file!("setnx", "acquire-1.lua"),
                &[Lock],
                &[Owner],
            )],
            vec![step(
                "release-1",
                rung_file!("setnx", "release-1.lua"),
                &[Lock],
                &RELEASE_ARGS,
            )],
        ),
        Tier::SetnxExpire => string_lock(
            vec![
                step(
                    "acquire-1",
                    rung_file!("setnx-expire", "acquire-1.lua"),
                    &[Lock],
                    &[Owner],
                ),
                step(
                    "acquire-2",
                    rung_file!("setnx-expire", "acquire-2.lua"),
                    &[Lock],
                    &[Owner, LeaseMs],
                ),
            ],
            vec![step(
                "release-1",
                rung_file!("setnx-expire", "release-1.lua"),
                &[Lock],
                &RELEASE_ARGS,
            )],
        ),
        Tier::AtomicExpiry => string_lock(
            vec![step(
                "acquire-1",
                rung_file!("atomic-expiry", "acquire-1.lua"),
                &[Lock],
                &[Owner, LeaseMs],
            )],
            vec![step(
                "release-1",
                rung_file!("atomic-expiry", "release-1.lua"),
                &[Lock],
                &RELEASE_ARGS,
            )],
        ),
        Tier::UuidOwner => string_lock(
            vec![step(
                "acquire-1",
                rung_file!("uuid-owner", "acquire-1.lua"),
                &[Lock],
                &[Owner, LeaseMs],
            )],
            vec![
                step(
                    "release-1",
                    rung_file!("uuid-owner", "release-1.lua"),
                    &[Lock],
                    &[Owner],
                ),
                step(
                    "release-2",
                    rung_file!("uuid-owner", "release-2.lua"),
                    &[Lock],
                    &RELEASE_ARGS,
                ),
            ],
        ),
        Tier::LuaRelease => string_lock(
            vec![step(
                "acquire-1",
                rung_file!("lua-release", "acquire-1.lua"),
                &[Lock],
                &[Owner, LeaseMs],
            )],
            vec![step(
                "release-1",
                rung_file!("lua-release", "release-1.lua"),
                &[Lock],
                &RELEASE_ARGS,
            )],
        ),
        Tier::ReentrantWatchdog => LockSource {
            name: id,
            acquire: vec![step(
                "acquire-1",
                rung_file!("reentrant-watchdog", "acquire-1.lua"),
                &[Lock],
                &[Owner, LeaseMs],
            )],
            release: vec![step(
                "release-1",
                rung_file!("reentrant-watchdog", "release-1.lua"),
                &[Lock],
                &RELEASE_ARGS,
            )],
            renew: Some(step(
                "renew",
                rung_file!("reentrant-watchdog", "renew.lua"),
                &[Lock],
                &[Owner, LeaseMs],
            )),
        },
        Tier::Fair => LockSource {
            name: id,
            acquire: vec![step(
                "acquire-1",
                rung_file!("fair", "acquire-1.lua"),
                &ALL_KEYS,
                &ALL_ARGS,
            )],
            release: vec![step(
                "release-1",
                rung_file!("fair", "release-1.lua"),
                &ALL_KEYS,
                &RELEASE_ARGS,
            )],
            renew: Some(step(
                "renew",
                rung_file!("fair", "renew.lua"),
                &ALL_KEYS,
                &[Owner, LeaseMs],
            )),
        },
        Tier::Fenced => LockSource {
            name: id,
            acquire: vec![step(
                "acquire-1",
                rung_file!("fenced", "acquire-1.lua"),
                &[Lock, FenceCounter],
                &[Owner, LeaseMs],
            )],
            release: vec![step(
                "release-1",
                rung_file!("fenced", "release-1.lua"),
                &[Lock],
                &RELEASE_ARGS,
            )],
            renew: Some(step(
                "renew",
                rung_file!("fenced", "renew.lua"),
                &[Lock],
                &[Owner, LeaseMs],
            )),
        },
        _ => return None,
    })
}

/// A lock by the lab's contract, from its steps' sources: 1–3 acquire, 1–2 release, 0–1 renew.
pub fn lab(
    acquire: &[String],
    release: &[String],
    renew: Option<&str>,
) -> Result<LockSource, String> {
    if !(1..=3).contains(&acquire.len()) {
        return Err(format!(
            "a lock has 1 to 3 acquire steps, not {}",
            acquire.len()
        ));
    }
    if !(1..=2).contains(&release.len()) {
        return Err(format!(
            "a lock has 1 or 2 release steps, not {}",
            release.len()
        ));
    }
    let steps = |kind: &str, sources: &[String]| -> Vec<StepSource> {
        sources
            .iter()
            .enumerate()
            .map(|(i, s)| step(&format!("{kind}-{}", i + 1), s, &ALL_KEYS, &ALL_ARGS))
            .collect()
    };
    Ok(LockSource {
        name: "lab".into(),
        acquire: steps("acquire", acquire),
        release: steps("release", release),
        renew: renew.map(|s| step("renew", s, &ALL_KEYS, &ALL_ARGS)),
    })
}

impl LockSource {
    /// Every step, in the order a sale meets them.
    pub fn steps(&self) -> impl Iterator<Item = &StepSource> {
        self.acquire.iter().chain(&self.release).chain(&self.renew)
    }

    /// Whether a step reads the store's clock: then states at two instants are never the same
    /// state (a queue's lapse times are absolute), and the search hashes the clock too.
    pub fn reads_the_clock(&self) -> bool {
        self.steps().any(|s| s.source.contains("TIME"))
    }
}
