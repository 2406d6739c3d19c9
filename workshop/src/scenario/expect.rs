//! What a scenario must show: checks of a figure against a bound, or one of the outcomes that
//! take more than figures (a deadlock, a stall that ends by itself, a store that refuses then
//! comes back). Its own file because the catalog states these as data, the dashboard and the
//! command print them in words, and the runner only judges against them.

use serde::Serialize;

/// One figure compared with a bound.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Check {
    /// A `/state` figure, or `min_depth` (lowest hold count in the ledger),
    /// `throughput_vs_<tier>`, e.g. `throughput_vs_lua_release` (this load's requests/s over
    /// that tier's on the same load), `acquires_min_over_max` (the fewest sales a client got over the most) and
    /// `sale_p99_ms`, or either of those two of the tier's race twin (its table row's `race`) on the same load first
    /// (`race_acquires_min_over_max`, `race_sale_p99_ms`), and `acquires_vs_race` (the first
    /// over the race's).
    pub figure: &'static str,
    pub op: Op,
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Op {
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = "==")]
    Eq,
    #[serde(rename = "<")]
    Lt,
}

impl Check {
    pub const fn gt(figure: &'static str, value: f64) -> Check {
        Check {
            figure,
            op: Op::Gt,
            value,
        }
    }

    pub const fn eq(figure: &'static str, value: f64) -> Check {
        Check {
            figure,
            op: Op::Eq,
            value,
        }
    }

    pub const fn lt(figure: &'static str, value: f64) -> Check {
        Check {
            figure,
            op: Op::Lt,
            value,
        }
    }

    pub(super) fn holds(&self, seen: f64) -> bool {
        match self.op {
            Op::Gt => seen > self.value,
            Op::Eq => seen == self.value,
            Op::Lt => seen < self.value,
        }
    }

    pub fn describe(&self) -> String {
        let op = match self.op {
            Op::Gt => ">",
            Op::Eq => "==",
            Op::Lt => "<",
        };
        format!("{} {op} {}", self.figure, self.value)
    }
}

/// What a scenario must show.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// Every check holds on the figures after the load.
    Figures(&'static [Check]),
    /// Deadlock: sales stall, buyers get 503s, the lock stays with no lease, and only a reset
    /// brings sales back.
    StallUntilReset,
    /// Sales stall until the dead holder's lease runs out, then resume by themselves.
    StallThenResume,
    /// Every check holds on the figures while the lock store is down; once it is back, sales
    /// resume by themselves (no reset).
    RefusedThenResume(&'static [Check]),
}
