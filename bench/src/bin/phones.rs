//! A class of phones behind one address (a school's NAT, one access point): `--phones`
//! students at 127.0.0.2, which nginx counts as one client like any student's, open their
//! room's dashboard at once — the page and every file it loads, the calls it makes on load,
//! and its one stream (`/events?poll=1`: the room's feed and the class vote) — then the
//! teacher opens a vote, every phone votes, and the phones stay on for `--hold` seconds.
//! All with `oversell up`'s default per-client limits (`--client-rate`, `--client-burst`,
//! `--client-conns`; `--client-burst N --client-conns N` to try others). Reported: requests refused (any answer but 2xx/304; 0 is the bar),
//! phones whose stream was live the whole hold, phones that got the vote and whose vote
//! counted, and how long the page took to load.
//!
//!   cargo build --release && target/release/phones

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use oversell_bench::{wait_until, Fleet};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

#[derive(Parser)]
#[command(
    about = "60 phones behind one address join their rooms at once: refused requests, the feed and the vote"
)]
struct Args {
    /// The oversell binary (`oversell up` starts the fleet).
    #[arg(long, default_value = "target/release/oversell")]
    oversell: PathBuf,
    #[arg(long, default_value_t = 3)]
    instances: u16,
    /// Phones, one room each (the class is made with as many rooms).
    #[arg(long, default_value_t = 60)]
    phones: u16,
    /// The address every phone sends from (loopback, but not the host's exempt 127.0.0.1).
    #[arg(long, default_value = "127.0.0.2")]
    from: String,
    /// Seconds the phones stay on after the vote.
    #[arg(long, default_value_t = 30)]
    hold: u64,
    /// Parallel connections a phone loads its page's files over (Chromium's limit per host).
    #[arg(long, default_value_t = 6)]
    parallel: usize,
    /// `up --client-burst` [default: up's own], to see what another burst refuses.
    #[arg(long)]
    client_burst: Option<u32>,
    /// `up --client-conns` [default: up's own].
    #[arg(long)]
    client_conns: Option<u32>,
}

/// What every phone together met.
#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    refused: AtomicU64,
    /// Refusals by status, `status path` once each.
    refusals: std::sync::Mutex<BTreeSet<String>>,
}

impl Counts {
    fn answered(&self, status: u16, path: &str) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if !(200..300).contains(&status) && status != 304 {
            self.refused.fetch_add(1, Ordering::Relaxed);
            let mut seen = self.refusals.lock().unwrap_or_else(|p| p.into_inner());
            seen.insert(format!(
                "{status} {}",
                path.split('?').next().unwrap_or(path)
            ));
        }
    }
}

/// One phone's stream: its events, as they came.
#[derive(Default)]
struct Stream {
    opened: AtomicBool,
    states: AtomicU64,
    /// `poll` events whose view is an open round.
    open_votes: AtomicU64,
    polls: AtomicU64,
    ended: AtomicBool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let students = args.phones.to_string();
    let mut flags = vec!["--class".to_owned(), students];
    let limits = [
        ("--client-burst", args.client_burst),
        ("--client-conns", args.client_conns),
    ];
    for (flag, value) in limits {
        if let Some(value) = value {
            flags.extend([flag.to_owned(), value.to_string()]);
        }
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let fleet = Fleet::start_with(&args.oversell, args.instances, &[], &flags)?;
    let file = fleet
        .banner
        .iter()
        .find_map(|l| l.strip_prefix("room tokens file: "))
        .and_then(|rest| rest.split_whitespace().next())
        .context("up printed no room tokens file")?;
    let rooms: Vec<(String, String)> = std::fs::read_to_string(file)?
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut words = l.split_whitespace();
            (
                words.next().unwrap_or_default().to_owned(),
                words.next().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    if rooms.len() != usize::from(args.phones) {
        bail!("{} rooms in {file}, {} phones", rooms.len(), args.phones);
    }
    let addr: SocketAddr = fleet
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()?;
    // The page's files, as a browser finds them (read from the host, which no limit counts).
    let files = page_files(addr).await?;
    println!(
        "phones: {} phones at {} on {} instances, {}; a page is the document, {} files, 5 calls and 1 stream",
        args.phones,
        args.from,
        args.instances,
        match (args.client_burst, args.client_conns) {
            (None, None) => "up's default limits".to_owned(),
            (burst, conns) => {
                let or_default = |v: Option<u32>| v.map_or("up's".to_owned(), |v| v.to_string());
                format!(
                    "--client-burst {} --client-conns {}",
                    or_default(burst),
                    or_default(conns)
                )
            }
        },
        files.len(),
    );

    let counts = Arc::new(Counts::default());
    let streams: Vec<Arc<Stream>> = (0..rooms.len()).map(|_| Arc::default()).collect();
    let started = Instant::now();
    let mut loads = Vec::new();
    for ((room, token), stream) in rooms.iter().zip(&streams) {
        let phone = Phone {
            addr,
            from: args.from.clone(),
            room: room.clone(),
            token: token.clone(),
            counts: Arc::clone(&counts),
        };
        let (files, stream, parallel) = (files.clone(), Arc::clone(stream), args.parallel);
        loads.push(tokio::spawn(async move {
            phone.join(&files, stream, parallel).await
        }));
    }
    let mut load_ms = Vec::new();
    for load in loads {
        load_ms.push(load.await??);
    }
    let joined_ms = started.elapsed().as_millis();
    wait_until(Duration::from_secs(30), "every phone's first state", || {
        streams.iter().all(|s| s.states.load(Ordering::Relaxed) > 0)
    })
    .await
    .ok();
    let with_state = streams
        .iter()
        .filter(|s| s.states.load(Ordering::Relaxed) > 0)
        .count();

    // The teacher opens a vote from the host; every phone hears of it on its one stream.
    let admin = fleet.admin("default")?;
    admin
        .request(
            http::Method::POST,
            "/admin/class/poll",
            Some(serde_json::json!({ "question": "none-race" })),
        )
        .await
        .context("the teacher's vote did not open")?;
    let opened = Instant::now();
    wait_until(
        Duration::from_secs(20),
        "every phone hearing the vote",
        || {
            streams
                .iter()
                .all(|s| s.open_votes.load(Ordering::Relaxed) > 0)
        },
    )
    .await
    .ok();
    let heard_ms = opened.elapsed().as_millis();
    let heard = streams
        .iter()
        .filter(|s| s.open_votes.load(Ordering::Relaxed) > 0)
        .count();
    // Each phone reads its own vote (`GET /poll`, as vote.js on a new round) and votes.
    let mut votes = Vec::new();
    for (room, token) in &rooms {
        let phone = Phone {
            addr,
            from: args.from.clone(),
            room: room.clone(),
            token: token.clone(),
            counts: Arc::clone(&counts),
        };
        votes.push(tokio::spawn(async move { phone.vote().await }));
    }
    let mut counted = 0;
    for vote in votes {
        counted += usize::from(vote.await?.unwrap_or(false));
    }
    let before: Vec<u64> = streams
        .iter()
        .map(|s| s.states.load(Ordering::Relaxed))
        .collect();
    tokio::time::sleep(Duration::from_secs(args.hold)).await;
    // A stream sends a state every 500 ms: a phone that stayed joined got most of them.
    let expected = args.hold as f64 * 2.0;
    let live = streams
        .iter()
        .zip(&before)
        .filter(|(s, &b)| {
            let got = (s.states.load(Ordering::Relaxed) - b) as f64;
            s.opened.load(Ordering::Relaxed)
                && !s.ended.load(Ordering::Relaxed)
                && got >= expected * 0.8
        })
        .count();
    load_ms.sort_unstable();
    let pct = |q: f64| load_ms[((load_ms.len() as f64 - 1.0) * q).round() as usize];
    let refused = counts.refused.load(Ordering::Relaxed);
    let streams_open = streams
        .iter()
        .filter(|s| s.opened.load(Ordering::Relaxed))
        .count();
    println!(
        "requests: {} sent, refused {refused}{}",
        counts.requests.load(Ordering::Relaxed),
        match counts
            .refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect::<Vec<_>>()
        {
            seen if seen.is_empty() => String::new(),
            seen => format!(" ({})", seen.join(", ")),
        }
    );
    println!(
        "joined: {streams_open}/{} streams open, {with_state} with the feed, all within {joined_ms} ms; page load p50 {} ms, p99 {} ms, max {} ms",
        rooms.len(),
        pct(0.5),
        pct(0.99),
        load_ms.last().copied().unwrap_or(0)
    );
    println!(
        "vote: {heard}/{} phones heard it open on their stream (all within {heard_ms} ms), {counted}/{} votes counted",
        rooms.len(),
        rooms.len()
    );
    println!(
        "stayed: {live}/{} streams live through the {} s hold (>= 80 % of {expected:.0} states each), polls {}",
        rooms.len(),
        args.hold,
        streams.iter().map(|s| s.polls.load(Ordering::Relaxed)).sum::<u64>()
    );
    let all = rooms.len();
    let pass = refused == 0
        && streams_open == all
        && with_state == all
        && heard == all
        && counted == all
        && live == all;
    if !pass {
        // Returned, not exited: the fleet is torn down as it is dropped.
        bail!("FAIL: not every phone joined and stayed with 0 refused");
    }
    println!("PASS: 0 refused, every phone got the feed and the vote");
    Ok(())
}

/// One student's phone: its room, its room's token, the one address all phones share.
struct Phone {
    addr: SocketAddr,
    from: String,
    room: String,
    token: String,
    counts: Arc<Counts>,
}

impl Phone {
    /// Loads the dashboard as a browser does (the document, then its files over `parallel`
    /// connections, the calls it makes), with its stream open beside; the page's load time.
    async fn join(
        &self,
        files: &[String],
        stream: Arc<Stream>,
        parallel: usize,
    ) -> anyhow::Result<u128> {
        let started = Instant::now();
        let mut conn = self.connect().await?;
        let (status, _) = get(&mut conn, &format!("/?room={}", self.room), None).await?;
        self.counts.answered(status, "/");
        let queue = Arc::new(std::sync::Mutex::new(files.to_vec()));
        let mut workers = Vec::new();
        for _ in 0..parallel {
            let queue = Arc::clone(&queue);
            let counts = Arc::clone(&self.counts);
            let (addr, from) = (self.addr, self.from.clone());
            workers.push(tokio::spawn(async move {
                let mut conn = connect_from(&from, addr).await?;
                loop {
                    let Some(path) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop() else {
                        return anyhow::Ok(());
                    };
                    let (status, _) = get(&mut conn, &path, None).await?;
                    counts.answered(status, &path);
                }
            }));
        }
        // The stream opens once the page's script runs (as soon as app.js is in).
        let events = connect_from(&self.from, self.addr).await?;
        let path = format!("/events?room={}&draw=20&poll=1", self.room);
        tokio::spawn(hold_stream(
            events,
            path,
            Arc::clone(&stream),
            Arc::clone(&self.counts),
        ));
        for worker in workers {
            worker.await??;
        }
        let bearer = Some(self.token.as_str());
        for path in ["/admin/whoami", "/tiers", "/scenarios", "/lab", "/poll"] {
            let path = format!("{path}?room={}", self.room);
            let (status, _) = get(&mut conn, &path, bearer).await?;
            self.counts.answered(status, &path);
        }
        Ok(started.elapsed().as_millis())
    }

    /// Reads its vote (none yet) and votes; whether it was counted.
    async fn vote(&self) -> anyhow::Result<bool> {
        let mut conn = self.connect().await?;
        let path = format!("/poll?room={}", self.room);
        let (status, _) = get(&mut conn, &path, Some(&self.token)).await?;
        self.counts.answered(status, &path);
        let body = r#"{"option":0,"sure":true}"#;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            self.token,
            body.len()
        );
        conn.write_all(request.as_bytes()).await?;
        let (status, _) = read_response(&mut conn).await?;
        self.counts.answered(status, &path);
        Ok(status == 200)
    }

    async fn connect(&self) -> std::io::Result<TcpStream> {
        connect_from(&self.from, self.addr).await
    }
}

/// Holds `/events` open, counting its events, until the connection ends.
async fn hold_stream(mut tcp: TcpStream, path: String, stream: Arc<Stream>, counts: Arc<Counts>) {
    let addr = tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
    if tcp.write_all(request.as_bytes()).await.is_err() {
        counts.answered(0, &path);
        return;
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut carry = String::new();
    let mut head = true;
    let mut last_event = String::new();
    while let Ok(n) = tcp.read(&mut buf).await {
        if n == 0 {
            break;
        }
        carry.push_str(&String::from_utf8_lossy(&buf[..n]));
        if head {
            let Some(end) = carry.find("\r\n\r\n") else {
                continue;
            };
            let status = carry
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            counts.answered(status, &path);
            if status != 200 {
                return;
            }
            stream.opened.store(true, Ordering::Relaxed);
            carry.drain(..end + 4);
            head = false;
        }
        let cut = carry.rfind('\n').map_or(0, |i| i + 1);
        for line in carry[..cut].lines() {
            let line = line.trim_end();
            if let Some(name) = line.strip_prefix("event: ") {
                last_event = name.to_owned();
                match name {
                    "state" => stream.states.fetch_add(1, Ordering::Relaxed),
                    "poll" => stream.polls.fetch_add(1, Ordering::Relaxed),
                    _ => 0,
                };
            } else if let Some(data) = line.strip_prefix("data: ") {
                if last_event == "poll" {
                    let view: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                    if view["state"] == "open" {
                        stream.open_votes.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        carry.drain(..cut);
    }
    stream.ended.store(true, Ordering::Relaxed);
}

/// The dashboard's files as a browser finds them: what index.html links, and every module the
/// scripts import (statically or when first needed), fetched from the host.
async fn page_files(addr: SocketAddr) -> anyhow::Result<Vec<String>> {
    let mut conn = TcpStream::connect(addr).await?;
    let (_, index) = get(&mut conn, "/", None).await?;
    let mut todo: Vec<String> = links(&index, "/");
    let mut seen = BTreeSet::new();
    while let Some(path) = todo.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        if path.ends_with(".js") {
            let (status, text) = get(&mut conn, &path, None).await?;
            anyhow::ensure!(status == 200, "{path}: {status}");
            let dir = &path[..path.rfind('/').map_or(1, |i| i + 1)];
            todo.extend(imports(&text, dir));
        }
    }
    Ok(seen.into_iter().collect())
}

/// `href="…"` and `src="…"` of a page, as paths under `dir`.
fn links(html: &str, dir: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for part in html.split(attr).skip(1) {
            let value = &part[..part.find('"').unwrap_or(0)];
            if value.is_empty()
                || value.contains(':')
                || value.starts_with('#')
                || value.ends_with('/')
            {
                continue;
            }
            found.push(resolve(dir, value));
        }
    }
    found
}

/// The `'./x.js'` a module imports.
fn imports(js: &str, dir: &str) -> Vec<String> {
    js.split(['\'', '"'])
        .filter(|s| (s.starts_with("./") || s.starts_with("../")) && s.ends_with(".js"))
        .map(|s| resolve(dir, s))
        .collect()
}

fn resolve(dir: &str, path: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for piece in path.split('/') {
        match piece {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            piece => parts.push(piece),
        }
    }
    format!("/{}", parts.join("/"))
}

async fn connect_from(ip: &str, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(ip.parse().expect("an IPv4 address"), 0))?;
    socket.connect(addr).await
}

/// `GET path` on a kept-alive connection; the status and the body.
async fn get(
    conn: &mut TcpStream,
    path: &str,
    bearer: Option<&str>,
) -> anyhow::Result<(u16, String)> {
    let auth = bearer
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: phones\r\n{auth}\r\n");
    conn.write_all(request.as_bytes()).await?;
    read_response(conn).await
}

/// One response with a Content-Length body (every answer of the fleet but a stream's).
async fn read_response(conn: &mut TcpStream) -> anyhow::Result<(u16, String)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            bail!("the connection closed before an answer");
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("no status")?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            bail!("the connection closed mid-body");
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok((
        status,
        String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned(),
    ))
}
