//! Reading a history file: JSON Lines, checked line by line, a bad line said in one sentence
//! that names its line number and its field.
//!
//! A million lines must parse in well under a second, so the common line (written by the
//! recorder: `{"type":"…",` first) goes straight into its struct, and the file is cut at line
//! breaks into a share per core, each found and parsed by its own thread. Only a line that
//! fails is read again, slowly, to say exactly what is wrong.
//!
//! No line may be longer than [`MAX_LINE`]: the longest line the recorder writes is a few
//! hundred bytes, so a longer one is not a history line, and it is refused by its number as
//! soon as the bound is passed — never read whole, never echoed.

use std::io::Read;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::lines::{numbered_lines, split_at_lines, NumberedLines};
pub use super::parse_error::ParseError;
use super::validate;
use oversell_api::history::{Cut, End, Fault, Lease, Request, Run, Section, READS, VERSION};

/// The longest line a history may have: 1 MiB.
pub const MAX_LINE: usize = 1 << 20;

/// A whole history, its lines sorted by kind (each kind in the file's order).
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub run: Run,
    pub requests: Vec<Request>,
    pub sections: Vec<Section>,
    pub leases: Vec<Lease>,
    pub faults: Vec<Fault>,
    /// Parts that could not be kept whole: the history is incomplete where these say.
    pub cuts: Vec<Cut>,
    /// `None` when the file has no `end` line (the final stock is then unknown).
    pub end: Option<End>,
}

impl History {
    /// An empty history of `run`, to be filled (tests and synthetic histories).
    pub fn new(run: Run) -> History {
        History {
            run,
            requests: Vec::new(),
            sections: Vec::new(),
            leases: Vec::new(),
            faults: Vec::new(),
            cuts: Vec::new(),
            end: None,
        }
    }

    /// Whether lines of `what` (`request`, `section`, `lease`, `fault`) may be missing: a cut
    /// of that kind, or of the whole `history` (the fleet keeps a run's first lines only).
    pub fn is_cut(&self, what: &str) -> bool {
        self.cuts
            .iter()
            .any(|c| c.what == what || c.what == "history")
    }

    /// Whether the history was cut at a line: what came after is not here at all.
    pub fn is_prefix(&self) -> bool {
        self.cuts.iter().any(|c| c.what == "history")
    }

    /// Requests and sections: what "operations" counts.
    pub fn operations(&self) -> usize {
        self.requests.len() + self.sections.len()
    }

    /// The time every time in words is said relative to: the run's first call (or, with no
    /// request, its first section).
    pub fn origin_us(&self) -> i64 {
        self.requests
            .iter()
            .map(|r| r.call_us)
            .min()
            .or_else(|| self.sections.iter().map(|s| s.enter_us).min())
            .unwrap_or(0)
    }

    /// The history as JSON Lines, in the order the format asks (run first, end last).
    pub fn to_jsonl(&self) -> String {
        use oversell_api::history::Line;
        let mut out = String::new();
        let mut push = |line: Line| {
            out.push_str(&serde_json::to_string(&line).expect("a history line serializes"));
            out.push('\n');
        };
        push(Line::Run(self.run.clone()));
        self.requests
            .iter()
            .for_each(|r| push(Line::Request(r.clone())));
        self.sections
            .iter()
            .for_each(|s| push(Line::Section(s.clone())));
        self.leases
            .iter()
            .for_each(|l| push(Line::Lease(l.clone())));
        self.faults
            .iter()
            .for_each(|f| push(Line::Fault(f.clone())));
        self.cuts.iter().for_each(|c| push(Line::Cut(c.clone())));
        if let Some(end) = &self.end {
            push(Line::End(end.clone()));
        }
        out
    }
}

fn error(line: usize, field: Option<String>, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        field,
        message: message.into(),
    }
}

/// Reads a whole history from `reader`, refusing a line longer than [`MAX_LINE`] as soon as
/// the bound is passed (the rest of the file is not read).
pub fn read(reader: impl Read) -> Result<History, ParseError> {
    read_sized(reader, 0)
}

/// As [`read`], with room made for `size` bytes at once (a file's length): a history of
/// hundreds of megabytes is then never copied to grow.
fn read_sized(mut reader: impl Read, size: usize) -> Result<History, ParseError> {
    let mut bytes = Vec::with_capacity(size);
    // Small enough that a line over the bound is refused well before twice the bound is read.
    let mut chunk = vec![0u8; 256 * 1024];
    // The line being read (1-based) and its length so far.
    let (mut line, mut length) = (1usize, 0usize);
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(error(0, None, e.to_string())),
        };
        // Only the line breaks are looked at (memchr: many bytes a step), not every byte.
        let data = &chunk[..n];
        let mut start = 0;
        for at in memchr::memchr_iter(b'\n', data) {
            if length + (at - start) > MAX_LINE {
                return Err(too_long(line));
            }
            line += 1;
            length = 0;
            start = at + 1;
        }
        length += n - start;
        if length > MAX_LINE {
            return Err(too_long(line));
        }
        bytes.extend_from_slice(data);
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) => parse(text),
        Err(e) => {
            let line = 1 + memchr::memchr_iter(b'\n', &bytes[..e.valid_up_to()]).count();
            Err(error(line, None, "not UTF-8 text"))
        }
    }
}

fn too_long(line: usize) -> ParseError {
    error(
        line,
        None,
        format!("longer than {MAX_LINE} bytes (1 MiB, the longest a history line may be)"),
    )
}

/// Reads the history at `path`.
pub fn read_path(path: &std::path::Path) -> Result<History, ParseError> {
    let file = std::fs::File::open(path)
        .map_err(|e| error(0, None, format!("{}: {e}", path.display())))?;
    // A size that does not fit memory is no hint: read as a stream, then.
    let size = file
        .metadata()
        .map_or(0, |m| usize::try_from(m.len()).unwrap_or(0))
        .min(1 << 32);
    read_sized(file, size)
}

/// Parses a history held in memory.
pub fn parse(text: &str) -> Result<History, ParseError> {
    // The run: the first line that is not blank.
    let mut lines = numbered_lines(text, 1);
    let Some((first_no, first)) = lines.next() else {
        return Err(error(
            1,
            None,
            "the first line must be the run (the file is empty)",
        ));
    };
    if first.len() > MAX_LINE {
        return Err(too_long(first_no));
    }
    let run = parse_run(first_no, first)?;
    let rest_at = lines.next_start();
    let rest = &text[rest_at..];

    // Share the rest out among the cores, each share whole lines in the file's order. A share
    // numbers its lines from 1; its first line's number is added once the shares before it
    // have said how many lines they held, so no pass over the file runs before the parse.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let shares = split_at_lines(rest, if rest.len() < 1 << 20 { 1 } else { threads });
    let parts: Vec<(Result<Part, ParseError>, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| scope.spawn(move || parse_share(share)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a parsing thread does not panic"))
            .collect()
    });

    let mut history = History::new(run);
    let mut end: Option<(usize, End)> = None;
    // The lines before a share: the run's line and any before it, then the shares before.
    let mut before = first_no;
    for (part, held) in parts {
        let offset = before;
        before += held;
        let part = part.map_err(|mut e| {
            e.line += offset;
            e
        })?;
        if let Some((no, _)) = &end {
            if let Some(first) = part.first_line {
                return Err(after_end((first + offset).max(*no + 1)));
            }
        }
        history.requests.extend(part.requests);
        history.sections.extend(part.sections);
        history.leases.extend(part.leases);
        history.faults.extend(part.faults);
        history.cuts.extend(part.cuts);
        if let Some((no, e)) = part.end {
            end = Some((no + offset, e));
        }
    }
    history.end = end.map(|(_, e)| e);
    Ok(history)
}

fn after_end(line: usize) -> ParseError {
    error(
        line,
        None,
        "a line after the end (the end must be the last line)",
    )
}

/// What one share of the lines held.
#[derive(Default)]
struct Part {
    first_line: Option<usize>,
    requests: Vec<Request>,
    sections: Vec<Section>,
    leases: Vec<Lease>,
    faults: Vec<Fault>,
    cuts: Vec<Cut>,
    end: Option<(usize, End)>,
}

/// One share's lines parsed, numbered from 1; and how many lines (blank ones too) it held,
/// which is known once they are all read (after an error it is not needed).
fn parse_share(share: &str) -> (Result<Part, ParseError>, usize) {
    let mut lines = numbered_lines(share, 1);
    let part = parse_lines(&mut lines);
    (part, lines.next_number() - 1)
}

fn parse_lines(lines: &mut NumberedLines<'_>) -> Result<Part, ParseError> {
    let mut part = Part::default();
    for (no, line) in lines {
        part.first_line.get_or_insert(no);
        if line.len() > MAX_LINE {
            return Err(too_long(no));
        }
        if part.end.is_some() {
            return Err(after_end(no));
        }
        let kind = fast_type(line);
        let ok = match kind {
            Some("request") => fast(line).map(|r| part.push(Typed::Request(r))),
            Some("section") => fast(line).map(|s| part.push(Typed::Section(s))),
            Some("lease") => fast(line).map(|l| part.push(Typed::Lease(l))),
            Some("fault") => fast(line).map(|f| part.push(Typed::Fault(f))),
            Some("cut") => fast(line).map(|c| part.push(Typed::Cut(c))),
            Some("end") => fast(line).map(|e| part.push(Typed::End(no, e))),
            _ => None,
        };
        let landed = match ok {
            Some(landed) => landed,
            None => slow_line(no, line, &mut part)?,
        };
        part.check(landed, no)?;
    }
    Ok(part)
}

/// Which list a line went into, so the line can be checked where it landed.
#[derive(Clone, Copy)]
enum Landed {
    Request,
    Section,
    Lease,
    Fault,
    Other,
}

enum Typed {
    Request(Request),
    Section(Section),
    Lease(Lease),
    Fault(Fault),
    Cut(Cut),
    End(usize, End),
}

impl Part {
    /// The line that landed in `landed`, checked where it is (the last of its list).
    fn check(&self, landed: Landed, no: usize) -> Result<(), ParseError> {
        match landed {
            Landed::Request => self
                .requests
                .last()
                .map_or(Ok(()), |r| validate::request(no, r)),
            Landed::Section => self
                .sections
                .last()
                .map_or(Ok(()), |s| validate::section(no, s)),
            Landed::Lease => self
                .leases
                .last()
                .map_or(Ok(()), |l| validate::lease(no, l)),
            Landed::Fault => self
                .faults
                .last()
                .map_or(Ok(()), |f| validate::fault(no, f)),
            Landed::Other => Ok(()),
        }
    }

    fn push(&mut self, line: Typed) -> Landed {
        match line {
            Typed::Request(r) => {
                self.requests.push(r);
                Landed::Request
            }
            Typed::Section(s) => {
                self.sections.push(s);
                Landed::Section
            }
            Typed::Lease(l) => {
                self.leases.push(l);
                Landed::Lease
            }
            Typed::Fault(f) => {
                self.faults.push(f);
                Landed::Fault
            }
            Typed::Cut(c) => {
                self.cuts.push(c);
                Landed::Other
            }
            Typed::End(no, e) => {
                self.end = Some((no, e));
                Landed::Other
            }
        }
    }
}

/// The type of a line written the recorder's way (`{"type":"section",…`), without parsing it.
fn fast_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"type\":\"")?;
    rest.find('"').map(|end| &rest[..end])
}

fn fast<T: DeserializeOwned>(line: &str) -> Option<T> {
    serde_json::from_str(line).ok()
}

/// A line the fast way could not take: read as JSON, its type found wherever it is, and, if
/// it is wrong, said why.
fn slow_line(no: usize, line: &str, part: &mut Part) -> Result<Landed, ParseError> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        error(
            no,
            None,
            format!("not JSON: {}", strip_position(&e.to_string())),
        )
    })?;
    let kind = type_of(no, &value)?;
    let line = match kind.as_str() {
        "request" => Typed::Request(typed(no, "request", line)?),
        "section" => Typed::Section(typed(no, "section", line)?),
        "lease" => Typed::Lease(typed(no, "lease", line)?),
        "fault" => Typed::Fault(typed(no, "fault", line)?),
        "cut" => Typed::Cut(typed(no, "cut", line)?),
        "end" => Typed::End(no, typed(no, "end", line)?),
        "run" => {
            return Err(error(
                no,
                None,
                "a second run line (the run is the first line only)",
            ))
        }
        other => return Err(error(no, None, format!("unknown type {:?}", clip(other)))),
    };
    Ok(part.push(line))
}

/// A value from the file as the error may echo it: its first 40 characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn type_of(no: usize, value: &Value) -> Result<String, ParseError> {
    let Some(object) = value.as_object() else {
        return Err(error(no, None, "expected a JSON object"));
    };
    match object.get("type") {
        None => Err(error(no, Some("type".into()), "missing")),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(error(
            no,
            Some("type".into()),
            format!("expected a string, found {}", describe(other)),
        )),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {:?}", clip(s)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn parse_run(no: usize, line: &str) -> Result<Run, ParseError> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        error(
            no,
            None,
            format!(
                "the first line must be the run (not JSON: {})",
                strip_position(&e.to_string())
            ),
        )
    })?;
    let is_run = value.get("type").and_then(Value::as_str) == Some("run");
    if !is_run {
        return Err(error(no, None, "the first line must be the run"));
    }
    match value.get("v") {
        None => {
            return Err(error(
                no,
                Some("run.v".into()),
                "missing (the format's version)",
            ))
        }
        Some(v) if !READS.iter().any(|&r| v.as_u64() == Some(u64::from(r))) => {
            return Err(error(
                no,
                None,
                format!("version {v} is not supported (this checker reads v1 and v{VERSION})"),
            ))
        }
        Some(_) => {}
    }
    let run = typed(no, "run", line)?;
    validate::run(no, &run)?;
    Ok(run)
}

/// Deserializes `line` as a `kind`, naming the field to blame when it does not fit.
fn typed<T: DeserializeOwned>(no: usize, kind: &str, line: &str) -> Result<T, ParseError> {
    let mut de = serde_json::Deserializer::from_str(line);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = strip_position(&e.inner().to_string());
        let mut field = if path == "." {
            kind.to_string()
        } else {
            format!("{kind}.{path}")
        };
        let message = if let Some(missing) = inner
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            field = format!("{field}.{missing}");
            "missing".to_string()
        } else {
            in_words(&inner)
        };
        error(no, Some(field), message)
    })
}

/// serde's message with its position (`at line 1 column 40`) taken off: the line is ours.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// serde's words (`invalid type: string "x", expected i64`) in ours (`expected an integer,
/// found the string "x"`).
fn in_words(message: &str) -> String {
    let expected = |exp: &str| -> String {
        match exp.trim() {
            "i64" | "i32" => "an integer".into(),
            "u64" | "u32" | "u16" | "u8" => "a non-negative integer".into(),
            "a string" => "a string".into(),
            "a sequence" => "an array".into(),
            other if other.starts_with("struct ") => "an object".into(),
            other => other.replace('`', "").to_string(),
        }
    };
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((found, exp)) = rest.rsplit_once(", expected ") {
                let found = clip(&found.replace('`', ""));
                return format!("expected {}, found {found}", expected(exp));
            }
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((value, exp)) = rest.split_once("`, expected ") {
            return format!(
                "unknown value {:?} (expected {})",
                clip(value),
                exp.replace('`', "")
            );
        }
    }
    message.to_string()
}
