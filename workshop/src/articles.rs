//! The five articles the chapters cite by number ("002 lines 55–94"): each number with the
//! article's title and what a reader finds in it, so that a citation can be followed. The
//! articles are public and in Chinese; the project keeps no copy of them. The line numbers
//! count the lines of the plain-text copies the course was written from (the tests check every
//! citation against them, `OVERSELL_SEEDS`); in an article read on the web, look for the code
//! or the heading a chapter names near that line.

/// One source article.
pub struct Article {
    /// The number the citations use: `000` to `004`.
    pub number: &'static str,
    /// The title as the article gives it (where it gives none, who wrote it).
    pub title: &'static str,
    /// What a reader finds in it, in English.
    pub covers: &'static str,
}

pub const ARTICLES: &[Article] = &[
    Article {
        number: "000",
        title: "Redis分布式锁五种方案",
        covers: "the five tiers named after metals, bronze (SETNX) to diamond (a Lua \
                 release), each with its defect, then Redisson",
    },
    Article {
        number: "001",
        title: "分布式锁用Redis or Zookeeper?",
        covers: "why a local lock oversells on a second instance; failover loses a lock; \
                 Redlock; Redisson's watchdog; ZooKeeper's sequential nodes and Curator",
    },
    Article {
        number: "002",
        title: "Day13",
        covers: "a study note: the inventory sale step by step, from no lock to a reentrant \
                 lock with a watchdog; Redlock and the pause argument; RDB and AOF",
    },
    Article {
        number: "003",
        title: "关于Redis分布式锁的思考",
        covers: "the short path from GET/SET to a random value released by Lua; failover \
                 loses locks",
    },
    Article {
        number: "004",
        title: "untitled, by 三太子敖丙 (collected in the JavaFamily repository on GitHub)",
        covers: "a thousand threads on one counter; a Jedis lock with a wait; Redisson's \
                 reentrancy and its wait for the release message",
    },
];

/// The articles as a Markdown table, for the book and the chapter reference.
pub fn table() -> String {
    let mut out = String::from("| number | title | what it covers |\n|---|---|---|\n");
    for a in ARTICLES {
        out.push_str(&format!("| {} | {} | {} |\n", a.number, a.title, a.covers));
    }
    out
}
