//! The commands a lock's steps may call, on the model of one Redis: the lab's ACL list
//! (`src/lab/acl.rs`, the commands a script can reach) and those the built-in steps and
//! `holder.lua` call, with Redis's replies and errors. Anything else is refused as
//! [`NotModelled`], never guessed.

mod hash;
mod list;
mod words;
mod zset;

use crate::store::{Reply, Store, Value, WRONGTYPE};
use words::{arity, bulk_or_nil, err, int, NOT_INTEGER, SYNTAX};

/// A command the model does not know: the search cannot say what it would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotModelled(pub String);

impl std::fmt::Display for NotModelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not modelled: {}", self.0)
    }
}

/// The commands the model answers (upper case), for the book and the refusal test.
pub const MODELLED: &[&str] = &[
    "PING",
    "TIME",
    "TYPE",
    "EXISTS",
    "GET",
    "SET",
    "SETNX",
    "SETEX",
    "PSETEX",
    "GETSET",
    "GETDEL",
    "GETEX",
    "DEL",
    "UNLINK",
    "EXPIRE",
    "PEXPIRE",
    "EXPIREAT",
    "PEXPIREAT",
    "PERSIST",
    "TTL",
    "PTTL",
    "INCR",
    "INCRBY",
    "DECR",
    "DECRBY",
    "HSET",
    "HSETNX",
    "HGET",
    "HMGET",
    "HDEL",
    "HEXISTS",
    "HINCRBY",
    "HGETALL",
    "HKEYS",
    "HVALS",
    "HLEN",
    "RPUSH",
    "LPUSH",
    "LPOP",
    "RPOP",
    "LINDEX",
    "LLEN",
    "LRANGE",
    "LREM",
    "LPOS",
    "ZADD",
    "ZREM",
    "ZSCORE",
    "ZINCRBY",
    "ZRANGE",
    "ZCARD",
    "PUBLISH",
];

pub fn run(store: &mut Store, args: &[String]) -> Result<Reply, NotModelled> {
    let Some(name) = args.first() else {
        return Ok(err(
            "ERR Please specify at least one argument for this redis lib call",
        ));
    };
    let name = name.to_uppercase();
    let a = &args[1..];
    let reply = match name.as_str() {
        "PING" => Reply::Status("PONG".into()),
        "TIME" => {
            let us = store.now_ms * 1_000;
            Reply::Array(vec![
                Reply::Bulk((us / 1_000_000).to_string()),
                Reply::Bulk((us % 1_000_000).to_string()),
            ])
        }
        "TYPE" if a.len() == 1 => Reply::Status(
            store
                .value(&a[0])
                .map_or("none", |v| v.type_name())
                .to_owned(),
        ),
        "EXISTS" | "DEL" | "UNLINK" if !a.is_empty() => {
            let mut n = 0;
            for key in a {
                let found = if name == "EXISTS" {
                    store.exists(key)
                } else {
                    store.remove(key).is_some()
                };
                n += i64::from(found);
            }
            Reply::Int(n)
        }
        "GET" if a.len() == 1 => match string(store, &a[0]) {
            Ok(s) => bulk_or_nil(s),
            Err(e) => e,
        },
        "SET" if a.len() >= 2 => set(store, a),
        "SETNX" if a.len() == 2 => {
            if store.exists(&a[0]) {
                Reply::Int(0)
            } else {
                store.put(&a[0], Value::Str(a[1].clone()), false);
                Reply::Int(1)
            }
        }
        "SETEX" | "PSETEX" if a.len() == 3 => match int(&a[1]) {
            Some(t) if t > 0 => {
                let ms = if name == "SETEX" { t * 1_000 } else { t };
                store.put(&a[0], Value::Str(a[2].clone()), false);
                store.expire_at(&a[0], Some(store.now_ms + ms as u64));
                Reply::ok()
            }
            Some(_) => Reply::Error(format!(
                "ERR invalid expire time in '{}' command",
                name.to_lowercase()
            )),
            None => err(NOT_INTEGER),
        },
        "GETSET" if a.len() == 2 => match string(store, &a[0]) {
            Ok(old) => {
                store.put(&a[0], Value::Str(a[1].clone()), false);
                bulk_or_nil(old)
            }
            Err(e) => e,
        },
        "GETDEL" if a.len() == 1 => match string(store, &a[0]) {
            Ok(old) => {
                store.remove(&a[0]);
                bulk_or_nil(old)
            }
            Err(e) => e,
        },
        "GETEX" if !a.is_empty() => getex(store, a),
        "EXPIRE" | "PEXPIRE" | "EXPIREAT" | "PEXPIREAT" if a.len() == 2 => {
            let Some(t) = int(&a[1]) else {
                return Ok(err(NOT_INTEGER));
            };
            let at = match name.as_str() {
                "EXPIRE" => store.now_ms as i64 + t * 1_000,
                "PEXPIRE" => store.now_ms as i64 + t,
                "EXPIREAT" => t * 1_000,
                _ => t,
            };
            Reply::Int(i64::from(store.expire_at(&a[0], Some(at.max(0) as u64))))
        }
        "PERSIST" if a.len() == 1 => {
            let had = store.pttl(&a[0]) >= 0;
            if had {
                store.expire_at(&a[0], None);
            }
            Reply::Int(i64::from(had))
        }
        "PTTL" if a.len() == 1 => Reply::Int(store.pttl(&a[0])),
        "TTL" if a.len() == 1 => Reply::Int(match store.pttl(&a[0]) {
            ms if ms < 0 => ms,
            ms => (ms + 500) / 1_000,
        }),
        "INCR" | "DECR" if a.len() == 1 => {
            incr_by(store, &a[0], if name == "INCR" { 1 } else { -1 })
        }
        "INCRBY" | "DECRBY" if a.len() == 2 => match int(&a[1]) {
            Some(n) => incr_by(store, &a[0], if name == "INCRBY" { n } else { -n }),
            None => err(NOT_INTEGER),
        },
        "HSET" | "HSETNX" | "HGET" | "HMGET" | "HDEL" | "HEXISTS" | "HINCRBY" | "HGETALL"
        | "HKEYS" | "HVALS" | "HLEN" => hash::hash(store, &name, a),
        "RPUSH" | "LPUSH" | "LPOP" | "RPOP" | "LINDEX" | "LLEN" | "LRANGE" | "LREM" | "LPOS" => {
            list::list(store, &name, a)
        }
        "ZADD" | "ZREM" | "ZSCORE" | "ZINCRBY" | "ZRANGE" | "ZCARD" => zset::zset(store, &name, a),
        "PUBLISH" if a.len() == 2 => {
            store.published.push((a[0].clone(), a[1].clone()));
            // Nobody subscribes to the model: the world wakes its waiters itself.
            Reply::Int(0)
        }
        n if MODELLED.contains(&n) => arity(n),
        _ => return Err(NotModelled(name)),
    };
    Ok(reply)
}

/// A string key's value; `Err` holds the wrong-type reply.
fn string(store: &mut Store, key: &str) -> Result<Option<String>, Reply> {
    match store.value(key) {
        None => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s.clone())),
        Some(_) => Err(err(WRONGTYPE)),
    }
}

fn set(store: &mut Store, a: &[String]) -> Reply {
    let (key, value) = (&a[0], &a[1]);
    let (mut nx, mut xx, mut get, mut keep_ttl) = (false, false, false, false);
    let mut ms: Option<i64> = None;
    let mut i = 2;
    while i < a.len() {
        match a[i].to_uppercase().as_str() {
            "NX" => nx = true,
            "XX" => xx = true,
            "GET" => get = true,
            "KEEPTTL" => keep_ttl = true,
            unit @ ("EX" | "PX") if i + 1 < a.len() && ms.is_none() => {
                let Some(t) = int(&a[i + 1]) else {
                    return err(NOT_INTEGER);
                };
                if t <= 0 {
                    return err("ERR invalid expire time in 'set' command");
                }
                ms = Some(if unit == "EX" { t * 1_000 } else { t });
                i += 1;
            }
            _ => return err(SYNTAX),
        }
        i += 1;
    }
    if (nx && xx) || (keep_ttl && ms.is_some()) {
        return err(SYNTAX);
    }
    let old = match string(store, key) {
        Ok(old) => old,
        Err(wrong) if get => return wrong,
        Err(_) => None,
    };
    let exists = store.exists(key);
    if (nx && exists) || (xx && !exists) {
        return if get { bulk_or_nil(old) } else { Reply::Nil };
    }
    store.put(key, Value::Str(value.clone()), keep_ttl);
    if let Some(ms) = ms {
        store.expire_at(key, Some(store.now_ms + ms as u64));
    }
    if get {
        bulk_or_nil(old)
    } else {
        Reply::ok()
    }
}

fn getex(store: &mut Store, a: &[String]) -> Reply {
    let old = match string(store, &a[0]) {
        Ok(old) => old,
        Err(e) => return e,
    };
    let at = match a.get(1).map(|s| s.to_uppercase()).as_deref() {
        None => return bulk_or_nil(old),
        Some("PERSIST") if a.len() == 2 => None,
        Some(unit @ ("EX" | "PX")) if a.len() == 3 => match int(&a[2]) {
            Some(t) if t > 0 => {
                Some(store.now_ms + (if unit == "EX" { t * 1_000 } else { t }) as u64)
            }
            Some(_) => return err("ERR invalid expire time in 'getex' command"),
            None => return err(NOT_INTEGER),
        },
        Some(_) => return err(SYNTAX),
    };
    if old.is_some() {
        store.expire_at(&a[0], at);
    }
    bulk_or_nil(old)
}

fn incr_by(store: &mut Store, key: &str, by: i64) -> Reply {
    let current = match string(store, key) {
        Ok(None) => 0,
        Ok(Some(s)) => match int(&s) {
            Some(n) => n,
            None => return err(NOT_INTEGER),
        },
        Err(e) => return e,
    };
    let Some(next) = current.checked_add(by) else {
        return err("ERR increment or decrement would overflow");
    };
    store.put(key, Value::Str(next.to_string()), true);
    Reply::Int(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(store: &mut Store, line: &str) -> Reply {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        run(store, &args).unwrap()
    }

    #[test]
    fn set_nx_px_takes_a_free_key_once_and_its_lease_runs_on_the_stores_clock() {
        let mut s = Store::new(0);
        assert_eq!(call(&mut s, "SET lock a NX PX 300"), Reply::ok());
        assert_eq!(call(&mut s, "SET lock b NX PX 300"), Reply::Nil);
        assert_eq!(call(&mut s, "PTTL lock"), Reply::Int(300));
        s.now_ms = 300;
        assert_eq!(call(&mut s, "GET lock"), Reply::Nil);
        assert_eq!(call(&mut s, "SET lock b NX PX 300"), Reply::ok());
    }

    #[test]
    fn setnx_has_no_lease_until_an_expire_gives_one() {
        let mut s = Store::new(0);
        assert_eq!(call(&mut s, "SETNX lock a"), Reply::Int(1));
        assert_eq!(call(&mut s, "PTTL lock"), Reply::Int(-1));
        assert_eq!(call(&mut s, "PEXPIRE lock 200"), Reply::Int(1));
        assert_eq!(call(&mut s, "TTL lock"), Reply::Int(0));
        assert_eq!(call(&mut s, "PEXPIRE nothing 200"), Reply::Int(0));
    }

    #[test]
    fn a_hash_keeps_its_first_field_first_and_goes_when_emptied() {
        let mut s = Store::new(0);
        assert_eq!(call(&mut s, "HINCRBY lock a 1"), Reply::Int(1));
        assert_eq!(call(&mut s, "HSET lock __token 7"), Reply::Int(1));
        assert_eq!(s.holder("lock"), "a");
        assert_eq!(call(&mut s, "TYPE lock"), Reply::Status("hash".into()));
        assert_eq!(call(&mut s, "HDEL lock a __token"), Reply::Int(2));
        assert_eq!(call(&mut s, "EXISTS lock"), Reply::Int(0));
    }

    #[test]
    fn a_string_command_on_a_hash_is_the_wrong_type() {
        let mut s = Store::new(0);
        call(&mut s, "HSET lock a 1");
        assert_eq!(call(&mut s, "GET lock"), Reply::Error(WRONGTYPE.into()));
        assert_eq!(call(&mut s, "INCR lock"), Reply::Error(WRONGTYPE.into()));
    }

    #[test]
    fn incr_counts_from_nothing_and_refuses_a_word() {
        let mut s = Store::new(0);
        assert_eq!(call(&mut s, "INCR fence"), Reply::Int(1));
        assert_eq!(call(&mut s, "INCRBY fence 5"), Reply::Int(6));
        call(&mut s, "SET word abc");
        assert_eq!(call(&mut s, "INCR word"), Reply::Error(NOT_INTEGER.into()));
    }

    #[test]
    fn lists_and_sorted_sets_answer_as_a_queue_needs() {
        let mut s = Store::new(0);
        assert_eq!(call(&mut s, "RPUSH q a b"), Reply::Int(2));
        assert_eq!(call(&mut s, "LINDEX q 0"), Reply::Bulk("a".into()));
        assert_eq!(call(&mut s, "LPOP q"), Reply::Bulk("a".into()));
        assert_eq!(call(&mut s, "ZADD t 1500 b"), Reply::Int(1));
        assert_eq!(call(&mut s, "ZSCORE t b"), Reply::Bulk("1500".into()));
        assert_eq!(call(&mut s, "ZREM t b"), Reply::Int(1));
        assert_eq!(call(&mut s, "ZCARD t"), Reply::Int(0));
    }

    #[test]
    fn a_command_outside_the_model_is_refused_by_name() {
        let mut s = Store::new(0);
        let refused = run(&mut s, &["object".into(), "encoding".into(), "k".into()]);
        assert_eq!(refused.unwrap_err().to_string(), "not modelled: OBJECT");
    }
}
