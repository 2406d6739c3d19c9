//! The pool's connection kinds: a link to one server or to a Redis Cluster, the pooled
//! connection with the flag that drops it, and the handle a caller gets, which times each
//! answer and marks its connection broken when the socket is gone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisError, RedisFuture, RedisResult, Value};

use super::answer_limits::{answered_within, limit_for};

/// A pooled connection plus the flag the pool reads to drop it.
pub struct Pooled {
    pub(super) conn: Link,
    pub(super) broken: Arc<AtomicBool>,
}

/// A connection to one server, or to a Redis Cluster (routed by slot, one socket per node).
#[derive(Clone)]
pub(super) enum Link {
    Node(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Node(conn) => conn.req_packed_command(cmd),
            Link::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Node(conn) => conn.req_packed_commands(pipeline, offset, count),
            Link::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Node(conn) => conn.get_db(),
            Link::Cluster(conn) => conn.get_db(),
        }
    }
}

/// A connection handle; marks its pooled connection broken when the socket is gone. Clones
/// share the socket and the mark.
#[derive(Clone)]
pub struct Conn {
    pub(super) inner: Link,
    pub(super) broken: Arc<AtomicBool>,
    pub(super) response_timeout: Duration,
    /// Sent ahead of the next request, in the same write (a parked request, `parking.rs`).
    pub(super) ahead: Option<Ahead>,
    /// A parked request's connection of its own (`parking.rs`), kept checked out while a
    /// handle lives.
    pub(super) _own: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Conn {
    /// Whether an error showed the socket gone: a connection kept outside the pool is made
    /// anew then.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    fn note<T>(&self, result: &RedisResult<T>) {
        // A cluster connection reconnects to a node by itself, and follows a failover by
        // `MOVED`: replacing it would only cost a new slot map. Except after a timeout: a
        // master that stopped answering (a freeze, a partition) sends no `MOVED`, and
        // redis-rs retries a timed-out command on the same node without asking the cluster
        // again, so it would keep sending that slot's commands to the silent master after
        // the cluster promoted its replica. A new connection reads the slot map afresh.
        if matches!(self.inner, Link::Cluster(_)) {
            if result.as_ref().is_err_and(RedisError::is_timeout) {
                self.broken.store(true, Ordering::Relaxed);
            }
            return;
        }
        if let Err(err) = result {
            // READONLY: the server was demoted to a replica by a failover; reconnect to the
            // new primary.
            let demoted = err.code() == Some("READONLY");
            if demoted
                || err.is_unrecoverable_error()
                || err.is_connection_dropped()
                || err.is_io_error()
            {
                self.broken.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl Conn {
    /// `cmds` sent behind `ahead` in one write; their answers from `offset` on (`count` of
    /// them), once `ahead` has let them run.
    async fn behind<'c>(
        &mut self,
        ahead: Ahead,
        cmds: impl Iterator<Item = &'c Cmd>,
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let mut pipe = redis::pipe();
        let sent_ahead = ahead.cmds.len();
        for cmd in ahead.cmds {
            pipe.add_command(cmd);
        }
        let mut limit = self.response_timeout;
        for cmd in cmds {
            limit = limit.max(limit_for(cmd, self.response_timeout));
            pipe.add_command(cmd.clone());
        }
        let unanswered = BreakUnlessAnswered(Some(&self.broken));
        let answer = self
            .inner
            .req_packed_commands(&pipe, offset + sent_ahead, count);
        let replies = answered_within(ahead.block + limit, answer).await?;
        unanswered.answered();
        Ok(replies)
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            if let Some(ahead) = self.ahead.take() {
                let mut replies = self.behind(ahead, std::iter::once(cmd), 0, 1).await?;
                return replies.pop().ok_or_else(|| {
                    RedisError::from((redis::ErrorKind::Io, "no answer behind the parked command"))
                });
            }
            let answer = self.inner.req_packed_command(cmd);
            let result = answered_within(limit_for(cmd, self.response_timeout), answer).await;
            self.note(&result);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            // A transaction goes at once: its replies are counted from its MULTI.
            if let Some(ahead) = self.ahead.take().filter(|_| !pipeline.is_transaction()) {
                return self.behind(ahead, pipeline.cmd_iter(), offset, count).await;
            }
            let limit = pipeline
                .cmd_iter()
                .map(|cmd| limit_for(cmd, self.response_timeout))
                .max()
                .unwrap_or(self.response_timeout);
            let answer = self.inner.req_packed_commands(pipeline, offset, count);
            let result = answered_within(limit, answer).await;
            self.note(&result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}

/// What a parked request's connection is sent ahead of it, and how long that may hold it.
#[derive(Clone)]
pub struct Ahead {
    /// In the order sent; the last one is the command that waits.
    pub(super) cmds: Vec<Cmd>,
    /// The longest the command keeps the request waiting in the server: added to the time
    /// its answer may take.
    pub(super) block: Duration,
}

impl Ahead {
    /// `BLPOP key` for at most `block` (at least a millisecond: 0 would wait forever).
    pub fn blocking_pop(key: &str, block: Duration) -> Ahead {
        let block = block.max(Duration::from_millis(1));
        let mut cmd = redis::cmd("BLPOP");
        cmd.arg(key).arg(format!("{:.3}", block.as_secs_f64()));
        Ahead {
            cmds: vec![cmd],
            block,
        }
    }

    /// The same, with `first` sent before it in the same write (a note that the request waits).
    pub fn after(mut self, first: Cmd) -> Ahead {
        self.cmds.insert(0, first);
        self
    }
}

/// Marks a parked connection broken unless disarmed: a request dropped (or failed) before its
/// answer leaves the server holding the wait and the request behind it, and only closing the
/// connection makes the server forget both.
pub(super) struct BreakUnlessAnswered<'a>(pub(super) Option<&'a AtomicBool>);

impl BreakUnlessAnswered<'_> {
    pub(super) fn answered(mut self) {
        self.0 = None;
    }
}

impl Drop for BreakUnlessAnswered<'_> {
    fn drop(&mut self) {
        if let Some(broken) = self.0 {
            broken.store(true, Ordering::Relaxed);
        }
    }
}
