//! The curriculum's text in both languages: the dashboard's string tables in `static/i18n.js`
//! (and the lab's, the class's, the vote's, the run viewer's) and the scenario catalog (which
//! `GET /scenarios` serves as is, and the dashboard's scenario picker shows in the page's
//! language).
//!
//! - the English and Chinese tables have the same keys, each once, with the same
//!   `{placeholders}`; the tier paragraphs cover exactly the tier list, in both languages;
//! - every scenario has an English and a Chinese explanation and a source that names an
//!   article's lines; every verdict line a scenario can show has its text in both tables;
//! - every article line cited (catalog, the lab's cards, README, the book) lies within the article,
//!   counted in the articles kept outside the repository (`../shared/seeds` beside the
//!   workspace, or `OVERSELL_SEEDS`): a missing directory fails the test, never skips it;
//! - the Chinese keeps the glossary at the top of the zh table: none of the retired terms,
//!   the fencing token named one way, the articles' own words only in their glosses (each
//!   given somewhere), and long dashes as Chinese sets them.
//!
//! No JavaScript engine: `i18n.js` keeps one `key: 'value',` entry a line, and this test
//! fails loudly on a line it cannot read rather than skip it.

use std::collections::{BTreeMap, BTreeSet};

use workshop::scenario::{question, Expect, CATALOG, SENTENCE_CHECKS};

/// The citations of the articles' lines, and the check that each lies within its article.
#[path = "curriculum_text/citations.rs"]
mod citations;

const I18N: File = ("static/i18n.js", include_str!("../../static/i18n.js"));
/// The lab page's strings, which join i18n.js's when its module loads.
const LAB: File = ("static/lab.js", include_str!("../../static/lab.js"));
/// The class page's strings, likewise.
const CLASS: File = (
    "static/class-strings.js",
    include_str!("../../static/class-strings.js"),
);
/// The class vote's strings (the vote page, the card, the presenter), likewise.
const POLL: File = (
    "static/poll-strings.js",
    include_str!("../../static/poll-strings.js"),
);
/// The tiers' paragraphs, which the dashboard imports when it first describes a tier.
const TIER_TEXT: File = (
    "static/tier-text.js",
    include_str!("../../static/tier-text.js"),
);

/// The join page's strings (a lost tab typing its slip's code), which join i18n.js's.
const JOIN: File = ("static/join.js", include_str!("../../static/join.js"));

/// The run viewer's strings (a table of its own: the viewer runs from disk, without i18n.js).
const VIEWER: File = ("static/viewer.js", include_str!("../../static/viewer.js"));

/// The students' handouts, one a language: their bold words are the pages' own labels.
const HANDOUT_EN: File = (
    "docs/src/students/handout-en.md",
    include_str!("../../docs/src/students/handout-en.md"),
);
const HANDOUT_ZH: File = (
    "docs/src/students/handout-zh.md",
    include_str!("../../docs/src/students/handout-zh.md"),
);

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
    for (k, v) in table_in(TIER_TEXT, "zh: {", "},") {
        texts.push((format!("tier-text.js zh `{k}`"), v));
    }
    for (k, v) in table_in(LAB, "const zh = {", "};") {
        texts.push((format!("lab.js zh `{k}`"), v));
    }
    for (k, v) in table_in(CLASS, "const zh = {", "};") {
        texts.push((format!("class-strings.js zh `{k}`"), v));
    }
    for (k, v) in table_in(POLL, "const zh = {", "};") {
        texts.push((format!("poll-strings.js zh `{k}`"), v));
    }
    for (k, v) in table_in(VIEWER, "zh: {", "},") {
        texts.push((format!("viewer.js zh `{k}`"), v));
    }
    for (k, v) in table_in(JOIN, "zh: {", "},") {
        texts.push((format!("join.js zh `{k}`"), v));
    }
    for s in CATALOG.iter() {
        texts.push((format!("catalog `{}` zh", s.id), s.zh.to_owned()));
    }
    texts.push((HANDOUT_ZH.0.to_owned(), HANDOUT_ZH.1.to_owned()));
    for a in workshop::lab::ATTACKS {
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
    for file in [I18N, LAB, CLASS, POLL] {
        let en = table_in(file, "const en = {", "};");
        let zh = table_in(file, "const zh = {", "};");
        same_keys(file.0, &en, &zh);
        same_placeholders(&en, &zh);
    }
    for file in [VIEWER, JOIN] {
        let en = table_in(file, "en: {", "},");
        let zh = table_in(file, "zh: {", "},");
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
    let en = table_in(TIER_TEXT, "en: {", "},");
    let zh = table_in(TIER_TEXT, "zh: {", "},");
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

/// The book's workshop steps (`docs/src/workshop/ladder.md`) are the catalog's chapters in the
/// catalog's order (the order `loadtest course` rehearses them in): one order, whichever the
/// instructor reads.
#[test]
fn the_books_steps_are_the_catalogs_chapters_in_its_order() {
    let workshop = include_str!("../../docs/src/workshop/ladder.md");
    let steps: Vec<&str> = workshop
        .split("`loadtest scenario ")
        .skip(1)
        .filter_map(|rest| rest.split('`').next())
        .filter(|id| *id != "list")
        .collect();
    let chapters: Vec<&str> = CATALOG.iter().map(|s| s.id).collect();
    assert_eq!(steps, chapters);
}

/// Every label a student's page shows in one language: the dashboard's, the lab's, the class
/// page's, the vote's and the run viewer's tables.
fn labels(language: &str) -> BTreeSet<String> {
    let (open, close, nested) = match language {
        "en" => ("const en = {", "};", "en: {"),
        _ => ("const zh = {", "};", "zh: {"),
    };
    let mut out = BTreeSet::new();
    for file in [I18N, LAB, CLASS, POLL] {
        out.extend(table_in(file, open, close).into_values());
    }
    out.extend(table_in(VIEWER, nested, "},").into_values());
    out.extend(table_in(JOIN, nested, "},").into_values());
    out.into_iter().map(|v| v.trim().to_owned()).collect()
}

/// The spans a handout sets in bold (`**…**`), with their line numbers.
fn bold_spans(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let parts: Vec<&str> = line.split("**").collect();
        assert!(
            parts.len() % 2 == 1,
            "line {}: a `**` is never closed: {line}",
            i + 1
        );
        out.extend(
            parts
                .iter()
                .skip(1)
                .step_by(2)
                .map(|b| (i + 1, (*b).to_owned())),
        );
    }
    out
}

/// A handout names a button, a figure or a card's outcome as the page writes it, in the
/// page's language: a student looks for the word they read. Bold is kept for such labels
/// alone (the handouts set other emphasis in italics), so every bold span must be a string
/// of the UI's tables.
#[test]
fn the_handouts_name_labels_as_the_pages_show_them() {
    for ((name, text), language) in [(HANDOUT_EN, "en"), (HANDOUT_ZH, "zh")] {
        let labels = labels(language);
        let spans = bold_spans(text);
        assert!(
            spans.len() >= 10,
            "{name} names only {} labels",
            spans.len()
        );
        let unknown: Vec<String> = spans
            .iter()
            .filter(|(_, span)| !labels.contains(span.trim()))
            .map(|(line, span)| format!("{name}:{line}: **{span}**"))
            .collect();
        assert!(
            unknown.is_empty(),
            "bold words that no page shows (bold is for the UI's own labels; the strings are \
             in static/i18n.js, lab.js, class-strings.js, poll-strings.js, viewer.js):\n{}",
            unknown.join("\n")
        );
    }
}
