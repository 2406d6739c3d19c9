//! The last runs' histories of each room, kept in the resource store for
//! `GET /admin/runs/{id}/history`: every chapter the fleet runs itself (a run from the
//! dashboard or the class's reveal, a lab attack) leaves its history here under its run id.
//!
//! Bounded: a room keeps its newest [`KEPT_PER_ROOM`] histories, each at most
//! [`MAX_HISTORY_BYTES`] (a longer one is cut at a line, with a `cut` line saying so, never
//! silently), and they go with the room. A history is written once the run is over, never
//! on the sale's path.

use std::sync::LazyLock;

use oversell_api::history::{Cut, Line};
use redis::Script;
use serde::Serialize;

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

/// Runs a room keeps the history of.
pub const KEPT_PER_ROOM: usize = 3;
/// The most bytes of one kept history: a chapter of 300 buyers writes about 150 KB.
pub const MAX_HISTORY_BYTES: usize = 1 << 20;

static KEEP: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("histories/keep.lua")));

/// Keeps a run's history as JSON Lines, cut to [`MAX_HISTORY_BYTES`].
pub async fn keep(
    resource: &RedisPool,
    keys: &Keys,
    run_id: &str,
    lines: &[Line],
) -> Result<(), StoreError> {
    let text = jsonl(lines, MAX_HISTORY_BYTES);
    let mut conn = resource.conn().await?;
    let _: i64 = KEEP
        .key(keys.histories())
        .key(keys.history_ids())
        .key(keys.stock())
        .arg(run_id)
        .arg(text)
        .arg(KEPT_PER_ROOM)
        .invoke_async(&mut conn)
        .await?;
    Ok(())
}

/// A kept history, as JSON Lines; `None` when the room keeps no run of that id.
pub async fn read(
    resource: &RedisPool,
    keys: &Keys,
    run_id: &str,
) -> Result<Option<String>, StoreError> {
    let mut conn = resource.conn().await?;
    let text: Option<String> = redis::cmd("HGET")
        .arg(keys.histories())
        .arg(run_id)
        .query_async(&mut conn)
        .await?;
    Ok(text)
}

/// What the room keeps: each run's id, chapter and size, newest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Kept {
    pub id: String,
    pub chapter: Option<String>,
    pub tier: Option<String>,
    pub bytes: usize,
}

pub async fn list(resource: &RedisPool, keys: &Keys) -> Result<Vec<Kept>, StoreError> {
    let mut conn = resource.conn().await?;
    let ids: Vec<String> = redis::cmd("LRANGE")
        .arg(keys.history_ids())
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let texts: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(keys.histories())
        .arg(&ids)
        .query_async(&mut conn)
        .await?;
    Ok(ids
        .into_iter()
        .zip(texts)
        .filter_map(|(id, text)| {
            let text = text?;
            let first: serde_json::Value = text
                .lines()
                .next()
                .and_then(|l| serde_json::from_str(l).ok())
                .unwrap_or_default();
            let field = |name: &str| first[name].as_str().map(str::to_owned);
            Some(Kept {
                id,
                chapter: field("chapter"),
                tier: field("tier"),
                bytes: text.len(),
            })
        })
        .collect())
}

/// The lines as JSON Lines, at most `max` bytes: cut at a line, with a `cut` line saying how
/// much was kept (the run and end lines always are).
fn jsonl(lines: &[Line], max: usize) -> String {
    let encoded: Vec<String> = lines
        .iter()
        .filter_map(|l| serde_json::to_string(l).ok())
        .collect();
    let total: usize = encoded.iter().map(|l| l.len() + 1).sum();
    if total <= max {
        return encoded.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
    }
    // Room for the cut line and the end line, which are kept whatever is cut.
    let end = encoded.last().cloned().unwrap_or_default();
    let budget = max.saturating_sub(end.len() + 512);
    let mut out = String::with_capacity(max);
    let mut kept = 0;
    for line in &encoded[..encoded.len().saturating_sub(1)] {
        if out.len() + line.len() + 1 > budget {
            break;
        }
        out.push_str(line);
        out.push('\n');
        kept += 1;
    }
    let cut = Line::Cut(Cut {
        what: "history".into(),
        reason: format!(
            "the fleet keeps {max} bytes of a run: the first {kept} of {} lines are here \
             (`loadtest scenario … --history FILE` writes them all)",
            encoded.len()
        ),
    });
    if let Ok(cut) = serde_json::to_string(&cut) {
        out.push_str(&cut);
        out.push('\n');
    }
    out.push_str(&end);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversell_api::history::End;

    #[test]
    fn a_history_too_big_to_keep_is_cut_at_a_line_and_says_so() {
        let end = Line::End(End {
            at_us: 2,
            stock: Some(0),
        });
        let cut = Line::Cut(Cut {
            what: "section".into(),
            reason: "x".repeat(100),
        });
        let lines: Vec<Line> = std::iter::repeat_n(cut, 50).chain([end]).collect();
        let whole = jsonl(&lines, 1 << 20);
        assert_eq!(whole.lines().count(), 51);
        let small = jsonl(&lines, 2000);
        assert!(small.len() <= 2000, "{} bytes", small.len());
        let last: Vec<&str> = small.lines().rev().take(2).collect();
        assert!(last[0].contains(r#""type":"end""#), "{}", last[0]);
        assert!(last[1].contains(r#""what":"history""#), "{}", last[1]);
        assert!(last[1].contains("of 51 lines"), "{}", last[1]);
    }
}
