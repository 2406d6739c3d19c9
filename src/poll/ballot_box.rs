//! The poll in the resource store, beside the class (every key under the fleet's tag, see
//! `keys`): the poll in progress, and per chapter polled its rounds' votes and the run it was
//! revealed with. Every change is one script that checks the state it changes and tells the
//! fleet ([`POLL_CHANNEL`]) and counts the poll's version ([`POLL_VERSION`]) with the change;
//! a read is two round trips, both at one version (see [`snapshot`]).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use redis::Script;
use serde::{Deserialize, Serialize};

use crate::keys::{
    poll_notes, poll_room_runs, poll_votes, CLASS, POLL, POLL_CHANNEL, POLL_CHAPTERS, POLL_ROUNDS,
    POLL_RUNS, POLL_VERSION, ROOM_TOKENS,
};
use crate::redis_pool::{RedisPool, StoreError};
use parse::{
    bad_reply, class_rooms, notes, parse_poll, parse_run, room_runs, run_record, unexpected, votes,
};

/// A poll has round 1 and, after a discussion, round 2: Mazur's peer instruction votes twice.
pub const LAST_ROUND: u8 = 2;

/// A script of the poll, after `version.lua`, which counts the poll's version.
macro_rules! poll_script {
    ($file:literal) => {
        LazyLock::new(|| Script::new(concat!(include_str!("version.lua"), include_str!($file))))
    };
}

static VOTE: LazyLock<Script> = poll_script!("vote.lua");
static OPEN: LazyLock<Script> = poll_script!("open.lua");
static ROUND: LazyLock<Script> = poll_script!("round.lua");
static CLOSE: LazyLock<Script> = poll_script!("close.lua");
static REVEAL: LazyLock<Script> = poll_script!("reveal.lua");
static ROOM_RUN: LazyLock<Script> = poll_script!("room_run.lua");
static DELETE: LazyLock<Script> = poll_script!("delete.lua");
/// Reads of the chapters before a delete gives up: each new try follows a vote opened meanwhile.
const DELETE_TRIES: usize = 5;
static READ: LazyLock<Script> = poll_script!("read.lua");

/// A snapshot reads this many times at most while the poll changes between its two round
/// trips (a burst of votes), before it answers with the first read's version.
const READS: usize = 3;

/// The poll in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    pub chapter: String,
    pub round: u8,
    /// Whether votes are taken now.
    pub open: bool,
    pub revealed: bool,
}

/// One round's votes: room -> option (from 0).
pub type Votes = BTreeMap<String, usize>;

/// What a room said with its vote besides the letter: whether it is sure, and one line of why.
/// A student's free text: every page shows it as text, every export escapes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Note {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sure: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Note {
    fn is_empty(&self) -> bool {
        self.sure.is_none() && self.why.is_none()
    }
}

/// One round's notes: room -> its note (rooms that said nothing besides the letter have none).
pub type Notes = BTreeMap<String, Note>;

/// The run a chapter was revealed with, as kept in the store.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// Tells this run from a later one of the same chapter: a room's run in the background
    /// is kept only while the reveal it belongs to is the poll's.
    #[serde(default)]
    pub id: String,
    /// The room it ran in.
    pub room: String,
    /// Its first violation drawn from its history (SVG), when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
    /// The id its history is kept under in `room` (`GET /admin/runs/{id}/view`), when it was
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
    /// The option its figures landed in, by the question's rule.
    pub landed: Option<usize>,
    /// Whether the run showed what the chapter expects.
    pub passed: bool,
    pub figures: BTreeMap<String, f64>,
    /// The class's rooms it was also run in, one by one after the reveal (empty: only `room`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub every_room: Vec<String>,
}

/// How a chapter's run in one of the class's rooms ended, after the reveal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RoomRun {
    /// It ran: the option its figures landed in, and whether it showed what the chapter expects.
    Ran { landed: Option<usize>, passed: bool },
    /// It did not run to its end (the room was busy, the fleet did not answer the runner).
    Failed { error: String },
}

/// Each room's run: room -> how it ended.
pub type RoomRuns = BTreeMap<String, RoomRun>;

/// The class as the poll needs it: its rooms' prefix and how many there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassRooms {
    pub prefix: String,
    pub students: usize,
}

/// What the views are made of, read at once.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The poll's version these were read at (see `version.lua`): a view read later, after a
    /// change, has a larger one.
    pub version: u64,
    /// Whether a change counted the version; `false`: the store has seen no change since it
    /// started empty, and the version is its clock, larger at every read of the same poll.
    pub counted: bool,
    /// `None`: no poll (idle).
    pub poll: Option<Poll>,
    /// `None`: no class.
    pub class: Option<ClassRooms>,
    /// The votes of rounds 1 ..= the poll's round.
    pub votes: Vec<Votes>,
    /// The notes of the same rounds.
    pub notes: Vec<Notes>,
    /// The run the poll's chapter was last revealed with.
    pub run: Option<RunRecord>,
    /// Its runs in the class's rooms, when it was revealed in every room.
    pub room_runs: RoomRuns,
}

/// One chapter polled, for the results.
#[derive(Debug, Clone)]
pub struct ChapterRecord {
    pub chapter: String,
    /// Each round held, its votes.
    pub votes: Vec<Votes>,
    /// Each round held, its notes.
    pub notes: Vec<Notes>,
    pub run: Option<RunRecord>,
    pub room_runs: RoomRuns,
}

/// Why a vote was not counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VoteRefused {
    /// The token opens no room (never issued, revoked, or rotated since).
    UnknownToken,
    /// The token opens another room, named here.
    OtherRoom(String),
    /// The room is not one of the class's (or there is no class).
    NotInClass,
    NoOpenRound,
    /// The question has this many options.
    OutOfRange(usize),
}

/// The round a vote was counted in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub chapter: String,
    pub round: u8,
    /// The poll's version with the vote in it.
    pub version: u64,
}

/// A vote, atomically (see `vote.lua`). `believed` is the round the caller thinks open (the
/// instance's watcher knows it): right, it costs one round trip; stale, the script names the
/// open one and the vote is sent again once.
pub async fn vote(
    resource: &RedisPool,
    token_digest: &str,
    room: &str,
    option: usize,
    note: &Note,
    believed: Option<(String, u8)>,
) -> Result<Result<Counted, VoteRefused>, StoreError> {
    let note = match note.is_empty() {
        true => String::new(),
        false => serde_json::to_string(note)
            .map_err(|e| bad_reply("a note that is no JSON", e.to_string()))?,
    };
    let mut conn = resource.conn().await?;
    let (mut chapter, mut round) = believed.unwrap_or_default();
    for _ in 0..3 {
        let reply: Vec<String> = VOTE
            .key(POLL)
            .key(CLASS)
            .key(ROOM_TOKENS)
            .key(poll_votes(&chapter, round))
            .key(POLL_VERSION)
            .key(poll_notes(&chapter, round))
            .arg(token_digest)
            .arg(room)
            .arg(option)
            .arg(&chapter)
            .arg(round)
            .arg(POLL_CHANNEL)
            .arg(&note)
            .invoke_async(&mut conn)
            .await?;
        let word = |i: usize| reply.get(i).map(String::as_str).unwrap_or_default();
        let refused = match word(0) {
            "ok" => {
                let version = word(1)
                    .parse()
                    .map_err(|_| unexpected("vote.lua", &reply.join(" ")))?;
                return Ok(Ok(Counted {
                    chapter,
                    round,
                    version,
                }));
            }
            "stale" => {
                chapter = word(1).to_owned();
                round = word(2).parse().unwrap_or(0);
                continue;
            }
            "unknown_token" => VoteRefused::UnknownToken,
            "other_room" => VoteRefused::OtherRoom(word(1).to_owned()),
            "not_in_class" => VoteRefused::NotInClass,
            "no_open_round" => VoteRefused::NoOpenRound,
            "out_of_range" => VoteRefused::OutOfRange(word(1).parse().unwrap_or(0)),
            other => return Err(unexpected("vote.lua", other)),
        };
        return Ok(Err(refused));
    }
    // The round changed three times while this vote was sent: it is the same as arriving
    // between rounds.
    Ok(Err(VoteRefused::NoOpenRound))
}

/// Opens round 1 of `chapter` (whose question has `options` options), replacing any poll;
/// `false` when there is no class.
pub async fn open(resource: &RedisPool, chapter: &str, options: usize) -> Result<bool, StoreError> {
    let mut conn = resource.conn().await?;
    let opened: i64 = OPEN
        .key(POLL)
        .key(CLASS)
        .key(POLL_CHAPTERS)
        .key(POLL_ROUNDS)
        .key(POLL_RUNS)
        .key(poll_votes(chapter, 1))
        .key(poll_votes(chapter, 2))
        .key(poll_room_runs(chapter))
        .key(POLL_VERSION)
        .key(poll_notes(chapter, 1))
        .key(poll_notes(chapter, 2))
        .arg(chapter)
        .arg(options)
        .arg(POLL_CHANNEL)
        .invoke_async(&mut conn)
        .await?;
    Ok(opened == 1)
}

/// The question of the poll when it is not revealed yet (a round open or closed): what its
/// chapter explains stays from everyone but the admin token until the reveal.
pub async fn unrevealed(resource: &RedisPool) -> Result<Option<String>, StoreError> {
    let mut conn = resource.conn().await?;
    let (question, revealed): (Option<String>, Option<String>) = redis::cmd("HMGET")
        .arg(POLL)
        .arg("chapter")
        .arg("revealed")
        .query_async(&mut conn)
        .await?;
    Ok(question.filter(|_| revealed.as_deref() != Some("1")))
}

/// Why the next round was not opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoundRefused {
    NoPoll,
    Revealed,
    LastRound,
}

/// Closes the round in progress and opens the next; the new round.
pub async fn next_round(resource: &RedisPool) -> Result<Result<u8, RoundRefused>, StoreError> {
    let mut conn = resource.conn().await?;
    let reply: Vec<String> = ROUND
        .key(POLL)
        .key(POLL_ROUNDS)
        .key(POLL_VERSION)
        .arg(LAST_ROUND)
        .arg(POLL_CHANNEL)
        .invoke_async(&mut conn)
        .await?;
    let word = |i: usize| reply.get(i).map(String::as_str).unwrap_or_default();
    Ok(match word(0) {
        "ok" => Ok(word(1).parse().unwrap_or(LAST_ROUND)),
        "no_poll" => Err(RoundRefused::NoPoll),
        "revealed" => Err(RoundRefused::Revealed),
        "last_round" => Err(RoundRefused::LastRound),
        other => return Err(unexpected("round.lua", other)),
    })
}

/// Closes the round in progress (a closed one stays closed); the chapter polled, `None` when
/// there is no poll.
pub async fn close(resource: &RedisPool) -> Result<Option<String>, StoreError> {
    let mut conn = resource.conn().await?;
    let chapter: Option<String> = CLOSE
        .key(POLL)
        .key(POLL_VERSION)
        .arg(POLL_CHANNEL)
        .invoke_async(&mut conn)
        .await?;
    Ok(chapter)
}

/// Why a poll was not revealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevealRefused {
    /// The poll moved to another chapter (or went) while the run ran.
    Moved,
    /// No run to reveal: this poll has not run its chapter yet.
    NoRun,
}

/// Reveals the poll of `chapter` with `run`, or with the run it was revealed with before
/// (`None`).
pub async fn reveal(
    resource: &RedisPool,
    chapter: &str,
    run: Option<&RunRecord>,
) -> Result<Result<(), RevealRefused>, StoreError> {
    let run = match run {
        Some(run) => serde_json::to_string(run)
            .map_err(|e| bad_reply("a run that is no JSON", e.to_string()))?,
        None => String::new(),
    };
    let mut conn = resource.conn().await?;
    let reply: String = REVEAL
        .key(POLL)
        .key(POLL_RUNS)
        .key(POLL_VERSION)
        .arg(chapter)
        .arg(run)
        .arg(POLL_CHANNEL)
        .invoke_async(&mut conn)
        .await?;
    Ok(match reply.as_str() {
        "ok" => Ok(()),
        "moved" => Err(RevealRefused::Moved),
        "no_run" => Err(RevealRefused::NoRun),
        other => return Err(unexpected("reveal.lua", other)),
    })
}

/// Keeps `room`'s run of `chapter` if the reveal `run_id` is still the poll's; `false` when
/// it is not (the vote moved on): the rooms after it need not run.
pub async fn record_room_run(
    resource: &RedisPool,
    chapter: &str,
    run_id: &str,
    room: &str,
    run: &RoomRun,
    overwrite: Overwrite,
) -> Result<bool, StoreError> {
    let run = serde_json::to_string(run)
        .map_err(|e| bad_reply("a room's run that is no JSON", e.to_string()))?;
    room_run(resource, chapter, run_id, room, &run, overwrite).await
}

/// Whether a room's outcome replaces one already kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overwrite {
    /// How the room's run ended.
    Yes,
    /// Why a room was not run, which must not hide how a run that did end ended.
    No,
}

/// Whether the reveal `run_id` of `chapter` is still the poll's.
pub async fn reveal_is_current(
    resource: &RedisPool,
    chapter: &str,
    run_id: &str,
) -> Result<bool, StoreError> {
    room_run(resource, chapter, run_id, "", "", Overwrite::Yes).await
}

async fn room_run(
    resource: &RedisPool,
    chapter: &str,
    run_id: &str,
    room: &str,
    run: &str,
    overwrite: Overwrite,
) -> Result<bool, StoreError> {
    let mut conn = resource.conn().await?;
    let kept: i64 = ROOM_RUN
        .key(POLL)
        .key(POLL_RUNS)
        .key(poll_room_runs(chapter))
        .key(POLL_VERSION)
        .arg(chapter)
        .arg(run_id)
        .arg(room)
        .arg(run)
        .arg(POLL_CHANNEL)
        .arg(matches!(overwrite, Overwrite::Yes) as u8)
        .invoke_async(&mut conn)
        .await?;
    Ok(kept == 1)
}

/// The poll in progress, its votes and its run, and the class, at one version: two round
/// trips, the first a script (the poll, the class, the version), the second a transaction (the
/// version again, the votes and the runs of the poll's round). Should the version differ, the
/// poll changed in between: read again. After [`READS`] reads, the last is answered with its
/// first version, which may then be older than what it shows, never newer: a page drops it
/// after a newer view rather than draw it over one.
pub async fn snapshot(resource: &RedisPool) -> Result<Snapshot, StoreError> {
    let mut conn = resource.conn().await?;
    let mut tries = 0;
    loop {
        tries += 1;
        type Read = (
            u64,
            bool,
            BTreeMap<String, String>,
            (Option<String>, Option<usize>),
        );
        let (version, counted, fields, class): Read = READ
            .key(POLL)
            .key(CLASS)
            .key(POLL_VERSION)
            .invoke_async(&mut conn)
            .await?;
        let class = class_rooms(class);
        let Some(poll) = parse_poll(&fields) else {
            return Ok(Snapshot {
                version,
                counted,
                class,
                ..Snapshot::default()
            });
        };
        let mut pipe = redis::pipe();
        pipe.atomic().get(POLL_VERSION);
        for round in 1..=poll.round {
            pipe.hgetall(poll_votes(&poll.chapter, round));
            pipe.hgetall(poll_notes(&poll.chapter, round));
        }
        pipe.hget(POLL_RUNS, &poll.chapter);
        pipe.hgetall(poll_room_runs(&poll.chapter));
        let mut replies: Vec<redis::Value> = pipe.query_async(&mut conn).await?;
        let room_runs = room_runs(replies.pop().unwrap_or(redis::Value::Nil))?;
        let run = replies.pop().map(run_record).transpose()?.flatten();
        let mut replies = replies.into_iter();
        let again: Option<u64> = redis::from_redis_value(replies.next().unwrap_or_default())
            .map_err(redis::RedisError::from)?;
        if again != Some(version) && tries < READS {
            continue;
        }
        let (mut all_votes, mut all_notes) = (Vec::new(), Vec::new());
        while let (Some(v), Some(n)) = (replies.next(), replies.next()) {
            all_votes.push(votes(v)?);
            all_notes.push(notes(n)?);
        }
        return Ok(Snapshot {
            version,
            counted,
            poll: Some(poll),
            class,
            votes: all_votes,
            notes: all_notes,
            run,
            room_runs,
        });
    }
}

/// Every chapter this class was polled on, in the order first polled, and the class: two
/// round trips.
pub async fn records(
    resource: &RedisPool,
) -> Result<(Vec<ChapterRecord>, Option<ClassRooms>), StoreError> {
    let mut conn = resource.conn().await?;
    type Read = (
        Vec<String>,
        BTreeMap<String, u8>,
        BTreeMap<String, String>,
        (Option<String>, Option<usize>),
    );
    let (chapters, rounds, runs, class): Read = redis::pipe()
        .zrange(POLL_CHAPTERS, 0, -1)
        .hgetall(POLL_ROUNDS)
        .hgetall(POLL_RUNS)
        .cmd("HMGET")
        .arg(CLASS)
        .arg("prefix")
        .arg("students")
        .query_async(&mut conn)
        .await?;
    let held = |chapter: &str| rounds.get(chapter).copied().unwrap_or(1).min(LAST_ROUND);
    let mut pipe = redis::pipe();
    for chapter in &chapters {
        for round in 1..=held(chapter) {
            pipe.hgetall(poll_votes(chapter, round));
            pipe.hgetall(poll_notes(chapter, round));
        }
        pipe.hgetall(poll_room_runs(chapter));
    }
    // No chapter, no command: redis-rs refuses to send an empty pipeline.
    let replies = match chapters.is_empty() {
        true => Vec::new(),
        false => pipe.query_async::<Vec<redis::Value>>(&mut conn).await?,
    };
    let mut replies = replies.into_iter();
    let mut records = Vec::with_capacity(chapters.len());
    for chapter in chapters {
        let (mut all_votes, mut all_notes) = (Vec::new(), Vec::new());
        for _ in 1..=held(&chapter) {
            all_votes.push(votes(replies.next().unwrap_or(redis::Value::Nil))?);
            all_notes.push(notes(replies.next().unwrap_or(redis::Value::Nil))?);
        }
        let room_runs = room_runs(replies.next().unwrap_or(redis::Value::Nil))?;
        let run = runs.get(&chapter).map(|json| parse_run(json)).transpose()?;
        records.push(ChapterRecord {
            chapter,
            votes: all_votes,
            notes: all_notes,
            run,
            room_runs,
        });
    }
    Ok((records, class_rooms(class)))
}

/// Deletes the poll and every result of the class (a class closed, or a new one made).
pub async fn delete_all(resource: &RedisPool) -> Result<(), StoreError> {
    let mut conn = resource.conn().await?;
    // The script deletes only the keys it is given, and refuses when a chapter was polled
    // between the read and the delete (its votes would outlive the class): read again.
    for _ in 0..DELETE_TRIES {
        let chapters: Vec<String> = redis::cmd("ZRANGE")
            .arg(POLL_CHAPTERS)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let mut delete = DELETE.key(POLL_VERSION);
        delete
            .key(POLL)
            .key(POLL_CHAPTERS)
            .key(POLL_ROUNDS)
            .key(POLL_RUNS);
        for chapter in &chapters {
            for round in 1..=LAST_ROUND {
                delete.key(poll_votes(chapter, round));
                delete.key(poll_notes(chapter, round));
            }
            delete.key(poll_room_runs(chapter));
        }
        delete.arg(POLL_CHANNEL).arg(&chapters);
        let version: i64 = delete.invoke_async(&mut conn).await?;
        if version >= 0 {
            return Ok(());
        }
    }
    Err(StoreError::Unavailable(format!(
        "the class's chapters kept changing while its votes were deleted ({DELETE_TRIES} tries)"
    )))
}

mod parse;
#[cfg(test)]
mod tests;
