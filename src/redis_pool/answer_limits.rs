//! How long Redis may take to answer before it counts as unavailable, timed on this
//! process's own running time, and the settings every connection is made with.

use std::time::Duration;

use redis::io::tcp::TcpSettings;
use redis::{AsyncConnectionConfig, Cmd, RedisError, RedisFuture, RedisResult};

/// How an answer that did not come in time is said: the command was sent, and Redis may yet
/// run it (see [`StoreError::may_have_run`](super::StoreError::may_have_run)).
pub(crate) const UNANSWERED: &str = "no answer from redis within";

/// redis-rs' own default: a Redis that has not answered in this long (of time this process
/// ran) counts as unavailable.
pub(super) const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_millis(500);
/// A lock store that has not answered a command in this long is unreachable (a partition drops
/// packets without closing anything): the connection is dropped, and behind Sentinel the next
/// one asks where the primary is now.
pub(super) const LOCK_RESPONSE_TIMEOUT: Duration = Duration::from_millis(2_000);
/// `WAIT` alone may take longer: above the longest a lock write may wait for its replicas
/// (`sync_timeout_ms` ≤ 10 s).
pub(super) const WAIT_RESPONSE_TIMEOUT: Duration = Duration::from_millis(11_000);

/// How long `cmd` may go unanswered on a connection whose limit is `usual`.
pub(super) fn limit_for(cmd: &Cmd, usual: Duration) -> Duration {
    let is_wait = cmd.args_iter().next().is_some_and(
        |arg| matches!(arg, redis::Arg::Simple(name) if name.eq_ignore_ascii_case(b"WAIT")),
    );
    match is_wait {
        true => usual.max(WAIT_RESPONSE_TIMEOUT),
        false => usual,
    }
}

/// Answers are timed by [`answered_within`] on each `Conn`, not by redis-rs: see there.
pub(super) fn connection_config() -> AsyncConnectionConfig {
    AsyncConnectionConfig::new().set_response_timeout(None)
}

/// A timer that fires this much after its deadline says the process was not running (stopped
/// by a freeze, or starved), not that Redis was slow.
const LATE: Duration = Duration::from_millis(100);
/// How many late firings an answer is given a fresh `limit` for, so that a process starved
/// again and again still gives up in the end.
const MAX_LATE: u32 = 4;

/// `answer`, if it comes within `limit` of time this process was running; a timeout error
/// otherwise.
///
/// redis-rs' own response timeout counts a process freeze (SIGSTOP, a long pause) against
/// Redis: on resume the timer fires before the connection's reader has read the answer already
/// waiting in the socket, and a write Redis did is reported to the buyer as a 503. Here a
/// timer that fires late gives the answer a fresh `limit` instead.
pub(super) async fn answered_within<T>(
    limit: Duration,
    answer: RedisFuture<'_, T>,
) -> RedisResult<T> {
    tokio::pin!(answer);
    let mut deadline = tokio::time::Instant::now() + limit;
    let mut late_firings = 0;
    loop {
        tokio::select! {
            biased;
            result = &mut answer => return result,
            () = tokio::time::sleep_until(deadline) => {
                let now = tokio::time::Instant::now();
                if now - deadline < LATE || late_firings == MAX_LATE {
                    return Err(RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("{UNANSWERED} {limit:?}"),
                    )));
                }
                late_firings += 1;
                deadline = now + limit;
            }
        }
    }
}

/// Without TCP_NODELAY, a command written while an earlier one is unanswered waits for an
/// ACK: on a multiplexed connection that is most commands under load.
pub(crate) fn tcp_settings() -> TcpSettings {
    TcpSettings::default().set_nodelay(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_silent_redis_times_out_after_the_limit() {
        let started = std::time::Instant::now();
        let silent: RedisFuture<'_, ()> = Box::pin(std::future::pending());
        let err = answered_within(Duration::from_millis(50), silent)
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(started.elapsed() >= Duration::from_millis(50));
    }

    /// The runtime's only thread is blocked past the limit (as SIGSTOP would stop it); the
    /// answer is there, but the task that reads it runs only after the caller's timer fired,
    /// as redis-rs' connection reader may.
    #[tokio::test(flavor = "current_thread")]
    async fn an_answer_that_came_during_a_freeze_is_not_a_timeout() {
        let (answer_tx, answer_rx) = tokio::sync::oneshot::channel::<i64>();
        // The connection's reader, due just after the caller's deadline.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(60)).await;
            let _ = answer_tx.send(7);
        });
        let answer: RedisFuture<'_, i64> = Box::pin(async move {
            answer_rx
                .await
                .map_err(|_| RedisError::from((redis::ErrorKind::Io, "reader gone")))
        });
        let waiting = tokio::spawn(answered_within(Duration::from_millis(50), answer));
        tokio::task::yield_now().await;
        // The freeze: nothing else on this runtime runs for 300 ms.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(waiting.await.unwrap().unwrap(), 7);
    }
}
