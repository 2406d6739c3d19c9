//! The articles' lines the curriculum cites: read from the text as the catalog, the lab's
//! cards and the README write them, and each checked to lie within its article (counted in
//! the articles kept outside the repository). A module of `curriculum_text`, in a file of its
//! own for its size.

use workshop::scenario::CATALOG;

/// A citation of an article's lines: `002 line 679`, `001 lines 216–219`, `000 (lines 83–88,
/// 102)`, in Chinese `002（第 604、620 行）`, or, as the README's workshop tables write them,
/// `002 705, 774`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cited {
    /// The article, 0–4 (`000`–`004`).
    article: usize,
    /// The lines cited, each a range (one line: `a == b`).
    lines: Vec<(usize, usize)>,
    /// Whether the lines were introduced by `line`/`lines`.
    worded: bool,
}

/// Every citation of an article's lines in `text`. An article is `000`–`004` standing alone
/// (not inside a longer number such as `10,000` or `8_000`), followed by a space or a bracket
/// or both, an optional `line `/`lines `/`第 `, then line numbers and ranges joined by `, `,
/// ` and ` or `、`.
/// A line number never starts with 0, so `002 lines 602–604 and 678, 003 line 67` is two
/// citations, not one with a line 3.
fn citations(text: &str) -> Vec<Cited> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices("00") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || "_.,-–/".contains(c)) {
            continue;
        }
        let Some(digit) = bytes.get(at + 2).filter(|b| (b'0'..=b'4').contains(b)) else {
            continue;
        };
        let mut rest = &text[at + 3..];
        let spaced = rest.strip_prefix(' ');
        rest = spaced.unwrap_or(rest);
        let bracket = ['(', '（'].iter().find_map(|b| rest.strip_prefix(*b));
        if spaced.is_none() && bracket.is_none() {
            continue;
        }
        rest = bracket.unwrap_or(rest);
        let mut worded = false;
        for word in ["lines ", "line ", "第 "] {
            if let Some(after) = rest.strip_prefix(word) {
                rest = after;
                worded = true;
                break;
            }
        }
        let mut lines = Vec::new();
        while let Some((first, after)) = line_number(rest) {
            rest = after;
            let mut last = first;
            if let Some(after) = rest.strip_prefix('–').or_else(|| rest.strip_prefix('-')) {
                if let Some((to, after)) = line_number(after) {
                    last = to;
                    rest = after;
                }
            }
            lines.push((first, last));
            let next = [", ", " and ", ",", "、"]
                .iter()
                .find_map(|sep| rest.strip_prefix(sep))
                .filter(|after| line_number(after).is_some());
            match next {
                Some(after) => rest = after,
                None => break,
            }
        }
        if !lines.is_empty() {
            let article = usize::from(digit - b'0');
            out.push(Cited {
                article,
                lines,
                worded,
            });
        }
    }
    out
}

/// A line number at the start of `s` (digits, not starting with 0, not run into a letter),
/// and the rest after it.
fn line_number(s: &str) -> Option<(usize, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let digits = &s[..end];
    if digits.is_empty() || digits.starts_with('0') {
        return None;
    }
    let rest = &s[end..];
    if rest.starts_with(|c: char| c.is_alphabetic() && c.is_ascii()) {
        return None;
    }
    Some((digits.parse().ok()?, rest))
}

#[test]
fn citations_are_read_as_the_catalog_writes_them() {
    let cited = citations(
        "001 line 94, 002 lines 602–604 and 678, 003 line 67; 000 (lines 83–88, 102); \
         004's Jedis unlock; 10,000 and 8_000; Kleppmann 2016; 002 705, 774; \
         002（第 604、620 行）；003 第 41 行",
    );
    let cite = |article, lines: &[(usize, usize)], worded| Cited {
        article,
        lines: lines.to_vec(),
        worded,
    };
    assert_eq!(
        cited,
        vec![
            cite(1, &[(94, 94)], true),
            cite(2, &[(602, 604), (678, 678)], true),
            cite(3, &[(67, 67)], true),
            cite(0, &[(83, 88), (102, 102)], true),
            cite(2, &[(705, 705), (774, 774)], false),
            cite(2, &[(604, 604), (620, 620)], true),
            cite(3, &[(41, 41)], true),
        ]
    );
}

/// Every chapter cites an article's lines: the story it tells, or, where the articles do
/// not tell it, the lines whose code or word meets it. A source with none is a chapter that
/// has lost its place in the curriculum the articles set.
#[test]
fn every_scenario_names_the_lines_of_its_source() {
    let unplaced: Vec<String> = CATALOG
        .iter()
        .filter(|s| !citations(s.source).iter().any(|c| c.worded))
        .map(|s| format!("`{}`: {}", s.id, s.source))
        .collect();
    assert!(
        unplaced.is_empty(),
        "chapters citing no article's lines (`NNN line N` or `NNN lines A–B`, NNN 000–004):\n{}",
        unplaced.join("\n")
    );
}

/// Where the five articles are: `OVERSELL_SEEDS`, else `../shared/seeds` beside the
/// workspace (as CI and the team's machines keep them, outside the repository).
fn seeds_dir() -> std::path::PathBuf {
    match std::env::var_os("OVERSELL_SEEDS") {
        Some(dir) => dir.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds"),
    }
}

/// How many lines each article has, 000 to 004: only counted (as `wc -l` does, plus a last
/// line without its newline), nothing of their text kept.
fn article_lengths() -> [usize; 5] {
    let dir = seeds_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|err| {
        panic!(
            "the articles are not at {} ({err}): the citation check counts their lines there \
             (../shared/seeds beside the workspace); put them there, or set OVERSELL_SEEDS to \
             the directory holding 000_*.txt … 004_*.txt",
            dir.display()
        )
    });
    let mut found: [Option<usize>; 5] = [None; 5];
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(article) = (0..5).find(|a| name.starts_with(&format!("00{a}_"))) else {
            continue;
        };
        if !name.ends_with(".txt") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path())
            .unwrap_or_else(|err| panic!("{}: {err}", entry.path().display()));
        assert!(
            found[article].replace(text.lines().count()).is_none(),
            "two files for article 00{article} in {}",
            dir.display()
        );
    }
    found.map(|n| {
        n.unwrap_or_else(|| {
            panic!(
                "no 00N_*.txt for some article in {}: {found:?}",
                dir.display()
            )
        })
    })
}

/// Every line the curriculum cites lies inside its article: the catalog (sources and both
/// explanations), the lab's report cards, the README and the book. A citation past an article's end is
/// a slip of the pen that no reader of the article could follow.
#[test]
fn every_cited_line_lies_within_its_article() {
    let lengths = article_lengths();
    let mut texts: Vec<(String, &str)> = Vec::new();
    for s in CATALOG.iter() {
        texts.push((format!("catalog `{}` source", s.id), s.source));
        texts.push((format!("catalog `{}` en", s.id), s.en));
        texts.push((format!("catalog `{}` zh", s.id), s.zh));
    }
    for a in workshop::lab::ATTACKS {
        texts.push((format!("grader `{}` en", a.id()), a.hole_en));
        texts.push((format!("grader `{}` zh", a.id()), a.hole_zh));
    }
    // The README and every page of the book, read when the test runs so that a new page is
    // checked without naming it here.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut pages = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                pages.push(path);
            }
        }
    }
    let pages: Vec<(String, String)> = pages
        .iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap_or(p).display().to_string();
            (
                name,
                std::fs::read_to_string(p).expect("a page is readable"),
            )
        })
        .collect();
    for (name, text) in &pages {
        for (n, line) in text.lines().enumerate() {
            texts.push((format!("{name}:{}", n + 1), line));
        }
    }
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (name, text) in &texts {
        for cited in citations(text) {
            let length = lengths[cited.article];
            for (first, last) in cited.lines {
                checked += 1;
                if first == 0 || first > last || last > length {
                    wrong.push(format!(
                        "{name}: 00{} lines {first}–{last} (the article has {length})",
                        cited.article
                    ));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} citations found: is the parser blind?"
    );
    assert!(
        wrong.is_empty(),
        "citations outside their article:\n{}",
        wrong.join("\n")
    );
}
