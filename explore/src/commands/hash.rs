//! The hash commands: a reentrant lock's owner → hold count, its fencing token beside it.

use super::words::{arity, bulk_or_nil, err, int, NOT_INTEGER};
use crate::store::{Reply, Store, Value, WRONGTYPE};

pub fn hash(store: &mut Store, name: &str, a: &[String]) -> Reply {
    let writes = matches!(name, "HSET" | "HSETNX" | "HDEL" | "HINCRBY");
    let ok_arity = match name {
        "HSET" => a.len() >= 3 && a.len() % 2 == 1,
        "HSETNX" | "HINCRBY" => a.len() == 3,
        "HGET" | "HEXISTS" => a.len() == 2,
        "HMGET" | "HDEL" => a.len() >= 2,
        _ => a.len() == 1,
    };
    if !ok_arity {
        return arity(name);
    }
    let key = &a[0];
    let mut fields = match store.value(key) {
        None => Vec::new(),
        Some(Value::Hash(f)) => f.clone(),
        Some(_) => return err(WRONGTYPE),
    };
    let find = |fields: &Vec<(String, String)>, f: &str| fields.iter().position(|(k, _)| k == f);
    let reply = match name {
        "HSET" => {
            let mut added = 0;
            for pair in a[1..].chunks(2) {
                match find(&fields, &pair[0]) {
                    Some(i) => fields[i].1 = pair[1].clone(),
                    None => {
                        fields.push((pair[0].clone(), pair[1].clone()));
                        added += 1;
                    }
                }
            }
            Reply::Int(added)
        }
        "HSETNX" => match find(&fields, &a[1]) {
            Some(_) => Reply::Int(0),
            None => {
                fields.push((a[1].clone(), a[2].clone()));
                Reply::Int(1)
            }
        },
        "HGET" => bulk_or_nil(find(&fields, &a[1]).map(|i| fields[i].1.clone())),
        "HMGET" => Reply::Array(
            a[1..]
                .iter()
                .map(|f| bulk_or_nil(find(&fields, f).map(|i| fields[i].1.clone())))
                .collect(),
        ),
        "HDEL" => {
            let before = fields.len();
            fields.retain(|(k, _)| !a[1..].contains(k));
            Reply::Int((before - fields.len()) as i64)
        }
        "HEXISTS" => Reply::Int(i64::from(find(&fields, &a[1]).is_some())),
        "HINCRBY" => {
            let Some(by) = int(&a[2]) else {
                return err(NOT_INTEGER);
            };
            let i = match find(&fields, &a[1]) {
                Some(i) => i,
                None => {
                    fields.push((a[1].clone(), "0".into()));
                    fields.len() - 1
                }
            };
            let Some(current) = int(&fields[i].1) else {
                return err("ERR hash value is not an integer");
            };
            let Some(next) = current.checked_add(by) else {
                return err("ERR increment or decrement would overflow");
            };
            fields[i].1 = next.to_string();
            Reply::Int(next)
        }
        "HGETALL" => Reply::Array(
            fields
                .iter()
                .flat_map(|(k, v)| [Reply::Bulk(k.clone()), Reply::Bulk(v.clone())])
                .collect(),
        ),
        "HKEYS" => Reply::Array(fields.iter().map(|(k, _)| Reply::Bulk(k.clone())).collect()),
        "HVALS" => Reply::Array(fields.iter().map(|(_, v)| Reply::Bulk(v.clone())).collect()),
        _ => Reply::Int(fields.len() as i64),
    };
    if writes {
        store.put(key, Value::Hash(fields), true);
        store.drop_if_empty(key);
    }
    reply
}
