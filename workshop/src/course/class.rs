//! `loadtest course --class URL`: the class's votes beside the rehearsal. A class votes on the
//! instructor's fleet (`oversell up --class N`, the presenter's view), not on the fleets the
//! course starts; its results (`GET /admin/class/results`) are read from there, once before the
//! first fleet starts (a URL that does not answer, a wrong token or a fleet without a class
//! stops the course before it spends minutes) and again at the end (a class voting while the
//! course rehearses is counted).
//!
//! Per chapter rehearsed: the class's votes per option in each round, the share right, the
//! normalised gain, and the option the class's run landed in against the options the
//! rehearsal's runs landed in. They are two runs of the same chapter on two fleets: when they
//! land apart, the report says so, and does not pick one. The share right counts the option the
//! class's own run landed in, as the class saw it revealed.

use std::fmt::Write as _;

use anyhow::{anyhow, bail, Context};
use http::Method;
use serde::Deserialize;

use oversell_client::admin::AdminClient;
use oversell_client::target::Targets;

/// The class's fleet, reached.
pub struct ClassFleet {
    pub url: String,
    admin: AdminClient,
}

/// `GET /admin/class/results`, as far as the report reads it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClassResults {
    pub chapters: Vec<ClassChapter>,
}

/// One chapter the class polled.
#[derive(Debug, Clone, Deserialize)]
pub struct ClassChapter {
    pub chapter: String,
    pub rounds: Vec<ClassRound>,
    /// Whether it was run for its reveal.
    pub revealed: bool,
    pub landed: Option<usize>,
    pub passed: Option<bool>,
    pub gain: Option<f64>,
    /// The revealed run's room and history id, for its viewer on the class's fleet (older
    /// fleets do not say).
    #[serde(default)]
    pub room: Option<String>,
    #[serde(default)]
    pub history: Option<String>,
    /// Where its runs in the class's rooms landed, when the presenter ran it in every room.
    #[serde(default)]
    pub every_room: Option<EveryRoom>,
}

/// The tally of a chapter's runs in every room of the class.
#[derive(Debug, Clone, Deserialize)]
pub struct EveryRoom {
    pub rooms: usize,
    /// Rooms per option their run landed in.
    pub landed: Vec<usize>,
    pub landed_none: usize,
    pub failed: Vec<serde_json::Value>,
    pub pending: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ClassRound {
    pub counts: Vec<usize>,
    pub voters: usize,
    pub share_right: Option<f64>,
}

impl ClassFleet {
    /// Reaches the fleet at `url` with its admin `token` and checks it has a class.
    pub async fn connect(url: &str, token: Option<String>) -> anyhow::Result<ClassFleet> {
        let Some(token) = token else {
            bail!(
                "--class needs the class's fleet's admin token: pass --token or \
                 OVERSELL_ADMIN_TOKEN"
            );
        };
        let targets = Targets::parse(&[url], None).context("--class")?;
        let fleet = ClassFleet {
            url: url.to_owned(),
            admin: AdminClient::new(&targets, Some(token)),
        };
        let class = fleet
            .admin
            .request(Method::GET, "/admin/class", None)
            .await
            .with_context(|| format!("cannot read the class at {url}"))?;
        if class["prefix"].is_null() {
            bail!(
                "the fleet at {url} has no class: make one (`oversell up --class N`, or the \
                 class page), or leave --class out"
            );
        }
        Ok(fleet)
    }

    /// The class's results now.
    pub async fn results(&self) -> anyhow::Result<ClassResults> {
        let url = &self.url;
        let json = self
            .admin
            .request(Method::GET, "/admin/class/results", None)
            .await
            .with_context(|| format!("cannot read the class's results at {url}"))?;
        serde_json::from_value(json).map_err(|e| {
            anyhow!("{url}/admin/class/results is not the class's results ({e}): is it an oversell with the class vote?")
        })
    }
}

/// The options a chapter's runs landed in, one per run (`None`: in no option).
pub type Landings = [Option<usize>];

/// Option `i` as the pages name it: A, B, C, …; no option: "none".
fn letter(option: Option<usize>) -> String {
    match option
        .and_then(|o| u8::try_from(o).ok())
        .filter(|o| *o < 26)
    {
        Some(o) => char::from(b'A' + o).into(),
        None => option.map_or_else(|| "none".into(), |o| (o + 1).to_string()),
    }
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".into(), |s| format!("{:.0} %", s * 100.0))
}

/// A round's votes: `A 3 · B 10 · C 17 (30 voted)`.
fn votes(round: &ClassRound) -> String {
    let per: Vec<String> = round
        .counts
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{} {n}", letter(Some(i))))
        .collect();
    format!("{} ({} voted)", per.join(" · "), round.voters)
}

/// Where the rehearsal's runs landed: `C`, or `C 4/5, B 1/5`.
fn rehearsal_landed(landed: &Landings) -> String {
    let mut seen: Vec<(Option<usize>, usize)> = Vec::new();
    for option in landed {
        match seen.iter_mut().find(|(o, _)| o == option) {
            Some((_, n)) => *n += 1,
            None => seen.push((*option, 1)),
        }
    }
    seen.sort_by_key(|(o, n)| (std::cmp::Reverse(*n), *o));
    match seen.as_slice() {
        [(option, _)] if landed.len() == 1 => letter(*option),
        _ => seen
            .iter()
            .map(|(o, n)| format!("{} {n}/{}", letter(*o), landed.len()))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Whether the class's run and the rehearsal's landed together, said plainly.
fn agreement(class: &ClassChapter, landed: &Landings) -> String {
    if !class.revealed {
        return "the class's vote was not run for a reveal".into();
    }
    if landed.is_empty() {
        return "the rehearsal did not run it".into();
    }
    let same = landed.iter().filter(|o| **o == class.landed).count();
    let theirs = letter(class.landed);
    match same {
        n if n == landed.len() => "agree".into(),
        0 => format!(
            "**mismatch**: the class's run landed in {theirs}, the rehearsal's in {}",
            rehearsal_landed(landed)
        ),
        n => format!(
            "**partly**: the class's run landed in {theirs}, {n} of the rehearsal's {} runs too",
            landed.len()
        ),
    }
}

/// The share right of round 1 and of the last round, pooled over the chapters with two rounds
/// and a landed option, and Hake's normalised gain of the pooled shares; `None` without such a
/// chapter.
pub fn total_gain(chapters: &[&ClassChapter]) -> Option<(f64, f64, f64, usize)> {
    let (mut pre, mut post, mut first, mut last, mut n) = (0usize, 0usize, 0usize, 0usize, 0);
    for chapter in chapters {
        let ([one, .., two], Some(landed)) = (chapter.rounds.as_slice(), chapter.landed) else {
            continue;
        };
        if one.voters == 0 || two.voters == 0 {
            continue;
        }
        pre += one.counts.get(landed).copied().unwrap_or(0);
        first += one.voters;
        post += two.counts.get(landed).copied().unwrap_or(0);
        last += two.voters;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let (pre, post) = (pre as f64 / first as f64, post as f64 / last as f64);
    let gain = if pre < 1.0 {
        (post - pre) / (1.0 - pre)
    } else {
        f64::NAN
    };
    Some((pre, post, gain, n))
}

/// The report's section: one row per chapter rehearsed, in the course's order (`rehearsed`:
/// each chapter's id and where its runs landed), then the total gain, then the chapters the
/// class polled that the rehearsal left out. `stale` says why the results are the ones read
/// before the course started.
pub fn markdown(
    url: &str,
    results: &ClassResults,
    rehearsed: &[(&str, Vec<Option<usize>>)],
    stale: Option<&str>,
) -> String {
    let mut out = format!("\n## The class's votes ({url})\n\n");
    if let Some(why) = stale {
        let _ = writeln!(
            out,
            "The results could not be read again at the end ({why}): these are the ones read \
             before the first fleet started.\n"
        );
    }
    out += "Beside each chapter rehearsed: the class's votes per option in each round, the share \
            right (votes for the option the class's own run landed in), the normalised gain \
            (post − pre) / (1 − pre), and where the class's run and the rehearsal's runs landed: \
            two runs of the chapter on two fleets, which a timing or a loaded machine may set \
            apart.\n\n";
    out += "| chapter | round 1 | round 2 | right | gain | class's run | rehearsal | runs |\n";
    out += "|---|---|---|---|---|---|---|---|\n";
    let mut polled = Vec::new();
    for (id, landed) in rehearsed {
        let Some(class) = results.chapters.iter().find(|c| c.chapter == *id) else {
            let _ = writeln!(
                out,
                "| `{id}` | not polled by the class | | | | | {} | |",
                rehearsal_cell(landed)
            );
            continue;
        };
        polled.push(class);
        let round = |r: usize| class.rounds.get(r).map(votes).unwrap_or_default();
        let right: Vec<String> = class
            .rounds
            .iter()
            .map(|r| percent(r.share_right))
            .collect();
        let _ = writeln!(
            out,
            "| `{id}` | {} | {} | {} | {} | {} | {} | {} |",
            round(0),
            round(1),
            right.join(" → "),
            class.gain.map_or_else(|| "–".into(), |g| format!("{g:.2}")),
            class_run(class),
            rehearsal_cell(landed),
            agreement(class, landed),
        );
    }
    out.push('\n');
    match total_gain(&polled) {
        Some((pre, post, gain, n)) => {
            let gain = match gain.is_finite() {
                true => format!("{gain:.2}"),
                false => "– (round 1 was all right already)".into(),
            };
            let _ = writeln!(
                out,
                "Across {} with two rounds and a revealed run: {} right in round 1, {} in \
                 round 2, normalised gain **{gain}** (of the pooled votes).",
                chapters(n),
                percent(Some(pre)),
                percent(Some(post))
            );
        }
        None => {
            out += "No chapter rehearsed had two rounds of votes and a revealed run: no gain \
                        across chapters.\n"
        }
    }
    let left_out: Vec<String> = results
        .chapters
        .iter()
        .filter(|c| !rehearsed.iter().any(|(id, _)| *id == c.chapter))
        .map(|c| format!("`{}`", c.chapter))
        .collect();
    if !left_out.is_empty() {
        let _ = writeln!(
            out,
            "\nPolled by the class, not rehearsed here: {}.",
            left_out.join(", ")
        );
    }
    out += &viewers(url, results);
    out
}

/// Each revealed run's viewer on the class's fleet. A room keeps only its last few runs'
/// histories, so the older ones may be gone by the time the report is read; the route wants
/// the admin token, which a link cannot carry, so the report says how to call it.
fn viewers(url: &str, results: &ClassResults) -> String {
    let url = url.trim_end_matches('/');
    let mut out = String::new();
    for c in &results.chapters {
        let (Some(room), Some(id)) = (&c.room, &c.history) else {
            continue;
        };
        if out.is_empty() {
            out += "\nThe class's runs in the viewer, on the class's fleet while their room keeps \
                    them (its last 3 runs), with the admin token: `curl -H \"Authorization: \
                    Bearer $OVERSELL_ADMIN_TOKEN\" URL > run.html`, or **Step through this run** \
                    on the presenter's reveal.\n\n";
        }
        let _ = writeln!(
            out,
            "- `{}`: {url}/admin/runs/{id}/view?room={room}",
            c.chapter
        );
    }
    out
}

/// The class's run: its option, whether it showed what the chapter expects, and where the
/// class's rooms' runs landed when it ran in every room.
fn class_run(class: &ClassChapter) -> String {
    let mut cell = match (class.revealed, class.passed) {
        (false, _) => return "not run".into(),
        (true, Some(false)) => format!("{} (not as expected)", letter(class.landed)),
        (true, _) => letter(class.landed),
    };
    if let Some(rooms) = &class.every_room {
        let mut per: Vec<String> = (rooms.landed.iter().enumerate())
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| format!("{} {n}", letter(Some(i))))
            .collect();
        if rooms.landed_none > 0 {
            per.push(format!("none {}", rooms.landed_none));
        }
        if !rooms.failed.is_empty() {
            per.push(format!("failed {}", rooms.failed.len()));
        }
        if rooms.pending > 0 {
            per.push(format!("not run {}", rooms.pending));
        }
        let _ = write!(cell, "; its {} rooms: {}", rooms.rooms, per.join(" · "));
    }
    cell
}

/// `1 chapter`, `2 chapters`.
fn chapters(n: usize) -> String {
    match n {
        1 => "1 chapter".into(),
        n => format!("{n} chapters"),
    }
}

fn rehearsal_cell(landed: &Landings) -> String {
    match landed.is_empty() {
        true => "not run".into(),
        false => rehearsal_landed(landed),
    }
}

/// The terminal's lines: how many chapters rehearsed the class polled, how many runs agree,
/// each mismatch, and the gain across chapters.
pub fn summary(results: &ClassResults, rehearsed: &[(&str, Vec<Option<usize>>)]) -> String {
    let mut polled = Vec::new();
    let (mut agree, mut apart) = (0, Vec::new());
    for (id, landed) in rehearsed {
        let Some(class) = results.chapters.iter().find(|c| c.chapter == *id) else {
            continue;
        };
        polled.push(class);
        if !class.revealed || landed.is_empty() {
            continue;
        }
        match agreement(class, landed).as_str() {
            "agree" => agree += 1,
            _ => apart.push(format!(
                "{id} (class {}, rehearsal {})",
                letter(class.landed),
                rehearsal_landed(landed)
            )),
        }
    }
    let mut out = format!(
        "class: polled {} of the {} chapters rehearsed; the runs agree in {agree}",
        polled.len(),
        rehearsed.len()
    );
    if !apart.is_empty() {
        let _ = write!(out, ", land apart in {}: {}", apart.len(), apart.join(", "));
    }
    if let Some((pre, post, gain, n)) = total_gain(&polled) {
        let _ = write!(
            out,
            "; right {} → {}, gain {gain:.2} across {}",
            percent(Some(pre)),
            percent(Some(post)),
            chapters(n)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(
        id: &str,
        landed: Option<usize>,
        rounds: &[(Vec<usize>, Option<f64>)],
    ) -> ClassChapter {
        ClassChapter {
            chapter: id.into(),
            rounds: rounds
                .iter()
                .map(|(counts, share)| ClassRound {
                    counts: counts.clone(),
                    voters: counts.iter().sum(),
                    share_right: *share,
                })
                .collect(),
            revealed: true,
            landed,
            passed: Some(true),
            gain: None,
            room: None,
            history: None,
            every_room: None,
        }
    }

    fn results() -> ClassResults {
        ClassResults {
            chapters: vec![
                chapter(
                    "none-race",
                    Some(2),
                    &[(vec![2, 4, 4], Some(0.4)), (vec![0, 2, 8], Some(0.8))],
                ),
                chapter(
                    "setnx-crash",
                    Some(1),
                    &[(vec![5, 5, 0], Some(0.5)), (vec![2, 8, 0], Some(0.8))],
                ),
                chapter("fenced-freeze", Some(0), &[(vec![1, 1], Some(0.5))]),
            ],
        }
    }

    #[test]
    fn the_gain_across_chapters_is_of_the_pooled_votes() {
        let results = results();
        let chapters: Vec<&ClassChapter> = results.chapters.iter().collect();
        let (pre, post, gain, n) = total_gain(&chapters).unwrap();
        // 4 + 5 right of 20 in round 1, 8 + 8 of 20 in round 2; the one-round chapter is out.
        assert_eq!(n, 2);
        assert!((pre - 0.45).abs() < 1e-9 && (post - 0.8).abs() < 1e-9);
        assert!((gain - 0.35 / 0.55).abs() < 1e-9, "{gain}");
        assert_eq!(total_gain(&[]), None);
    }

    #[test]
    fn a_run_that_landed_apart_is_said_plainly() {
        let results = results();
        let rehearsed = vec![
            ("none-race", vec![Some(2)]),
            ("setnx-crash", vec![Some(2), Some(1)]),
            ("fenced-freeze", vec![Some(1)]),
            ("local-one-instance", vec![Some(0)]),
        ];
        let mut results = results;
        results.chapters[0].every_room = Some(EveryRoom {
            rooms: 4,
            landed: vec![0, 1, 2],
            landed_none: 0,
            failed: vec![serde_json::json!({"room": "s-04", "error": "busy"})],
            pending: 0,
        });
        results.chapters[1].room = Some("default".into());
        results.chapters[1].history = Some("run-9".into());
        let md = markdown("http://x:1", &results, &rehearsed, None);
        assert!(
            md.contains("- `setnx-crash`: http://x:1/admin/runs/run-9/view?room=default\n"),
            "{md}"
        );
        assert!(
            !md.contains("- `none-race`:"),
            "a run without a history has no viewer: {md}"
        );
        assert!(md.contains("| `none-race` | A 2 · B 4 · C 4 (10 voted) | A 0 · B 2 · C 8 (10 voted) | 40 % → 80 % |"), "{md}");
        assert!(
            md.contains("| C; its 4 rooms: B 1 · C 2 · failed 1 | C | agree |"),
            "{md}"
        );
        assert!(
            md.contains("**partly**: the class's run landed in B, 1 of the rehearsal's 2 runs too"),
            "{md}"
        );
        assert!(
            md.contains("**mismatch**: the class's run landed in A, the rehearsal's in B"),
            "{md}"
        );
        assert!(
            md.contains("| `local-one-instance` | not polled by the class |"),
            "{md}"
        );
        assert!(md.contains("normalised gain **0.64**"), "{md}");
        let line = summary(&results, &rehearsed);
        assert!(line.starts_with("class: polled 3 of the 4 chapters rehearsed; the runs agree in 1, land apart in 2: setnx-crash (class B, rehearsal B 1/2, C 1/2), fenced-freeze (class A, rehearsal B)"), "{line}");
        assert!(line.ends_with("gain 0.64 across 2 chapters"), "{line}");
    }

    #[test]
    fn the_chapters_polled_and_not_rehearsed_are_named() {
        let md = markdown(
            "http://x:1",
            &results(),
            &[("none-race", vec![])],
            Some("timeout"),
        );
        assert!(
            md.contains("not rehearsed here: `setnx-crash`, `fenced-freeze`."),
            "{md}"
        );
        assert!(
            md.contains("could not be read again at the end (timeout)"),
            "{md}"
        );
        assert!(md.contains("the rehearsal did not run it"), "{md}");
    }
}
