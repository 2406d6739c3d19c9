//! The viewer's data: every operation of a run (each request call → return, each critical
//! section, each lease grant → deadline with its renewals, each fault) placed in a lane, with
//! the store's state just before and after it ([`walk`]), the checker's verdicts and findings
//! naming the operations, and the first violation to jump to. [`page`] writes it into one
//! HTML file with `static/viewer.js` and `static/viewer.css`, which only draw what is here.

mod page;
pub mod walk;

use std::collections::HashMap;

use serde::Serialize;

use super::check::{CheckReport, Finding, Op, State};
use super::parse::History;
use oversell_api::history::{Clocks, Cut, Fault, Lease, Request, Section};
pub use page::{page, Assets};
use walk::{Span, StoreState};

/// One run as the viewer shows it.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    pub run_id: String,
    pub tier: String,
    pub chapter: Option<String>,
    pub initial_stock: i64,
    pub ttl_ms: u64,
    pub clocks: Clocks,
    /// The bound between the clocks, when the history states one: drawn as a band around
    /// each lease's grant and deadline, where a verdict turns on which came first.
    pub clock_bound_us: Option<u64>,
    /// Every time below is µs after this one (the run's first call).
    pub origin_us: i64,
    /// The worst verdict, and the exit code `loadtest check` gives it.
    pub state: State,
    pub exit_code: u8,
    pub verdicts: Vec<ViewVerdict>,
    pub findings: Vec<ViewFinding>,
    /// The index in `findings` of the checker's first violation, if there is one.
    pub first_violation: Option<usize>,
    /// What to show first when nothing is violated: the first thing undecided or the first
    /// lapse the fence contained (an index in `findings`).
    pub focus: Option<usize>,
    /// Lanes top to bottom: each instance, then the lock store, then any other fault target.
    pub lanes: Vec<ViewLane>,
    /// How many operations the history has: more than `ops` holds when the run was too long
    /// to draw whole ([`MAX_OPS`]).
    pub total_ops: usize,
    pub ops: Vec<ViewOp>,
    pub cuts: Vec<Cut>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ViewLane {
    pub name: String,
    pub kind: LaneKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneKind {
    /// An instance: the requests it answered and the sections it ran.
    Instance,
    /// Requests that no instance answered (a timeout, a dropped connection).
    Clients,
    /// The lock store: its leases.
    LockStore,
    /// Another member a fault struck.
    Member,
}

#[derive(Debug, Clone, Serialize)]
pub struct ViewVerdict {
    pub name_en: &'static str,
    pub name_zh: &'static str,
    pub state: State,
    pub en: String,
    pub zh: String,
}

/// A finding of the checker, its operations named by their ids.
#[derive(Debug, Clone, Serialize)]
pub struct ViewFinding {
    /// Which verdict: `mutual_exclusion`, `stock`, `fencing`, `acknowledged`.
    pub verdict: &'static str,
    /// `violation`, `unknown` or `listed`.
    pub class: &'static str,
    pub kind: super::check::Kind,
    pub at_us: i64,
    pub ops: Vec<String>,
    pub en: String,
    pub zh: String,
}

/// One operation, whole, where it is drawn and what the stores held around it.
#[derive(Debug, Clone, Serialize)]
pub struct ViewOp {
    /// `r3` (the fourth request of the file), `s0`, `l2`, `f1`.
    pub id: String,
    pub lane: usize,
    pub from_us: i64,
    /// `None`: it never ended (an open section, a lease never released and with no deadline,
    /// a fault not over).
    pub to_us: Option<i64>,
    /// A lease's renewals (µs after the origin).
    pub renewals_us: Vec<i64>,
    pub owner: Option<String>,
    pub before: StoreState,
    pub after: StoreState,
    pub line: ViewLine,
}

/// The operation as the history has it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ViewLine {
    Request(Request),
    Section(Section),
    Lease(Lease),
    Fault(Fault),
}

/// The most operations a page draws (15,000 take headless Chromium about 4 s at 390 px).
pub const MAX_OPS: usize = 20_000;

/// Which of `spans` are the `n` nearest to `center` (a span that contains it is at 1, a
/// `named` one at 0: it is always kept).
fn nearest(spans: &[Span], named: &[bool], center: i64, n: usize) -> Vec<bool> {
    let distance = |i: usize| {
        let s = &spans[i];
        let to = s.to_us.unwrap_or(i64::MAX);
        if named[i] {
            0
        } else if s.from_us <= center && center <= to {
            1
        } else {
            s.from_us
                .abs_diff(center)
                .min(to.abs_diff(center))
                .saturating_add(1)
        }
    };
    let mut keep = vec![spans.len() <= n; spans.len()];
    if spans.len() > n {
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.select_nth_unstable_by_key(n - 1, |&i| distance(i));
        for &i in &order[..n] {
            keep[i] = true;
        }
    }
    keep
}

/// The lock store's lane name (a v1 history names one lock store, not its nodes).
pub const LOCK_STORE: &str = "lock store";
const CLIENTS: &str = "no answer";

impl View {
    /// The view of `history`, which `report` is the check of.
    pub fn of(history: &History, report: &CheckReport) -> View {
        View::at_most(history, report, MAX_OPS)
    }

    /// The view of `history` with at most `max_ops` of its operations (at least one): those
    /// nearest in time to the first violation, else to what the page opens on, else to the
    /// start.
    pub fn at_most(history: &History, report: &CheckReport, max_ops: usize) -> View {
        let max_ops = max_ops.max(1);
        let origin = report.origin_us;
        let rel = |t: i64| t.saturating_sub(origin);
        let mut lanes = Lanes::default();
        // Instances first, in the order they first appear, so a run reads top to bottom the
        // same way each time.
        for s in &history.sections {
            lanes.of(&s.instance, LaneKind::Instance);
        }
        for r in &history.requests {
            if let Some(i) = &r.instance {
                lanes.of(i, LaneKind::Instance);
            }
        }
        let mut ops =
            Vec::with_capacity(history.operations() + history.leases.len() + history.faults.len());
        let mut spans = Vec::with_capacity(ops.capacity());
        let mut push = |op: ViewOp, span: Span| {
            ops.push(op);
            spans.push(span);
        };
        let blank = StoreState::default();
        let op =
            |id: String, lane: usize, span: Span, owner: Option<String>, line: ViewLine| ViewOp {
                id,
                lane,
                from_us: rel(span.from_us),
                to_us: span.to_us.map(rel),
                renewals_us: Vec::new(),
                owner,
                before: blank.clone(),
                after: blank.clone(),
                line,
            };
        for (i, r) in history.requests.iter().enumerate() {
            let lane = match &r.instance {
                Some(name) => lanes.of(name, LaneKind::Instance),
                None => lanes.of(CLIENTS, LaneKind::Clients),
            };
            let span = Span {
                from_us: r.call_us,
                to_us: Some(r.return_us),
            };
            push(
                op(
                    format!("r{i}"),
                    lane,
                    span,
                    None,
                    ViewLine::Request(r.clone()),
                ),
                span,
            );
        }
        for (i, s) in history.sections.iter().enumerate() {
            let lane = lanes.of(&s.instance, LaneKind::Instance);
            let span = Span {
                from_us: s.enter_us,
                to_us: s.exit_us,
            };
            let owner = Some(s.owner.clone());
            push(
                op(
                    format!("s{i}"),
                    lane,
                    span,
                    owner,
                    ViewLine::Section(s.clone()),
                ),
                span,
            );
        }
        for (i, l) in history.leases.iter().enumerate() {
            let lane = lanes.of(LOCK_STORE, LaneKind::LockStore);
            let last_deadline = l
                .renewals
                .iter()
                .map(|r| r.deadline_us)
                .chain(l.deadline_us)
                .max();
            let end = match (l.released_us, last_deadline) {
                (Some(r), Some(d)) => Some(r.min(d)),
                (r, d) => r.or(d),
            };
            let span = Span {
                from_us: l.granted_us,
                to_us: end,
            };
            let mut o = op(
                format!("l{i}"),
                lane,
                span,
                Some(l.owner.clone()),
                ViewLine::Lease(l.clone()),
            );
            o.renewals_us = l.renewals.iter().map(|r| rel(r.renew_us)).collect();
            push(o, span);
        }
        for (i, f) in history.faults.iter().enumerate() {
            let lane = match lanes.index.get(&f.target) {
                Some(&lane) => lane,
                None => lanes.of(&f.target, LaneKind::Member),
            };
            let span = Span {
                from_us: f.from_us,
                to_us: f.to_us.or(Some(f.from_us)),
            };
            push(
                op(
                    format!("f{i}"),
                    lane,
                    span,
                    None,
                    ViewLine::Fault(f.clone()),
                ),
                span,
            );
        }
        // A page of more than MAX_OPS operations no browser draws in time: the window nearest
        // the first violation (or what the page opens on) is kept, and the page says so.
        let total_ops = ops.len();
        let center = report
            .first()
            .or_else(|| report.focus())
            .map_or(origin, |f| f.at_us);
        let ids = OpIds::of(history);
        if ops.len() > max_ops {
            // The operations the finding names come first, whatever their distance.
            let named: std::collections::HashSet<String> = report
                .first()
                .or_else(|| report.focus())
                .map(|f| f.ops.iter().filter_map(|op| ids.id(op)).collect())
                .unwrap_or_default();
            let named: Vec<bool> = ops.iter().map(|op| named.contains(&op.id)).collect();
            let keep = nearest(&spans, &named, center, max_ops);
            let mut kept = keep.iter();
            ops.retain(|_| *kept.next().unwrap_or(&false));
            let mut kept = keep.iter();
            spans.retain(|_| *kept.next().unwrap_or(&false));
        }
        for (op, (before, after)) in ops.iter_mut().zip(walk::states(history, &spans)) {
            op.before = before;
            op.after = after;
        }

        let mut findings = Vec::new();
        let mut first_violation = None;
        let mut focus = None;
        let first = report.first();
        let focused = report.focus();
        for (verdict, v) in [
            ("mutual_exclusion", &report.mutual_exclusion),
            ("stock", &report.stock),
            ("fencing", &report.fencing),
            ("acknowledged", &report.acknowledged),
        ] {
            for (class, list) in [
                ("violation", &v.violations),
                ("unknown", &v.unknown),
                ("listed", &v.listed),
            ] {
                for f in list {
                    if first.is_some_and(|x| std::ptr::eq(x, f)) {
                        first_violation = Some(findings.len());
                    }
                    if focused.is_some_and(|x| std::ptr::eq(x, f)) {
                        focus = Some(findings.len());
                    }
                    findings.push(ids.finding(verdict, class, f, rel(f.at_us)));
                }
            }
        }
        View {
            run_id: history.run.id.clone(),
            tier: history.run.tier.clone(),
            chapter: history.run.chapter.clone(),
            initial_stock: history.run.stock,
            ttl_ms: history.run.ttl_ms,
            clocks: history.run.clocks.clone(),
            clock_bound_us: history.run.clocks.bound_us,
            origin_us: origin,
            state: report.state,
            exit_code: report.state.exit_code(),
            verdicts: report
                .verdicts()
                .iter()
                .map(|(en, zh, v)| ViewVerdict {
                    name_en: en,
                    name_zh: zh,
                    state: v.state,
                    en: v.en.clone(),
                    zh: v.zh.clone(),
                })
                .collect(),
            findings,
            first_violation,
            focus,
            lanes: lanes.list,
            total_ops,
            ops,
            cuts: history.cuts.clone(),
        }
    }
}

#[derive(Default)]
struct Lanes {
    list: Vec<ViewLane>,
    index: HashMap<String, usize>,
}

impl Lanes {
    fn of(&mut self, name: &str, kind: LaneKind) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.list.push(ViewLane {
            name: name.to_owned(),
            kind,
        });
        self.index.insert(name.to_owned(), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// The id of an operation a finding names: a finding carries its operations whole, and a
/// request is one buyer's call at one moment, a section one owner's enter.
struct OpIds<'h> {
    requests: HashMap<(&'h str, i64), usize>,
    sections: HashMap<(&'h str, i64), usize>,
}

impl<'h> OpIds<'h> {
    fn of(history: &'h History) -> OpIds<'h> {
        OpIds {
            requests: history
                .requests
                .iter()
                .enumerate()
                .map(|(i, r)| ((r.buyer.as_str(), r.call_us), i))
                .collect(),
            sections: history
                .sections
                .iter()
                .enumerate()
                .map(|(i, s)| ((s.owner.as_str(), s.enter_us), i))
                .collect(),
        }
    }

    /// The id of an operation a finding names.
    fn id(&self, op: &Op) -> Option<String> {
        match op {
            Op::Request(r) => self
                .requests
                .get(&(r.buyer.as_str(), r.call_us))
                .map(|i| format!("r{i}")),
            Op::Section(s) => self
                .sections
                .get(&(s.owner.as_str(), s.enter_us))
                .map(|i| format!("s{i}")),
        }
    }

    fn finding(
        &self,
        verdict: &'static str,
        class: &'static str,
        f: &Finding,
        at_us: i64,
    ) -> ViewFinding {
        let ops = f.ops.iter().filter_map(|op| self.id(op)).collect();
        ViewFinding {
            verdict,
            class,
            kind: f.kind,
            at_us,
            ops,
            en: f.en.clone(),
            zh: f.zh.clone(),
        }
    }
}
