//! What a failed talk to a store means for the client: retry later, or a bug.

use redis::RedisError;

/// A failure to talk to Redis, split by what the client should be told.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Redis is down, unreachable or not answering in time: retry later.
    #[error("redis unavailable: {0}")]
    Unavailable(String),
    /// A lock write reached fewer replicas than `sync_replicas` asks, within `sync_timeout_ms`.
    #[error("the lock reached {acked} of {wanted} replicas in time")]
    NotReplicated { acked: u32, wanted: u32 },
    /// Fewer Redlock masters answered than make a majority: nobody can be granted the lock.
    #[error("only {answered} of {nodes} lock nodes answered; a majority needs {quorum}")]
    NoQuorum {
        answered: usize,
        nodes: usize,
        quorum: usize,
    },
    /// ZooKeeper (the ZooKeeper tiers' lock store) has no session for us, or no quorum.
    #[error("zookeeper unavailable: {0}")]
    ZooKeeper(String),
    /// PostgreSQL (the database tiers' lock store) is down, unreachable, or ended our session.
    #[error("postgres unavailable: {0}")]
    Postgres(String),
    /// Redis answered with an error: a bug in a script or a wrong key type.
    #[error("redis error: {0}")]
    Failed(RedisError),
    /// A lab lock's step failed: refused by its ACL, raised an error, ran too long, or the
    /// room has no lock to run. The message is for the student.
    #[error("{0}")]
    Lab(String),
}

impl StoreError {
    /// Whether the command was sent and may have run although no answer came: a store that
    /// did not answer in time (starved, or behind a partition that drops the answers) runs
    /// what it already read. Sending it again is then not the same as sending it once — a
    /// `DEL` sent twice deletes whoever took the lock in between.
    pub fn may_have_run(&self) -> bool {
        matches!(self, StoreError::Unavailable(said) if said.contains(super::answer_limits::UNANSWERED))
    }
}

impl From<RedisError> for StoreError {
    fn from(err: RedisError) -> Self {
        if err.is_io_error()
            || err.is_timeout()
            || err.is_connection_refusal()
            || err.is_connection_dropped()
            || err.is_unrecoverable_error()
            // A primary demoted by a failover refuses writes until clients follow it.
            || err.code() == Some("READONLY")
            // A primary cut off from its replicas under `min-replicas-to-write` refuses
            // writes until they are back (or until a failover and the heal demote it).
            || err.code() == Some("NOREPLICAS")
            // A script running past `busy-reply-threshold` (a lab script that loops) holds the
            // server until it is killed: every other command is refused meanwhile.
            || err.code() == Some("BUSY")
            // A store restarted from its append-only file answers LOADING until it has read
            // it back: the orders are coming, not lost (seconds, for a long-running fleet's).
            || err.code() == Some("LOADING")
            // A Redis Cluster whose master for the slot is down and not yet replaced, or a
            // slot moving: the failover's window.
            || matches!(err.code(), Some("CLUSTERDOWN" | "TRYAGAIN" | "MOVED" | "ASK"))
        {
            StoreError::Unavailable(err.to_string())
        } else {
            StoreError::Failed(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StoreError;

    /// What a server sends, as redis-rs reads it off the wire.
    fn answered(wire: &[u8]) -> redis::RedisError {
        redis::parse_redis_value(wire)
            .and_then(redis::Value::extract_error)
            .expect_err("an error reply")
    }

    #[test]
    fn a_store_reading_its_file_back_is_unavailable_for_now_not_a_bug() {
        let loading = answered(b"-LOADING Redis is loading the dataset in memory\r\n");
        assert!(matches!(
            StoreError::from(loading),
            StoreError::Unavailable(_)
        ));
        let bug = answered(b"-ERR wrong number of arguments for 'get' command\r\n");
        assert!(matches!(StoreError::from(bug), StoreError::Failed(_)));
    }
}
