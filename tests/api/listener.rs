//! The instance's own listener: a client that dribbles its headers is dropped after the
//! header-read timeout instead of holding a connection for good, and every answer says how
//! long an idle connection is kept.

use std::time::{Duration, Instant};

use oversell::startup::HEADER_READ_TIMEOUT;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{spawn_fleet, CLIENT_IDLE};

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let fleet = spawn_fleet(1).await;
    let addr = fleet.url(0).trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    // Half a request: the blank line that ends the headers never comes.
    tcp.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let opened = Instant::now();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(HEADER_READ_TIMEOUT * 3, tcp.read_to_end(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(_)) | Ok(Err(_))),
        "the connection is still open after {:?}",
        opened.elapsed()
    );
    assert!(
        opened.elapsed() >= HEADER_READ_TIMEOUT - Duration::from_millis(500),
        "closed before the timeout: {:?}",
        opened.elapsed()
    );

    // A complete request on a new connection is still answered.
    let (status, _) = fleet.sale(0, "after").await;
    assert!(status.is_client_error() || status.is_success(), "{status}");
}

/// An answer says how long its connection is kept idle, in the header's own unit (seconds),
/// and that is the limit the instance keeps: a client that reads it can retire an idle
/// connection before the close instead of sending into it. The tests' own client keeps idle
/// connections for well under it, and a request on one of them, after that idle time, is
/// answered on the same connection.
#[tokio::test]
async fn an_answer_says_how_long_an_idle_connection_is_kept_and_the_clients_stay_under_it() {
    let fleet = spawn_fleet(1).await;
    let resp = fleet
        .client
        .get(format!("{}/health", fleet.url(0)))
        .send()
        .await
        .unwrap();
    let said = resp
        .headers()
        .get("keep-alive")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    assert_eq!(
        said.as_deref(),
        Some(format!("timeout={}", HEADER_READ_TIMEOUT.as_secs()).as_str()),
        "{:?}",
        resp.headers()
    );
    assert!(CLIENT_IDLE * 2 <= HEADER_READ_TIMEOUT, "{CLIENT_IDLE:?}");

    // One raw connection, idle for the client's whole idle time, then used again.
    let addr = fleet.url(0).trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    let ask = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    for round in 0..2 {
        if round == 1 {
            tokio::time::sleep(CLIENT_IDLE).await;
        }
        tcp.write_all(ask).await.unwrap();
        let head = read_head(&mut tcp).await;
        assert!(head.starts_with("HTTP/1.1 200"), "round {round}: {head}");
    }
}

/// Reads one answer's head and its `Content-Length` body off `tcp`.
async fn read_head(tcp: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(30), tcp.read(&mut byte))
            .await
            .expect("an answer within 30 s")
            .expect("the connection still open");
        assert_eq!(n, 1, "closed after {:?}", String::from_utf8_lossy(&bytes));
        bytes.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&bytes).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    tcp.read_exact(&mut body).await.unwrap();
    head
}
