//! The HTTP/1.1 plumbing: a raw hyper connection per worker (kept alive, driven inside the
//! worker's own task), and a one-shot `fetch` for admin calls and state reads.

use std::io;
use std::time::Duration;

use anyhow::anyhow;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::target::{Target, Targets};

/// Every request body is a fully buffered byte string (a buyer, a config, or nothing).
pub type Body = Full<Bytes>;
/// The half of a connection that sends requests.
pub type Sender = http1::SendRequest<Body>;
/// The half that does the I/O; it must be polled for anything to move.
pub type Driver = http1::Connection<TokioIo<TcpStream>, Body>;

/// Opens one keep-alive connection. Nagle is off: requests are small and latency matters.
pub async fn connect(target: &Target) -> io::Result<(Sender, Driver)> {
    let stream = TcpStream::connect(target.addr()).await?;
    stream.set_nodelay(true)?;
    http1::handshake(TokioIo::new(stream))
        .await
        .map_err(io::Error::other)
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
        let (mut sender, driver) = connect(target)
            .await
            .map_err(|e| anyhow!("cannot reach {target}: {}", phrase(&e)))?;
        // A one-off connection: its driver may live in its own task.
        tokio::spawn(async move {
            let _ = driver.await;
        });
        let has_body = body.is_some();
        let mut req = Request::new(Full::new(Bytes::from(body.unwrap_or_default())));
        *req.method_mut() = method.clone();
        *req.uri_mut() = targets.path_and_query(target, path).parse()?;
        let headers = req.headers_mut();
        headers.insert(HOST, HeaderValue::from_str(target.authority())?);
        if has_body {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if let Some(token) = token {
            let value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                anyhow!("the admin token contains characters a header cannot carry")
            })?;
            headers.insert(AUTHORIZATION, value);
        }
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| anyhow!("{method} {url} failed: {e}"))?;
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
        anyhow::Ok(Reply {
            status,
            content_type,
            body,
        })
    };
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
