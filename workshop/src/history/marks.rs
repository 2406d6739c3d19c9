//! The marks of the drawing, each with its tooltip: a request's call→return, a section's bar,
//! the legend; in the colours of the dashboard's live timeline (`static/timeline.js`).

use std::fmt::Write;

use super::svg::{esc, text, title, width};
use super::words::{secs, value};
use oversell_api::history::{Outcome, Request, Section};

/// The picture's width in viewBox units, its right margin, and its ink.
pub(super) const W: f64 = 560.0;
pub(super) const RIGHT: f64 = 12.0;
pub(super) const INK: &str = "#111418";

pub(super) const DEFS: &str = r##"<defs><pattern id="h-overlap" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#d55e00"/><rect width="3" height="8" fill="#ffb380"/></pattern><pattern id="h-stale" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#cc79a7"/><rect width="2" height="6" fill="#fff"/></pattern></defs>"##;

pub(super) fn fault_color(kind: &str) -> &'static str {
    let k = kind.to_ascii_lowercase();
    if k.contains("freeze") || k.contains("stop") {
        "#0072b2"
    } else if k.contains("crash") || k.contains("kill") {
        "#d55e00"
    } else if k.contains("partition") {
        "#e69f00"
    } else {
        "#8e4585"
    }
}

pub(super) fn draw_request(
    out: &mut String,
    r: &Request,
    x0: f64,
    x1: f64,
    y: f64,
    origin: i64,
    zh: bool,
) {
    let answered = r.status != 0 && r.status < 500;
    let fill = if r.status == 200 {
        "#5a6270"
    } else {
        "#aab2bf"
    };
    let dash = if answered {
        ""
    } else {
        r#" stroke-dasharray="4 3""#
    };
    let _ = write!(out, r#"<g class="request">"#);
    let _ = write!(
        out,
        r#"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="6" rx="3" fill="{fill}" fill-opacity="0.55" stroke="{fill}"{dash}/>"#,
        (x1 - x0).max(2.0)
    );
    for cx in [x0, x1] {
        let _ = write!(
            out,
            r#"<line x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}" stroke="{fill}" stroke-width="2"/>"#,
            y - 3.0,
            y + 9.0
        );
    }
    let status = if r.status == 0 {
        if zh {
            "超时".to_string()
        } else {
            "timeout".to_string()
        }
    } else {
        r.status.to_string()
    };
    let tip = if zh {
        format!(
            "买家 {} · {status} · stock_left {} · 订单 {} · fence {} · {} · 调用 {} → 返回 {}",
            r.buyer,
            value(r.stock_left),
            r.order_id.as_deref().unwrap_or("无"),
            value(r.fence.map(|f| f as i64)),
            r.instance.as_deref().unwrap_or("?"),
            secs(r.call_us, origin),
            secs(r.return_us, origin)
        )
    } else {
        format!(
            "buyer {} · {status} · stock_left {} · order {} · fence {} · {} · call {} → return {}",
            r.buyer,
            value(r.stock_left),
            r.order_id.as_deref().unwrap_or("none"),
            value(r.fence.map(|f| f as i64)),
            r.instance.as_deref().unwrap_or("?"),
            secs(r.call_us, origin),
            secs(r.return_us, origin)
        )
    };
    title(out, &tip);
    out.push_str("</g>");
}

#[allow(clippy::too_many_arguments)]
pub(super) fn draw_section(
    out: &mut String,
    s: &Section,
    x0: f64,
    x1: f64,
    y: f64,
    focus: bool,
    origin: i64,
    zh: bool,
) {
    let h = 22.0;
    let open = s.exit_us.is_none();
    let fill = match (focus, s.outcome) {
        (_, Outcome::StaleRefused) => "url(#h-stale)",
        (true, _) => "url(#h-overlap)",
        (_, Outcome::SoldOut) | (_, Outcome::Reset) => "#9aa3ae",
        _ => "#0072b2",
    };
    let stroke = if focus {
        r##" stroke="#7a2e00" stroke-width="2.5""##
    } else if open {
        r##" stroke="#111418" stroke-width="1.5" stroke-dasharray="4 3" fill-opacity="0.55""##
    } else {
        ""
    };
    let _ = write!(
        out,
        r#"<g class="section{}">"#,
        if focus { " focus" } else { "" }
    );
    let _ = write!(
        out,
        r#"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{h}" rx="3" fill="{fill}"{stroke}/>"#,
        x1 - x0
    );
    let label = match (s.fence, s.read, s.wrote) {
        (Some(f), _, _) => format!("#{f}"),
        (None, Some(r), Some(w)) => format!("{r}→{w}"),
        (None, Some(r), None) => r.to_string(),
        _ => String::new(),
    };
    if !label.is_empty() && x1 - x0 > label.len() as f64 * 8.5 + 6.0 {
        let color = if matches!(s.outcome, Outcome::SoldOut | Outcome::StaleRefused) {
            INK
        } else {
            "#ffffff"
        };
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" font-size="14" font-weight="700" fill="{color}"{}>{}</text>"##,
            x0 + 5.0,
            y + 16.0,
            if focus {
                r##" stroke="#7a2e00" stroke-width="3" paint-order="stroke""##
            } else {
                ""
            },
            esc(&label)
        );
    }
    let outcome = serde_json::to_value(s.outcome)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let exit = s.exit_us.map_or_else(
        || {
            if zh {
                "未离开".into()
            } else {
                "never left".into()
            }
        },
        |e| secs(e, origin),
    );
    let tip = if zh {
        format!(
            "{} · 持有者 {} · fence {} · 读 {} → 写 {} · {outcome} · 进入 {} → 离开 {exit}",
            s.instance,
            s.owner,
            value(s.fence.map(|f| f as i64)),
            value(s.read),
            value(s.wrote),
            secs(s.enter_us, origin)
        )
    } else {
        format!(
            "{} · owner {} · fence {} · read {} → wrote {} · {outcome} · enter {} → exit {exit}",
            s.instance,
            s.owner,
            value(s.fence.map(|f| f as i64)),
            value(s.read),
            value(s.wrote),
            secs(s.enter_us, origin)
        )
    };
    title(out, &tip);
    out.push_str("</g>");
}

pub(super) fn legend(out: &mut String, y: f64, zh: bool) {
    let items: [(&str, &str, &str); 5] = [
        ("#0072b2", "section", "临界区"),
        ("url(#h-overlap)", "the pair", "违反的一对"),
        ("#5a6270", "request call→return", "请求 调用→返回"),
        ("#e69f00", "lease → deadline", "租约 → 到期"),
        ("#8e4585", "fault", "故障"),
    ];
    let (mut lx, mut ly) = (12.0, y);
    for (color, en, zh_word) in items {
        let word = if zh { zh_word } else { en };
        let w = 24.0 + width(word, 14.0) + 16.0;
        if lx + w > W - RIGHT {
            lx = 12.0;
            ly += 24.0;
        }
        let opacity = if en == "fault" {
            r#" fill-opacity="0.3""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<rect x="{lx:.1}" y="{:.1}" width="18" height="14" rx="2" fill="{color}"{opacity}/>"#,
            ly - 12.0
        );
        text(out, lx + 24.0, ly, 14.0, 400, INK, "start", word);
        lx += w;
    }
}
