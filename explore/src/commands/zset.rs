//! The sorted-set commands: when each place in a waiters' queue lapses.

use super::words::{arity, bulk_or_nil, err, index, int, NOT_INTEGER, SYNTAX};
use crate::store::{Reply, Score, Store, Value, WRONGTYPE};

fn score(s: &str) -> Option<f64> {
    match s {
        "+inf" | "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse::<f64>().ok().filter(|f| !f.is_nan()),
    }
}

pub fn zset(store: &mut Store, name: &str, a: &[String]) -> Reply {
    let ok_arity = match name {
        "ZADD" => a.len() >= 3,
        "ZREM" => a.len() >= 2,
        "ZSCORE" => a.len() == 2,
        "ZINCRBY" => a.len() == 3,
        "ZRANGE" => a.len() == 3 || a.len() == 4,
        _ => a.len() == 1,
    };
    if !ok_arity {
        return arity(name);
    }
    let key = &a[0];
    let mut members = match store.value(key) {
        None => Vec::new(),
        Some(Value::ZSet(m)) => m.clone(),
        Some(_) => return err(WRONGTYPE),
    };
    let find = |m: &Vec<(Score, String)>, member: &str| m.iter().position(|(_, k)| k == member);
    let mut wrote = false;
    let reply = match name {
        "ZADD" => {
            let (mut nx, mut xx, mut ch, mut i) = (false, false, false, 1);
            while i < a.len() {
                match a[i].to_uppercase().as_str() {
                    "NX" => nx = true,
                    "XX" => xx = true,
                    "CH" => ch = true,
                    _ => break,
                }
                i += 1;
            }
            let pairs = &a[i..];
            if pairs.is_empty() || pairs.len() % 2 == 1 || (nx && xx) {
                return err(SYNTAX);
            }
            let mut parsed = Vec::new();
            for pair in pairs.chunks(2) {
                let Some(s) = score(&pair[0]) else {
                    return err("ERR value is not a valid float");
                };
                parsed.push((s, pair[1].clone()));
            }
            let (mut added, mut changed) = (0, 0);
            for (s, member) in parsed {
                match find(&members, &member) {
                    Some(j) if !nx && members[j].0 != Score(s) => {
                        members[j].0 = Score(s);
                        changed += 1;
                    }
                    None if !xx => {
                        members.push((Score(s), member));
                        added += 1;
                    }
                    _ => {}
                }
            }
            wrote = true;
            Reply::Int(if ch { added + changed } else { added })
        }
        "ZREM" => {
            let before = members.len();
            members.retain(|(_, m)| !a[1..].contains(m));
            wrote = true;
            Reply::Int((before - members.len()) as i64)
        }
        "ZSCORE" => bulk_or_nil(find(&members, &a[1]).map(|j| members[j].0.text())),
        "ZINCRBY" => {
            let Some(by) = score(&a[1]) else {
                return err("ERR value is not a valid float");
            };
            let next = match find(&members, &a[2]) {
                Some(j) => {
                    members[j].0 = Score(members[j].0 .0 + by);
                    members[j].0
                }
                None => {
                    members.push((Score(by), a[2].clone()));
                    Score(by)
                }
            };
            wrote = true;
            Reply::Bulk(next.text())
        }
        "ZRANGE" => {
            let with_scores = match a.get(3).map(|s| s.to_uppercase()) {
                None => false,
                Some(s) if s == "WITHSCORES" => true,
                Some(_) => return err(SYNTAX),
            };
            let (Some(from), Some(to)) = (int(&a[1]), int(&a[2])) else {
                return err(NOT_INTEGER);
            };
            let mut sorted = members.clone();
            sorted.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
            let (from, to) = (index(from, sorted.len()).max(0), index(to, sorted.len()));
            let mut out = Vec::new();
            for (i, (s, m)) in sorted.iter().enumerate() {
                if (i as i64) >= from && (i as i64) <= to {
                    out.push(Reply::Bulk(m.clone()));
                    if with_scores {
                        out.push(Reply::Bulk(s.text()));
                    }
                }
            }
            Reply::Array(out)
        }
        _ => Reply::Int(members.len() as i64),
    };
    if wrote {
        members.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
        store.put(key, Value::ZSet(members), true);
        store.drop_if_empty(key);
    }
    reply
}
