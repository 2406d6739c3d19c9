//! What is wrong with a state: the properties the search looks for a break of, each with the
//! grader's outcome it is (`oversell_api::grade::Outcome`).

use oversell_api::grade::Outcome;
use serde::Serialize;

use crate::commands::NotModelled;
use crate::said::Lang;
use crate::sale::Machine;
use crate::world::World;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// Two live clients believe they hold the lock at once. Not a break by itself: a fenced
    /// lock lets it happen and the stock refuses the stale holder, which the lab and the
    /// checker call `held`.
    TwoHolders,
    /// The stock and the ledger disagree: a unit sold twice (a lost update) or oversold.
    SoldTwice,
    /// A release deleted (or changed) a lock another holder had taken.
    ForeignRelease,
    /// No live client can change the lock, no lease will end it, and a new buyer is refused:
    /// nobody sells again, ever.
    Deadlock,
    /// A step of the lock failed (a Lua error, a command Redis refused, a loop cut).
    ScriptFailed,
}

impl Property {
    pub const ALL: [Property; 5] = [
        Property::TwoHolders,
        Property::SoldTwice,
        Property::ForeignRelease,
        Property::Deadlock,
        Property::ScriptFailed,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Property::TwoHolders => "two-holders",
            Property::SoldTwice => "sold-twice",
            Property::ForeignRelease => "foreign-release",
            Property::Deadlock => "deadlock",
            Property::ScriptFailed => "script-failed",
        }
    }

    /// The grader's outcome a break of this property is; `None`: not a break by itself.
    pub fn outcome(self) -> Option<Outcome> {
        match self {
            Property::TwoHolders => None,
            Property::SoldTwice => Some(Outcome::Overlap),
            Property::ForeignRelease => Some(Outcome::ForeignRelease),
            Property::Deadlock => Some(Outcome::Deadlock),
            Property::ScriptFailed => Some(Outcome::Failed),
        }
    }

    /// What the break is, in words.
    pub fn words(self, lang: Lang) -> &'static str {
        if lang == Lang::Zh {
            return match self {
                Property::TwoHolders => "两个持有者同时持锁",
                Property::SoldTwice => "同一件商品卖了两次（丢失更新）",
                Property::ForeignRelease => "解锁删掉了别人的锁",
                Property::Deadlock => "再也没有人能拿到锁",
                Property::ScriptFailed => "锁的某个步骤出错",
            };
        }
        match self {
            Property::TwoHolders => "two holders at once",
            Property::SoldTwice => "one unit sold twice, a lost update",
            Property::ForeignRelease => "a release deleted another holder's lock",
            Property::Deadlock => "nobody can take the lock again, ever",
            Property::ScriptFailed => "a step of the lock failed",
        }
    }
}

/// The properties `w` breaks.
pub fn broken(m: &Machine, w: &World) -> Result<Vec<Property>, NotModelled> {
    let mut found = Vec::new();
    let holding = w.clients.iter().filter(|c| !c.crashed && c.holds()).count();
    if holding >= 2 {
        found.push(Property::TwoHolders);
    }
    let s = &w.stock;
    if s.orders > s.initial - s.left || s.orders > s.initial {
        found.push(Property::SoldTwice);
    }
    if w.foreign_release {
        found.push(Property::ForeignRelease);
    }
    if w.failed.is_some() {
        found.push(Property::ScriptFailed);
    }
    let nobody_can_free_it = !w.clients.iter().any(|c| c.may_touch_the_lock());
    // Whatever keys the lock keeps (a student's may not be `KEYS[1]`): none will expire, and
    // a newcomer is turned away without changing them.
    if nobody_can_free_it && !w.store.any_expiry() && m.newcomer_is_refused(&w.store)? {
        found.push(Property::Deadlock);
    }
    Ok(found)
}
