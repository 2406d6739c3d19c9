//! A class's join slips: a printable page (A4, eight slips a sheet), one slip per room with
//! its join link as a QR code, the link itself and the room's short join code.
//!
//! `oversell up --class N` writes it beside the room tokens file (`slips.html`, mode 0600:
//! each link carries its room's token); the class page prints the same slips from its tickets
//! (`static/class.js`). A slip is paper in one student's hand: the projector shows the join
//! page's address only (`/join`), where the code is typed when the tab is lost.
//!
//! The page is filled from two templates beside this file. Every value is escaped for HTML,
//! except the QR code's SVG, which this module draws itself from the link.

use anyhow::Context;

use super::MadeClass;
use crate::routes::class::qr_svg;

const PAGE: &str = include_str!("slips/slips.html");
const SLIP: &str = include_str!("slips/slip.html");

/// The slips page of `class`; `join_page` is the address printed for typing a code.
pub fn page(class: &MadeClass, join_page: &str) -> anyhow::Result<String> {
    let mut slips = String::new();
    for made in &class.rooms {
        let qr = qr_svg(&made.join_link)
            .map_err(|err| anyhow::anyhow!("{err}"))
            .with_context(|| format!("the QR code of {}'s join link", made.room))?;
        slips += &SLIP
            .replace("{{qr}}", &qr)
            .replace("{{room}}", &escape(&made.room))
            .replace("{{join_page}}", &escape(join_page))
            .replace("{{code}}", &escape(&made.code))
            .replace("{{join_url}}", &escape(&made.join_link));
    }
    Ok(PAGE
        .replace("{{count}}", &class.rooms.len().to_string())
        .replace("{{slips}}\n", &slips))
}

/// `text` as HTML text or an attribute's value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slip_per_room_with_its_code_and_link_escaped() {
        let class = MadeClass::two_rooms("&x=<b>");
        let html = page(&class, "http://h/join").unwrap();
        assert_eq!(html.matches("<section class=\"slip\"").count(), 2);
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("AAAA-0002"), "{html}");
        assert!(html.contains("token=room-1&amp;x=&lt;b&gt;"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("@page { size: A4"), "{html}");
    }
}
