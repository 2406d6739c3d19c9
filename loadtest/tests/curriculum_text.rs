//! The curriculum's text in both languages: the dashboard's string tables in `static/i18n.js`
//! and the scenario catalog (which `GET /scenarios` serves as is, and the dashboard's scenario
//! picker shows in the page's language).
//!
//! - the English and Chinese tables have the same keys, each once, with the same
//!   `{placeholders}`; the tier paragraphs cover exactly the tier list, in both languages;
//! - every scenario has an English and a Chinese explanation and a source that names an
//!   article's lines; every verdict line a scenario can show has its text in both tables;
//! - every article line cited (catalog, the lab's cards, README) lies within the article,
//!   counted in the articles kept outside the repository (`../shared/seeds` beside the
//!   workspace, or `OVERSELL_SEEDS`): a missing directory fails the test, never skips it;
//! - the Chinese keeps the glossary at the top of the zh table: none of the retired terms,
//!   the fencing token named one way, the articles' own words only in their glosses (each
//!   given somewhere), and long dashes as Chinese sets them.
//!
//! No JavaScript engine: `i18n.js` keeps one `key: 'value',` entry a line, and this test
//! fails loudly on a line it cannot read rather than skip it.

use std::collections::{BTreeMap, BTreeSet};

use loadtest::scenario::{question, Expect, CATALOG, SENTENCE_CHECKS};

const I18N: File = ("static/i18n.js", include_str!("../../static/i18n.js"));
/// The lab page's strings, which join i18n.js's when its module loads.
const LAB: File = ("static/lab.js", include_str!("../../static/lab.js"));
/// The class page's strings, likewise.
const CLASS: File = ("static/class.js", include_str!("../../static/class.js"));

/// A file's name and text.
type File = (&'static str, &'static str);

/// Terms the glossary retired, with the one to use instead.
const RETIRED: &[(&str, &str)] = &[
    ("租期", "租约"),
    ("过期时间", "租约"),
    ("过期写", "陈旧写入"),
    ("过期的写入", "陈旧写入"),
    ("过期数据", "陈旧写入"),
    ("过时写入", "陈旧写入"),
    ("持有计数", "重入次数"),
    ("栅栏令牌", "围栏令牌"),
    ("防护令牌", "围栏令牌"),
    ("发起买家", "并发下单 / 一轮抢购"),
    ("已布置", "待触发 / 已注入故障"),
    ("释放间隙", "GET 与 DEL 之间停顿"),
    ("续约", "续期"),
    ("续租", "续期"),
    ("锁服务器", "锁存储"),
    ("业务毫秒", "业务耗时（毫秒）"),
    ("在 nginx 后面", "经 nginx 分发到多个实例"),
    // One word for a failover: the articles' 主从切换.
    ("故障切换", "主从切换"),
    ("故障转移", "主从切换"),
    ("干活", "处理业务"),
    // Reads as the write half of a read-write lock.
    ("写锁", "加锁 / 加锁写入"),
    ("惊群", "羊群效应（惊群）"),
    // A stale write is what the holder does, not the data it holds.
    ("陈旧数据", "陈旧写入"),
    // One word for how long a buyer waits: the setting is the wait deadline.
    ("等锁期限", "等待期限"),
    // The lock's owner is its holder, as everywhere else.
    ("主人", "持锁者"),
    // One label for the lost-release figure, wherever it shows.
    ("释放时锁已丢失", "锁已丢失"),
    ("解锁时才发现锁已丢", "锁已丢失"),
    // A room with no stock key has not been stocked; it is not sold out.
    ("无库存", "未上架"),
    ("管理令牌不对", "管理令牌错误"),
];

/// 集群 is Redis Cluster's word: a Chinese text that uses it names Redis Cluster. The fleet
/// (the instances, nginx and the stores) is 这套部署, or its instances 所有实例.
const CLUSTER_WORD: (&str, &str) = ("集群", "Cluster");

/// The articles' words where the curriculum uses its own: each is glossed this way, and only
/// this way, once somewhere, so a student who read the articles finds the term again.
const GLOSSES: &[&str] = &[
    "租约（文章里叫“过期时间”）",
    "围栏令牌（fencing token，也译“防护令牌”）",
    "羊群效应（惊群）",
];

/// The lines of `file` between `open` (a line, trimmed) and the next line that is `close`.
fn block((name, text): File, open: &str, close: &str) -> Vec<(usize, &'static str)> {
    let mut lines = text.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, l)| l.trim() == open)
        .unwrap_or_else(|| panic!("{name} has no line `{open}`"));
    let body: Vec<(usize, &str)> = lines
        .take_while(|(_, l)| l.trim() != close)
        .map(|(i, l)| (i + 1, l))
        .collect();
    assert!(!body.is_empty(), "`{open}` in {name} is empty");
    body
}

/// A quoted JavaScript string at the start of `s` (either quote), and the rest after it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let quote = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut chars = s[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?.1),
            c if c == quote => return Some((out, &s[1 + i + 1..])),
            c => out.push(c),
        }
    }
    None
}

/// One `key: 'value',` line: the key bare or quoted, the value quoted.
fn entry(line: &str) -> Option<(String, String)> {
    let (key, rest) = match quoted(line) {
        Some(found) => found,
        None => {
            let end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            (line[..end].to_owned(), &line[end..])
        }
    };
    let rest = rest.trim_start().strip_prefix(':')?;
    let (value, rest) = quoted(rest.trim_start())?;
    (!key.is_empty() && rest.trim() == ",").then_some((key, value))
}

/// The entries of an object literal of i18n.js, one a line.
fn table(open: &str, close: &str) -> BTreeMap<String, String> {
    table_in(I18N, open, close)
}

/// The entries of an object literal, one a line; comments and blank lines skipped. A key
/// seen twice is reported (JavaScript would silently keep the last).
fn table_in(file: File, open: &str, close: &str) -> BTreeMap<String, String> {
    let name = file.0;
    let mut out = BTreeMap::new();
    for (line_no, line) in block(file, open, close) {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let (key, value) = entry(line)
            .unwrap_or_else(|| panic!("{name}:{line_no}: not a `key: 'value',` line: {line}"));
        if out.insert(key.clone(), value).is_some() {
            panic!("{name}:{line_no}: key `{key}` appears twice in `{open}`");
        }
    }
    out
}

fn placeholders(s: &str) -> BTreeSet<&str> {
    s.split('{')
        .skip(1)
        .filter_map(|part| part.split_once('}').map(|(name, _)| name))
        .filter(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .collect()
}

fn same_keys(what: &str, en: &BTreeMap<String, String>, zh: &BTreeMap<String, String>) {
    let only_en: Vec<&String> = en.keys().filter(|k| !zh.contains_key(*k)).collect();
    let only_zh: Vec<&String> = zh.keys().filter(|k| !en.contains_key(*k)).collect();
    assert!(
        only_en.is_empty() && only_zh.is_empty(),
        "{what}: keys only in English: {only_en:?}; only in Chinese: {only_zh:?}"
    );
}

fn has_han(s: &str) -> bool {
    s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// Every Chinese text the curriculum shows, named for the failure message.
fn chinese_texts() -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for (k, v) in table("const zh = {", "};") {
        texts.push((format!("i18n.js zh `{k}`"), v));
    }
    for (k, v) in table("zh: {", "},") {
        texts.push((format!("i18n.js TIER_TEXT.zh `{k}`"), v));
    }
    for (k, v) in table_in(LAB, "const zh = {", "};") {
        texts.push((format!("lab.js zh `{k}`"), v));
    }
    for (k, v) in table_in(CLASS, "const zh = {", "};") {
        texts.push((format!("class.js zh `{k}`"), v));
    }
    for s in CATALOG.iter() {
        texts.push((format!("catalog `{}` zh", s.id), s.zh.to_owned()));
    }
    for a in loadtest::lab::ATTACKS {
        texts.push((format!("grader `{}` zh", a.id()), a.hole_zh.to_owned()));
    }
    for s in CATALOG.iter() {
        let q = question(s.id).unwrap_or_else(|| panic!("`{}` has no question", s.id));
        texts.push((format!("question `{}` zh", s.id), q.zh.to_owned()));
        for (i, choice) in q.options.iter().enumerate() {
            texts.push((
                format!("question `{}` option {i} zh", s.id),
                choice.zh.to_owned(),
            ));
        }
    }
    texts
}

#[test]
fn the_english_and_chinese_tables_have_the_same_keys_and_placeholders() {
    for file in [I18N, LAB, CLASS] {
        let en = table_in(file, "const en = {", "};");
        let zh = table_in(file, "const zh = {", "};");
        same_keys(file.0, &en, &zh);
        same_placeholders(&en, &zh);
    }
}

fn same_placeholders(en: &BTreeMap<String, String>, zh: &BTreeMap<String, String>) {
    for (key, en_text) in en {
        let zh_text = &zh[key];
        assert!(!zh_text.trim().is_empty(), "zh `{key}` is empty");
        assert_eq!(
            placeholders(en_text),
            placeholders(zh_text),
            "`{key}` fills different placeholders: en {en_text:?}, zh {zh_text:?}"
        );
    }
}

#[test]
fn every_tier_has_a_paragraph_in_both_languages() {
    let tiers: BTreeSet<String> = oversell_api::Tier::ALL.map(|t| t.id().to_owned()).into();
    let en = table("en: {", "},");
    let zh = table("zh: {", "},");
    same_keys("TIER_TEXT", &en, &zh);
    let described: BTreeSet<String> = en.keys().cloned().collect();
    assert_eq!(
        described, tiers,
        "TIER_TEXT describes other tiers than the API's Tier::ALL"
    );
    for (tier, text) in zh {
        assert!(
            has_han(&text),
            "TIER_TEXT.zh `{tier}` is not Chinese: {text}"
        );
    }
}

#[test]
fn every_scenario_explains_itself_in_both_languages_and_names_its_source() {
    assert!(!CATALOG.is_empty());
    for s in CATALOG.iter() {
        assert!(
            !s.en.trim().is_empty(),
            "`{}` has no English explanation",
            s.id
        );
        assert!(!s.source.trim().is_empty(), "`{}` names no source", s.id);
        assert!(
            has_han(s.zh),
            "`{}` has no Chinese explanation: {:?}",
            s.id,
            s.zh
        );
        assert!(
            !has_han(s.en),
            "`{}`: Chinese in the English explanation",
            s.id
        );
    }
}

#[test]
fn the_chinese_keeps_the_glossary() {
    let texts = chinese_texts();
    for (name, text) in &texts {
        let unglossed = GLOSSES
            .iter()
            .fold(text.clone(), |rest, gloss| rest.replace(gloss, ""));
        for (retired, instead) in RETIRED {
            assert!(
                !unglossed.contains(retired),
                "{name} says `{retired}`; the glossary (top of the zh table in static/i18n.js) \
                 uses `{instead}`, the articles' word only in its gloss ({GLOSSES:?}): {text}"
            );
        }
        let rest = unglossed.replace("围栏令牌（fencing token）", "");
        assert!(
            !rest.to_lowercase().contains("token"),
            "{name}: the fencing token is 围栏令牌, with the English once as \
             围栏令牌（fencing token）: {text}"
        );
    }
    for gloss in GLOSSES {
        assert!(
            texts.iter().any(|(_, text)| text.contains(gloss)),
            "no Chinese text glosses the articles' word as `{gloss}`"
        );
    }
    let (cluster, named) = CLUSTER_WORD;
    for (name, text) in &texts {
        assert!(
            !text.contains(cluster) || text.contains(named),
            "{name} says `{cluster}` of something that is not Redis Cluster: the fleet is \
             这套部署 (or 所有实例): {text}"
        );
    }
}

/// The figure of releases that found their lock gone reads the same on the dashboard's
/// figures, its timeline legend and the verdicts.
#[test]
fn the_lost_release_figure_has_one_chinese_label() {
    let zh = table("const zh = {", "};");
    let labels: BTreeSet<&str> = ["fig.lost_releases", "legend.lost", "check.lost_releases"]
        .iter()
        .map(|key| zh[*key].as_str())
        .collect();
    assert_eq!(
        labels.len(),
        1,
        "the lost-release figure is labelled {labels:?}"
    );
}

/// The class is asked in both languages: the English carries no Chinese, and each option
/// says something in each.
#[test]
fn every_question_is_asked_in_english_and_chinese() {
    for s in CATALOG.iter() {
        let q = question(s.id).unwrap_or_else(|| panic!("`{}` has no question", s.id));
        let options = q.options.iter().map(|c| (c.en, c.zh));
        for (en, zh) in std::iter::once((q.en, q.zh)).chain(options) {
            assert!(!has_han(en), "`{}`: Chinese in the English: {en}", s.id);
            assert!(has_han(zh), "`{}`: no Chinese in: {zh}", s.id);
        }
    }
}

#[test]
fn the_chinese_sets_long_dashes_as_chinese_does() {
    for (name, text) in chinese_texts() {
        assert!(
            !text.contains(" ——") && !text.contains("—— "),
            "{name}: a Chinese long dash takes no spaces (——): {text}"
        );
        assert!(
            !text.replace("——", "").contains('—'),
            "{name}: a Chinese long dash is two (——), not one: {text}"
        );
    }
}

#[test]
fn every_verdict_line_has_its_text_in_both_languages() {
    let en = table("const en = {", "};");
    let zh = table("const zh = {", "};");
    let mut keys: BTreeSet<String> = SENTENCE_CHECKS
        .iter()
        .map(|(key, _)| format!("verdict.{key}"))
        .collect();
    for s in CATALOG.iter() {
        if let Expect::Figures(checks) | Expect::RefusedThenResume(checks) = s.expect {
            keys.extend(checks.iter().map(|c| format!("check.{}", c.figure)));
        }
    }
    for key in &keys {
        assert!(
            en.contains_key(key) && zh.contains_key(key),
            "static/i18n.js has no `{key}` in both tables: the dashboard would show it raw"
        );
        assert!(has_han(&zh[key]), "zh `{key}` is not Chinese: {}", zh[key]);
    }
    for (key, english) in SENTENCE_CHECKS {
        assert_eq!(
            en[&format!("verdict.{key}")],
            *english,
            "the dashboard's English for `{key}` differs from the runner's"
        );
    }
}

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

/// The README's workshop steps are the catalog's chapters in the catalog's order (the order
/// `loadtest course` rehearses them in): one order, whichever the instructor reads.
#[test]
fn the_readmes_steps_are_the_catalogs_chapters_in_its_order() {
    let readme = include_str!("../../README.md");
    let workshop = &readme[readme
        .find("\n## Workshop")
        .expect("README has a Workshop section")..];
    let workshop = &workshop[..workshop[1..]
        .find("\n## ")
        .map_or(workshop.len(), |i| i + 1)];
    let steps: Vec<&str> = workshop
        .split("`loadtest scenario ")
        .skip(1)
        .filter_map(|rest| rest.split('`').next())
        .filter(|id| *id != "list")
        .collect();
    let chapters: Vec<&str> = CATALOG.iter().map(|s| s.id).collect();
    assert_eq!(steps, chapters);
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
/// explanations), the lab's report cards and the README. A citation past an article's end is
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
    for a in loadtest::lab::ATTACKS {
        texts.push((format!("grader `{}` en", a.id()), a.hole_en));
        texts.push((format!("grader `{}` zh", a.id()), a.hole_zh));
    }
    let readme = include_str!("../../README.md");
    for (n, line) in readme.lines().enumerate() {
        texts.push((format!("README.md:{}", n + 1), line));
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
