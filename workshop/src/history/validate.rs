//! What a line must say beyond its JSON shape to be a history: no interval that ends before it
//! begins, no negative initial stock. A line breaking one is refused with its number, as a bad
//! field is: the checker cannot order operations whose times contradict themselves, and
//! guessing which end is wrong would be a verdict on a history nobody recorded.

use super::parse_error::ParseError;
use oversell_api::history::{Fault, Lease, Request, Run, Section};

fn backwards(no: usize, field: &str, end: i64, start_field: &str, start: i64) -> ParseError {
    ParseError {
        line: no,
        field: Some(field.into()),
        message: format!(
            "{end} is before {start_field} {start} (an interval that ends before it begins)"
        ),
    }
}

fn ordered(
    no: usize,
    (start_field, start): (&str, i64),
    (end_field, end): (&str, Option<i64>),
) -> Result<(), ParseError> {
    match end {
        Some(end) if end < start => Err(backwards(no, end_field, end, start_field, start)),
        _ => Ok(()),
    }
}

pub fn run(no: usize, r: &Run) -> Result<(), ParseError> {
    if r.stock < 0 {
        return Err(ParseError {
            line: no,
            field: Some("run.stock".into()),
            message: format!(
                "{} is negative (the stock before the first request)",
                r.stock
            ),
        });
    }
    Ok(())
}

pub fn request(no: usize, r: &Request) -> Result<(), ParseError> {
    ordered(
        no,
        ("call_us", r.call_us),
        ("request.return_us", Some(r.return_us)),
    )
}

pub fn section(no: usize, s: &Section) -> Result<(), ParseError> {
    ordered(no, ("enter_us", s.enter_us), ("section.exit_us", s.exit_us))
}

pub fn lease(no: usize, l: &Lease) -> Result<(), ParseError> {
    let start = ("granted_us", l.granted_us);
    ordered(no, start, ("lease.deadline_us", l.deadline_us))?;
    ordered(no, start, ("lease.released_us", l.released_us))?;
    for (i, r) in l.renewals.iter().enumerate() {
        ordered(
            no,
            start,
            (&format!("lease.renewals[{i}].renew_us"), Some(r.renew_us)),
        )?;
        ordered(
            no,
            ("renew_us", r.renew_us),
            (
                &format!("lease.renewals[{i}].deadline_us"),
                Some(r.deadline_us),
            ),
        )?;
    }
    Ok(())
}

pub fn fault(no: usize, f: &Fault) -> Result<(), ParseError> {
    ordered(no, ("from_us", f.from_us), ("fault.to_us", f.to_us))
}
