//! A chapter's history put to the checker, and the checker's verdicts set beside the chapter's
//! own figures (the ground truth the service counted): two readings of one run, which must
//! agree. A disagreement names the figure, whichever side is wrong.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::history::{self, CheckReport, Counts};
use oversell_api::history::Line;

/// What the checker said of a run, and where it disagrees with the run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// All four verdicts hold.
    pub ok: bool,
    pub mutual_exclusion: bool,
    pub stock: bool,
    pub fencing: bool,
    pub acknowledged: bool,
    pub counts: Counts,
    /// The first violation in words, when there is one.
    pub first_en: Option<String>,
    pub first_zh: Option<String>,
    /// Figures the checker and the ground truth read differently, each said with both values.
    pub disagreements: Vec<String>,
    /// Where the history is incomplete (the counts it cannot vouch for are not compared).
    pub cuts: Vec<String>,
}

impl Checked {
    /// One cell for a report: the verdicts that failed, and whether both readings agree.
    pub fn cell(&self) -> String {
        let failed: Vec<&str> = [
            ("mutual exclusion", self.mutual_exclusion),
            ("stock", self.stock),
            ("fencing", self.fencing),
            ("acks", self.acknowledged),
        ]
        .into_iter()
        .filter(|(_, holds)| !holds)
        .map(|(name, _)| name)
        .collect();
        let said = match failed.is_empty() {
            true => "all hold".to_owned(),
            false => format!("broke: {}", failed.join(", ")),
        };
        match (self.disagreements.is_empty(), self.cuts.is_empty()) {
            (true, true) => format!("{said}; agrees"),
            (true, false) => format!("{said}; agrees where whole"),
            (false, _) => format!("{said}; DISAGREES: {}", self.disagreements.join("; ")),
        }
    }
}

/// The history parsed back as the checker reads a file (so a history the fleet writes is
/// held to the same format), checked.
pub fn report(lines: &[Line]) -> Result<(history::History, CheckReport), String> {
    let mut text = String::new();
    for line in lines {
        text += &serde_json::to_string(line).map_err(|e| e.to_string())?;
        text.push('\n');
    }
    let parsed = history::parse(&text).map_err(|e| e.to_string())?;
    let report = history::check(&parsed);
    Ok((parsed, report))
}

/// Checks a run's history and sets the verdicts beside its figures.
pub fn check(lines: &[Line], figures: &BTreeMap<String, f64>) -> Result<Checked, String> {
    let (_, report) = report(lines)?;
    Ok(beside(&report, figures))
}

fn beside(report: &CheckReport, figures: &BTreeMap<String, f64>) -> Checked {
    let c = &report.counts;
    let mut disagreements = Vec::new();
    let mut compare = |name: &str, ours: Option<i64>| {
        let (Some(ours), Some(truth)) = (ours, figures.get(name)) else {
            return;
        };
        if truth.is_finite() && ours != *truth as i64 {
            disagreements.push(format!("{name}: history {ours}, ground truth {truth}"));
        }
    };
    let whole = report.cuts.is_empty();
    if whole {
        compare("overlaps", Some(c.overlaps as i64));
        compare("stale_writes_rejected", Some(c.stale_refused as i64));
    }
    compare("oversold", Some(c.oversold as i64));
    compare("lost_updates", c.lost_updates);
    if c.acknowledged_lost > 0 {
        disagreements.push(format!(
            "acknowledged lost: history {}, ground truth 0 (every 200 is in the ledger)",
            c.acknowledged_lost
        ));
    }
    let first = report.first();
    Checked {
        ok: report.ok,
        mutual_exclusion: report.mutual_exclusion.holds,
        stock: report.stock.holds,
        fencing: report.fencing.holds,
        acknowledged: report.acknowledged.holds,
        counts: c.clone(),
        first_en: first.map(|f| f.en.clone()),
        first_zh: first.map(|f| f.zh.clone()),
        disagreements,
        cuts: report
            .cuts
            .iter()
            .map(|cut| format!("{}: {}", cut.what, cut.reason))
            .collect(),
    }
}

/// The first violation of a run's history drawn (the checker's picture); `None` when every
/// verdict held, or the history could not be read back.
pub fn violation_svg(lines: &[Line], lang: history::Lang) -> Option<String> {
    let (parsed, report) = report(lines).ok()?;
    (!report.ok).then(|| history::draw::svg(&parsed, &report, lang))
}

/// The viewer of a run's history, one offline HTML page (as `loadtest check --html` writes
/// it); `None` when every verdict held, or the history could not be read back.
pub fn violation_view(lines: &[Line], lang: history::Lang) -> Option<String> {
    let (_, report) = report(lines).ok()?;
    if report.ok {
        return None;
    }
    run_view(lines, lang)
}

/// The viewer of a run's history whatever its verdicts (a run that held steps through as
/// well); `None` when the history could not be read back.
pub fn run_view(lines: &[Line], lang: history::Lang) -> Option<String> {
    let (parsed, report) = report(lines).ok()?;
    let view = history::view::View::of(&parsed, &report);
    Some(history::view::page(
        &[view],
        history::view::Assets::Inline,
        lang,
    ))
}
