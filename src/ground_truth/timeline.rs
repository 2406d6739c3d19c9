//! Reading the lock timeline back whole, a page at a time, for a run's history: every entry
//! since the room's last reset (which deletes the stream), and whether the stream's cap
//! dropped any of them.

use std::sync::LazyLock;

use redis::{Script, Value};
use serde::Serialize;

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

static PAGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("timeline_page.lua")));

/// One page of the timeline.
#[derive(Debug, Serialize)]
pub struct Page {
    /// The entries after the cursor, oldest first: `id` and the entry's fields (`kind`,
    /// `at_us`, `instance`, `owner`, …), values as the stream holds them (strings).
    pub entries: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Entries the stream was given since the room's last reset, and how many it still
    /// holds: `added > kept` means its cap (about 5,000) dropped the oldest.
    pub added: u64,
    pub kept: u64,
    /// The cursor for the next page (the last entry's id); `None` when this page was the last.
    pub next: Option<String>,
}

/// Up to `limit` entries after `after` (`None`: from the first).
pub async fn page(
    redis: &RedisPool,
    keys: &Keys,
    after: Option<&str>,
    limit: usize,
) -> Result<Page, StoreError> {
    page_of(redis, &keys.timeline(), after, limit).await
}

/// As [`page`], of another stream of the same shape: a lab lock's stamped leases, which live
/// beside the lock in the lock store (`Keys::lock_leases`).
pub async fn page_of(
    redis: &RedisPool,
    stream: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<Page, StoreError> {
    let mut conn = redis.conn().await?;
    let start = after.map_or_else(|| "-".to_owned(), |id| format!("({id}"));
    let reply: Value = PAGE
        .key(stream)
        .arg(start)
        .arg(limit)
        .invoke_async(&mut conn)
        .await?;
    let (added, kept, range) = match reply {
        Value::Array(mut parts) if parts.len() == 3 => {
            let range = parts.pop().unwrap_or(Value::Nil);
            let kept = int(parts.pop());
            let added = int(parts.pop());
            (added, kept, range)
        }
        other => {
            return Err(StoreError::from(redis::RedisError::from(
                redis::ParsingError::from(format!("a timeline page, not {other:?}")),
            )))
        }
    };
    let entries: Vec<_> = match range {
        Value::Array(items) => items.iter().filter_map(entry).collect(),
        _ => Vec::new(),
    };
    let full = entries.len() == limit;
    let next = entries
        .last()
        .filter(|_| full)
        .and_then(|e| e.get("id"))
        .and_then(|id| id.as_str())
        .map(str::to_owned);
    Ok(Page {
        entries,
        added,
        kept,
        next,
    })
}

fn int(value: Option<Value>) -> u64 {
    match value {
        Some(Value::Int(n)) => n.max(0) as u64,
        _ => 0,
    }
}

/// One XRANGE entry, `[id, [field, value, …]]`, as a JSON object with its id.
fn entry(item: &Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    let Value::Array(parts) = item else {
        return None;
    };
    let [id, Value::Array(fields)] = parts.as_slice() else {
        return None;
    };
    let mut out = serde_json::Map::new();
    out.insert("id".into(), text(id)?.into());
    for pair in fields.chunks(2) {
        if let [field, value] = pair {
            out.insert(text(field)?, text(value)?.into());
        }
    }
    Some(out)
}

fn text(value: &Value) -> Option<String> {
    redis::from_redis_value_ref::<String>(value).ok()
}
