//! Reading the store's replies: the poll's fields, a round's votes and notes, the runs.

use std::collections::BTreeMap;

use super::{ClassRooms, Notes, Poll, RoomRuns, RunRecord, Votes};
use crate::redis_pool::StoreError;

pub(super) fn class_rooms(
    (prefix, students): (Option<String>, Option<usize>),
) -> Option<ClassRooms> {
    let (prefix, students) = prefix.zip(students)?;
    Some(ClassRooms { prefix, students })
}

pub(super) fn parse_poll(fields: &BTreeMap<String, String>) -> Option<Poll> {
    let field = |name: &str| fields.get(name).map(String::as_str);
    Some(Poll {
        chapter: field("chapter")?.to_owned(),
        round: field("round")?.parse().ok()?,
        open: field("open") == Some("1"),
        revealed: field("revealed") == Some("1"),
    })
}

/// One round's votes from `HGETALL`; an option that is not a number is a vote for none.
pub(super) fn votes(reply: redis::Value) -> Result<Votes, StoreError> {
    let fields: BTreeMap<String, String> =
        redis::from_redis_value(reply).map_err(redis::RedisError::from)?;
    Ok(fields
        .into_iter()
        .filter_map(|(room, option)| Some((room, option.parse().ok()?)))
        .collect())
}

/// One round's notes from `HGETALL`; one that is not the JSON of a note is left out.
pub(super) fn notes(reply: redis::Value) -> Result<Notes, StoreError> {
    let fields: BTreeMap<String, String> =
        redis::from_redis_value(reply).map_err(redis::RedisError::from)?;
    Ok(fields
        .into_iter()
        .filter_map(|(room, json)| Some((room, serde_json::from_str(&json).ok()?)))
        .collect())
}

/// Each room's run from `HGETALL`; one that is not the JSON of a room's run is left out.
pub(super) fn room_runs(reply: redis::Value) -> Result<RoomRuns, StoreError> {
    let fields: BTreeMap<String, String> =
        redis::from_redis_value(reply).map_err(redis::RedisError::from)?;
    Ok(fields
        .into_iter()
        .filter_map(|(room, json)| Some((room, serde_json::from_str(&json).ok()?)))
        .collect())
}

pub(super) fn run_record(reply: redis::Value) -> Result<Option<RunRecord>, StoreError> {
    let json: Option<String> = redis::from_redis_value(reply).map_err(redis::RedisError::from)?;
    json.as_deref().map(parse_run).transpose()
}

pub(super) fn parse_run(json: &str) -> Result<RunRecord, StoreError> {
    serde_json::from_str(json)
        .map_err(|e| bad_reply("a kept run is not the JSON of a run", e.to_string()))
}

pub(super) fn unexpected(script: &str, reply: &str) -> StoreError {
    bad_reply(
        "unexpected reply of a poll script",
        format!("{script}: `{reply}`"),
    )
}

pub(super) fn bad_reply(what: &'static str, detail: String) -> StoreError {
    StoreError::Failed(redis::RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        what,
        detail,
    )))
}
