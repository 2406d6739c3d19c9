//! The words the commands answer in: Redis's error replies, and how it reads an integer.

use crate::store::Reply;

pub fn err(message: &str) -> Reply {
    Reply::Error(message.to_owned())
}

pub fn arity(name: &str) -> Reply {
    Reply::Error(format!(
        "ERR wrong number of arguments for '{}' command",
        name.to_lowercase()
    ))
}

pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const SYNTAX: &str = "ERR syntax error";

pub fn int(s: &str) -> Option<i64> {
    if s.starts_with('+') || (s.len() > 1 && s.starts_with('0')) || s.starts_with("-0") {
        return None;
    }
    s.parse().ok()
}

pub fn bulk_or_nil(s: Option<String>) -> Reply {
    s.map(Reply::Bulk).unwrap_or(Reply::Nil)
}

/// Runs one command (`args[0]` its name) on `store`.
/// A list index as Redis reads one: negative from the end.
pub fn index(i: i64, len: usize) -> i64 {
    if i < 0 {
        len as i64 + i
    } else {
        i
    }
}
