//! Room tokens: a key to one room each, for the students of a class, and the short join code
//! that gets a student who lost the tab back in.
//!
//! A room token lets its holder do in its room what the admin token does everywhere (reset,
//! settings, room faults, bursts, scenarios) and nothing elsewhere. Only the token's SHA-256
//! is stored, in the resource store: a copy of the store, a log of its commands or a look over
//! the instructor's shoulder at `redis-cli` hands out no key. A token is shown once, when it is
//! issued; losing it means issuing a new one.
//!
//! Every admin request that does not carry the admin token looks its token up here, with no
//! cache on the instances: a rotation or a revocation takes effect on every instance at the
//! moment the script below runs.
//!
//! A room's **join code** (8 characters of Crockford's base32, `7KQ2-M9XD`: 40 random bits)
//! is printed on its slip beside the link. `POST /join` exchanges it for a *session*: a token
//! of its own for the same room (the slip's link keeps working), looked up as a token is. The
//! code is stored as a digest too, and a new token or a revocation ends the code and every
//! session it gave in the same script. A digest of 40 bits guards the code from a look at
//! `redis-cli`, not from a search of a stolen copy of the store; what guards it from a
//! neighbour's guesses is the limit on attempts, per address and for the whole fleet
//! ([`JOIN_TRIES_PER_ADDRESS`], [`JOIN_TRIES_OF_FLEET`] every [`JOIN_WINDOW_SECS`] seconds):
//! with at most 400 live codes, one guess finds a code with a chance of 400 / 2^40, about
//! 1 in 2.7 billion, so the fleet's 120 tries a minute would take about 43 years on average.

use std::sync::LazyLock;

use redis::Script;
use sha2::{Digest, Sha256};

use crate::keys::{
    join_tries_of, JOIN_TRIES, ROOM_CODES, ROOM_CODE_OF, ROOM_SESSIONS_OF, ROOM_TOKENS,
    ROOM_TOKEN_OF,
};
use crate::redis_pool::{RedisPool, StoreError};

static SET: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("room_tokens/set.lua")));
static JOIN: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("room_tokens/join.lua")));

/// Join-code attempts one client address may make a window: a class behind one address (a
/// school's NAT) shares them, so a few students who lost their tabs in the same minute and
/// mistype once each still get in.
pub const JOIN_TRIES_PER_ADDRESS: u32 = 20;
/// Join-code attempts of the whole fleet a window, whatever the addresses: a neighbour with
/// many addresses guesses no faster than this.
pub const JOIN_TRIES_OF_FLEET: u32 = 120;
/// The window both limits count over, in seconds.
pub const JOIN_WINDOW_SECS: u32 = 60;
/// Sessions one room's code keeps: a student who rejoins on a fourth phone ends the first.
pub const SESSIONS_PER_ROOM: u32 = 8;

/// Crockford's base32: no I, L, O or U, so a code read off paper is not mistyped as another.
const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters of a code: 8 × 5 = 40 bits.
const CODE_LEN: usize = 8;

/// What a room is handed: its token and its join code, shown once.
pub struct Issued {
    pub token: String,
    /// `7KQ2-M9XD`.
    pub code: String,
}

/// A new token and join code for `room`, replacing the ones it had (which stop working at
/// once, with every session the old code gave).
pub async fn issue(redis: &RedisPool, room: &str) -> Result<Issued, StoreError> {
    // 122 random bits (UUID v4), in a shape that says what it is when found in a paste.
    let token = new_token();
    let code = new_code();
    set(redis, room, &digest(&token), &digest(&normal_code(&code))).await?;
    Ok(Issued { token, code })
}

/// Takes the room's token, code and sessions away; whether it had a token.
pub async fn revoke(redis: &RedisPool, room: &str) -> Result<bool, StoreError> {
    set(redis, room, "", "").await
}

/// What an attempt to join by code came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Joined {
    /// A session of `room`: a token of its own.
    Session { room: String, token: String },
    /// No room has this code (a mistype, an old slip, a revoked room).
    Unknown,
    /// Over a limit: try again after this many seconds.
    Limited { retry_after_secs: u64 },
}

/// Exchanges `code` (as typed: any case, with or without its dash) for a session of its room,
/// the attempt counted against `address` and the fleet first.
pub async fn join(redis: &RedisPool, code: &str, address: &str) -> Result<Joined, StoreError> {
    let session = new_token();
    let mut conn = redis.conn().await?;
    let (word, value): (String, String) = JOIN
        .key(ROOM_CODES)
        .key(ROOM_TOKENS)
        .key(ROOM_SESSIONS_OF)
        .key(join_tries_of(address))
        .key(JOIN_TRIES)
        .arg(digest(&normal_code(code)))
        .arg(digest(&session))
        .arg(JOIN_TRIES_PER_ADDRESS)
        .arg(JOIN_TRIES_OF_FLEET)
        .arg(JOIN_WINDOW_SECS)
        .arg(SESSIONS_PER_ROOM)
        .invoke_async(&mut conn)
        .await?;
    Ok(match word.as_str() {
        "joined" => Joined::Session {
            room: value,
            token: session,
        },
        "limited" => Joined::Limited {
            retry_after_secs: value.parse().unwrap_or(1),
        },
        _ => Joined::Unknown,
    })
}

fn new_token() -> String {
    format!("room-{}", uuid::Uuid::new_v4().simple())
}

/// 40 random bits (the first five bytes of a UUID v4 are all random) as `XXXX-XXXX`.
fn new_code() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let bits = bytes[..5]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let chars: String = (0..CODE_LEN)
        .rev()
        .map(|i| char::from(CODE_ALPHABET[((bits >> (5 * i)) & 31) as usize]))
        .collect();
    format!("{}-{}", &chars[..4], &chars[4..])
}

/// A code as typed, in the form its digest is taken of: upper case, no dash or space, and
/// Crockford's look-alikes read as the digits they look like (O as 0, I and L as 1).
pub fn normal_code(typed: &str) -> String {
    typed
        .chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            c => c,
        })
        .collect()
}

/// Whether `typed` can be a code at all: 8 of the alphabet's characters once normalised.
pub fn looks_like_code(typed: &str) -> bool {
    let code = normal_code(typed);
    code.len() == CODE_LEN && code.bytes().all(|b| CODE_ALPHABET.contains(&b))
}

/// The room a token opens, if it is a live room token.
pub async fn room_of(redis: &RedisPool, token: &str) -> Result<Option<String>, StoreError> {
    let mut conn = redis.conn().await?;
    let room: Option<String> = redis::cmd("HGET")
        .arg(ROOM_TOKENS)
        .arg(digest(token))
        .query_async(&mut conn)
        .await?;
    Ok(room)
}

/// Every room that has a token now.
pub async fn rooms_with_tokens(redis: &RedisPool) -> Result<Vec<String>, StoreError> {
    let mut conn = redis.conn().await?;
    let rooms: Vec<String> = redis::cmd("HKEYS")
        .arg(ROOM_TOKEN_OF)
        .query_async(&mut conn)
        .await?;
    Ok(rooms)
}

async fn set(
    redis: &RedisPool,
    room: &str,
    digest: &str,
    code_digest: &str,
) -> Result<bool, StoreError> {
    let mut conn = redis.conn().await?;
    let had: i64 = SET
        .key(ROOM_TOKENS)
        .key(ROOM_TOKEN_OF)
        .key(ROOM_CODES)
        .key(ROOM_CODE_OF)
        .key(ROOM_SESSIONS_OF)
        .arg(room)
        .arg(digest)
        .arg(code_digest)
        .invoke_async(&mut conn)
        .await?;
    Ok(had == 1)
}

/// SHA-256 of the token, in hex. A plain hash (no salt, no stretching) is enough: the token
/// is 122 random bits, not a password someone chose.
pub(crate) fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_in_hex() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_code_is_two_groups_of_four_from_crockfords_alphabet() {
        let codes: Vec<String> = (0..200).map(|_| new_code()).collect();
        for code in &codes {
            assert_eq!(code.len(), 9, "{code}");
            assert_eq!(&code[4..5], "-", "{code}");
            assert!(looks_like_code(code), "{code}");
        }
        let distinct: std::collections::HashSet<_> = codes.iter().collect();
        assert_eq!(
            distinct.len(),
            codes.len(),
            "40 bits: 200 codes never repeat"
        );
    }

    #[test]
    fn a_code_is_read_as_typed_in_any_case_with_its_look_alikes() {
        assert_eq!(normal_code("7kq2-m9xd"), "7KQ2M9XD");
        assert_eq!(normal_code("o1l2 i3ab"), "011213AB");
        assert!(looks_like_code("7kq2 m9xd"));
        assert!(!looks_like_code("7KQ2-M9X"), "seven characters");
        assert!(!looks_like_code("7KQ2-M9XU"), "U is not in the alphabet");
    }
}
