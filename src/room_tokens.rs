//! Room tokens: a key to one room each, for the students of a class.
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

use std::sync::LazyLock;

use redis::Script;
use sha2::{Digest, Sha256};

use crate::keys::{ROOM_TOKENS, ROOM_TOKEN_OF};
use crate::redis_pool::{RedisPool, StoreError};

static SET: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("room_tokens/set.lua")));

/// A new token for `room`, replacing the one it had (which stops working at once).
pub async fn issue(redis: &RedisPool, room: &str) -> Result<String, StoreError> {
    // 122 random bits (UUID v4), in a shape that says what it is when found in a paste.
    let token = format!("room-{}", uuid::Uuid::new_v4().simple());
    set(redis, room, &digest(&token)).await?;
    Ok(token)
}

/// Takes the room's token away; whether it had one.
pub async fn revoke(redis: &RedisPool, room: &str) -> Result<bool, StoreError> {
    set(redis, room, "").await
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

async fn set(redis: &RedisPool, room: &str, digest: &str) -> Result<bool, StoreError> {
    let mut conn = redis.conn().await?;
    let had: i64 = SET
        .key(ROOM_TOKENS)
        .key(ROOM_TOKEN_OF)
        .arg(room)
        .arg(digest)
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
}
