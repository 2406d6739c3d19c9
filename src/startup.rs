//! Building and running one instance. `Application::build` binds first, so a caller can ask
//! for port 0 and learn the real port before serving.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::extract::Request;
use axum::http::header::CONNECTION;
use axum::http::{HeaderName, HeaderValue, Version};
use axum::middleware::Next;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use crate::client_limit::{self, ClientLimiter};
use crate::config::ServeArgs;
use crate::fleet_sync::FleetSync;
use crate::keys::{Keys, DEFAULT_ROOM};
use crate::lock::ReleaseSignals;
use crate::routes;
use crate::state::{AppState, Limits};

pub struct Application {
    listener: TcpListener,
    addr: SocketAddr,
    state: AppState,
    router: axum::Router,
    /// `None`: `--client-rate 0`.
    client_limit: Option<Arc<ClientLimiter>>,
}

/// tokio's `TcpListener::bind` backlog.
const LISTEN_BACKLOG: i32 = 1024;

/// The listening socket the parent left at descriptor `fd` (`--listen-fd`).
fn inherited_listener(fd: i32) -> anyhow::Result<TcpListener> {
    use std::os::fd::FromRawFd;
    // SAFETY: the parent put a socket there for us alone and nothing else in this process
    // owns the descriptor; a descriptor that is not a listening socket fails just below.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    listener
        .local_addr()
        .with_context(|| format!("--listen-fd {fd} is not a listening socket"))?;
    // std binds with a backlog of 128; the port bound here itself gets tokio's 1024, and so
    // does this one (listen on a listening socket only resizes its queue).
    // SAFETY: listen has no memory-safety preconditions; the descriptor is ours.
    if unsafe { libc::listen(fd, LISTEN_BACKLOG) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("--listen-fd {fd}: listen"));
    }
    listener.set_nonblocking(true)?;
    Ok(TcpListener::from_std(listener)?)
}

impl Application {
    pub async fn build(args: &ServeArgs) -> anyhow::Result<Self> {
        let listener = match args.listen_fd {
            Some(fd) => inherited_listener(fd)?,
            None => TcpListener::bind((args.host, args.port))
                .await
                .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?,
        };
        let addr = listener.local_addr()?;
        let resource = args.resource_store()?;
        let lock_store = args.lock_store(&resource)?;
        let instance = args
            .instance_id
            .clone()
            .unwrap_or_else(|| format!("{}-{}", hostname(), addr.port()));
        let admin_token = match &args.admin_token {
            Some(token) if !token.is_empty() => token.clone(),
            _ => {
                let token = uuid::Uuid::new_v4().simple().to_string();
                tracing::warn!(%token, "no ADMIN_TOKEN set; generated one for this instance");
                token
            }
        };
        // The compose fleet's store supervisors take the same token.
        crate::member::remote::set_token(&admin_token);
        let fleet = Arc::new(FleetSync::new(
            resource.clone(),
            &instance,
            args.initial_settings(),
        ));
        let signals = Arc::new(ReleaseSignals::default());
        // Read the default room's settings now, so the first sale finds them cached (reading
        // creates nothing); a Redis that is down is not fatal here, the first request retries.
        if let Err(err) = fleet.settings(&Keys::for_room(DEFAULT_ROOM)).await {
            tracing::warn!(%err, "redis not reachable at start-up; serving anyway");
        }
        let fleet_url = args
            .fleet_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}"));
        let limits = Limits {
            rooms: args.room_limits(),
            event_streams: usize::try_from(args.max_event_streams).unwrap_or(usize::MAX),
            grading_slots: usize::try_from(args.grading_slots).unwrap_or(1),
        };
        let public_url = args.public_url.clone().filter(|url| !url.is_empty());
        let state = AppState::new(
            resource,
            lock_store,
            instance,
            admin_token,
            fleet_url,
            public_url,
            fleet,
            signals,
            limits,
        );
        let router = routes::app(state.clone(), args.dashboard_dir())
            .layer(axum::middleware::from_fn(announce_keep_alive));
        let client_limit = ClientLimiter::new(
            args.client_rate,
            args.client_burst,
            args.trusted_proxies.clone(),
            state.metrics.client_limit_refusals(),
        );
        Ok(Application {
            listener,
            addr,
            state,
            router,
            client_limit,
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn instance(&self) -> &str {
        &self.state.instance
    }

    /// Serves until `shutdown` completes, then drains in-flight requests.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let subscriber = self.state.fleet.spawn_subscriber();
        let (released, lost) = (self.state.signals.clone(), self.state.signals.clone());
        let releases = self.state.lock_store.spawn_release_listener(
            move |room, message| released.released(room, message),
            move || lost.wake_all(),
        );
        let heartbeat = self.state.fleet.spawn_heartbeat();
        let viewers = crate::viewers::spawn_publisher(self.state.clone());
        let poll = self.state.poll.spawn(self.state.resource.clone());
        let room_runs = routes::spawn_room_run_watch(self.state.clone());
        let sweeper = self.client_limit.as_ref().map(ClientLimiter::spawn_sweeper);
        tracing::info!(addr = %self.addr, instance = %self.state.instance, "serving");
        let state = self.state.clone();
        let shutdown = async move {
            shutdown.await;
            state.stopping.send_replace(true);
        };
        serve(self.listener, self.router, self.client_limit, shutdown).await;
        self.state.background.close();
        if tokio::time::timeout(BACKGROUND_GRACE, self.state.background.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                left = self.state.background.len(),
                "background work did not end in time; it ends with the process"
            );
        }
        subscriber.abort();
        releases.abort();
        heartbeat.abort();
        viewers.abort();
        poll.abort();
        room_runs.abort();
        if let Some(sweeper) = sweeper {
            sweeper.abort();
        }
        Ok(())
    }

    /// Serves until Ctrl-C or SIGTERM.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        self.run_until(shutdown_signal()).await
    }
}

/// How long a stopping instance waits for its background work (`AppState::background`) after
/// its last request: enough for a few writes to the store, well inside the 10 s an
/// orchestrator gives between its stop signal and a kill.
pub const BACKGROUND_GRACE: Duration = Duration::from_secs(3);

/// How long a stopping instance waits for its open requests to end. Long ones (a press of
/// "grade", a scenario) answer early on `stopping`; whatever is still open after this (a
/// client that never reads) must not keep a restart from happening: the supervisor and an
/// orchestrator both kill at 10 s, and the background work's grace comes after this.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// How long a client may take to send a request's headers, and how long an idle keep-alive
/// connection is kept (hyper's header-read timer runs from the end of the last answer): a
/// client that dribbles its headers (or never sends any) is dropped instead of holding a
/// connection for good.
///
/// A client that keeps an idle connection for longer than this races the close: its request
/// goes out as the server's FIN comes in, and it reads "connection closed before message
/// completed" for a request the server never saw (a loaded machine widens that window). So
/// every answer says the limit (`Keep-Alive: timeout=5`, [`announce_keep_alive`]) and every
/// client of ours keeps idle connections for well under it: nginx 2 s
/// (`keepalive_timeout` in deploy/nginx.conf.template), the generator's pool 2 s, the tests'
/// client 2 s.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What every HTTP/1.1 answer says of [`HEADER_READ_TIMEOUT`]: how long this side keeps the
/// connection idle. HTTP/2 has no such header (hyper would strip it, with a warning).
const KEEP_ALIVE: HeaderValue = HeaderValue::from_static("timeout=5");

/// Tells an HTTP/1.1 client how long an idle connection is kept, so a client that reads it
/// (browsers' fetch through undici, many pools) retires its connection before the close.
async fn announce_keep_alive(request: Request, next: Next) -> Response {
    let http11 = request.version() == Version::HTTP_11;
    let mut response = next.run(request).await;
    if http11 && !response.headers().contains_key(CONNECTION) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("keep-alive"), KEEP_ALIVE);
    }
    response
}

/// Accepts and serves connections until `shutdown` completes, then waits for the open ones to
/// finish. `axum::serve` has no header-read timeout, hence hyper-util's builder here. Each
/// connection's requests pass the per-client limit, which knows its peer, before the router.
async fn serve(
    listener: TcpListener,
    router: axum::Router,
    client_limit: Option<Arc<ClientLimiter>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, typically: wait rather than spin on accept.
                    tracing::warn!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // Answers go out as soon as they are written, not after the client's delayed ACK.
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!(%err, "TCP_NODELAY not set");
        }
        let service = TowerToHyperService::new(client_limit::guard(
            router.clone(),
            client_limit.clone(),
            peer.ip(),
        ));
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(err) = conn.await {
                tracing::debug!(%err, "connection ended with an error");
            }
        });
    }
    // No new connections; the open ones finish their current request (SSE streams end on
    // `stopping`).
    drop(listener);
    if tokio::time::timeout(DRAIN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still open after the drain's grace; they end with the process");
    }
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The runtime a command runs on: `worker_threads` threads (`serve --worker-threads`), or one
/// per core when it is unset or 0.
pub fn runtime(worker_threads: Option<u16>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = worker_threads.filter(|&threads| threads > 0) {
        runtime.worker_threads(usize::from(threads));
    }
    runtime.enable_all().build()
}

#[cfg(test)]
mod tests {
    use std::os::fd::IntoRawFd;

    use super::*;

    #[tokio::test]
    async fn an_inherited_socket_is_served_as_it_was_bound() {
        let bound = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = bound.local_addr().unwrap();
        let listener = inherited_listener(bound.into_raw_fd()).unwrap();
        assert_eq!(listener.local_addr().unwrap(), addr);
        let (connected, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
        assert!(connected.is_ok() && accepted.is_ok());
    }

    #[test]
    fn a_runtime_has_the_threads_asked_for_and_one_per_core_for_none_or_0() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = |asked| runtime(asked).unwrap().metrics().num_workers();
        assert_eq!(workers(Some(1)), 1);
        assert_eq!(workers(Some(3)), 3);
        assert_eq!(workers(Some(0)), cores);
        assert_eq!(workers(None), cores);
    }

    #[tokio::test]
    async fn a_descriptor_that_is_no_socket_is_named() {
        let file = std::fs::File::open("/dev/null").unwrap();
        let err = inherited_listener(file.into_raw_fd()).unwrap_err();
        assert!(err.to_string().contains("--listen-fd"), "{err}");
    }
}
