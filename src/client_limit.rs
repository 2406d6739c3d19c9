//! Each instance's own per-client request limit: the second line behind nginx's `limit_req`,
//! and the first wherever no nginx of ours stands (an orchestrator's ingress, someone pointing
//! a load generator at one instance).
//!
//! Who the client is: the connection's peer address, unless the peer is a trusted proxy
//! (`--trusted-proxies`: loopback by default; our nginx, an ingress). A trusted proxy's request
//! counts against the address it names in `X-Real-IP`, and one with no such header is the
//! fleet's own (nginx's fleet port, the grader, the bursts, health checks, scrapes, an address
//! nginx exempts) and is never limited. Nobody else's `X-Real-IP` is read, so a client hitting
//! an instance directly cannot choose its key.
//!
//! The limit is GCRA per address (governor's keyed limiter): `--client-rate` a second on
//! average, bursts of `--client-burst`, the numbers nginx uses. Behind nginx an address is
//! already held to them across the whole fleet, so an instance, seeing only its share, never
//! refuses it. Over the limit the request is answered at once, before routing, with the API's
//! JSON 429 and `Retry-After`, and counted in the instance's `/metrics`
//! (`oversell_client_limit_refused_total`).
//!
//! Memory stays bounded under a flood of distinct addresses: once a second the addresses whose
//! state is as good as new again (quiet for burst/rate seconds) are dropped, and should more
//! than [`MAX_TRACKED`] remain, the table is started afresh.

use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, Request};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use ipnet::IpNet;
use tower::ServiceExt;

use crate::error::AppError;
use crate::metrics::ClientLimitRefusals;

/// The header a trusted proxy names the client in (nginx: `$remote_addr`; ingress-nginx sets
/// it too).
pub const CLIENT_HEADER: HeaderName = HeaderName::from_static("x-real-ip");

/// `--client-rate`'s default, here and in nginx: a student clicking through the dashboard
/// stays far below it, a load generator pointed at the fleet does not.
pub const DEFAULT_CLIENT_RATE: u32 = 20;
/// `--client-burst`'s default: a class of 60 phones behind one address (a school's NAT)
/// opening their dashboards at once, 19 requests each (the page, its 12 files, 5 calls and
/// its stream), then voting (2 each): 1,260 in all; the `phones` bench holds it to 0
/// refused. Past the burst an address is held to `--client-rate`, so a flood still gets
/// 20 a second.
pub const DEFAULT_CLIENT_BURST: u32 = 1500;

/// `--trusted-proxies`' default: where `oversell up`'s nginx reaches its instances from; the
/// other loopback addresses stay clients (tests and benches send from 127.0.0.2 as one).
pub const DEFAULT_TRUSTED_PROXIES: &str = "127.0.0.1/32,::1/128";

/// Most addresses kept at once: about 10 MB of state. Past it the table starts afresh (every
/// address gets a fresh burst), which a flood of distinct addresses gets anyway.
pub const MAX_TRACKED: usize = 100_000;

/// How often idle addresses are dropped.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

type Keyed<C> =
    RateLimiter<IpAddr, DashMapStateStore<IpAddr>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// The per-client limit of one instance, shared by its connections.
pub struct ClientLimiter<C: Clock = DefaultClock> {
    quota: Quota,
    clock: C,
    trusted: Vec<IpNet>,
    /// Replaced whole when it holds more than [`MAX_TRACKED`] addresses.
    table: RwLock<Arc<Keyed<C>>>,
    refusals: ClientLimitRefusals,
}

/// A request refused: how long until the address may send again.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub retry_after: Duration,
}

impl ClientLimiter {
    /// `rate` requests a second per address on average, `burst` at once, each refusal
    /// counted in `refusals`; `None` when `rate` is 0 (no limit).
    pub fn new(
        rate: u32,
        burst: u32,
        trusted: Vec<IpNet>,
        refusals: ClientLimitRefusals,
    ) -> Option<Arc<Self>> {
        Self::with_clock(rate, burst, trusted, refusals, DefaultClock::default()).map(Arc::new)
    }
}

impl<C: Clock + Clone> ClientLimiter<C> {
    pub fn with_clock(
        rate: u32,
        burst: u32,
        trusted: Vec<IpNet>,
        refusals: ClientLimitRefusals,
        clock: C,
    ) -> Option<Self> {
        let rate = NonZeroU32::new(rate)?;
        let burst = NonZeroU32::new(burst).unwrap_or(rate);
        let quota = Quota::per_second(rate).allow_burst(burst);
        let table = RwLock::new(Arc::new(RateLimiter::new(
            quota,
            DashMapStateStore::default(),
            clock.clone(),
        )));
        Some(ClientLimiter {
            quota,
            clock,
            trusted,
            table,
            refusals,
        })
    }

    /// Whom a request counts against: the peer, or the address a trusted peer names; `None`
    /// for the fleet's own requests (a trusted peer naming nobody).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer.to_canonical();
        if !self.trusted.iter().any(|net| net.contains(&peer)) {
            return Some(peer);
        }
        let named = headers.get(&CLIENT_HEADER)?;
        // A trusted proxy that names the client in a way no address reads is miscounting, not
        // the fleet: its request counts against the proxy.
        let client = named
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<IpAddr>().ok());
        Some(client.map_or(peer, |ip| ip.to_canonical()))
    }

    /// Counts the request; `Err` (and a refusal counted) when its client is over the limit.
    pub fn check(&self, peer: IpAddr, headers: &HeaderMap) -> Result<(), Refused> {
        let Some(client) = self.client(peer, headers) else {
            return Ok(());
        };
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        table.check_key(&client).map_err(|not_until| {
            self.refusals.refused();
            Refused {
                retry_after: not_until.wait_time_from(self.clock.now()),
            }
        })
    }

    /// Drops the addresses whose state is as good as new; starts afresh past [`MAX_TRACKED`].
    /// Returns how many addresses are kept.
    pub fn sweep(&self) -> usize {
        let table = self.table.read().unwrap_or_else(|e| e.into_inner()).clone();
        table.retain_recent();
        table.shrink_to_fit();
        let kept = table.len();
        if kept <= MAX_TRACKED {
            return kept;
        }
        tracing::warn!(
            kept,
            "more client addresses than the per-client limit keeps; starting its table afresh"
        );
        let fresh = RateLimiter::new(self.quota, DashMapStateStore::default(), self.clock.clone());
        *self.table.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
        0
    }
}

impl ClientLimiter {
    /// Sweeps every second while the instance serves (abort the task to stop).
    pub fn spawn_sweeper(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let limiter = Arc::clone(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                limiter.sweep();
            }
        })
    }
}

/// Whom a request counts against, as the limit reads it (a request extension the guard
/// adds): `None` for the fleet's own requests. Without a limit, the peer.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<IpAddr>);

/// `service` behind the limit, for one connection from `peer`: a refused request is answered
/// here, before it is routed. A request let through carries its [`ClientAddress`].
pub fn guard<S, B>(
    service: S,
    limiter: Option<Arc<ClientLimiter>>,
    peer: IpAddr,
) -> impl tower::Service<
    Request<B>,
    Response = Response,
    Error = Infallible,
    Future = impl Future<Output = Result<Response, Infallible>> + Send,
> + Clone
where
    S: tower::Service<Request<B>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    tower::service_fn(move |mut request: Request<B>| {
        let refused = limiter
            .as_ref()
            .and_then(|limiter| limiter.check(peer, request.headers()).err());
        let client = match &limiter {
            Some(limiter) => limiter.client(peer, request.headers()),
            None => Some(peer.to_canonical()),
        };
        request.extensions_mut().insert(ClientAddress(client));
        let service = service.clone();
        async move {
            match refused {
                Some(refused) => Ok(AppError::TooManyRequests {
                    retry_after_secs: refused.retry_after.as_secs_f64().ceil().max(1.0) as u64,
                }
                .into_response()),
                None => service.oneshot(request).await,
            }
        }
    })
}

/// `--trusted-proxies`: CIDRs or single addresses.
pub fn parse_network(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{text}: give a network as CIDR (10.0.0.0/8) or an address"))
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    fn nets(list: &str) -> Vec<IpNet> {
        list.split(',').map(|n| parse_network(n).unwrap()).collect()
    }

    fn limiter(rate: u32, burst: u32) -> (ClientLimiter<FakeRelativeClock>, FakeRelativeClock) {
        counted(rate, burst, ClientLimitRefusals::default())
    }

    fn counted(
        rate: u32,
        burst: u32,
        refusals: ClientLimitRefusals,
    ) -> (ClientLimiter<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let limiter = ClientLimiter::with_clock(
            rate,
            burst,
            nets(DEFAULT_TRUSTED_PROXIES),
            refusals,
            clock.clone(),
        )
        .unwrap();
        (limiter, clock)
    }

    fn naming(ip: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CLIENT_HEADER, ip.parse().unwrap());
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_rate_of_zero_is_no_limit() {
        assert!(ClientLimiter::new(0, 100, vec![], ClientLimitRefusals::default()).is_none());
    }

    #[test]
    fn the_burst_is_served_then_the_rate() {
        let (limiter, clock) = limiter(20, 100);
        let student = ip("192.0.2.7");
        for n in 0..100 {
            assert_eq!(
                limiter.check(student, &HeaderMap::new()),
                Ok(()),
                "request {n}"
            );
        }
        let refused = limiter.check(student, &HeaderMap::new()).unwrap_err();
        assert_eq!(refused.retry_after, Duration::from_millis(50));
        // Another address has its own share.
        assert_eq!(limiter.check(ip("192.0.2.8"), &HeaderMap::new()), Ok(()));
        clock.advance(Duration::from_millis(50));
        assert_eq!(limiter.check(student, &HeaderMap::new()), Ok(()));
    }

    #[test]
    fn each_refusal_is_counted_in_the_instances_metrics() {
        let metrics = crate::metrics::Metrics::new("i1");
        let (limiter, _) = counted(1, 2, metrics.client_limit_refusals());
        let student = ip("192.0.2.7");
        let refused = (0..5)
            .filter(|_| limiter.check(student, &HeaderMap::new()).is_err())
            .count();
        assert_eq!(refused, 3);
        // The fleet's own requests are neither limited nor counted.
        let _ = limiter.check(ip("127.0.0.1"), &HeaderMap::new());
        let text = metrics.render();
        let line = "oversell_client_limit_refused_total{instance=\"i1\"} 3";
        assert!(text.contains(line), "{line} not in\n{text}");
    }

    #[test]
    fn only_a_trusted_peer_names_the_client() {
        let (limiter, _) = limiter(20, 100);
        // Straight at the instance: the header changes nothing.
        assert_eq!(
            limiter.client(ip("192.0.2.7"), &naming("198.51.100.1")),
            Some(ip("192.0.2.7"))
        );
        // Through the proxy on loopback: the address it names.
        assert_eq!(
            limiter.client(ip("127.0.0.1"), &naming("198.51.100.1")),
            Some(ip("198.51.100.1"))
        );
        assert_eq!(
            limiter.client(ip("::ffff:127.0.0.1"), &naming("::ffff:198.51.100.1")),
            Some(ip("198.51.100.1"))
        );
        // The fleet's own: the proxy names nobody.
        assert_eq!(limiter.client(ip("::1"), &HeaderMap::new()), None);
        // A name that is no address counts against the proxy.
        assert_eq!(
            limiter.client(ip("127.0.0.1"), &naming("unknown")),
            Some(ip("127.0.0.1"))
        );
    }

    #[test]
    fn the_fleets_own_requests_are_never_counted() {
        let (limiter, _) = limiter(1, 1);
        for _ in 0..1000 {
            assert_eq!(limiter.check(ip("127.0.0.1"), &HeaderMap::new()), Ok(()));
        }
    }

    #[test]
    fn idle_addresses_are_dropped_and_a_flood_of_them_is_bounded() {
        let (limiter, clock) = limiter(20, 100);
        for n in 0..1000u32 {
            let _ = limiter.check(IpAddr::from(n.to_be_bytes()), &HeaderMap::new());
        }
        assert_eq!(limiter.sweep(), 1000);
        // burst / rate = 5 s later, each is as good as new.
        clock.advance(Duration::from_secs(5));
        assert_eq!(limiter.sweep(), 0);
        for n in 0..=MAX_TRACKED as u32 {
            let _ = limiter.check(IpAddr::from(n.to_be_bytes()), &HeaderMap::new());
        }
        assert_eq!(limiter.sweep(), 0, "past the cap the table starts afresh");
    }

    #[test]
    fn a_network_is_cidr_or_one_address() {
        assert_eq!(
            parse_network("10.0.0.0/8").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(
            parse_network(" 10.1.2.3 ").unwrap().to_string(),
            "10.1.2.3/32"
        );
        assert!(parse_network("nginx").unwrap_err().contains("CIDR"));
    }
}
