//! The dashboard's files (`static/`), served at `/`.
//!
//! They are embedded in the binary at build time, so `oversell serve` and `oversell up` show
//! the dashboard from any working directory and the container image needs no copy of them.
//! `--static-dir` serves a directory from disk instead, for editing the page without
//! rebuilding; a directory that does not exist is logged and the embedded copy served (`up`
//! hands every instance an absolute `STATIC_DIR` whether or not one is there).
//!
//! Every file goes out with a Content-Security-Policy that runs the pages' own script files
//! and nothing else: no inline script, no handler attribute, no other origin. The pages show
//! students' free text (a vote's reason) in the tab that holds the admin token; should a page
//! ever put such text in as markup, the browser still refuses to run what it smuggled in.

use std::path::Path;

use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, MethodRouter};
use rust_embed::Embed;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;

use crate::error::AppError;
use crate::state::AppState;

#[derive(Embed)]
#[folder = "static/"]
struct Dashboard;

/// The fallback service of the router: files from `dir` when it is a directory, else the
/// embedded copy; compressed (br or gzip) for a browser that asks, which takes the page from
/// about 150 KB to under 50 KB on a classroom's WiFi.
pub fn service(dir: Option<&Path>) -> MethodRouter<AppState> {
    let files = match dir {
        Some(dir) if dir.is_dir() => {
            tracing::info!(dir = %dir.display(), "serving the dashboard from disk");
            let files = ServeDir::new(dir).not_found_service(any(not_found));
            // ServeDir knows files only: `/class` is named here, as in the embedded copy.
            let files = tower::ServiceBuilder::new()
                .map_request(page_on_disk)
                .service(files);
            axum::routing::get_service(files).fallback(not_found)
        }
        Some(dir) => {
            tracing::warn!(dir = %dir.display(), "no such --static-dir; serving the embedded dashboard");
            any(embedded)
        }
        None => any(embedded),
    };
    files
        .layer::<_, std::convert::Infallible>(middleware::map_response(with_policy))
        .layer(CompressionLayer::new())
}

/// The pages' Content-Security-Policy: scripts, styles and connections from this origin only
/// (`data:` images: the QR codes, a reveal's picture, the favicon), no plugin, no frame.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

async fn with_policy(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    response
}

async fn embedded(method: Method, headers: HeaderMap, request: Request) -> Response {
    let path = request.uri().path();
    let name = page_file(path.trim_start_matches('/'));
    let Some(file) = Dashboard::get(name) else {
        return AppError::NotFound(path.to_owned()).into_response();
    };
    if method != Method::GET && method != Method::HEAD {
        return AppError::MethodNotAllowed.into_response();
    }
    // The content hash as ETag: a browser revalidates and gets a 304 until the binary changes.
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()[..16]));
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let etag = HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"\""));
    let no_cache = HeaderValue::from_static("no-cache");
    if fresh {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, etag), (header::CACHE_CONTROL, no_cache)],
        )
            .into_response();
    }
    let mime = HeaderValue::from_str(file.metadata.mimetype())
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    let headers = [
        (header::CONTENT_TYPE, mime),
        (header::ETAG, etag),
        (header::CACHE_CONTROL, no_cache),
    ];
    match method {
        Method::HEAD => (headers, ()).into_response(),
        _ => (headers, file.data).into_response(),
    }
}

/// The file behind a page's path (without its leading `/`): `/` is the dashboard, `/class` the
/// class page (public like every page here, its data behind the admin token), `/join` the
/// page a slip's code is typed into (the address the projector shows).
fn page_file(name: &str) -> &str {
    match name {
        "" => "index.html",
        "class" => "class.html",
        "join" => "join.html",
        name => name,
    }
}

/// `/class` → `/class.html` for ServeDir, the query kept.
fn page_on_disk(mut request: Request) -> Request {
    let uri = request.uri();
    let path = uri.path().trim_start_matches('/');
    if !path.is_empty() && page_file(path) != path {
        let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
        if let Ok(uri) = format!("/{}{query}", page_file(path)).parse::<Uri>() {
            *request.uri_mut() = uri;
        }
    }
    request
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn not_found(request: Request) -> AppError {
    AppError::NotFound(request.uri().path().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_is_embedded() {
        for name in [
            "index.html",
            "app.js",
            "i18n.js",
            "timeline.js",
            "app.css",
            "class.html",
            "class.js",
            "class.css",
            "lab.html",
            "lab.css",
            "lab.js",
            "lab-page.js",
            "editor.js",
            "feed.js",
            "room.js",
            "chart.js",
            "tier-text.js",
            "vote.html",
            "vote.js",
            "vote-page.js",
            "present.html",
            "present.js",
            "present.css",
            "present-notes.js",
            "poll-strings.js",
            "class-strings.js",
            "class-results.js",
            "join.html",
            "join.js",
            "join.css",
            "vendor/uplot/uPlot.esm.min.js",
        ] {
            assert!(Dashboard::get(name).is_some(), "{name} is not embedded");
        }
        let index = Dashboard::get("index.html").unwrap();
        assert!(index.metadata.mimetype().starts_with("text/html"));
        assert_eq!(
            page_file("join"),
            "join.html",
            "/join, the address the projector shows"
        );
    }

    /// The policy forbids inline script, so no page may rely on one: every `<script>` of a
    /// page names its file, and no element carries a handler attribute or inline style.
    #[test]
    fn no_page_needs_what_the_policy_forbids() {
        assert!(CONTENT_SECURITY_POLICY.contains("script-src 'self';"));
        assert!(!CONTENT_SECURITY_POLICY.contains("unsafe-inline"));
        for name in Dashboard::iter().filter(|n| n.ends_with(".html")) {
            let page = Dashboard::get(&name).unwrap();
            let html = std::str::from_utf8(&page.data).unwrap().to_lowercase();
            for (i, _) in html.match_indices("<script") {
                let tag = &html[i..i + html[i..].find('>').unwrap()];
                assert!(tag.contains(" src="), "{name}: an inline script: {tag}");
            }
            assert!(!html.contains(" style="), "{name}: an inline style");
            assert!(!html.contains("javascript:"), "{name}: a javascript: URL");
            let handler = html
                .split(|c: char| c.is_whitespace())
                .find(|w| w.starts_with("on") && w.contains('='));
            assert_eq!(handler, None, "{name}: a handler attribute");
        }
    }
}
