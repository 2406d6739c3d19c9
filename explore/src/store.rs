//! The model of one Redis: its keys (strings, hashes, lists, sorted sets), each with the instant
//! it expires on the store's own clock, and the replies its commands give. The commands
//! themselves are `commands.rs`; this file is the data and its time.
//!
//! Expiry is exact and lazy, as Redis's is to a script: a key whose instant has come is gone
//! the next time anything looks, and [`Store::purge`] drops every such key so that two states
//! that differ only in a dead key hash the same.

use std::collections::{BTreeMap, VecDeque};
use std::hash::{Hash, Hasher};

/// A reply as Redis sends it (RESP2), before any Lua conversion.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reply {
    Nil,
    Int(i64),
    Bulk(String),
    Status(String),
    Error(String),
    Array(Vec<Reply>),
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Status("OK".into())
    }

    /// A reply as one short line: what a schedule prints beside a step.
    pub fn brief(&self) -> String {
        match self {
            Reply::Nil => "nil".into(),
            Reply::Int(n) => n.to_string(),
            Reply::Bulk(s) => format!("{s:?}"),
            Reply::Status(s) => s.clone(),
            Reply::Error(e) => format!("(error) {e}"),
            Reply::Array(items) => {
                let items: Vec<String> = items.iter().map(Reply::brief).collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }
}

/// A sorted set's score. Redis's scores are doubles; hashing goes by their bits, which is
/// exact for the integers a lock's scores are (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Score(pub f64);

impl Eq for Score {}

impl Hash for Score {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state)
    }
}

impl Score {
    /// As Redis prints a score: an integer without a fraction, else the shortest exact form.
    pub fn text(self) -> String {
        if self.0.fract() == 0.0 && self.0.abs() < 1e17 {
            format!("{}", self.0 as i64)
        } else {
            format!("{}", self.0)
        }
    }
}

/// What a key holds. A hash keeps its fields in the order they were first set, as Redis's
/// small hashes (listpacks) do: `HKEYS`'s first field is a ladder lock's owner.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    Str(String),
    Hash(Vec<(String, String)>),
    List(VecDeque<String>),
    /// Members in score order, ties by member, as Redis orders them.
    ZSet(Vec<(Score, String)>),
}

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::ZSet(_) => "zset",
        }
    }

    /// Redis deletes a hash, list or set the moment it has nothing left.
    fn is_empty(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::Hash(fields) => fields.is_empty(),
            Value::List(items) => items.is_empty(),
            Value::ZSet(members) => members.is_empty(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    pub value: Value,
    /// When the key expires, in ms on the store's clock; `None`: never.
    pub expires_at: Option<u64>,
}

/// One Redis, in memory: keys and the store's clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Store {
    keys: BTreeMap<String, Entry>,
    /// The store's clock in ms: what `TIME` answers and what expiry is measured on. The world
    /// sets it before each script (a clock jump moves it apart from the clients' time).
    pub now_ms: u64,
    /// What the last script published, `(channel, message)`: the wake-ups the world hands to
    /// waiting clients. Not part of the store's state.
    pub published: Vec<(String, String)>,
}

/// The wrong-type error, in Redis's words.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

impl Store {
    pub fn new(now_ms: u64) -> Store {
        Store {
            now_ms,
            ..Store::default()
        }
    }

    /// Drops every key whose instant has come.
    pub fn purge(&mut self) {
        let now = self.now_ms;
        self.keys
            .retain(|_, e| e.expires_at.is_none_or(|at| at > now));
    }

    /// The live entry at `key`, if any (an expired one is removed first).
    pub fn entry(&mut self, key: &str) -> Option<&mut Entry> {
        let now = self.now_ms;
        if self
            .keys
            .get(key)
            .is_some_and(|e| e.expires_at.is_some_and(|at| at <= now))
        {
            self.keys.remove(key);
        }
        self.keys.get_mut(key)
    }

    pub fn value(&mut self, key: &str) -> Option<&mut Value> {
        self.entry(key).map(|e| &mut e.value)
    }

    pub fn exists(&mut self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    /// Writes `value` at `key`, keeping the key's expiry when `keep_ttl`, else clearing it.
    pub fn put(&mut self, key: &str, value: Value, keep_ttl: bool) {
        let expires_at = if keep_ttl {
            self.entry(key).and_then(|e| e.expires_at)
        } else {
            None
        };
        self.keys
            .insert(key.to_owned(), Entry { value, expires_at });
    }

    pub fn remove(&mut self, key: &str) -> Option<Entry> {
        self.entry(key)?;
        self.keys.remove(key)
    }

    /// After a write to a hash, list or set: an empty one is gone.
    pub fn drop_if_empty(&mut self, key: &str) {
        if self.keys.get(key).is_some_and(|e| e.value.is_empty()) {
            self.keys.remove(key);
        }
    }

    /// Sets a key's expiry to `at` (ms on the store's clock); one already due deletes the key.
    /// Returns whether the key existed.
    pub fn expire_at(&mut self, key: &str, at: Option<u64>) -> bool {
        let now = self.now_ms;
        let Some(entry) = self.entry(key) else {
            return false;
        };
        match at {
            Some(at) if at <= now => {
                self.keys.remove(key);
            }
            _ => entry.expires_at = at,
        }
        true
    }

    /// `PTTL`: -2 no key, -1 no expiry, else the ms left.
    pub fn pttl(&mut self, key: &str) -> i64 {
        let now = self.now_ms;
        match self.entry(key) {
            None => -2,
            Some(Entry {
                expires_at: None, ..
            }) => -1,
            Some(Entry {
                expires_at: Some(at),
                ..
            }) => (*at - now) as i64,
        }
    }

    /// The instant the next key expires, if one has a lease.
    pub fn next_expiry(&self) -> Option<u64> {
        self.keys.values().filter_map(|e| e.expires_at).min()
    }

    /// Whether any key has a lease: a store without one never changes by itself.
    pub fn any_expiry(&self) -> bool {
        self.next_expiry().is_some()
    }

    /// The keys, for printing a state and comparing stores.
    pub fn keys(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.keys.iter()
    }

    /// Hashes the store's state; with `relative`, expiry instants as ms from now, so that the
    /// same lock at two instants hashes the same (sound for steps that never read `TIME`).
    pub fn fingerprint<H: Hasher>(&self, state: &mut H, relative: bool) {
        for (key, entry) in &self.keys {
            key.hash(state);
            entry.value.hash(state);
            let at = entry.expires_at.map(|at| {
                if relative {
                    at.saturating_sub(self.now_ms)
                } else {
                    at
                }
            });
            at.hash(state);
        }
        if !relative {
            self.now_ms.hash(state);
        }
    }

    /// Whose lock `key` is, as `src/lock/holder.lua` reads it: a string lock's value, a hash
    /// lock's first field, '' for none.
    pub fn holder(&mut self, key: &str) -> String {
        match self.value(key) {
            Some(Value::Str(s)) => s.clone(),
            Some(Value::Hash(fields)) => fields.first().map(|(f, _)| f.clone()).unwrap_or_default(),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_expires_exactly_at_its_instant_on_the_stores_clock() {
        let mut store = Store::new(1_000);
        store.put("lock", Value::Str("a".into()), false);
        assert!(store.expire_at("lock", Some(1_300)));
        assert_eq!(store.pttl("lock"), 300);
        store.now_ms = 1_299;
        assert!(store.exists("lock"));
        store.now_ms = 1_300;
        assert!(!store.exists("lock"));
        assert_eq!(store.pttl("lock"), -2);
    }

    #[test]
    fn relative_fingerprints_match_the_same_lock_at_two_instants() {
        use std::collections::hash_map::DefaultHasher;
        let at = |now: u64| {
            let mut store = Store::new(now);
            store.put("lock", Value::Str("a".into()), false);
            store.expire_at("lock", Some(now + 300));
            let mut h = DefaultHasher::new();
            store.fingerprint(&mut h, true);
            h.finish()
        };
        assert_eq!(at(0), at(500));
    }
}
