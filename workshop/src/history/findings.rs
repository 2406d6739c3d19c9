//! What the checker says, as types: the four verdicts, each in one of three states, the
//! findings that name the operations breaking them (or leaving them undecided), and the
//! figures.
//!
//! A general linearizability search (Wing–Gong–Lowe, as Porcupine and Knossos do) is
//! exponential in the worst case; the sale does not need one, because every answer names its
//! unit (a 200's `stock_left`) and every section says what it read and wrote. So each verdict
//! here is a sort and a sweep: n log n for a million operations.

use serde::Serialize;

use oversell_api::history::{Cut, Request, Section};

/// How many violations (and listed operations) each verdict keeps in detail; all are counted.
pub const DETAIL: usize = 5;

/// The language of the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl std::str::FromStr for Lang {
    type Err = String;
    fn from_str(s: &str) -> Result<Lang, String> {
        match s {
            "en" => Ok(Lang::En),
            "zh" => Ok(Lang::Zh),
            other => Err(format!("unknown language {other:?} (en or zh)")),
        }
    }
}

/// One operation a finding names, whole, as the history had it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    Request(Request),
    Section(Section),
}

/// What a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Two closed sections ran at the same time.
    Overlap,
    /// Two acknowledged sales took the same unit (their `stock_left` ranges meet).
    UnitSoldTwice,
    /// An acknowledged sale left the stock below zero.
    BelowZero,
    /// An acknowledged sale named a unit the initial stock never had.
    AboveInitial,
    /// A sale that began after another returned took a higher unit than it.
    RealTimeOrder,
    /// A sale succeeded after a sold-out answer for as much had returned.
    SoldOutTooEarly,
    /// A sold-out answer while no sale ever left the stock short of what it asked.
    SoldOutWithStock,
    /// A buyer told 409 whose order is in the ledger: a sale it was told did not happen.
    PhantomSale,
    /// Units between two consecutive sales that nobody took: the stock went down without one.
    UnitsSkipped,
    /// The ledger holds more items than the initial stock.
    Oversold,
    /// The stock went down by less than the ledger sold: sales overwritten.
    LostUpdates,
    /// The stock went down by more than the ledger sold.
    StockDrift,
    /// An accepted write whose fence was below one the store had already seen.
    FenceNotRising,
    /// A write refused as stale while no newer fence had been granted.
    RefusedWithoutNewer,
    /// A `200` whose order is not in the ledger.
    AcknowledgedLost,
    /// Listed, not counted: a section never closed (a crashed holder, or still open).
    OpenSection,
    /// Listed, not counted: a write the fence refused, with the fence it lost to.
    StaleRefused,
    /// Listed: a timeout, a 503 or a crash the ledger could not settle.
    Unsettled,
    /// Unknown: a `200` that named no unit (no `stock_left`) and whose sale the ledger has not.
    NoUnit,
    /// Listed: two holders at once, after the first's lease ran out, the older one's write
    /// refused or never made: the fence kept the stock whole.
    Lapse,
    /// Unknown: two sections overlap on the clock, but the second read the first's write, so
    /// the store ran them one after the other: the overlap is within the clocks' error.
    ClockError,
    /// Unknown: a holder that never left, with no lease recorded, and others came in after.
    OpenNoLease,
    /// Unknown: what the history's cut hides could have made this a violation or not.
    Hidden,
    /// Listed: a sale in the ledger no recorded request asked for.
    Orphan,
}

/// A verdict's state: decided either way, or not decided by what the history holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Holds,
    /// Nothing violated, but something undecided: the verdict's `unknown` says what and why.
    Unknown,
    Violated,
}

impl State {
    /// The exit code `loadtest check` gives a run in this state: 0 holds, 1 violated, 3
    /// unknown (2 is a file that is not a history, 4 an output not written).
    pub const fn exit_code(self) -> u8 {
        match self {
            State::Holds => 0,
            State::Violated => 1,
            State::Unknown => 3,
        }
    }
}

/// One violation (or one listed operation), its operations, and what happened in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// When it happened (µs since the epoch, on the clock of its operations).
    pub at_us: i64,
    pub ops: Vec<Op>,
    pub en: String,
    pub zh: String,
}

impl Finding {
    pub fn words(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }
}

/// One of the four verdicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub state: State,
    /// `state` is [`State::Holds`].
    pub holds: bool,
    /// Violations found, all of them.
    pub count: u64,
    /// The first [`DETAIL`] violations, first first.
    pub violations: Vec<Finding>,
    /// What the history leaves undecided, all counted, the first [`DETAIL`] kept: each says
    /// why.
    pub unknown_count: u64,
    pub unknown: Vec<Finding>,
    /// Operations worth naming that are not violations (open sections, refused stale writes,
    /// unsettled timeouts), all counted, the first [`DETAIL`] kept.
    pub listed_count: u64,
    pub listed: Vec<Finding>,
    /// The verdict in a sentence.
    pub en: String,
    pub zh: String,
}

impl Verdict {
    /// A verdict whose state follows from what it found: violated with a violation, else
    /// unknown with something undecided, else holds.
    pub(crate) fn of(
        (count, violations): (u64, Vec<Finding>),
        (unknown_count, unknown): (u64, Vec<Finding>),
        (listed_count, listed): (u64, Vec<Finding>),
        (en, zh): (String, String),
    ) -> Verdict {
        let state = if count > 0 {
            State::Violated
        } else if unknown_count > 0 {
            State::Unknown
        } else {
            State::Holds
        };
        Verdict {
            state,
            holds: state == State::Holds,
            count,
            violations,
            unknown_count,
            unknown,
            listed_count,
            listed,
            en,
            zh,
        }
    }

    pub fn words(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }
}

/// The figures, each from the history alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    pub requests: u64,
    pub sections: u64,
    /// Pairs of closed sections whose intervals meet, each pair once (the service's figure).
    pub overlaps: u64,
    /// Sections that came in on a holder whose lease had run out, the fence keeping the stock
    /// whole (the older write refused or never made): not violations.
    pub lapses: u64,
    /// Items in the ledger beyond the initial stock.
    pub oversold: u64,
    /// Ledger items − (initial − final stock); `None` without a final stock.
    pub lost_updates: Option<i64>,
    pub stale_refused: u64,
    pub acknowledged_lost: u64,
    /// Timeouts, 5xx and crashes the ledger settled (it shows they sold, or shows they did
    /// not), and those it could not (the ledger is cut).
    pub indeterminate_settled: u64,
    pub indeterminate_unsettled: u64,
    pub open_sections: u64,
}

/// What the checker says about a history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub run_id: String,
    pub tier: String,
    pub chapter: Option<String>,
    pub initial_stock: i64,
    /// The worst of the four states: violated if one is, else unknown if one is, else holds.
    pub state: State,
    /// All four hold.
    pub ok: bool,
    pub mutual_exclusion: Verdict,
    pub stock: Verdict,
    pub fencing: Verdict,
    pub acknowledged: Verdict,
    pub counts: Counts,
    /// Where the history is incomplete: said, never ignored.
    pub cuts: Vec<Cut>,
    /// The run's first call (µs since the epoch): every time in words is relative to it.
    pub origin_us: i64,
}

impl CheckReport {
    /// The four verdicts, in the order they are said.
    pub fn verdicts(&self) -> [(&'static str, &'static str, &Verdict); 4] {
        [
            ("mutual exclusion", "互斥", &self.mutual_exclusion),
            ("stock linearizable", "库存可线性化", &self.stock),
            ("fencing", "fencing 令牌", &self.fencing),
            (
                "nothing acknowledged lost",
                "已确认的不丢",
                &self.acknowledged,
            ),
        ]
    }

    /// The violation to draw: the first overlap if there is one (it explains the rest), else
    /// the first of the stock, fencing, acknowledgements.
    pub fn first(&self) -> Option<&Finding> {
        [
            &self.mutual_exclusion,
            &self.stock,
            &self.fencing,
            &self.acknowledged,
        ]
        .into_iter()
        .find_map(|v| v.violations.first())
    }

    /// What the picture shows: the first violation, else the first thing undecided, else the
    /// first lapse the fence contained.
    pub fn focus(&self) -> Option<&Finding> {
        let all = [
            &self.mutual_exclusion,
            &self.stock,
            &self.fencing,
            &self.acknowledged,
        ];
        self.first()
            .or_else(|| all.iter().find_map(|v| v.unknown.first()))
            .or_else(|| {
                self.mutual_exclusion
                    .listed
                    .iter()
                    .find(|f| f.kind == Kind::Lapse)
            })
    }
}

/// Keeps the first [`DETAIL`] of many raw findings (cheap tuples) by time, counting all; the
/// words are written only for those kept.
pub(crate) struct Firsts<T> {
    pub count: u64,
    items: Vec<(i64, T)>,
}

impl<T> Firsts<T> {
    pub fn new() -> Firsts<T> {
        Firsts {
            count: 0,
            items: Vec::new(),
        }
    }

    pub fn push(&mut self, at: i64, item: T) {
        self.count += 1;
        self.items.push((at, item));
        if self.items.len() >= 64 * DETAIL {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.items.sort_by_key(|(at, _)| *at);
        self.items.truncate(DETAIL);
    }

    /// The first few, first first.
    pub fn into_firsts(mut self) -> Vec<(i64, T)> {
        self.trim();
        self.items
    }

    /// The count and the first few, put in words.
    pub fn said(self, mut words: impl FnMut(i64, T) -> Finding) -> (u64, Vec<Finding>) {
        let count = self.count;
        let found = self
            .into_firsts()
            .into_iter()
            .map(|(at, t)| words(at, t))
            .collect();
        (count, found)
    }
}
