//! What a lock operation saw, written to the resource store: the lock store reports, the
//! resource store remembers. Each record is one script call that counts the event (when it is
//! a ground-truth figure) and puts it on the lock timeline.
//!
//! These calls happen only when something noteworthy happened (a foreign or lost release, a
//! renewal, a store fault), so the sale's usual path pays nothing for them.

use std::sync::LazyLock;

use redis::Script;

use crate::keys::Keys;
use crate::redis_pool::{RedisPool, StoreError};

static RECORD: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("record.lua")));

/// A release that deleted a lock another holder had taken. `since`: the room's reset
/// generation when the sale began (see `record.lua`).
pub async fn foreign_release(
    truth: &RedisPool,
    keys: &Keys,
    since: &str,
    instance: &str,
    owner: &str,
    victim: &str,
) -> Result<(), StoreError> {
    let fields = [("instance", instance), ("owner", owner), ("victim", victim)];
    write(
        truth,
        keys,
        Some(keys.foreign_releases()),
        since,
        "foreign_release",
        &fields,
    )
    .await
}

/// A release that found the lock gone or someone else's: its holder had lost it without
/// knowing (Redisson throws `IllegalMonitorStateException` at this point). `since`: as for
/// [`foreign_release`].
pub async fn lost_release(
    truth: &RedisPool,
    keys: &Keys,
    since: &str,
    instance: &str,
    owner: &str,
) -> Result<(), StoreError> {
    let fields = [("instance", instance), ("owner", owner)];
    write(
        truth,
        keys,
        Some(keys.lost_releases()),
        since,
        "lost_release",
        &fields,
    )
    .await
}

/// A Redlock acquire that won its majority with no validity left (the votes took longer than
/// the lease allows), given back on every master: `released` is how many still had it to
/// give back, `elapsed_ms` how long the votes took. `since`: as for [`foreign_release`].
pub async fn validity_lapsed(
    truth: &RedisPool,
    keys: &Keys,
    since: &str,
    instance: &str,
    owner: &str,
    elapsed_ms: u128,
    released: usize,
) -> Result<(), StoreError> {
    let (elapsed_ms, released) = (elapsed_ms.to_string(), released.to_string());
    let fields = [
        ("instance", instance),
        ("owner", owner),
        ("elapsed_ms", elapsed_ms.as_str()),
        ("released", released.as_str()),
    ];
    write(
        truth,
        keys,
        Some(keys.validity_lapsed()),
        since,
        "validity_lapsed",
        &fields,
    )
    .await
}

/// A watchdog renewal (timeline only).
pub async fn renewal(
    truth: &RedisPool,
    keys: &Keys,
    instance: &str,
    owner: &str,
) -> Result<(), StoreError> {
    let fields = [("instance", instance), ("owner", owner)];
    write(truth, keys, None, "", "renew", &fields).await
}

/// A lock-store fault striking (`failover`, `lock-store-restart`): which node was killed, and
/// the holder whose lock went with it.
pub async fn store_fault(
    truth: &RedisPool,
    keys: &Keys,
    instance: &str,
    owner: &str,
    fault: &str,
    node: &str,
) -> Result<(), StoreError> {
    let fields = [
        ("instance", instance),
        ("owner", owner),
        ("fault", fault),
        ("node", node),
    ];
    write(
        truth,
        keys,
        Some(keys.store_faults()),
        "",
        "store_fault",
        &fields,
    )
    .await
}

/// A network partition made or healed (`kind` `partition` or `heal`): timeline only.
pub async fn network(
    truth: &RedisPool,
    keys: &Keys,
    kind: &str,
    fields: &[(&str, &str)],
) -> Result<(), StoreError> {
    write(truth, keys, None, "", kind, fields).await
}

/// `since`: the room's reset generation when the event's sale began; nothing is written when a
/// reset came since. Empty: written in any case.
async fn write(
    truth: &RedisPool,
    keys: &Keys,
    counter: Option<String>,
    since: &str,
    kind: &str,
    fields: &[(&str, &str)],
) -> Result<(), StoreError> {
    let mut conn = truth.conn().await?;
    let mut call = RECORD.key(counter.as_deref().unwrap_or(&keys.timeline()));
    call.key(keys.timeline())
        .key(keys.generation())
        .arg(if counter.is_some() { "1" } else { "0" })
        .arg(kind)
        .arg(since);
    for (field, value) in fields {
        call.arg(*field).arg(*value);
    }
    let _: i64 = call.invoke_async(&mut conn).await?;
    Ok(())
}
