//! The few SVG pieces the drawing is made of: escaped text, wrapped lines, nice ticks. Written
//! by hand rather than with a crate: the drawing needs rectangles, lines, text and tooltips,
//! nothing a writer crate would add, and it must stay one self-contained file.

use std::fmt::Write;

/// Text safe inside an element or an attribute.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
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

/// About how wide `text` is at `size` px: Latin letters about half an em, CJK a whole one.
pub fn width(text: &str, size: f64) -> f64 {
    text.chars()
        .map(|c| if (c as u32) > 0x2e80 { 1.0 } else { 0.56 })
        .sum::<f64>()
        * size
}

/// `text` broken into lines no wider than `max` px at `size` px, at spaces (or anywhere
/// between CJK characters).
pub fn wrap(text: &str, max: f64, size: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut word = String::new();
    let flush_word = |line: &mut String, word: &mut String, lines: &mut Vec<String>| {
        if word.is_empty() {
            return;
        }
        if !line.is_empty() && width(&format!("{line}{word}"), size) > max {
            lines.push(line.trim_end().to_string());
            line.clear();
        }
        line.push_str(word);
        word.clear();
    };
    for c in text.chars() {
        word.push(c);
        if c == ' ' || (c as u32) > 0x2e80 {
            flush_word(&mut line, &mut word, &mut lines);
        }
    }
    flush_word(&mut line, &mut word, &mut lines);
    if !line.trim().is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// A step of 1, 2 or 5 × 10ⁿ giving about `ticks` ticks over `span`.
pub fn nice_step(span: f64, ticks: f64) -> f64 {
    let raw = (span / ticks).max(1e-9);
    let pow = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * pow >= raw {
            return m * pow;
        }
    }
    10.0 * pow
}

/// A `<text>` element.
#[allow(clippy::too_many_arguments)]
pub fn text(
    out: &mut String,
    x: f64,
    y: f64,
    size: f64,
    weight: u32,
    fill: &str,
    anchor: &str,
    body: &str,
) {
    let _ = write!(
        out,
        r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" font-weight="{weight}" fill="{fill}" text-anchor="{anchor}">{}</text>"#,
        esc(body)
    );
}

/// A `<title>` (the tooltip) for the element just opened.
pub fn title(out: &mut String, body: &str) {
    let _ = write!(out, "<title>{}</title>", esc(body));
}
