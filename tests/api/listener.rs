//! The instance's own listener: a client that dribbles its headers is dropped after the
//! header-read timeout instead of holding a connection for good.

use std::time::{Duration, Instant};

use oversell::startup::HEADER_READ_TIMEOUT;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::spawn_fleet;

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
