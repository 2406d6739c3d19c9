//! The list commands: a waiters' queue.

use std::collections::VecDeque;

use super::words::{arity, bulk_or_nil, err, index, int, NOT_INTEGER};
use crate::store::{Reply, Store, Value, WRONGTYPE};

pub fn list(store: &mut Store, name: &str, a: &[String]) -> Reply {
    let ok_arity = match name {
        "RPUSH" | "LPUSH" => a.len() >= 2,
        "LPOP" | "RPOP" => a.len() == 1 || a.len() == 2,
        "LINDEX" | "LPOS" => a.len() == 2,
        "LLEN" => a.len() == 1,
        _ => a.len() == 3,
    };
    if !ok_arity {
        return arity(name);
    }
    let key = &a[0];
    let mut items = match store.value(key) {
        None => VecDeque::new(),
        Some(Value::List(items)) => items.clone(),
        Some(_) => return err(WRONGTYPE),
    };
    let existed = !items.is_empty();
    let mut wrote = false;
    let reply = match name {
        "RPUSH" | "LPUSH" => {
            for v in &a[1..] {
                if name == "RPUSH" {
                    items.push_back(v.clone());
                } else {
                    items.push_front(v.clone());
                }
            }
            wrote = true;
            Reply::Int(items.len() as i64)
        }
        "LPOP" | "RPOP" => {
            let count = match a.get(1).map(|c| int(c)) {
                None => None,
                Some(Some(c)) if c >= 0 => Some(c as usize),
                Some(_) => return err("ERR value is out of range, must be positive"),
            };
            if !existed {
                return Reply::Nil;
            }
            let mut popped = Vec::new();
            for _ in 0..count.unwrap_or(1) {
                let item = if name == "LPOP" {
                    items.pop_front()
                } else {
                    items.pop_back()
                };
                match item {
                    Some(item) => popped.push(Reply::Bulk(item)),
                    None => break,
                }
            }
            wrote = true;
            match count {
                None => popped.pop().unwrap_or(Reply::Nil),
                Some(_) => Reply::Array(popped),
            }
        }
        "LINDEX" => {
            let Some(i) = int(&a[1]) else {
                return err(NOT_INTEGER);
            };
            let i = index(i, items.len());
            bulk_or_nil(usize::try_from(i).ok().and_then(|i| items.get(i).cloned()))
        }
        "LLEN" => Reply::Int(items.len() as i64),
        "LPOS" => items
            .iter()
            .position(|v| v == &a[1])
            .map_or(Reply::Nil, |i| Reply::Int(i as i64)),
        "LRANGE" => {
            let (Some(from), Some(to)) = (int(&a[1]), int(&a[2])) else {
                return err(NOT_INTEGER);
            };
            let (from, to) = (index(from, items.len()).max(0), index(to, items.len()));
            Reply::Array(
                items
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| (*i as i64) >= from && (*i as i64) <= to)
                    .map(|(_, v)| Reply::Bulk(v.clone()))
                    .collect(),
            )
        }
        _ => {
            // LREM key count value: count > 0 from the head, < 0 from the tail, 0 all.
            let Some(count) = int(&a[1]) else {
                return err(NOT_INTEGER);
            };
            let limit = if count == 0 {
                usize::MAX
            } else {
                count.unsigned_abs() as usize
            };
            let mut removed = 0;
            let mut kept: Vec<String> = Vec::new();
            let ordered: Vec<String> = if count < 0 {
                items.iter().rev().cloned().collect()
            } else {
                items.iter().cloned().collect()
            };
            for v in ordered {
                if v == a[2] && removed < limit {
                    removed += 1;
                } else {
                    kept.push(v);
                }
            }
            if count < 0 {
                kept.reverse();
            }
            items = kept.into();
            wrote = true;
            Reply::Int(removed as i64)
        }
    };
    if wrote {
        store.put(key, Value::List(items), true);
        store.drop_if_empty(key);
    }
    reply
}
