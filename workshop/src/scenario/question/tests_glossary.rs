//! The deck's Chinese against the glossary at the top of the zh table in `static/i18n.js`:
//! where a stem or an option says a glossary term in English, its Chinese says the glossary's
//! word for it, the same word in every question. A class that reads 租约 in one question and
//! 租期 in the next, or 红锁 after Redlock, wonders whether they are two things.

use super::deck;

/// An English term (lowercase) and the Chinese the glossary gives it. A term is matched on
/// whole words, its last word as the start of one (`renew` in `renewed`, not `lease` in
/// `release`, nor `release` in the tier `lua-release`). Where the English term covers two Chinese words by what it names, both are
/// listed, and a text must say one of them.
const GLOSSARY: &[(&str, &[&str])] = &[
    // Two-word terms first: the words they take are not read again as the shorter term.
    ("foreign release", &["误删"]),
    ("lost release", &["锁已丢失"]),
    ("lease", &["租约"]),
    ("renew", &["续期"]),
    ("watchdog", &["看门狗"]),
    ("holder", &["持锁"]),
    ("fencing token", &["围栏令牌"]),
    ("token", &["令牌"]),
    ("critical section", &["临界区"]),
    ("lost update", &["丢失更新"]),
    ("oversold", &["超卖"]),
    ("failover", &["主从切换"]),
    ("sentinel", &["哨兵"]),
    ("replica", &["从节点"]),
    ("master", &["主节点"]),
    ("primary", &["主节点"]),
    ("lock store", &["锁存储", "存放锁的"]),
    ("session timeout", &["会话超时"]),
    ("redlock", &["Redlock"]),
    ("release", &["释放"]),
    // `unlock` the call keeps its name as code: `finally` calls unlock.
    ("unlock", &["解锁", "unlock"]),
    ("freeze", &["冻结"]),
    ("frozen", &["冻结"]),
    ("pause", &["停顿", "暂停"]),
    ("persistence", &["持久化"]),
    ("append-only file", &["AOF"]),
    ("snapshot", &["快照"]),
];

/// Chinese the glossary retired in the deck, with the word to use: each would be a second
/// name for a term the deck already names.
const RETIRED: &[(&str, &str)] = &[
    ("停住", "暂停 / 停滞"),
    ("整套", "这套部署, or nothing"),
    ("经典", "默认"),
    ("一声不吭", "what it did not do, said"),
    ("在路上", "已经发出、还没到达"),
    ("过期的锁", "租约已到期的锁"),
    ("正如 00", "the claim belongs in the stem"),
];

/// The words of an English text, lowercase; a tier's or a command's name (`lua-release`)
/// stays one word.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `term` is said in `words`; the words that said it are blanked, so that a shorter
/// term is not read again inside a longer one (`release` in `lost release`). A name with a
/// hyphen (`lua-release`, `redlock-validity-runs-out`) is no term unless the term has one.
fn says(words: &mut [String], term: &str) -> bool {
    let term: Vec<&str> = term.split(' ').collect();
    let (last, first) = term.split_last().expect("a term has a word");
    let mut said = false;
    for at in 0..words.len().saturating_sub(term.len() - 1) {
        let w = &words[at..at + term.len()];
        let end = &w[first.len()];
        if w[..first.len()].iter().zip(first).all(|(a, b)| a == b)
            && end.starts_with(last)
            && (!end.contains('-') || last.contains('-'))
        {
            said = true;
            for word in &mut words[at..at + term.len()] {
                word.clear();
            }
        }
    }
    said
}

/// Every text of the deck in both languages, named for the failure message: the questions
/// and their options, then the chapters' explanations, which the reveal shows.
fn texts() -> Vec<(String, &'static str, &'static str)> {
    let mut texts = Vec::new();
    for q in deck() {
        texts.push((q.id.to_owned(), q.en, q.zh));
        for (i, choice) in q.options.iter().enumerate() {
            texts.push((format!("{} option {i}", q.id), choice.en, choice.zh));
        }
    }
    for s in crate::scenario::CATALOG.iter() {
        texts.push((format!("{} explanation", s.id), s.en, s.zh));
    }
    texts
}

#[test]
fn every_glossary_term_of_the_deck_has_the_glossarys_chinese() {
    let mut wrong = Vec::new();
    for (name, en, zh) in texts() {
        let mut en = words(en);
        for (term, chinese) in GLOSSARY {
            if says(&mut en, term) && !chinese.iter().any(|c| zh.contains(c)) {
                wrong.push(format!("{name} says `{term}` but not {chinese:?}: {zh}"));
            }
        }
        for (retired, instead) in RETIRED {
            if zh.contains(retired) {
                wrong.push(format!("{name} says `{retired}` (say {instead}): {zh}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The questions and the chapters' explanations are read apart (a phone shows the one, the
/// dashboard the other), so each glosses Redlock once, where it first names it.
#[test]
fn redlock_is_glossed_once_in_the_questions_and_once_in_the_explanations() {
    for explanations in [false, true] {
        let glossed: Vec<String> = texts()
            .into_iter()
            .filter(|(name, _, zh)| {
                name.ends_with(" explanation") == explanations && zh.contains("红锁")
            })
            .map(|(name, _, zh)| format!("{name}: {zh}"))
            .collect();
        assert_eq!(glossed.len(), 1, "红锁 after its gloss: {glossed:#?}");
        assert!(
            glossed[0].contains("红锁（Redlock）"),
            "the one 红锁 is the gloss: {}",
            glossed[0]
        );
    }
}
