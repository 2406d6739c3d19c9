//! The first violation, drawn: one self-contained SVG (no script, no network; tooltips are
//! `<title>`s) of the window around it. A lane per instance; in it each request's call→return
//! (thin, grey) around its section (the bar), the section's lease under it (orange, to its
//! deadline, renewals ticked); faults as bands on their target's lane; the offending pair
//! hatched, lettered and linked, and the checker's sentence on top.
//!
//! The look is the dashboard's live timeline (`static/timeline.js`): its colours (sections
//! blue, overlaps vermillion hatched, stale writes pink, leases orange) and its lanes. Sized
//! by a viewBox 560 units wide, so text stays readable on a 390 px phone and scales up on a
//! projector.

use std::collections::HashMap;
use std::fmt::Write;

use super::check::{CheckReport, Lang, State};
use super::marks::{draw_request, draw_section, fault_color, legend, DEFS, INK, RIGHT, W};
use super::parse::History;
use super::scene::{Focus, Scene};
use super::svg::{nice_step, text, title, wrap};
use super::words::{fault_done, secs};

const LABEL: f64 = 64.0;
const ROW: f64 = 52.0;
const MUTED: &str = "#5a6270";

/// The first violation of `report` (or, when all hold, the run's first sections) as SVG.
pub fn svg(history: &History, report: &CheckReport, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let scene = Scene::new(history, report.focus());
    let origin = report.origin_us;
    let (t0, t1) = (scene.t0, scene.t1);
    let plot_w = W - LABEL - RIGHT;
    let x =
        |us: i64| LABEL + ((us - t0) as f64 / (t1 - t0) as f64 * plot_w).clamp(-4.0, plot_w + 4.0);

    // The words on top: what broke (or what is undecided), and how, in a sentence.
    let named = |state: State| {
        report
            .verdicts()
            .iter()
            .find(|(_, _, v)| v.state == state)
            .map(|(en, z, _)| if zh { *z } else { *en })
            .unwrap_or_default()
    };
    let heading = match report.state {
        State::Violated if zh => format!(
            "第一处违反：{}（tier {}）",
            named(State::Violated),
            report.tier
        ),
        State::Violated => format!(
            "Where it broke: {} (tier {})",
            named(State::Violated),
            report.tier
        ),
        State::Unknown if zh => format!(
            "无法判定：{}（tier {}）",
            named(State::Unknown),
            report.tier
        ),
        State::Unknown => format!(
            "Undecided: {} (tier {})",
            named(State::Unknown),
            report.tier
        ),
        State::Holds if zh => format!("四项全部成立（tier {}）", report.tier),
        State::Holds => format!("All four hold (tier {})", report.tier),
    };
    let sentence = match report.focus() {
        Some(f) => f.words(lang).to_string(),
        None => report.mutual_exclusion.words(lang).to_string(),
    };
    let heads = wrap(&heading, W - 24.0, 20.0);
    let lines = wrap(&sentence, W - 24.0, 17.0);
    let words_y = 28.0 + heads.len() as f64 * 26.0;
    let top = words_y + lines.len() as f64 * 23.0 + 14.0;
    let rows: usize = scene.lanes.iter().map(|l| l.rows.max(1)).sum();
    let plot_h = rows as f64 * ROW;
    let axis_y = top + plot_h;
    let legend_y = axis_y + 64.0;
    let height = legend_y + 52.0;

    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height:.0}" width="100%" font-family="system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'PingFang SC', sans-serif" role="img">"#
    );
    title(&mut out, &format!("{heading} — {sentence}"));
    out.push_str(DEFS);
    let _ = write!(
        out,
        r##"<rect width="{W}" height="{height:.0}" fill="#ffffff"/>"##
    );
    let color = match report.state {
        State::Holds => "#007a5a",
        State::Unknown => "#8a6d00",
        State::Violated => "#d55e00",
    };
    for (i, line) in heads.iter().enumerate() {
        text(
            &mut out,
            12.0,
            28.0 + i as f64 * 26.0,
            20.0,
            800,
            color,
            "start",
            line,
        );
    }
    for (i, line) in lines.iter().enumerate() {
        text(
            &mut out,
            12.0,
            words_y + i as f64 * 23.0,
            17.0,
            500,
            INK,
            "start",
            line,
        );
    }

    // Lanes, their names and the fault bands on them.
    let mut lane_top = HashMap::new();
    let mut y = top;
    for (i, lane) in scene.lanes.iter().enumerate() {
        let h = lane.rows.max(1) as f64 * ROW;
        let fill = if i % 2 == 1 { "#f7f8fa" } else { "#ffffff" };
        let _ = write!(
            out,
            r#"<rect x="0" y="{y:.1}" width="{W}" height="{h:.1}" fill="{fill}"/>"#
        );
        text(
            &mut out,
            8.0,
            y + h / 2.0 + 6.0,
            17.0,
            700,
            INK,
            "start",
            &lane.name,
        );
        lane_top.insert(lane.name.as_str(), (y, h));
        y += h;
    }
    for f in &history.faults {
        let to = f.to_us.unwrap_or(f.from_us);
        if to < t0 || f.from_us > t1 {
            continue;
        }
        let (by, bh) = lane_top
            .get(f.target.as_str())
            .copied()
            .unwrap_or((top, plot_h));
        let (x0, x1) = (x(f.from_us), x(to));
        let (done_en, done_zh) = fault_done(&f.kind);
        let tip = format!(
            "{} · {} · {} → {} ({})",
            f.kind,
            f.target,
            secs(f.from_us, origin),
            f.to_us.map_or_else(|| "…".into(), |t| secs(t, origin)),
            if zh { done_zh } else { done_en }
        );
        let color = fault_color(&f.kind);
        let _ = write!(out, r#"<g class="fault">"#);
        if f.to_us.is_none() || x1 - x0 < 3.0 {
            let _ = write!(
                out,
                r#"<line x1="{x0:.1}" x2="{x0:.1}" y1="{by:.1}" y2="{:.1}" stroke="{color}" stroke-width="3" stroke-dasharray="6 3"/>"#,
                by + bh
            );
        } else {
            let _ = write!(
                out,
                r#"<rect x="{x0:.1}" y="{by:.1}" width="{:.1}" height="{bh:.1}" fill="{color}" fill-opacity="0.22" stroke="{color}" stroke-dasharray="5 3"/>"#,
                x1 - x0
            );
        }
        text(
            &mut out,
            x0 + 3.0,
            by + 14.0,
            13.0,
            700,
            color,
            "start",
            &f.kind,
        );
        title(&mut out, &tip);
        out.push_str("</g>");
    }

    // The time axis: seconds since the run's first call.
    let span_s = (t1 - t0) as f64 / 1e6;
    let step = nice_step(span_s, (plot_w / 95.0).floor().max(2.0));
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    let first = ((t0 - origin) as f64 / 1e6 / step).ceil() as i64;
    let _ = write!(
        out,
        r#"<line x1="{LABEL}" x2="{:.1}" y1="{axis_y:.1}" y2="{axis_y:.1}" stroke="{MUTED}"/>"#,
        W - RIGHT
    );
    for k in first.. {
        let s = k as f64 * step;
        let us = origin + (s * 1e6).round() as i64;
        if us > t1 {
            break;
        }
        let gx = x(us);
        let _ = write!(
            out,
            r##"<line x1="{gx:.1}" x2="{gx:.1}" y1="{top:.1}" y2="{axis_y:.1}" stroke="#e3e6eb"/>"##
        );
        text(
            &mut out,
            gx,
            axis_y + 18.0,
            14.0,
            400,
            MUTED,
            "middle",
            &format!("{s:.decimals$} s"),
        );
    }
    let axis_words = if zh {
        "自第一次调用起的时间"
    } else {
        "time since the run's first call"
    };
    text(
        &mut out,
        W - RIGHT,
        axis_y + 37.0,
        13.0,
        400,
        MUTED,
        "end",
        axis_words,
    );

    // Requests, sections, leases; the focus last, on top.
    let mut placed: HashMap<usize, (f64, f64, f64, f64)> = HashMap::new();
    let mut placed_requests: HashMap<usize, (f64, f64)> = HashMap::new();
    for item in &scene.items {
        let (ly, _) = lane_top[scene.lanes[item.lane].name.as_str()];
        let ry = ly + item.row as f64 * ROW;
        if let Some(r) = item.request {
            let req = &history.requests[r];
            let (x0, x1) = (x(req.call_us), x(req.return_us));
            draw_request(&mut out, req, x0, x1, ry + 6.0, origin, zh);
            placed_requests.insert(r, (x0, ry + 9.0));
        }
        if let Some(s) = item.section {
            let sec = &history.sections[s];
            let focus = scene.focus_sections.contains(&s);
            let end = sec.exit_us.unwrap_or(t1);
            let (x0, x1) = (x(sec.enter_us), x(end));
            draw_section(
                &mut out,
                sec,
                x0,
                x1.max(x0 + 3.0),
                ry + 15.0,
                focus,
                origin,
                zh,
            );
            placed.insert(s, (x0, ry + 15.0, x1.max(x0 + 3.0), ry + 37.0));
            if let Some(lease) = history.leases.iter().find(|l| l.owner == sec.owner) {
                let y = ry + 44.0;
                let g = x(lease.granted_us);
                let stop = lease.released_us.or(lease.deadline_us).unwrap_or(t1);
                let stop = stop.min(lease.deadline_us.unwrap_or(i64::MAX));
                let last = lease.renewals.iter().map(|r| r.deadline_us).max();
                let deadline = last.or(lease.deadline_us);
                let stop = match (last, lease.released_us) {
                    (Some(d), None) => d,
                    (Some(d), Some(r)) => d.min(r),
                    _ => stop,
                };
                let _ = write!(out, r#"<g class="lease">"#);
                let _ = write!(
                    out,
                    r##"<line x1="{g:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e69f00" stroke-width="4" stroke-linecap="round"/>"##,
                    x(stop).max(g + 2.0)
                );
                for r in &lease.renewals {
                    let rx = x(r.renew_us);
                    let _ = write!(
                        out,
                        r##"<line x1="{rx:.1}" x2="{rx:.1}" y1="{:.1}" y2="{:.1}" stroke="#7a4b00" stroke-width="2"/>"##,
                        y - 5.0,
                        y + 5.0
                    );
                }
                if let Some(d) = deadline.filter(|&d| d >= t0 && d <= t1) {
                    let dx = x(d);
                    let _ = write!(
                        out,
                        r##"<line x1="{dx:.1}" x2="{dx:.1}" y1="{:.1}" y2="{:.1}" stroke="#e69f00" stroke-width="3"/><path d="M{:.1},{:.1} L{:.1},{:.1} L{dx:.1},{:.1} Z" fill="#e69f00"/>"##,
                        y - 30.0,
                        y + 4.0,
                        dx - 5.0,
                        y - 36.0,
                        dx + 5.0,
                        y - 36.0,
                        y - 29.0
                    );
                }
                let renewals: Vec<String> = lease
                    .renewals
                    .iter()
                    .map(|r| {
                        format!(
                            "{} → {}",
                            secs(r.renew_us, origin),
                            secs(r.deadline_us, origin)
                        )
                    })
                    .collect();
                let tip = if zh {
                    format!(
                        "{} 的租约 · 授予 {} · 到期 {} · 续期 [{}] · 释放 {}",
                        lease.owner,
                        secs(lease.granted_us, origin),
                        deadline.map_or("无".into(), |d| secs(d, origin)),
                        renewals.join(", "),
                        lease.released_us.map_or("无".into(), |r| secs(r, origin))
                    )
                } else {
                    format!(
                        "lease of {} · granted {} · deadline {} · renewals [{}] · released {}",
                        lease.owner,
                        secs(lease.granted_us, origin),
                        deadline.map_or("none".into(), |d| secs(d, origin)),
                        renewals.join(", "),
                        lease
                            .released_us
                            .map_or("never".into(), |r| secs(r, origin))
                    )
                };
                title(&mut out, &tip);
                out.push_str("</g>");
            }
        }
    }

    // The offending operations lettered, and the first two linked.
    let mut anchors: Vec<(f64, f64, f64)> = Vec::new();
    for (i, s) in scene.focus_order.iter().enumerate() {
        let letter = ((b'A' + i as u8) as char).to_string();
        let spot = match s {
            Focus::Section(s) => placed.get(s).map(|&(x0, y0, _, y1)| (x0, y0, y1)),
            Focus::Request(r) => placed_requests
                .get(r)
                .map(|&(x0, y)| (x0, y - 4.0, y + 4.0)),
        };
        if let Some((fx, y0, y1)) = spot {
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="18" font-weight="900" fill="#111418" stroke="#ffffff" stroke-width="4" paint-order="stroke" text-anchor="end">{letter}</text>"##,
                fx - 3.0,
                (y0 + y1) / 2.0 + 6.0
            );
            anchors.push((fx, y0, y1));
        }
    }
    if let [(_, a0, a1), (bx, b0, b1), ..] = anchors[..] {
        let (from, to) = if b0 > a1 { (a1, b0) } else { (b1, a0) };
        let _ = write!(
            out,
            r##"<line x1="{bx:.1}" x2="{bx:.1}" y1="{from:.1}" y2="{to:.1}" stroke="#111418" stroke-width="2.5" stroke-dasharray="5 3"/><circle cx="{bx:.1}" cy="{from:.1}" r="4" fill="#111418"/><circle cx="{bx:.1}" cy="{to:.1}" r="4" fill="#111418"/>"##
        );
    }

    legend(&mut out, legend_y, zh);
    out.push_str("</svg>\n");
    out
}
