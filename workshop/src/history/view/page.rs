//! The viewer's page: one HTML document holding one run's view (or two, side by side) as a
//! `<script type="application/json">` block, which a browser never runs, and the viewer's
//! script and style — inline for the file `loadtest check --html` writes (it opens from disk,
//! with no network), or from the fleet's own `/viewer.js` and `/viewer.css` where the pages'
//! policy runs no inline script. The same bytes either way: the fleet serves `static/`, and
//! these are those files.

use super::super::check::Lang;
use super::View;

const SCRIPT: &str = include_str!("../../../../static/viewer.js");
const STYLE: &str = include_str!("../../../../static/viewer.css");

/// Where the page's script and style come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assets {
    /// Written into the page: a file that needs nothing else.
    Inline,
    /// `/viewer.js` and `/viewer.css` of the server that sends the page.
    Served,
}

/// The page of `views` (the first is the run asked about; a second is shown beside it), its
/// words first in `lang` (the page has a toggle).
pub fn page(views: &[View], assets: Assets, lang: Lang) -> String {
    let data = serde_json::json!({ "runs": views, "lang": lang });
    // JSON inside a <script> block ends at the first `</`: escaping `<` (and `>`, `&` for the
    // same reason in older parsers) keeps it JSON and keeps the block whole.
    let data = serde_json::to_string(&data)
        .expect("a view serializes")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let title = views
        .first()
        .map(|v| html_text(&format!("oversell · {} · {}", v.run_id, v.tier)))
        .unwrap_or_else(|| "oversell".to_owned());
    let (style, script) = match assets {
        Assets::Inline => (
            format!("<style>\n{STYLE}</style>"),
            // `</script` cannot occur in the script itself (it would end the block early).
            format!(
                "<script>\n{}</script>",
                SCRIPT.replace("</script", "<\\/script")
            ),
        ),
        Assets::Served => (
            r#"<link rel="stylesheet" href="/viewer.css">"#.to_owned(),
            r#"<script src="/viewer.js"></script>"#.to_owned(),
        ),
    };
    let html_lang = match lang {
        Lang::En => "en",
        Lang::Zh => "zh-CN",
    };
    format!(
        "<!doctype html>\n<html lang=\"{html_lang}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n{style}\n</head>\n<body>\n\
         <main id=\"viewer\"></main>\n\
         <script type=\"application/json\" id=\"viewer-data\">{data}</script>\n\
         {script}\n</body>\n</html>\n"
    )
}

fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
