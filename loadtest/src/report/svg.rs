//! A minimal SVG writer shared by the charts.

use std::fmt::Write as _;

/// A minimal SVG writer: every text goes through `escape`.
pub(super) struct Svg {
    out: String,
}

impl Svg {
    pub(super) fn new(width: f64, height: f64) -> Svg {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#
        );
        out.push_str(concat!(
            "<style>",
            ".title{font-size:18px;font-weight:bold;fill:#222}",
            ".head{font-size:14px;font-weight:bold;fill:#333}",
            ".note{font-size:12px;fill:#555}",
            ".tier{font-size:13px;font-family:monospace;fill:#222}",
            ".value{font-size:12px;fill:#333}",
            ".badv{font-size:12px;font-weight:bold;fill:#c62828}",
            ".good{font-size:13px;font-weight:bold;fill:#2e7d32}",
            ".bad{fill:#e53935}.rps{fill:#1e88e5}.band{fill:#f4f4f4}",
            ".small{font-size:10px;fill:#555}.acq{fill:#43a047}",
            ".mean{stroke:#e53935;stroke-dasharray:4 3}",
            "</style>"
        ));
        let _ = write!(
            out,
            r#"<rect width="{width}" height="{height}" fill="white"/>"#
        );
        Svg { out }
    }

    pub(super) fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, class: &str) {
        let _ = write!(
            self.out,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" class="{class}"/>"#
        );
    }

    pub(super) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64) {
        let _ = write!(
            self.out,
            r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#999"/>"##
        );
    }

    pub(super) fn text(&mut self, x: f64, y: f64, anchor: &str, class: &str, text: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" class="{class}">{}</text>"#,
            escape(text)
        );
    }

    /// Text turned about its anchor point (e.g. -45 for axis labels that would not fit).
    pub(super) fn text_turned(&mut self, x: f64, y: f64, degrees: f64, class: &str, text: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="end" transform="rotate({degrees} {x:.1} {y:.1})" class="{class}">{}</text>"#,
            escape(text)
        );
    }

    /// A line drawn in a class of its own (dashed, coloured).
    pub(super) fn line_class(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, class: &str) {
        let _ = write!(
            self.out,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" class="{class}"/>"#
        );
    }

    pub(super) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}
