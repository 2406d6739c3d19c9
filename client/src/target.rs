//! Where requests go: one or more base URLs of the service. Each connection is pinned to one
//! target, and connections are dealt out round robin, so load spreads evenly over instances.
//! Admin calls and state reads go to the first target.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{anyhow, bail, Context};
use http::Uri;

/// One base URL, resolved once so that workers never wait on name resolution.
#[derive(Debug, Clone)]
pub struct Target {
    /// As the user wrote it (without a trailing slash), for messages.
    url: String,
    /// `host:port`, sent as the `Host` header.
    authority: String,
    addr: SocketAddr,
    /// Path prefix of the base URL (`""` or e.g. `"/shop"`), prepended to every request path.
    prefix: String,
}

impl Target {
    pub fn parse(url: &str) -> anyhow::Result<Target> {
        let uri: Uri = url
            .parse()
            .map_err(|e| anyhow!("invalid URL `{url}`: {e}"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => bail!("invalid URL `{url}`: https is not supported, use http"),
            _ => bail!("invalid URL `{url}`: expected http://host:port"),
        }
        let host = uri
            .host()
            .ok_or_else(|| anyhow!("invalid URL `{url}`: no host"))?;
        let port = uri.port_u16().unwrap_or(80);
        if uri.query().is_some() {
            bail!("invalid URL `{url}`: give the room with --room, not in the URL");
        }
        // `[::1]` comes back from `host()` with its brackets.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addr = (bare, port)
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve {url}"))?
            .next()
            .ok_or_else(|| anyhow!("cannot resolve {url}: no address"))?;
        Ok(Target {
            url: url.trim_end_matches('/').to_owned(),
            authority: format!("{host}:{port}"),
            addr,
            prefix: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn authority(&self) -> &str {
        &self.authority
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

/// The targets of a run, and the room every request plays in.
#[derive(Debug, Clone)]
pub struct Targets {
    list: Vec<Target>,
    room: Option<String>,
    /// Rooms the connections are spread over (`loadtest run --rooms`); empty: `room` alone.
    spread: Vec<String>,
}

impl Targets {
    /// Parses and resolves every URL; the room (if any) is added as `?room=` to each request.
    pub fn parse<S: AsRef<str>>(urls: &[S], room: Option<&str>) -> anyhow::Result<Targets> {
        if urls.is_empty() {
            bail!("no --url given");
        }
        let list = urls
            .iter()
            .map(|u| Target::parse(u.as_ref()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if let Some(room) = room {
            if room.is_empty() || room.len() > 64 {
                bail!("invalid room `{room}`: 1 to 64 characters");
            }
        }
        Ok(Targets {
            list,
            room: room.map(str::to_owned),
            spread: vec![],
        })
    }

    /// The same targets, with the connections spread over `n` rooms named after the room
    /// (`room` when none): `<room>-001`, `<room>-002`, … Admin calls still go to the room.
    pub fn spread_over_rooms(mut self, n: usize) -> anyhow::Result<Targets> {
        let prefix = self.room.clone().unwrap_or_else(|| "room".to_owned());
        let width = n.to_string().len().max(3);
        self.spread = (1..=n).map(|i| format!("{prefix}-{i:0width$}")).collect();
        if let Some(long) = self.spread.iter().find(|r| r.len() > 64) {
            bail!("invalid room `{long}`: 1 to 64 characters");
        }
        Ok(self)
    }

    /// The rooms the connections are spread over (`--rooms`); empty when they all sell in
    /// one room.
    pub fn spread(&self) -> &[String] {
        &self.spread
    }

    /// Admin calls and state reads go here.
    pub fn first(&self) -> &Target {
        &self.list[0]
    }

    /// The target of the `i`-th connection: round robin.
    pub fn for_connection(&self, i: usize) -> &Target {
        &self.list[i % self.list.len()]
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Target> {
        self.list.iter()
    }

    pub fn room(&self) -> Option<&str> {
        self.room.as_deref()
    }

    /// The origin-form request target for `path` on `target`: prefix, path, and the room.
    pub fn path_and_query(&self, target: &Target, path: &str) -> String {
        self.path_and_query_in(target, path, self.room.as_deref())
    }

    /// The same, in `room` (none: no `?room=`).
    pub fn path_and_query_in(&self, target: &Target, path: &str, room: Option<&str>) -> String {
        let mut out = format!("{}{path}", target.prefix);
        if let Some(room) = room {
            out.push(if path.contains('?') { '&' } else { '?' });
            out.push_str("room=");
            out.push_str(&percent_encode(room));
        }
        out
    }

    /// A full URL, for messages: `http://127.0.0.1:8080/state?room=x`.
    pub fn url_of(&self, target: &Target, path: &str) -> String {
        let full = self.path_and_query(target, path);
        format!("{}{}", target.url, &full[target.prefix.len()..])
    }
}

/// Everything but RFC 3986 unreserved characters becomes `%XX`.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_keeps_its_prefix_and_gets_the_room() {
        let t = Targets::parse(&["http://127.0.0.1:8080/shop/"], Some("a b")).unwrap();
        let first = t.first();
        assert_eq!(first.authority(), "127.0.0.1:8080");
        assert_eq!(t.path_and_query(first, "/sale"), "/shop/sale?room=a%20b");
        assert_eq!(
            t.path_and_query(first, "/ledger?limit=5"),
            "/shop/ledger?limit=5&room=a%20b"
        );
        assert_eq!(
            t.url_of(first, "/state"),
            "http://127.0.0.1:8080/shop/state?room=a%20b"
        );
    }

    #[test]
    fn spread_rooms_are_numbered_after_the_room() {
        let t = Targets::parse(&["http://127.0.0.1:1"], Some("bench"))
            .unwrap()
            .spread_over_rooms(200)
            .unwrap();
        assert_eq!(t.spread().len(), 200);
        assert_eq!(t.spread()[0], "bench-001");
        assert_eq!(t.spread()[199], "bench-200");
        let first = t.first();
        assert_eq!(t.path_and_query(first, "/state"), "/state?room=bench");
        assert_eq!(
            t.path_and_query_in(first, "/sale", Some("bench-007")),
            "/sale?room=bench-007"
        );
    }

    #[test]
    fn connections_are_dealt_round_robin() {
        let t = Targets::parse(&["http://127.0.0.1:1", "http://127.0.0.1:2"], None).unwrap();
        let ports: Vec<u16> = (0..4).map(|i| t.for_connection(i).addr().port()).collect();
        assert_eq!(ports, [1, 2, 1, 2]);
        assert_eq!(t.path_and_query(t.first(), "/sale"), "/sale");
    }

    #[test]
    fn https_and_garbage_are_refused_with_the_url_in_the_message() {
        let err = Targets::parse(&["https://x:1"], None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("https is not supported"), "{err}");
        let err = Targets::parse(&["127.0.0.1:8080"], None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("127.0.0.1:8080"), "{err}");
        assert!(Targets::parse::<&str>(&[], None).is_err());
    }

    #[test]
    fn the_default_port_is_80() {
        let t = Target::parse("http://127.0.0.1").unwrap();
        assert_eq!(t.addr().port(), 80);
    }
}
