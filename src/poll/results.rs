//! The class's results: per chapter polled, each round's votes per option, the share right
//! and the gain; per room its answers. As JSON, CSV (one row per chapter and round, a column
//! per room) and Markdown (for the course's report or a handout).
//!
//! In CSV and Markdown the options are letters, A for the first (option 0 in the API), as
//! the pages show them.
//!
//! Beside the votes: how sure each voter was against whether the run proved them right (sure
//! and wrong is the belief to address), and every reason given, which are students' free text:
//! quoted in CSV (and kept from being read as a formula), escaped in Markdown, so a reason
//! shows as typed wherever it is opened.

use std::fmt::Write;

use serde::Serialize;

use super::ballot_box::{ChapterRecord, Notes, Votes};
use super::standings::{chapter_of, every_room, gain, round_results, EveryRoom, RoundResult};
use super::transfer::{transfer, Transfer};

/// Every chapter polled in this class, in the order first polled, and every room's answers.
#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub chapters: Vec<ChapterResult>,
    pub rooms: Vec<RoomAnswers>,
}

/// One chapter polled.
#[derive(Debug, Clone, Serialize)]
pub struct ChapterResult {
    /// The chapter run.
    pub chapter: String,
    /// The question polled.
    pub question_id: String,
    /// The question, in English (`null` for a chapter the catalog no longer has).
    pub question: Option<&'static str>,
    pub options: Vec<&'static str>,
    pub rounds: Vec<RoundResult>,
    /// Whether the chapter was run for its reveal; if so, the option its run landed in and
    /// whether the run passed.
    pub revealed: bool,
    pub landed: Option<usize>,
    pub passed: Option<bool>,
    /// The revealed run's room, and the id its history is kept under there: its viewer is
    /// `GET /admin/runs/{id}/view?room=` while the room keeps it (its last few runs).
    pub room: Option<String>,
    pub history: Option<String>,
    pub gain: Option<f64>,
    /// Where its runs in the class's rooms landed, when it was run in every room.
    pub every_room: Option<EveryRoom>,
    /// Per round, how sure the voters were against whether they were right; empty until the
    /// run landed in an option (before it, nobody is right or wrong).
    pub confidence: Vec<Confidence>,
    /// Every reason given, round by round, in the rooms' order.
    pub reasons: Vec<ReasonRow>,
    /// When the question's isomorphic pair was polled before it: whether the rooms right on
    /// that one got this one right in its first round.
    pub transfer: Option<Transfer>,
    /// The transfer's Weighted Learning Gain (Porter et al., ICER 2011; see
    /// [`super::transfer::weighted_learning_gain`]), here so a reader need not open the
    /// transfer: `null` without a pair polled before, before both runs landed, or when it is
    /// undefined (no potential learners, no knowers right on this one).
    pub weighted_learning_gain: Option<f64>,
}

/// One round's voters by how sure they said they were and whether the run proved them right.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Confidence {
    pub round: u8,
    pub sure_right: usize,
    /// Sure, and wrong: the misconception to address.
    pub sure_wrong: usize,
    pub unsure_right: usize,
    pub unsure_wrong: usize,
    /// Voters who did not say.
    pub unstated_right: usize,
    pub unstated_wrong: usize,
}

/// One voter's reason.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReasonRow {
    pub round: u8,
    pub room: String,
    pub option: usize,
    pub sure: Option<bool>,
    /// `null` until the run landed.
    pub right: Option<bool>,
    /// As the student typed it: text, never markup.
    pub why: String,
}

/// One room's answers, chapter by chapter.
#[derive(Debug, Clone, Serialize)]
pub struct RoomAnswers {
    pub room: String,
    pub answers: Vec<RoomAnswer>,
}

/// One room's votes in one chapter, round by round (`null`: no vote that round).
#[derive(Debug, Clone, Serialize)]
pub struct RoomAnswer {
    pub chapter: String,
    pub votes: Vec<Option<usize>>,
}

/// The results of the records, for the class's `rooms` (every room that voted is listed too,
/// should one have left the class since).
pub fn results(records: &[ChapterRecord], rooms: &[String]) -> Results {
    let chapters = (0..records.len())
        .map(|at| {
            let transfer = transfer(records, at);
            ChapterResult {
                weighted_learning_gain: transfer.as_ref().and_then(|t| t.weighted_learning_gain),
                transfer,
                ..chapter_result(&records[at])
            }
        })
        .collect();
    let mut all: Vec<String> = rooms.to_vec();
    for record in records {
        for votes in &record.votes {
            for room in votes.keys() {
                if !all.contains(room) {
                    all.push(room.clone());
                }
            }
        }
    }
    let rooms = all
        .into_iter()
        .map(|room| RoomAnswers {
            answers: records
                .iter()
                .map(|record| RoomAnswer {
                    chapter: record.chapter.clone(),
                    votes: record.votes.iter().map(|v| v.get(&room).copied()).collect(),
                })
                .collect(),
            room,
        })
        .collect();
    Results { chapters, rooms }
}

fn chapter_result(record: &ChapterRecord) -> ChapterResult {
    let question = workshop::scenario::question(&record.chapter);
    let landed = record.run.as_ref().and_then(|run| run.landed);
    let rounds = round_results(&record.chapter, landed, &record.votes, &record.notes);
    let no_notes = Notes::new();
    let rounds_notes = || {
        (1..)
            .zip(&record.votes)
            .enumerate()
            .map(|(i, (round, votes))| (round, votes, record.notes.get(i).unwrap_or(&no_notes)))
    };
    ChapterResult {
        chapter: chapter_of(&record.chapter).to_owned(),
        question_id: record.chapter.clone(),
        confidence: match landed {
            Some(landed) => rounds_notes()
                .map(|(round, votes, notes)| confidence(round, votes, notes, landed))
                .collect(),
            None => Vec::new(),
        },
        reasons: rounds_notes()
            .flat_map(|(round, votes, notes)| {
                votes.iter().filter_map(move |(room, &option)| {
                    let note = notes.get(room)?;
                    Some(ReasonRow {
                        round,
                        room: room.clone(),
                        option,
                        sure: note.sure,
                        right: landed.map(|l| l == option),
                        why: note.why.clone()?,
                    })
                })
            })
            .collect(),
        question: question.map(|q| q.en),
        options: question.map_or_else(Vec::new, |q| q.options.iter().map(|o| o.en).collect()),
        gain: gain(&rounds),
        rounds,
        revealed: record.run.is_some(),
        landed,
        passed: record.run.as_ref().map(|run| run.passed),
        room: record.run.as_ref().map(|run| run.room.clone()),
        history: record.run.as_ref().and_then(|run| run.history.clone()),
        every_room: record
            .run
            .as_ref()
            .and_then(|run| every_room(&record.chapter, run, &record.votes, &record.room_runs)),
        transfer: None,
        weighted_learning_gain: None,
    }
}

/// One round's voters by confidence and correctness, the run having landed in `landed`.
fn confidence(round: u8, votes: &Votes, notes: &Notes, landed: usize) -> Confidence {
    let mut c = Confidence {
        round,
        ..Confidence::default()
    };
    for (room, &option) in votes {
        let right = option == landed;
        let count = match (notes.get(room).and_then(|n| n.sure), right) {
            (Some(true), true) => &mut c.sure_right,
            (Some(true), false) => &mut c.sure_wrong,
            (Some(false), true) => &mut c.unsure_right,
            (Some(false), false) => &mut c.unsure_wrong,
            (None, true) => &mut c.unstated_right,
            (None, false) => &mut c.unstated_wrong,
        };
        *count += 1;
    }
    c
}

/// Option `i` as the pages name it: A, B, C, …
fn letter(option: usize) -> String {
    u8::try_from(option)
        .ok()
        .filter(|o| *o < 26)
        .map_or_else(|| (option + 1).to_string(), |o| char::from(b'A' + o).into())
}

fn share(share: Option<f64>) -> String {
    share.map_or_else(String::new, |s| format!("{s:.3}"))
}

/// The most options any chapter has: the CSV's columns.
fn widest(results: &Results) -> usize {
    results
        .chapters
        .iter()
        .flat_map(|c| c.rounds.iter().map(|r| r.counts.len()))
        .max()
        .unwrap_or(0)
}

/// One row per chapter and round: its votes per option, the landed option, the share right
/// and the gain (on each round of the chapter), then each room's answer that round. Chapter
/// ids and room names are letters, digits, `-` and `_`: no field needs quoting.
pub fn csv(results: &Results) -> String {
    let options = widest(results);
    let mut out = String::from("chapter,round,voters");
    for option in 0..options {
        let _ = write!(out, ",votes_{}", letter(option));
    }
    out += ",landed,passed,share_right,gain,weighted_learning_gain";
    out += ",sure_right,sure_wrong,unsure_right,unsure_wrong";
    for room in &results.rooms {
        let _ = write!(out, ",{}", room.room);
    }
    out.push('\n');
    for (i, chapter) in results.chapters.iter().enumerate() {
        for (r, round) in chapter.rounds.iter().enumerate() {
            let _ = write!(out, "{},{},{}", chapter.chapter, round.round, round.voters);
            for option in 0..options {
                let count = round.counts.get(option).map(usize::to_string);
                let _ = write!(out, ",{}", count.unwrap_or_default());
            }
            let _ = write!(
                out,
                ",{},{},{},{},{}",
                chapter.landed.map(letter).unwrap_or_default(),
                chapter.passed.map(|p| p.to_string()).unwrap_or_default(),
                share(round.share_right),
                share(chapter.gain),
                share(chapter.weighted_learning_gain),
            );
            match chapter.confidence.get(r) {
                Some(c) => {
                    let _ = write!(
                        out,
                        ",{},{},{},{}",
                        c.sure_right, c.sure_wrong, c.unsure_right, c.unsure_wrong
                    );
                }
                None => out += ",,,,",
            }
            for room in &results.rooms {
                let vote = room.answers[i].votes.get(r).copied().flatten();
                let _ = write!(out, ",{}", vote.map(letter).unwrap_or_default());
            }
            out.push('\n');
        }
    }
    out
}

/// Every reason given, one row each: chapter, round, room, the option, sure, right, why.
pub fn reasons_csv(results: &Results) -> String {
    let mut out = String::from("chapter,question,round,room,option,sure,right,why\n");
    let flag = |b: Option<bool>| b.map(|b| b.to_string()).unwrap_or_default();
    for chapter in &results.chapters {
        for r in &chapter.reasons {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                chapter.chapter,
                chapter.question_id,
                r.round,
                r.room,
                letter(r.option),
                flag(r.sure),
                flag(r.right),
                csv_text(&r.why)
            );
        }
    }
    out
}

/// A student's text as one CSV field: quoted, its quotes doubled, and kept from being read as
/// a formula by a spreadsheet (a leading `=`, `+`, `-`, `@` gets a `'` before it, as OWASP
/// advises).
pub fn csv_text(text: &str) -> String {
    let guard = match text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        true => "'",
        false => "",
    };
    format!("\"{guard}{}\"", text.replace('"', "\"\""))
}

/// A student's text in Markdown, shown as typed: every ASCII punctuation mark escaped, so no
/// HTML tag, link, emphasis or table cell is made of it.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Where the runs in every room landed, in one sentence.
fn every_room_line(rooms: &EveryRoom) -> String {
    let ran = rooms.rooms - rooms.pending - rooms.failed.len();
    let mut parts: Vec<String> = rooms
        .landed
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(option, n)| format!("{n} in **{}**", letter(option)))
        .collect();
    if rooms.landed_none > 0 {
        parts.push(format!("{} in no option", rooms.landed_none));
    }
    let mut line = format!(
        "Run in every room as well: {ran} of {} rooms ran it",
        rooms.rooms
    );
    if !parts.is_empty() {
        line += &format!(", landing {}", parts.join(", "));
    }
    if rooms.not_passed > 0 {
        line += &format!(
            "; {} did not show what the chapter expects",
            rooms.not_passed
        );
    }
    if !rooms.failed.is_empty() {
        let failed: Vec<String> = rooms
            .failed
            .iter()
            .map(|f| format!("{} ({})", f.room, f.error))
            .collect();
        line += &format!("; failed: {}", failed.join(", "));
    }
    if rooms.pending > 0 {
        line += &format!("; {} not run", rooms.pending);
    }
    line + "."
}

/// A section per chapter (its question, a table of rounds, what the run landed in and the
/// gain), then a table of every room's answers.
pub fn markdown(results: &Results) -> String {
    let mut out = String::from("# The class's votes\n\n");
    if results.chapters.is_empty() {
        out += "No chapter was polled in this class.\n";
        return out;
    }
    for chapter in &results.chapters {
        match chapter.question_id == chapter.chapter {
            true => writeln!(out, "## {}\n", chapter.chapter),
            // An article's claim, answered by the chapter's run.
            false => writeln!(out, "## {} ({})\n", chapter.chapter, chapter.question_id),
        }
        .ok();
        if let Some(question) = chapter.question {
            let _ = writeln!(out, "{question}\n");
        }
        for (i, option) in chapter.options.iter().enumerate() {
            let _ = writeln!(out, "- **{}** {option}", letter(i));
        }
        if !chapter.options.is_empty() {
            out.push('\n');
        }
        let options = chapter.rounds.first().map_or(0, |r| r.counts.len());
        out += "| round |";
        for option in 0..options {
            let _ = write!(out, " {} |", letter(option));
        }
        out += " voters | share right |\n|---|";
        out += &"---:|".repeat(options + 2);
        out.push('\n');
        for round in &chapter.rounds {
            let _ = write!(out, "| {} |", round.round);
            for count in &round.counts {
                let _ = write!(out, " {count} |");
            }
            let right = round
                .share_right
                .map_or_else(|| "–".to_owned(), |s| format!("{:.0} %", s * 100.0));
            let _ = writeln!(out, " {} | {right} |", round.voters);
        }
        out.push('\n');
        let landed = match (chapter.revealed, chapter.landed) {
            (false, _) => "not run for a reveal yet".to_owned(),
            (true, None) => "the run landed in no option".to_owned(),
            (true, Some(option)) => format!("the run landed in **{}**", letter(option)),
        };
        let passed = match chapter.passed {
            Some(false) => " (this run did not show what the chapter expects)",
            _ => "",
        };
        let gain = chapter
            .gain
            .map_or_else(String::new, |g| format!("; normalised gain {g:.2}"));
        let _ = writeln!(out, "{landed}{passed}{gain}.\n");
        if let Some(rooms) = &chapter.every_room {
            let _ = writeln!(out, "{}\n", every_room_line(rooms));
        }
        if let Some(t) = &chapter.transfer {
            let _ = writeln!(
                out,
                "The same concept as `{}`, asked earlier: of the {} rooms right on it after \
                 discussing, {} got this one right at once; {} more got it right now only.\n",
                t.after, t.right_before, t.right_again, t.right_now_only
            );
            let wlg = t
                .weighted_learning_gain
                .map_or_else(|| "undefined".to_owned(), |w| format!("**{w:.2}**"));
            let _ = writeln!(
                out,
                "Weighted Learning Gain {wlg}: {} of {} potential learners (wrong on `{}` \
                 alone) right on this one alone, against {} of {} rooms that knew it (right \
                 on it alone and after discussing).\n",
                t.learned, t.potential_learners, t.after, t.knew_right, t.knew
            );
        }
        for c in &chapter.confidence {
            let _ = writeln!(
                out,
                "Round {}: sure and right {}, **sure and wrong {}**, unsure and right {}, \
                 unsure and wrong {}, unstated {} right and {} wrong.\n",
                c.round,
                c.sure_right,
                c.sure_wrong,
                c.unsure_right,
                c.unsure_wrong,
                c.unstated_right,
                c.unstated_wrong
            );
        }
        if !chapter.reasons.is_empty() {
            out += "Reasons:\n\n";
            for r in &chapter.reasons {
                let sure = match r.sure {
                    Some(true) => ", sure",
                    Some(false) => ", not sure",
                    None => "",
                };
                let _ = writeln!(
                    out,
                    "- round {}, **{}**{sure} ({}): {}",
                    r.round,
                    letter(r.option),
                    r.room,
                    markdown_text(&r.why)
                );
            }
            out.push('\n');
        }
    }
    out += "## Answers per room\n\nRound 1 → round 2; – is no vote.\n\n| room |";
    for chapter in &results.chapters {
        let _ = write!(out, " {} |", chapter.chapter);
    }
    out += "\n|---|";
    out += &"---|".repeat(results.chapters.len());
    out.push('\n');
    for room in &results.rooms {
        let _ = write!(out, "| {} |", room.room);
        for answer in &room.answers {
            let votes: Vec<String> = answer
                .votes
                .iter()
                .map(|v| v.map_or_else(|| "–".to_owned(), letter))
                .collect();
            let _ = write!(out, " {} |", votes.join(" → "));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
