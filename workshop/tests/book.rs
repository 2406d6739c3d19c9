//! The book (`docs/`) and the README, checked like code, without `mdbook`:
//!
//! - the chapter reference is what `loadtest chapters --markdown` writes, and names every
//!   chapter of the catalog; it is the teacher's edition (`docs/teacher/`), a book of its own,
//!   and the students' book (`docs/`) neither lists it nor holds its answers;
//! - every relative link and `#anchor` of the README and both books resolves (anchors as
//!   mdBook makes them from the headings), and each book's own links stay inside that book;
//! - the run sheets' minutes add up to the length each sheet promises, and every chapter they
//!   name is in the catalog.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use workshop::chapters::{pages, REFRESH};
use workshop::scenario::CATALOG;

/// The repository's root (this crate is one directory down).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workshop crate lives in the repository")
        .to_path_buf()
}

fn book_src() -> PathBuf {
    root().join("docs/src")
}

/// The teacher's edition: the chapter reference, apart from the students' book.
fn teacher_src() -> PathBuf {
    root().join("docs/teacher/src")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every Markdown file under `dir`, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_chapter_reference_is_what_the_command_writes() {
    let src = teacher_src();
    let mut stale = Vec::new();
    for (page, text) in pages() {
        let path = src.join(&page);
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        if on_disk != text {
            stale.push(page);
        }
    }
    // A group that left the catalog must not leave its page behind.
    let generated: Vec<String> = pages().into_iter().map(|(p, _)| p).collect();
    for path in markdown_under(&src.join("chapters")) {
        let rel = path
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy();
        let rel = rel.replace('\\', "/");
        if !generated.contains(&rel) {
            stale.push(format!("{rel} (no longer generated: remove it)"));
        }
    }
    assert!(
        stale.is_empty(),
        "the chapter reference differs from the catalog in {stale:?}; refresh it with\n  {REFRESH}"
    );
}

#[test]
fn the_chapter_reference_names_every_chapter_with_its_question_and_sources() {
    let index = read(&teacher_src().join(workshop::chapters::INDEX));
    for s in CATALOG.iter() {
        let row = index
            .lines()
            .find(|l| l.starts_with(&format!("| [`{}`]", s.id)))
            .unwrap_or_else(|| panic!("chapter `{}` is not in the reference", s.id));
        let q = workshop::scenario::question(s.id)
            .unwrap_or_else(|| panic!("chapter `{}` has no question", s.id));
        assert!(row.contains(q.en), "`{}`: its question is missing", s.id);
        assert!(
            row.contains(&s.source.replace('|', "\\|")),
            "`{}`: its sources are missing",
            s.id
        );
    }
}

/// What mdBook makes of a heading's text: the text as rendered (links and code reduced to
/// their text, markup and entities dropped), lowercased, whitespace to `-`, and nothing kept
/// but letters, digits, `_` and `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` renders as its text.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find("](")
            .and_then(|close| after[close..].find(')').map(|end| (close, close + end + 1)))
        {
            Some((close, end)) => {
                text.push_str(&after[..close]);
                rest = &after[end..];
            }
            None => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The lines of a Markdown text outside fenced code blocks, with their numbers (from 1).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The anchors of a page, as mdBook numbers repeated headings (`x`, `x-1`, `x-2`, …).
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let id = slug(&line[hashes..]);
        let n = seen.entry(id.clone()).or_insert(0);
        out.push(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of the inline links and images of a line, outside code spans.
fn link_targets(line: &str) -> Vec<String> {
    let mut plain = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            plain.push_str(part);
        }
    }
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_owned());
        rest = &after[end..];
    }
    out
}

/// `a/b/../c` → `a/c`, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let books = [book_src(), teacher_src()];
    let mut files = vec![root().join("README.md")];
    for src in &books {
        files.extend(markdown_under(src));
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = read(file);
        let book = books.iter().find(|src| file.starts_with(src));
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let where_ = format!("{}:{n}: `{target}`", file.display());
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    normalize(&file.parent().expect("a file has a directory").join(path))
                };
                if !dest.exists() {
                    broken.push(format!("{where_}: no such file"));
                    continue;
                }
                if book.is_some_and(|src| !dest.starts_with(src)) {
                    broken.push(format!(
                        "{where_}: leaves the book (mdBook would not copy it)"
                    ));
                }
                if let Some(anchor) = anchor {
                    if dest.extension().is_some_and(|x| x == "md")
                        && !anchors(&read(&dest)).iter().any(|a| a == anchor)
                    {
                        broken.push(format!("{where_}: no heading makes `#{anchor}`"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser blind?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A Markdown table: the heading above it, its header's cells and its rows' cells, trimmed.
struct Table {
    heading: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Every table of a page.
fn tables(text: &str) -> Vec<Table> {
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with('#') {
            heading = lines[i].to_owned();
        }
        if lines[i].starts_with('|') && lines.get(i + 1).is_some_and(|l| l.starts_with("|-")) {
            let header = cells(lines[i]);
            let mut rows = Vec::new();
            i += 2;
            while i < lines.len() && lines[i].starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.push(Table {
                heading: heading.clone(),
                header,
                rows,
            });
            continue;
        }
        i += 1;
    }
    out
}

#[test]
fn the_run_sheets_add_up_and_name_chapters_of_the_catalog() {
    let text = read(&book_src().join("guide/run-sheets.md"));
    let mut sheets = 0;
    for Table {
        heading,
        header,
        rows,
    } in tables(&text)
    {
        let Some(col) = header.iter().position(|h| h == "min") else {
            continue;
        };
        sheets += 1;
        let chapter_col = header.iter().position(|h| h == "chapter");
        let promised: u32 = heading
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("`{heading}` names no length in minutes"));
        let mut sum = 0;
        let mut total = None;
        for row in &rows {
            let minutes: u32 = row[col]
                .trim_matches('*')
                .parse()
                .unwrap_or_else(|_| panic!("`{heading}`: `{}` is no minutes", row[col]));
            if row[0].contains("total") {
                total = Some(minutes);
            } else {
                sum += minutes;
            }
            let chapters = chapter_col.map_or("", |c| row[c].as_str());
            for id in chapters.split('`').skip(1).step_by(2) {
                assert!(
                    workshop::scenario::find(id).is_some(),
                    "`{heading}` names `{id}`, which is no chapter of the catalog"
                );
            }
        }
        assert_eq!(Some(sum), total, "`{heading}`: the rows do not add up");
        assert_eq!(sum, promised, "`{heading}`: the rows make {sum} minutes");
    }
    assert_eq!(sheets, 3, "three run sheets: 45, 90 and 180 minutes");
}

/// The students' book holds no answer: its summary lists no page of the teacher's edition, and
/// no page of it carries a chapter's expected figures or the reference's generated text (a
/// copy pasted back would be found here).
#[test]
fn the_students_book_holds_none_of_the_teachers_edition() {
    let src = book_src();
    let summary = read(&src.join("SUMMARY.md"));
    assert!(
        !summary.contains("chapters.md") && !summary.contains("chapters/"),
        "the students' book lists the chapter reference:\n{summary}"
    );
    let mut found = Vec::new();
    for page in markdown_under(&src) {
        let text = read(&page);
        for mark in [
            "**Expected.**",
            "Generated by `loadtest chapters --markdown`",
        ] {
            if text.contains(mark) {
                found.push(format!("{}: {mark}", page.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "answers in the students' book:\n{}",
        found.join("\n")
    );
    assert!(
        teacher_src().join("SUMMARY.md").exists(),
        "the teacher's edition has no summary"
    );
}

/// The citations name articles by number ("002 lines 55–94"): the guide lists each number with
/// its title, as the chapter reference does, from the one list both are made from.
#[test]
fn the_guide_lists_the_articles_the_citations_number() {
    let page = read(&book_src().join("guide/articles.md"));
    let table = workshop::articles::table();
    assert!(
        page.contains(&table),
        "docs/src/guide/articles.md does not hold the articles' table of workshop/src/articles.rs:\n{table}"
    );
}
