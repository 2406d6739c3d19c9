//! The class: a room token acts in its own room on every room route and nowhere else and
//! stops on every instance the moment it is rotated or revoked ([`tokens`]); the class page's
//! data, the QR codes and bad input ([`page`]); the tokens and slips kept in files only their
//! owner may read, by `up --class` and by `oversell class`, and never in a log ([`files`]);
//! and a class kept through `up`'s own crash ([`kept`]).

mod files;
mod kept;
mod page;
mod tokens;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{TestFleet, TOKEN};

/// A request through instance `i` with `token` (none: no `Authorization`).
pub(super) async fn call(
    fleet: &TestFleet,
    i: usize,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut req = fleet
        .client
        .request(method, format!("{}{path}", fleet.url(i)))
        .json(&body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// `POST /admin/class` with the admin token: the tickets, by room.
pub(super) async fn make_class(fleet: &TestFleet, students: usize) -> Vec<Value> {
    let made = fleet
        .admin(
            Method::POST,
            "/admin/class",
            json!({ "students": students, "stock": 50 }),
        )
        .await;
    made["rooms"].as_array().unwrap().clone()
}

pub(super) fn token_of(ticket: &Value) -> String {
    ticket["token"].as_str().unwrap().to_owned()
}

impl TestFleet {
    pub(super) async fn get_admin_class(&self) -> Value {
        let (status, body) =
            call(self, 0, Method::GET, "/admin/class", Some(TOKEN), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }
}

/// The text of a QR code drawn by `qrcode`'s SVG renderer: its `M{x} {y}h{w}v{h}H{x}V{y}`
/// rectangles painted into a bitmap, which `rqrr` reads as a camera image would be read.
pub(crate) fn decode_qr_svg(svg: &str) -> String {
    let number = |s: &str, after: &str| -> usize {
        let start = s.find(after).unwrap() + after.len();
        let digits: String = s[start..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    let (width, height) = (number(svg, "width=\""), number(svg, "height=\""));
    let mut dark = vec![false; width * height];
    let path = &svg[svg.find(" d=\"").unwrap() + 4..];
    let path = &path[..path.find('"').unwrap()];
    for rect in path.split('M').filter(|r| !r.is_empty()) {
        // `x y h w v h H x V y`
        let values: Vec<usize> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        let (x, y, w, h) = (values[0], values[1], values[2], values[3]);
        for row in y..y + h {
            for col in x..x + w {
                dark[row * width + col] = true;
            }
        }
    }
    let mut image = rqrr::PreparedImage::prepare_from_greyscale(width, height, |x, y| {
        if dark[y * width + x] {
            0
        } else {
            255
        }
    });
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    grids[0].decode().unwrap().1
}
