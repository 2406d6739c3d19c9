//! Several Lua scripts run as one: the calls a sale makes back to back (the lock's acquire and
//! the read behind it, its write and the lock's release, a cohort's write and the next sale's
//! read, the reentrant tiers' nested re-entry, read and nested release) are sent in one round
//! trip, as one `EVALSHA` of a script composed of theirs (`composed.lua` runs the parts in
//! order and returns every part's reply).
//!
//! # What it guarantees
//! The same scripts, in the same order, on the same keys and arguments, as the sale would send
//! them one by one, each part's reply (an error included) as that call's reply. Only the
//! waiting between them goes, and nothing else runs between them. Behind an acquire
//! ([`run_if_first_takes`]) the later parts run only if the acquire took the lock, as a sale
//! that sent them one by one would only send them then; behind a lock already held
//! ([`run_holding`]) an argument that asks for the lock's fencing token ([`ACQUIRED`]) gets
//! the holder's, as it would have sent it.
//!
//! # What breaks it, and how it is kept from breaking
//! A server that has lost its scripts (a restart, `SCRIPT FLUSH`) answers `NOSCRIPT`. The
//! composed script is one script: either all its parts run or none does, so it is loaded and
//! sent again, as redis-rs' `Script::invoke` does. (Separate calls in one pipeline, which this
//! replaced, could half-run: a release whose script happened to be loaded after a write whose
//! script was not.)
//!
//! # Why it exists, and why not a pipeline
//! A locked sale is a chain of round trips, each one a hand-off the next buyer waits
//! for. A pipeline also saves the round trips, but must send every script but the last whole
//! (`EVAL`, see above), and Redis then hashes the source on every call: measured at 25 µs per
//! `EVAL` of `commit.lua` against 11 µs per `EVALSHA` of `enter.lua`, on the lock's serial path.
//! redis-rs has no way to compose scripts; the composition is a few lines, kept here.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use redis::{RedisResult, Value};

mod call;

pub use call::{Call, Lua, ACQUIRED};

/// The code `composed.lua` needs before it: every part's source as `PARTS[i]`.
const END: &str = include_str!("composed.lua");

/// The script made of `parts`, in that order: made once per sequence (the sequences are the
/// sale's own, a handful) and kept for the life of the process.
fn composed(parts: &[&'static Lua]) -> &'static Lua {
    static MADE: LazyLock<Mutex<HashMap<Vec<usize>, &'static Lua>>> =
        LazyLock::new(Default::default);
    let id: Vec<usize> = parts
        .iter()
        .map(|p| std::ptr::from_ref(*p) as usize)
        .collect();
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    made.entry(id).or_insert_with(|| {
        let mut source = String::from("local PARTS = {}\n");
        for (i, part) in parts.iter().enumerate() {
            source.push_str(&format!(
                "PARTS[{}] = function(KEYS, ARGV)\n{}\nend\n",
                i + 1,
                part.source
            ));
        }
        source.push_str(END);
        Box::leak(Box::new(Lua::new(Box::leak(source.into_boxed_str()))))
    })
}

/// `inner` run inside another script: `before`, then `inner` as a function of the `keys` and
/// `args` that `before` makes (its own `KEYS` and `ARGV`), its answer as `reply`, then
/// `after`. Made once per pair and kept for the life of the process, as [`composed`] is.
pub fn wrapped(before: &'static str, inner: &'static Lua, after: &'static str) -> &'static Lua {
    static MADE: LazyLock<Mutex<HashMap<(usize, usize), &'static Lua>>> =
        LazyLock::new(Default::default);
    let id = (before.as_ptr() as usize, std::ptr::from_ref(inner) as usize);
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    made.entry(id).or_insert_with(|| {
        let source = format!(
            "{before}local reply = (function(KEYS, ARGV)\n{}\nend)(keys, args)\n{after}",
            inner.source
        );
        Box::leak(Box::new(Lua::new(Box::leak(source.into_boxed_str()))))
    })
}

/// Runs the calls in one round trip, in order, as one script, and returns each one's reply
/// (a script's error, such as `NOSTOCK`, is that call's reply; a lost connection, or a server
/// that refuses the whole script, is the whole answer).
pub async fn run_in_order<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    calls: &[&Call],
) -> RedisResult<Vec<RedisResult<Value>>> {
    run(conn, calls, Mode::All).await
}

/// A trip's replies split into the first call's and the rest's (or the trip's failure, for
/// both): a sale's last call, and what the lock sent behind it.
pub fn first_and_rest(
    replies: RedisResult<Vec<RedisResult<Value>>>,
) -> (RedisResult<Value>, RedisResult<Vec<RedisResult<Value>>>) {
    match replies {
        Ok(mut replies) if !replies.is_empty() => (replies.remove(0), Ok(replies)),
        Ok(_) => (Ok(Value::Nil), Ok(Vec::new())),
        Err(err) => (Err(err.clone()), Err(err)),
    }
}

/// As [`run_in_order`], for calls sent with a lock already held whose fencing token is `fence`
/// (a cohort's pass, a read sent after the acquire): an argument that is exactly [`ACQUIRED`]
/// becomes that token, or `''` for none.
pub async fn run_holding<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    calls: &[&Call],
    fence: Option<u64>,
) -> RedisResult<Vec<RedisResult<Value>>> {
    run(conn, calls, Mode::Holding(fence)).await
}

/// As [`run_in_order`], but the calls after the first run only if the first took what it
/// asked for: an acquire step whose reply goes on by the lab's contract (`1`, `OK`, or a table
/// starting with one). When it did not, their replies are nil. An argument of theirs that is
/// exactly [`ACQUIRED`] becomes the fencing token the acquire took (its `{depth, token}`
/// reply's token above 0), or `''` when it took none.
pub async fn run_if_first_takes<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    calls: &[&Call],
) -> RedisResult<Vec<RedisResult<Value>>> {
    run(conn, calls, Mode::Gated).await
}

/// How `composed.lua` runs the parts (its `ARGV[1]` and `ARGV[2]`).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Every part, as it is.
    All,
    /// The parts after the first only if the first took the lock, with its token.
    Gated,
    /// Every part, with the token of the lock held.
    Holding(Option<u64>),
}

async fn run<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    calls: &[&Call],
    mode: Mode,
) -> RedisResult<Vec<RedisResult<Value>>> {
    // One call needs no composing, and its reply is the whole answer either way: behind a held
    // lock it is given the token here, as `composed.lua` would (a script of one part would cost
    // Redis the composition's loop for nothing).
    match (calls, mode) {
        ([], _) => return Ok(Vec::new()),
        ([call], Mode::All) => return Ok(vec![call.invoke(conn).await]),
        ([call], Mode::Holding(fence)) => {
            let token = fence.map(|f| f.to_string()).unwrap_or_default();
            return Ok(vec![call.given(&token).invoke(conn).await]);
        }
        _ => {}
    }
    let parts: Vec<&'static Lua> = calls.iter().map(|c| c.lua).collect();
    let script = composed(&parts);
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(script.script.get_hash());
    cmd.arg(calls.iter().map(|c| c.keys.len()).sum::<usize>());
    for call in calls {
        cmd.arg(&call.keys);
    }
    match mode {
        Mode::All => cmd.arg("0").arg(""),
        Mode::Gated => cmd.arg("1").arg(""),
        Mode::Holding(fence) => cmd
            .arg("2")
            .arg(fence.map(|f| f.to_string()).unwrap_or_default()),
    };
    for call in calls {
        cmd.arg(call.keys.len());
    }
    for call in calls {
        cmd.arg(call.args.len());
    }
    for call in calls {
        cmd.arg(&call.args);
    }
    // A pipeline of one, so that errors inside the reply stay that part's (a plain query
    // would turn any of them into an error of the whole).
    let mut pipe = redis::pipe();
    pipe.ignore_errors().add_command(cmd);
    let mut answer = send(conn, &pipe).await?;
    if matches!(&answer, Value::ServerError(err) if err.kind() == Some(redis::ServerErrorKind::NoScript))
    {
        // Nothing ran: load the script and send it again.
        script.script.prepare_invoke().load_async(conn).await?;
        answer = send(conn, &pipe).await?;
    }
    match answer {
        Value::ServerError(err) => Err(err.into()),
        Value::Array(replies) if replies.len() == calls.len() => {
            Ok(replies.into_iter().map(Value::extract_error).collect())
        }
        other => Err(redis::RedisError::from((
            redis::ErrorKind::Client,
            "a composed script gave another reply than one per part",
            format!("{other:?}"),
        ))),
    }
}

/// Sends a pipeline of one command and returns its reply as it came, errors inside it included.
async fn send<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    pipe: &redis::Pipeline,
) -> RedisResult<Value> {
    let mut replies: Vec<Value> = pipe.query_async(conn).await?;
    replies.pop().ok_or_else(|| {
        redis::RedisError::from((redis::ErrorKind::Client, "a pipeline of one gave no reply"))
    })
}
