//! What is not a history is refused with its line number: an interval that ends before it
//! begins, a line over the bound.

use super::build::{history, lease, request, sold};
use crate::history::parse::{parse, read, MAX_LINE};
use oversell_api::history::Fault;

fn error_of(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn an_interval_that_ends_before_it_begins_is_not_a_history() {
    let mut h = history(1, "lua-release");
    h.requests.push(request("b0", 100, 40, 200, Some(0)));
    assert_eq!(
        error_of(&h.to_jsonl()),
        "line 2: request.return_us: 40 is before call_us 100 (an interval that ends before it begins)"
    );

    let mut h = history(1, "lua-release");
    h.requests.push(request("b0", 0, 90, 200, Some(0)));
    h.sections.push(sold("b0", 50, 20, 1));
    assert!(
        error_of(&h.to_jsonl()).starts_with("line 3: section.exit_us: 20 is before enter_us 50"),
        "{}",
        error_of(&h.to_jsonl())
    );

    let mut h = history(1, "lua-release");
    h.leases.push(lease("a", 50, 10, None));
    assert!(error_of(&h.to_jsonl()).starts_with("line 2: lease.deadline_us: 10 is before"));
    let mut h = history(1, "lua-release");
    h.leases.push(lease("a", 50, 100, Some(49)));
    assert!(error_of(&h.to_jsonl()).starts_with("line 2: lease.released_us: 49 is before"));

    let mut h = history(1, "lua-release");
    h.faults.push(Fault {
        kind: "freeze".into(),
        target: "app1".into(),
        from_us: 10,
        to_us: Some(9),
    });
    assert!(error_of(&h.to_jsonl()).starts_with("line 2: fault.to_us: 9 is before from_us 10"));

    // The slow path (a line not written the recorder's way) is held to the same rule.
    let mut h = history(1, "lua-release");
    h.requests.push(request("b0", 100, 40, 200, Some(0)));
    let text = h.to_jsonl().replacen(
        "{\"type\":\"request\",",
        "{\"buyer\":\"b0\",\"type\":\"request\",",
        1,
    );
    let text = text.replacen(",\"buyer\":\"b0\",", ",", 1);
    assert!(
        error_of(&text).starts_with("line 2: request.return_us"),
        "{}",
        error_of(&text)
    );

    // Equal ends are an instant, not backwards.
    let mut h = history(1, "lua-release");
    h.requests.push(request("b0", 100, 100, 200, Some(0)));
    assert!(parse(&h.to_jsonl()).is_ok());
}

#[test]
fn a_negative_initial_stock_is_not_a_history() {
    let h = history(-1, "lua-release");
    assert!(error_of(&h.to_jsonl()).starts_with("line 1: run.stock: -1 is negative"));
}

#[test]
fn a_line_over_the_bound_is_refused_by_its_number_unread_and_unechoed() {
    let h = super::build::sales(2, 2);
    let mut text = h.to_jsonl();
    let huge = format!(
        "{{\"type\":\"request\",\"buyer\":\"{}\"}}\n",
        "x".repeat(MAX_LINE + 10)
    );
    // After line 3 of the good history.
    let at = text.match_indices('\n').nth(2).unwrap().0 + 1;
    text.insert_str(at, &huge);

    let message = error_of(&text);
    assert!(
        message.starts_with("line 4: longer than 1048576 bytes"),
        "{message}"
    );
    assert!(
        message.len() < 200,
        "the line is not echoed: {} bytes",
        message.len()
    );

    // Read from a stream, the reading stops at the bound: what follows is never read.
    struct Counting<'a> {
        data: &'a [u8],
        read: usize,
    }
    impl std::io::Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.data.len() - self.read);
            buf[..n].copy_from_slice(&self.data[self.read..self.read + n]);
            self.read += n;
            Ok(n)
        }
    }
    let mut long = text.into_bytes();
    long.extend(std::iter::repeat_n(b'y', 8 * MAX_LINE));
    let mut reader = Counting {
        data: &long,
        read: 0,
    };
    let err = read(&mut reader).unwrap_err();
    assert_eq!(err.line, 4);
    assert!(
        reader.read < 2 * MAX_LINE,
        "read {} of {} bytes",
        reader.read,
        long.len()
    );
}

/// A history of megabytes is parsed in shares, a thread each, cut at line breaks: each share
/// counts its lines from one, and a bad line is still named by its number in the file.
#[test]
fn a_history_parsed_in_shares_names_a_bad_line_by_its_number_in_the_file() {
    let h = super::build::sales(20_000, 20_000);
    let good = h.to_jsonl();
    assert!(
        good.len() > 4 << 20,
        "{} bytes: more than one share",
        good.len()
    );
    // Blank lines and a \r\n on the way count as lines, as an editor numbers them.
    let mut lines: Vec<String> = good.lines().map(str::to_owned).collect();
    lines.insert(5, String::new());
    lines[7].push('\r');
    assert_eq!(parse(&(lines.join("\n") + "\n")).unwrap(), h);

    // A bad line near the end: in the last share whatever the cores.
    let bad = lines.len() - 3;
    lines[bad] = "{\"type\":\"request\",\"buyer\":7}".into();
    let message = error_of(&(lines.join("\n") + "\n"));
    assert!(
        message.starts_with(&format!("line {}: request.buyer", bad + 1)),
        "{message}"
    );

    // An end line early, and every line after it: refused at the first of them.
    let mut lines: Vec<String> = good.lines().map(str::to_owned).collect();
    lines.insert(2, "{\"type\":\"end\",\"at_us\":1,\"stock\":0}".into());
    let message = error_of(&(lines.join("\n") + "\n"));
    assert!(
        message.starts_with("line 4: a line after the end"),
        "{message}"
    );
}
