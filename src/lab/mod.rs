//! The lab: a room's own lock, written by its students as Lua steps and run by the `custom`
//! tier with the same wait loop, fault points and ground truth as every built-in tier.
//!
//! # The contract
//! Each step is one Lua script, sent as a round trip of its own (`EVALSHA`), so the classic
//! mistakes can be written: `SETNX` then `EXPIRE` as two steps, `GET` then `DEL` as two.
//! Every step gets `KEYS[1]` the room's lock key, `KEYS[2]` the room's fencing-token counter
//! (a key that only a lock's `INCR` moves), `KEYS[3]` and `KEYS[4]` a waiters' queue and when
//! each place lapses (`<lock>:queue`, `<lock>:timeouts`, for a lock that serves its waiters
//! in order, as `fair`'s does), `ARGV[1]` the holder's unique value, `ARGV[2]` the lease in ms,
//! `ARGV[3]` the room's release channel (publish to it to wake waiters at once: any message
//! wakes one waiter per instance, `next:<owner>` that owner alone; without one they look again
//! within the lease, or every 200 ms) and `ARGV[4]` how much longer the buyer will wait, in
//! ms. The built-in Redis tiers send the ladder's own steps (`static/locks/`) by the same
//! contract, with their own keys.
//!
//! - **acquire** (1–3 steps): a step that answers 1 (any number above 0, `OK`, or a table
//!   whose first element is one of those) goes on, and after the last step the lock is held;
//!   0, nil, or `{0, ms}` (ms: the lease left, which bounds a waiter's sleep) means busy: the
//!   attempt stops there and the wait loop tries again. A step that answers `{depth, token}`
//!   says how many times the holder now holds the lock (1 fresh, 2 or more re-entered) and,
//!   when `token` is above 0, the hold's fencing token ([`hold`]): the sale's read and write
//!   then carry it, and the stock refuses a token below one it has seen.
//! - **release** (1–2 steps): a step that answers "go on" lets the next one run; 0 or nil
//!   stops the release (not our lock, nothing to do).
//! - **renew** (optional): run every lease/3 while the lock is held (the watchdog's schedule);
//!   0 or nil means the lock is no longer ours and renewing stops.
//!
//! # Safety: student code runs only where it can do no harm
//! - Only on a lock store apart from the stock (`single` or `sentinel`): no script can reach
//!   the stock, the ledger or any ground truth, which live in the resource store.
//! - As a Redis ACL user of the room's own ([`acl`]), confined to the room's lock keys and
//!   release channel, and to the commands a lock needs: no `FLUSHALL`, `CONFIG`, `KEYS`,
//!   `DEBUG`, `SHUTDOWN`, `SCRIPT FLUSH`, no other room's lock.
//! - Each step at most [`MAX_STEP_BYTES`]; every step is compiled at submission, as the
//!   room's user, so a syntax error is a 400 with Redis's own message and line.
//! - A step that runs longer than [`STEP_LIMIT`] is stopped ([`runaway`]): `SCRIPT KILL`, or,
//!   if it already wrote, `SHUTDOWN NOSAVE` of the lock store, whose supervisor starts it
//!   again. The student sees why in `GET /lab`.

pub mod acl;
pub mod conns;
pub mod runaway;

use std::sync::Arc;
use std::time::Duration;

use redis::Script;
use serde::{Deserialize, Serialize};

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

/// The most bytes one step's source may have.
pub const MAX_STEP_BYTES: usize = 8 * 1024;
/// How long one step may run before it counts as a runaway and is stopped.
pub const STEP_LIMIT: Duration = Duration::from_millis(1_000);

/// A lock as a room submits it (`PUT /admin/lab`) and stores it: each step's Lua source
/// (1–3 acquire steps, 1–2 release steps, an optional renew; each at most 8 KiB).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LabSource {
    pub acquire: Vec<String>,
    pub release: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew: Option<String>,
}

impl LabSource {
    /// Checks the shape: 1–3 acquire steps, 1–2 release steps, each non-empty and small.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=3).contains(&self.acquire.len()) {
            return Err(format!(
                "acquire must have 1 to 3 steps, got {}",
                self.acquire.len()
            ));
        }
        if !(1..=2).contains(&self.release.len()) {
            return Err(format!(
                "release must have 1 or 2 steps, got {}",
                self.release.len()
            ));
        }
        for (name, source) in self.named_sources() {
            if source.trim().is_empty() {
                return Err(format!("{name} is empty"));
            }
            if source.len() > MAX_STEP_BYTES {
                return Err(format!(
                    "{name} has {} bytes; a step may have at most {MAX_STEP_BYTES}",
                    source.len()
                ));
            }
        }
        Ok(())
    }

    /// Every step with the name a student reads in an error: "acquire step 2", "renew".
    pub fn named_sources(&self) -> Vec<(String, &str)> {
        let mut named: Vec<(String, &str)> = Vec::new();
        for (i, source) in self.acquire.iter().enumerate() {
            named.push((format!("acquire step {}", i + 1), source));
        }
        for (i, source) in self.release.iter().enumerate() {
            named.push((format!("release step {}", i + 1), source));
        }
        if let Some(renew) = &self.renew {
            named.push(("renew".to_owned(), renew));
        }
        named
    }
}

/// The room's lock, ready to run: its steps as scripts, and the user they run as.
#[derive(Debug)]
pub struct LabLock {
    pub acquire: Vec<Arc<Step>>,
    pub release: Vec<Arc<Step>>,
    pub renew: Option<Arc<Step>>,
    pub user: LabUser,
    pub source: LabSource,
}

/// One step: its name, and the script sent for it (its code, for loading it at submission).
#[derive(Debug)]
pub struct Step {
    pub name: String,
    pub code: String,
    pub script: Script,
    /// How many lines the student wrote: an error Lua finds only at the wrapper's closing line
    /// (a bracket left open) is said at the student's last line, where it is to be fixed.
    pub lines: usize,
}

/// The room's lock-store user: `lab:<room>`, with a password kept in the resource store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabUser {
    pub name: String,
    pub password: String,
}

impl LabUser {
    pub fn of(keys: &Keys, password: &str) -> LabUser {
        LabUser {
            name: format!("lab:{}", keys.room()),
            password: password.to_owned(),
        }
    }
}

/// Every step runs inside this wrapper, which notes whose lock the key held before and after
/// the student's code (how the ground truth tells a release that deleted another holder's
/// lock) and stamps the lease it left on the lock's own stream, as the built-in tiers' steps
/// are stamped (`src/lock/lease_stamp.rs`; the stamp itself is that file's Lua, included, not
/// a module used: the lock runs the lab, not the other way round). Everything before the
/// student's source is on its first line, so Redis's line numbers are the student's own.
const WRAPPER: &str = concat!(
    include_str!("step.lua"),
    include_str!("../lock/lease_stamp.lua"),
    "if reply == nil then reply = false end\n",
    "if STEP == 'release' then return {reply, before, after} end\n",
    "return reply\n"
);
const STUDENT_SOURCE: &str = "--[[STEP]]";

impl LabLock {
    pub fn new(source: LabSource, user: LabUser) -> LabLock {
        let mut acquire = Vec::new();
        let mut release = Vec::new();
        let mut renew = None;
        for (name, lua) in source.named_sources() {
            let lines = lua.lines().count().max(1);
            let lua = wrap(lua);
            let step = Arc::new(Step {
                script: Script::new(&lua),
                code: lua,
                name,
                lines,
            });
            match step.name.split(' ').next() {
                Some("acquire") => acquire.push(step),
                Some("release") => release.push(step),
                _ => renew = Some(step),
            }
        }
        LabLock {
            acquire,
            release,
            renew,
            user,
            source,
        }
    }

    /// Every step, in order.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.acquire
            .iter()
            .chain(&self.release)
            .chain(self.renew.as_ref())
            .map(|step| &**step)
    }

    /// Reads the room's lock from the resource store, if it has one.
    pub async fn load(resource: &RedisPool, keys: &Keys) -> Result<Option<LabLock>, StoreError> {
        let mut conn = resource.conn().await?;
        let (source, password): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(keys.lab())
            .arg("lock")
            .arg("password")
            .query_async(&mut conn)
            .await?;
        Ok(Self::from_stored(keys, source, password))
    }

    /// The lock from its stored fields; `None` when there is none (or it does not read).
    pub fn from_stored(
        keys: &Keys,
        source: Option<String>,
        password: Option<String>,
    ) -> Option<LabLock> {
        let source: LabSource = serde_json::from_str(&source?).ok()?;
        Some(LabLock::new(source, LabUser::of(keys, &password?)))
    }
}

/// An error as Redis said it, code first (`NOPERM …`, `ERR Error compiling script …`),
/// without the client library's wording around it.
pub fn as_said(err: &redis::RedisError) -> String {
    match (err.code(), err.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => err.to_string(),
    }
}

/// A step that failed: one Redis refused or that raised an error is the student's to read;
/// one that ran past [`STEP_LIMIT`] is stopped. Both are noted for `GET /lab`. Anything else
/// (down, failing over, busy with another room's runaway) is not the step's, and is returned
/// as it is.
pub async fn failed(
    store: &RedisPool,
    resource: &RedisPool,
    keys: &Keys,
    step: &Step,
    err: redis::RedisError,
) -> StoreError {
    let why = if err.is_timeout() {
        match runaway::stop(store).await {
            Ok(runaway::Stopped::Killed) => format!(
                "ran longer than {} ms and was stopped (SCRIPT KILL)",
                STEP_LIMIT.as_millis()
            ),
            Ok(runaway::Stopped::StoreRestarted) => format!(
                "ran longer than {} ms after writing, which SCRIPT KILL cannot stop: the lock \
                 store was shut down without saving and restarted, every lock in it lost",
                STEP_LIMIT.as_millis()
            ),
            // Not a script of ours: the store is slow or down.
            Ok(runaway::Stopped::NotRunning) | Err(_) => return err.into(),
        }
    } else {
        match StoreError::from(err) {
            StoreError::Failed(err) => step.said(&err),
            other => return other,
        }
    };
    let message = format!("{}: {why}", step.name);
    note_error(resource, keys, &message).await;
    StoreError::Lab(message)
}

/// Notes a step's failure where the room's students read it (`GET /lab`); best effort.
pub async fn note_error(resource: &RedisPool, keys: &Keys, message: &str) {
    let noted = async {
        let mut conn = resource.conn().await?;
        redis::cmd("HSET")
            .arg(keys.lab())
            .arg("last_error")
            .arg(message)
            .query_async::<()>(&mut conn)
            .await?;
        Ok::<_, StoreError>(())
    };
    if let Err(err) = noted.await {
        tracing::debug!(%err, "a lab step's error was not noted");
    }
}

impl Step {
    /// Redis's error for this step, as the student's lines number it.
    pub fn said(&self, err: &redis::RedisError) -> String {
        on_students_lines(&as_said(err), self.lines)
    }
}

/// Redis's `user_script:N` kept within the student's `lines`: past them is the wrapper's
/// closing, reached only because the student's code left something open.
fn on_students_lines(said: &str, lines: usize) -> String {
    const AT: &str = "user_script:";
    let Some(at) = said.find(AT).map(|i| i + AT.len()) else {
        return said.to_owned();
    };
    let digits = said[at..].bytes().take_while(u8::is_ascii_digit).count();
    match said[at..at + digits].parse::<usize>() {
        Ok(n) if n > lines => format!("{}{lines}{}", &said[..at], &said[at + digits..]),
        _ => said.to_owned(),
    }
}

fn wrap(source: &str) -> String {
    WRAPPER.replacen(STUDENT_SOURCE, source, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_past_the_students_lines_is_said_at_the_last_of_them() {
        let said = "ERR Error compiling script (new function): user_script:3: ')' expected";
        assert_eq!(
            on_students_lines(said, 2),
            "ERR Error compiling script (new function): user_script:2: ')' expected"
        );
        assert_eq!(on_students_lines(said, 3), said);
        assert_eq!(on_students_lines("NOPERM no", 1), "NOPERM no");
    }

    fn source(acquire: &[&str], release: &[&str]) -> LabSource {
        LabSource {
            acquire: acquire.iter().map(|s| s.to_string()).collect(),
            release: release.iter().map(|s| s.to_string()).collect(),
            renew: None,
        }
    }

    #[test]
    fn a_lock_has_one_to_three_acquire_and_one_or_two_release_steps() {
        assert!(source(&["return 1"], &["return 1"]).validate().is_ok());
        let err = source(&[], &["return 1"]).validate().unwrap_err();
        assert!(err.contains("acquire must have 1 to 3"), "{err}");
        let err = source(&["return 1"], &["a", "b", "c"])
            .validate()
            .unwrap_err();
        assert!(err.contains("release must have 1 or 2"), "{err}");
        let big = "x".repeat(MAX_STEP_BYTES + 1);
        let err = source(&["return 1", &big], &["return 1"])
            .validate()
            .unwrap_err();
        assert!(err.contains("acquire step 2 has"), "{err}");
        let err = source(&["return 1"], &[" "]).validate().unwrap_err();
        assert!(err.contains("release step 1 is empty"), "{err}");
    }

    #[test]
    fn the_wrapper_keeps_the_students_line_numbers() {
        let wrapped = wrap("local a = 1\nreturn a");
        let first = wrapped.lines().next().unwrap();
        assert!(first.ends_with("local a = 1"), "{first}");
        assert_eq!(wrapped.lines().nth(1), Some("return a"));
    }
}
