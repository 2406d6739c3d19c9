//! A history's text as numbered lines, and cut into shares at line breaks: what the parser
//! walks, a share a thread. Line breaks are found with memchr, many bytes a step.

/// `text` cut into at most `n` pieces of about equal length, each ending after a line break
/// (the last at the text's end).
pub(super) fn split_at_lines(text: &str, n: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(n);
    let mut from = 0;
    for k in 1..n {
        let aim = (text.len() * k / n).max(from);
        let Some(at) = memchr::memchr(b'\n', &text.as_bytes()[aim..]) else {
            break;
        };
        let to = aim + at + 1;
        pieces.push(&text[from..to]);
        from = to;
    }
    pieces.push(&text[from..]);
    pieces
}

/// The lines of `text` that are not blank, numbered from `first`, a `\r` before the break
/// taken off.
pub(super) fn numbered_lines(text: &str, first: usize) -> NumberedLines<'_> {
    NumberedLines {
        text,
        at: 0,
        no: first,
    }
}

pub(super) struct NumberedLines<'a> {
    text: &'a str,
    /// Where the next line starts.
    at: usize,
    /// The next line's number.
    no: usize,
}

impl NumberedLines<'_> {
    /// Where the line after the last one given starts.
    pub(super) fn next_start(&self) -> usize {
        self.at
    }

    /// The number the next line would have: once all are read, one more than the lines held.
    pub(super) fn next_number(&self) -> usize {
        self.no
    }
}

impl<'a> Iterator for NumberedLines<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<(usize, &'a str)> {
        while self.at < self.text.len() {
            let rest = &self.text[self.at..];
            let (line, len) = match memchr::memchr(b'\n', rest.as_bytes()) {
                Some(i) => (&rest[..i], i + 1),
                None => (rest, rest.len()),
            };
            let no = self.no;
            self.at += len;
            self.no += 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            if !line.trim().is_empty() {
                return Some((no, line));
            }
        }
        None
    }
}
