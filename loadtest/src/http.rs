//! The generator's wire: [`Conn`], the lean keep-alive HTTP/1.1 connection each worker
//! drives, and the [`RequestHead`] it writes. The one-shot `fetch` and the pool of keep-alive
//! connections for admin calls are the fleet client's (`oversell_client::http`).
//!
//! Why a hand-written client on the hot path: with a hyper connection per worker the generator
//! reached about 0.8x wrk's requests/s on this 2-core machine (hyper's dispatcher hands every
//! request and answer through channels and wakers). A worker only needs the status of each
//! answer, so `Conn` writes one prepared buffer and parses the answer head in place with
//! `httparse` (hyper's own parser): one `write` and usually one `read` per request.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use http::Method;
use oversell_client::target::Target;

/// Answer heads larger than this are refused (nginx's default buffers are 8 KiB).
const MAX_HEAD: usize = 64 * 1024;
const READ_CHUNK: usize = 16 * 1024;

/// One keep-alive HTTP/1.1 connection: send a request, read its whole answer, repeat.
pub struct Conn {
    stream: TcpStream,
    /// Bytes read and not yet consumed: `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The server said `Connection: close`, or the answer ran to the end of the stream.
    closing: bool,
    /// While an answer is read for a history: its body, up to [`KEEP_MAX`] bytes.
    kept: Option<Vec<u8>>,
}

/// Most body bytes kept of one answer for a history: a sale's answer is about 150.
const KEEP_MAX: usize = 4096;

/// What a worker keeps of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
}

impl Conn {
    /// Opens a connection. Nagle is off: requests are small and latency matters.
    pub async fn open(target: &Target) -> io::Result<Conn> {
        let stream = TcpStream::connect(target.addr()).await?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            closing: false,
            kept: None,
        })
    }

    /// False once the server asked to close, or closed, the connection.
    pub fn reusable(&self) -> bool {
        !self.closing
    }

    /// True if the server closed the connection while it sat idle (checked without blocking).
    pub fn closed_while_idle(&self) -> bool {
        let mut probe = [0u8; 1];
        match self.stream.try_read(&mut probe) {
            Ok(0) => true,
            // Unasked-for bytes on an idle connection: it cannot be trusted either.
            Ok(_) => true,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        }
    }

    /// Writes `request` (a complete HTTP/1.1 request) and reads the answer to its end.
    /// `head_only`: the request was `HEAD`, so the answer has no body whatever it says.
    pub async fn exchange(&mut self, request: &[u8], head_only: bool) -> io::Result<Answer> {
        self.stream.write_all(request).await?;
        let (status, framing) = self.read_head(head_only).await?;
        match framing {
            Framing::Length(n) => self.skip(n).await?,
            Framing::Chunked => self.skip_chunked().await?,
            Framing::UntilClose => {
                self.closing = true;
                while self.fill().await? > 0 {
                    self.start = self.end;
                }
            }
        }
        Ok(Answer { status })
    }

    /// [`Conn::exchange`], keeping the answer's body (its first [`KEEP_MAX`] bytes): what a
    /// history records of a sale's answer. Only runs that record pay for the copy.
    pub async fn exchange_keeping(
        &mut self,
        request: &[u8],
        head_only: bool,
    ) -> io::Result<(Answer, Vec<u8>)> {
        self.kept = Some(Vec::new());
        let answer = self.exchange(request, head_only).await;
        let body = self.kept.take().unwrap_or_default();
        answer.map(|answer| (answer, body))
    }

    /// Keeps `n` consumed body bytes at `buf[from..]`, when an answer's body is being kept.
    fn keep(&mut self, from: usize, n: usize) {
        if let Some(kept) = &mut self.kept {
            let room = KEEP_MAX.saturating_sub(kept.len()).min(n);
            kept.extend_from_slice(&self.buf[from..from + room]);
        }
    }

    /// Reads and parses an answer head; informational (1xx) heads are skipped.
    async fn read_head(&mut self, head_only: bool) -> io::Result<(u16, Framing)> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 48];
            let mut resp = httparse::Response::new(&mut headers);
            let parsed = resp
                .parse(&self.buf[self.start..self.end])
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let httparse::Status::Complete(len) = parsed else {
                if self.end - self.start >= MAX_HEAD {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "answer head too large",
                    ));
                }
                if self.fill().await? == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed before an answer",
                    ));
                }
                continue;
            };
            let status = resp.code.unwrap_or(0);
            let mut framing = Framing::UntilClose;
            for h in resp.headers.iter() {
                // Dispatch on the name's length first: most headers are none of these three.
                match h.name.len() {
                    14 if h.name.eq_ignore_ascii_case("content-length") => {
                        let n = std::str::from_utf8(h.value)
                            .ok()
                            .and_then(|v| v.trim().parse().ok())
                            .ok_or_else(|| {
                                io::Error::new(io::ErrorKind::InvalidData, "bad content-length")
                            })?;
                        if framing != Framing::Chunked {
                            framing = Framing::Length(n);
                        }
                    }
                    17 if h.name.eq_ignore_ascii_case("transfer-encoding")
                        && contains_token(h.value, b"chunked") =>
                    {
                        framing = Framing::Chunked;
                    }
                    10 if h.name.eq_ignore_ascii_case("connection")
                        && contains_token(h.value, b"close") =>
                    {
                        self.closing = true;
                    }
                    _ => {}
                }
            }
            if resp.version == Some(0) && framing != Framing::UntilClose {
                // HTTP/1.0 answers close unless they say keep-alive; be conservative.
                self.closing = true;
            }
            self.start += len;
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            if head_only || status == 204 || status == 304 {
                framing = Framing::Length(0);
            }
            return Ok((status, framing));
        }
    }

    /// Reads more bytes into the buffer; returns how many (0: the server closed).
    async fn fill(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..]).await?;
        self.end += n;
        Ok(n)
    }

    /// Consumes `n` body bytes.
    async fn skip(&mut self, mut n: u64) -> io::Result<()> {
        loop {
            let have = (self.end - self.start) as u64;
            if have >= n {
                self.keep(self.start, n as usize);
                self.start += n as usize;
                return Ok(());
            }
            n -= have;
            self.keep(self.start, have as usize);
            self.start = self.end;
            if self.fill().await? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "answer cut short",
                ));
            }
        }
    }

    /// Consumes a chunked body and its trailers.
    async fn skip_chunked(&mut self) -> io::Result<()> {
        loop {
            let size = loop {
                match httparse::parse_chunk_size(&self.buf[self.start..self.end]) {
                    Ok(httparse::Status::Complete((used, size))) => {
                        self.start += used;
                        break size;
                    }
                    Ok(httparse::Status::Partial) => {
                        if self.fill().await? == 0 {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "chunk cut short",
                            ));
                        }
                    }
                    Err(_) => {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))
                    }
                }
            };
            if size == 0 {
                return self.skip_trailers().await;
            }
            self.skip(size).await?;
            // The chunk's closing CRLF is framing, not body: never kept.
            let kept = self.kept.take();
            self.skip(2).await?;
            self.kept = kept;
        }
    }

    /// Trailer lines up to and including the empty line.
    async fn skip_trailers(&mut self) -> io::Result<()> {
        loop {
            match self.buf[self.start..self.end]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                Some(0) => {
                    self.start += 2;
                    return Ok(());
                }
                Some(i) => self.start += i + 2,
                None => {
                    if self.fill().await? == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "trailers cut short",
                        ));
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// Whether a comma-separated header value holds `token` (case-insensitive).
fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|b| *b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// A complete request, ready to write. The head is prepared once per target; only a buyer's
/// body changes between requests.
#[derive(Debug, Clone)]
pub struct RequestHead {
    head: Vec<u8>,
    has_body: bool,
}

impl RequestHead {
    /// `method path HTTP/1.1`, `Host`, and for a body its type; the length comes per request.
    pub fn new(method: &Method, path_and_query: &str, authority: &str, json_body: bool) -> Self {
        let mut head = format!("{method} {path_and_query} HTTP/1.1\r\nHost: {authority}\r\n");
        if json_body {
            head.push_str("Content-Type: application/json\r\n");
        }
        RequestHead {
            head: head.into_bytes(),
            has_body: json_body,
        }
    }

    /// Writes the whole request into `out` (cleared first).
    pub fn write(&self, body: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.head);
        if self.has_body || !body.is_empty() {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(body.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }
}
