//! The load shapes as data: what a run is ([`Load`]), how its requests are released
//! ([`Model`]: burst, closed loop, open loop), when a loop stops ([`Stop`]), and what each
//! request is ([`RequestSpec`]).

use std::time::Duration;

use http::Method;

/// When a closed or open loop stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this many requests.
    Requests(u64),
    /// When this much time has passed since the start.
    After(Duration),
}

/// How requests are released.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// `buyers` requests, released together once every connection is open.
    Burst { buyers: u64 },
    /// Each connection sends its next request when the previous one is answered.
    Closed { stop: Stop },
    /// Requests are due `rate` times per second; latency counts from when they were due.
    Open { rate: f64, stop: Stop },
}

/// What each request is.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    pub method: Method,
    /// Path on the service, e.g. `/sale`.
    pub path: String,
    /// `Some(qty)`: the body is `{"buyer":"<unique id>","qty":qty}`. `None`: no body.
    pub buyer_qty: Option<u32>,
    /// Keep every request's call and return times, status and answer body
    /// ([`RunStats::exchanges`](crate::RunStats::exchanges)): what a run's history records.
    /// A run that keeps them sends at most [`MAX_KEPT_ANSWERS`] requests.
    pub keep_answers: bool,
}

/// The most requests a run keeps whole (each its answer's body, about 300 bytes with its
/// times): a run for a history ends there, whatever its duration, so its memory stays bounded
/// (about 150 MB) and its history whole. Half a million requests and their sections are the
/// million operations `loadtest check` is measured on.
pub const MAX_KEPT_ANSWERS: u64 = 500_000;

impl RequestSpec {
    /// `POST /sale` with a unique buyer id per request.
    pub fn sale(qty: u32) -> RequestSpec {
        RequestSpec {
            method: Method::POST,
            path: "/sale".into(),
            buyer_qty: Some(qty),
            keep_answers: false,
        }
    }

    /// The same requests, each kept whole for a history.
    pub fn keeping_answers(self) -> RequestSpec {
        RequestSpec {
            keep_answers: true,
            ..self
        }
    }

    /// A request with no body, e.g. `GET /ping`.
    pub fn plain(method: Method, path: impl Into<String>) -> RequestSpec {
        RequestSpec {
            method,
            path: path.into(),
            buyer_qty: None,
            keep_answers: false,
        }
    }
}

/// A complete description of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub model: Model,
    /// Connections (workers). A burst uses one per buyer, at most this many.
    pub connections: usize,
    pub request: RequestSpec,
    /// Limit for connecting, and for each request from send to the end of its answer.
    pub timeout: Duration,
}

impl Load {
    /// The number of workers this load runs with.
    pub fn workers(&self) -> usize {
        let cap = self.connections.max(1) as u64;
        let n = match self.model {
            Model::Burst { buyers } => buyers.min(cap),
            Model::Closed { stop } | Model::Open { stop, .. } => match stop {
                Stop::Requests(n) => n.min(cap),
                Stop::After(_) => cap,
            },
        };
        n as usize
    }

    /// The number of requests, when it is known in advance.
    pub fn requests(&self) -> Option<u64> {
        match self.model {
            Model::Burst { buyers } => Some(buyers),
            Model::Closed {
                stop: Stop::Requests(n),
            }
            | Model::Open {
                stop: Stop::Requests(n),
                ..
            } => Some(n),
            _ => None,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::worker) fn load(model: Model, connections: usize) -> Load {
        Load {
            model,
            connections,
            request: RequestSpec::sale(1),
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_pool_is_never_bigger_than_the_work() {
        assert_eq!(load(Model::Burst { buyers: 300 }, 1000).workers(), 300);
        assert_eq!(load(Model::Burst { buyers: 300 }, 50).workers(), 50);
        let closed = |stop| Model::Closed { stop };
        assert_eq!(load(closed(Stop::Requests(10)), 50).workers(), 10);
        assert_eq!(
            load(closed(Stop::After(Duration::from_secs(1))), 50).workers(),
            50
        );
        assert_eq!(load(closed(Stop::Requests(10)), 0).workers(), 1);
    }
}
