//! What a failed ZooKeeper request means to a buyer: ZooKeeper unreachable (a 503), the lock
//! wait's deadline, or a bug here; and which failures mean the connection, or the whole session,
//! is gone.

use zookeeper_client as zk;

#[derive(Debug, Clone, thiserror::Error)]
pub enum ZkError {
    /// No server answered, or none that has a quorum: the buyer gets a 503, never a hang.
    #[error("ZooKeeper unreachable: {0}")]
    Unreachable(String),
    /// The deadline passed while waiting behind other holders.
    #[error("lock wait deadline passed")]
    Timeout,
    /// ZooKeeper refused a request: a bug here (a bad path, a wrong node type).
    #[error("ZooKeeper error: {0}")]
    Failed(zk::Error),
}

impl From<zk::Error> for ZkError {
    fn from(err: zk::Error) -> Self {
        use zk::Error::*;
        match err {
            SessionExpired | SessionMoved | NoHosts | Timeout | ClientClosed | Throttled => {
                ZkError::Unreachable(err.to_string())
            }
            err if connection_lost(&err) => ZkError::Unreachable(err.to_string()),
            err => ZkError::Failed(err),
        }
    }
}

/// Whether a request failed with its connection rather than by the server's answer. The crate
/// fails the requests in flight with whatever broke the connection: `ConnectionLoss`, an I/O
/// error or "no response from connection in N ms" (the last two as `Custom`). Such a request
/// may or may not have been applied.
pub(super) fn connection_lost(err: &zk::Error) -> bool {
    matches!(
        err,
        zk::Error::ConnectionLoss | zk::Error::Custom(_) | zk::Error::UnexpectedError(_)
    )
}

/// Whether a request failed because its session is over (and its ephemeral nodes with it).
pub(super) fn is_session_over(err: &zk::Error) -> bool {
    matches!(
        err,
        zk::Error::SessionExpired | zk::Error::ClientClosed | zk::Error::SessionMoved
    )
}

pub(super) fn unreachable_at_deadline() -> ZkError {
    ZkError::Unreachable("no ZooKeeper session before the deadline".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_that_are_gone_map_to_unreachable() {
        for err in [
            zk::Error::ConnectionLoss,
            zk::Error::NoHosts,
            zk::Error::SessionExpired,
        ] {
            assert!(matches!(ZkError::from(err), ZkError::Unreachable(_)));
        }
        assert!(matches!(
            ZkError::from(zk::Error::NoNode),
            ZkError::Failed(_)
        ));
    }
}
