//! One-off calls to a fleet or a member: [`fetch`] on a connection of its own, the [`Pool`] of
//! keep-alive connections admin calls and state reads share, and [`preflight`], which checks
//! that every target takes a connection before a run.

use std::io;
use std::time::Duration;

use anyhow::anyhow;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

use crate::target::{Target, Targets};

/// Request bodies of admin calls are fully buffered.
type Body = Full<Bytes>;

/// Opens a hyper connection for a one-off call; its driver runs in its own task.
async fn hyper_connect(target: &Target) -> io::Result<http1::SendRequest<Body>> {
    let stream = TcpStream::connect(target.addr()).await?;
    stream.set_nodelay(true)?;
    let (sender, driver) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(io::Error::other)?;
    tokio::spawn(async move {
        let _ = driver.await;
    });
    Ok(sender)
}

/// An I/O error as a short lower-case phrase: "connection refused", not
/// "Connection refused (os error 111)".
pub fn phrase(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::ConnectionReset => "connection reset".into(),
        io::ErrorKind::TimedOut => "timed out".into(),
        io::ErrorKind::AddrNotAvailable => "address not available".into(),
        _ => {
            let text = err.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_lowercase(),
                None => text,
            }
        }
    }
}

/// Checks that every target accepts a TCP connection, so a run against a wrong URL stops with
/// one line instead of a table full of connection errors.
pub async fn preflight(targets: &Targets, limit: Duration) -> anyhow::Result<()> {
    for target in targets.iter() {
        match tokio::time::timeout(limit, TcpStream::connect(target.addr())).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(anyhow!("cannot reach {target}: {}", phrase(&e))),
            Err(_) => return Err(anyhow!("cannot reach {target}: no answer within {limit:?}")),
        }
    }
    Ok(())
}

/// An answer read in full.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub body: Bytes,
}

/// One request on a fresh connection, answer read in full, all within `limit`.
pub async fn fetch(
    targets: &Targets,
    target: &Target,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    limit: Duration,
) -> anyhow::Result<Reply> {
    let url = targets.url_of(target, path);
    let exchange = async {
        let mut sender = hyper_connect(target)
            .await
            .map_err(|e| anyhow!("cannot reach {target}: {}", phrase(&e)))?;
        let req = request(targets, target, &method, path, token, body, false)?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| anyhow!("{method} {url} failed: {e}"))?;
        read_reply(resp, &method, &url).await
    };
    within(limit, exchange, &method, &url).await
}

/// Keep-alive connections for admin calls, shared by every clone: a client that makes many
/// calls (a scenario's runner polls `/state` every 10 ms while the fleet takes new settings)
/// opens a few connections and reuses them, instead of one per call, which a class grading at
/// once turned into thousands of connections a second.
#[derive(Clone)]
pub struct Pool(Client<HttpConnector, Body>);

impl Default for Pool {
    fn default() -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            // Well below nginx's own keep-alive timeout (75 s) and the instances' (5 s, said in
            // their `Keep-Alive` header), so an idle connection is dropped here before the far
            // side closes it, even when a loaded machine runs this side's timers late.
            .pool_idle_timeout(Duration::from_secs(2))
            .build(connector);
        Pool(client)
    }
}

impl Pool {
    /// [`fetch`] on one of the pool's connections (a new one if none is idle).
    #[allow(clippy::too_many_arguments)]
    pub async fn fetch(
        &self,
        targets: &Targets,
        target: &Target,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Vec<u8>>,
        limit: Duration,
    ) -> anyhow::Result<Reply> {
        let url = targets.url_of(target, path);
        let exchange = async {
            let req = request(targets, target, &method, path, token, body, true)?;
            let resp = self.0.request(req).await.map_err(|e| {
                // A refused or unreachable address is the fleet being down: said as `fetch`
                // says it, so callers can tell it from a request that failed.
                if e.is_connect() {
                    anyhow!("cannot reach {target}: {}", connect_phrase(&e))
                } else {
                    anyhow!("{method} {url} failed: {e}")
                }
            })?;
            read_reply(resp, &method, &url).await
        };
        within(limit, exchange, &method, &url).await
    }
}

/// Why a connection could not be made, from the innermost I/O error.
fn connect_phrase(err: &hyper_util::client::legacy::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return phrase(io);
        }
        source = e.source();
    }
    err.to_string()
}

/// The request, its URI absolute for a pool (which picks the connection by it).
fn request(
    targets: &Targets,
    target: &Target,
    method: &Method,
    path: &str,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    absolute: bool,
) -> anyhow::Result<Request<Body>> {
    let has_body = body.is_some();
    let mut req = Request::new(Full::new(Bytes::from(body.unwrap_or_default())));
    *req.method_mut() = method.clone();
    *req.uri_mut() = match absolute {
        true => targets.url_of(target, path).parse()?,
        false => targets.path_and_query(target, path).parse()?,
    };
    let headers = req.headers_mut();
    headers.insert(HOST, HeaderValue::from_str(target.authority())?);
    if has_body {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if let Some(token) = token {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| anyhow!("the admin token contains characters a header cannot carry"))?;
        headers.insert(AUTHORIZATION, value);
    }
    Ok(req)
}

async fn read_reply(
    resp: hyper::Response<hyper::body::Incoming>,
    method: &Method,
    url: &str,
) -> anyhow::Result<Reply> {
    let status = resp.status();
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| anyhow!("{method} {url} failed while reading the body: {e}"))?
        .to_bytes();
    Ok(Reply {
        status,
        content_type,
        body,
    })
}

async fn within(
    limit: Duration,
    exchange: impl std::future::Future<Output = anyhow::Result<Reply>>,
    method: &Method,
    url: &str,
) -> anyhow::Result<Reply> {
    match tokio::time::timeout(limit, exchange).await {
        Ok(reply) => reply,
        Err(_) => Err(anyhow!("{method} {url} did not answer within {limit:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_read_as_short_phrases() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(phrase(&refused), "connection refused");
        let os = io::Error::from_raw_os_error(113);
        assert!(!phrase(&os).contains("os error"), "{}", phrase(&os));
    }
}
