//! The extend a client sends before it goes on with a long task (`extend-retakes`,
//! `extend-checked`): one script on the lock's key, whose answer decides whether the holder
//! writes. Two versions, as the libraries had them before and after their fixes:
//!
//! - `extend_retakes.lua`, redlock-rb's extend before #36 was fixed and redis-semaphore's
//!   refresh before #175 was: the key holding the holder's value *or nothing* gets the value
//!   and a new lease, so a lapse it came too late for is taken back without a word;
//! - Redlock's extension on one master (`tiers/redlock_extend.lua`, the script the `redlock`
//!   tier's renewals send): a new lease only while the key holds the holder's value, which is
//!   what both libraries send since.
//!
//! The renewal of `renew-in-seconds` and `renew-in-milliseconds` is the checked one, given
//! its lease in the wrong unit or the right one.
//!
//! Both act on the key of a lock that holds its owner's value (`lua-release`, `uuid-owner`);
//! another tier's lock lives under another key, where the checked extend finds nothing.

use std::sync::LazyLock;

use redis::Script;

use crate::lock::tiers::redlock::EXTEND as CHECKED;
use crate::lock::LockCx;
use crate::redis_pool::StoreError;

static RETAKES: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("extend_retakes.lua")));

/// Which extend the holder sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Extend {
    /// A key holding nothing is taken again.
    Retakes,
    /// Only a key holding the holder's value is extended.
    Checked,
}

/// Sends the extend for `cx.owner`'s lock, a new lease of the room's `ttl_ms`: whether it
/// says the lock is still the holder's.
pub(super) async fn extend(cx: &LockCx<'_>, how: Extend) -> Result<bool, StoreError> {
    extend_by(cx, how, cx.settings.ttl_ms).await
}

/// [`extend`], with `lease` as the number the script reads as milliseconds.
pub(super) async fn extend_by(
    cx: &LockCx<'_>,
    how: Extend,
    lease: u64,
) -> Result<bool, StoreError> {
    let script = match how {
        Extend::Retakes => &*RETAKES,
        Extend::Checked => &*CHECKED,
    };
    let mut conn = cx.conn().await?;
    let extended: i64 = script
        .key(cx.keys.lock())
        .arg(cx.owner)
        .arg(lease)
        .invoke_async(&mut conn)
        .await?;
    Ok(extended == 1)
}
