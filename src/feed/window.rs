//! What a dashboard draws of the lock timeline, and nothing more: the newest critical sections
//! (enter → exit, one bar each) and the marks among them (foreign and lost releases, stale
//! writes refused, lock-free deducts).
//!
//! The page draws the last 20, 50, 100 or 200 sections ([`DRAW_SIZES`]), whatever the sale
//! rate. So the room's feed pairs the timeline's entries into sections here, once per room
//! per instance, keeps the newest [`MAX_DRAWN`], and renders the window each size shows when
//! it changed. A stream sends its page's window whole: a page that missed one (it joined late,
//! reconnected, or its stream skipped one to stay within its byte budget, see `stream`) is
//! whole again with the next, and at 2,000 sales a second a viewer receives what it draws,
//! not 4,000 entries it would throw away.
//!
//! In the JSON, times are microseconds after `base_us`, instances indexes into `instances`,
//! owners shortened to `<first 4 hex of the process id>:<sale number>`, and a row's trailing
//! empty values left out (see [`Window::render`]).

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::{json, Value};

use super::tally::TimelineEntry;

/// The window sizes the page offers; a stream asks for one (`/events?draw=`).
pub const DRAW_SIZES: [usize; 4] = [20, 50, 100, 200];
/// The page's default.
pub const DEFAULT_DRAW: usize = 100;
/// The most sections kept: the largest window.
pub const MAX_DRAWN: usize = 200;

/// One critical section as drawn: times in µs of Redis' clock.
#[derive(Debug, Clone)]
struct Section {
    owner: String,
    instance: String,
    enter: i64,
    exit: Option<i64>,
    outcome: Option<String>,
    stock: Option<i64>,
    overlaps: i64,
    fence: String,
    renews: Vec<i64>,
    /// How long the instance had been serving the sale when it wrote (µs), waiting for the
    /// lock included: what the buyer waited, bar the write's own round trip.
    took: Option<i64>,
}

/// One mark on the timeline.
#[derive(Debug, Clone)]
struct Point {
    kind: String,
    instance: String,
    at: i64,
    owner: String,
    /// The victim of a foreign release, the fence of a stale write, the stock of a deduct,
    /// a fault's kind and length in ms.
    detail: String,
}

/// The newest sections and marks of one room, as the page draws them.
#[derive(Debug, Default)]
pub struct Window {
    /// (enter, owner) → section: oldest first.
    sections: BTreeMap<(i64, String), Section>,
    /// owner → its key in `sections`, for the exit or renewal that comes later.
    by_owner: HashMap<String, (i64, String)>,
    points: VecDeque<Point>,
}

impl Window {
    pub fn clear(&mut self) {
        *self = Window::default();
    }

    /// Adds timeline entries (oldest first) and drops what no window draws any more.
    pub fn add(&mut self, entries: &[TimelineEntry]) {
        for entry in entries {
            let field = |name: &str| entry.fields.get(name).map_or("", String::as_str);
            let Ok(at) = field("at_us").parse::<i64>() else {
                continue;
            };
            let owner = short_owner(field("owner"));
            match field("kind") {
                "enter" => {
                    let key = (at, owner.clone());
                    self.by_owner.insert(owner.clone(), key.clone());
                    self.sections.insert(
                        key,
                        Section {
                            owner,
                            instance: field("instance").to_owned(),
                            enter: at,
                            exit: None,
                            outcome: None,
                            stock: field("stock").parse().ok(),
                            overlaps: 0,
                            fence: field("fence").to_owned(),
                            renews: Vec::new(),
                            took: None,
                        },
                    );
                }
                "exit" | "renew" => {
                    let Some(section) = self
                        .by_owner
                        .get(&owner)
                        .and_then(|key| self.sections.get_mut(key))
                    else {
                        continue;
                    };
                    if field("kind") == "renew" {
                        section.renews.push(at);
                    } else {
                        section.exit = Some(at);
                        section.outcome = Some(field("outcome").to_owned());
                        section.overlaps = field("overlaps").parse().unwrap_or(0);
                        section.took = field("took_us").parse().ok();
                    }
                }
                kind @ ("foreign_release" | "lost_release" | "stale" | "deduct" | "store_fault"
                | "partition" | "heal" | "fault") => {
                    let detail = match kind {
                        "foreign_release" => short_owner(field("victim")),
                        "stale" => field("fence").to_owned(),
                        "deduct" => field("stock").to_owned(),
                        // A lock-store fault or a network cut: what it struck, for the tooltip.
                        "store_fault" => format!("{}: {}", field("fault"), field("node")),
                        "partition" => format!("{} ({} ms)", field("isolate"), field("ms")),
                        // A fault as it struck a holder: its kind and how long it lasts (the
                        // armed value is `<target>|<ms>|<nodes>`), for a band on the lane.
                        "fault" => {
                            let ms = field("armed").split('|').nth(1).unwrap_or("0");
                            format!("{} {ms}", field("fault"))
                        }
                        _ => String::new(),
                    };
                    self.points.push_back(Point {
                        kind: kind.to_owned(),
                        instance: field("instance").to_owned(),
                        at,
                        owner,
                        detail,
                    });
                }
                _ => {}
            }
        }
        while self.sections.len() > MAX_DRAWN {
            if let Some((_, gone)) = self.sections.pop_first() {
                self.by_owner.remove(&gone.owner);
            }
        }
        // Marks older than every kept section are drawn by no window; without sections (the
        // lock-free tier) the newest MAX_DRAWN marks are the window.
        let oldest = self.sections.keys().next().map(|(enter, _)| *enter);
        while self.points.len() > MAX_DRAWN
            || (oldest.is_some() && self.points.front().is_some_and(|p| Some(p.at) < oldest))
        {
            self.points.pop_front();
        }
    }

    /// The window of the newest `draw` sections, and the marks between its first enter and
    /// now; without sections, the newest `draw` marks. JSON:
    /// `{"base_us", "instances", "sections": [[owner, instance, enter, exit, took, outcome,
    /// stock, overlaps, fence, [renews]]], "points": [[kind, instance, at, owner, detail]]}`
    /// (`took`: ms, to a tenth, from the sale's start on its instance to its write; beside the
    /// exit, which every section that has one also has, so it never forces fillers in).
    pub fn render(&self, draw: usize) -> String {
        let sections: Vec<&Section> = self.sections.values().rev().take(draw).rev().collect();
        let points: Vec<&Point> = match sections.first() {
            Some(first) => self.points.iter().filter(|p| p.at >= first.enter).collect(),
            None => {
                let skip = self.points.len().saturating_sub(draw);
                self.points.iter().skip(skip).collect()
            }
        };
        let base = sections
            .first()
            .map(|s| s.enter)
            .into_iter()
            .chain(points.first().map(|p| p.at))
            .min()
            .unwrap_or(0);
        let mut instances: Vec<String> = Vec::new();
        let mut index = |name: &str| -> usize {
            match instances.iter().position(|n| n == name) {
                Some(i) => i,
                None => {
                    instances.push(name.to_owned());
                    instances.len() - 1
                }
            }
        };
        let rows: Vec<Value> = sections
            .iter()
            .map(|s| {
                trimmed(vec![
                    json!(s.owner),
                    json!(index(&s.instance)),
                    json!(s.enter - base),
                    json!(s.exit.map(|x| x - base)),
                    json!(s.took.map(|us| (us / 100) as f64 / 10.0)),
                    json!(s.outcome),
                    json!(s.stock),
                    json!(s.overlaps),
                    json!(s.fence),
                    json!(s.renews.iter().map(|r| r - base).collect::<Vec<_>>()),
                ])
            })
            .collect();
        let marks: Vec<Value> = points
            .iter()
            .map(|p| {
                trimmed(vec![
                    json!(p.kind),
                    json!(index(&p.instance)),
                    json!(p.at - base),
                    json!(p.owner),
                    json!(p.detail),
                ])
            })
            .collect();
        json!({
            "base_us": base,
            "instances": instances,
            "sections": rows,
            "points": marks,
        })
        .to_string()
    }
}

/// `4142a439…:17` → `4142:17`: unique enough within one window, a tenth of the bytes.
fn short_owner(owner: &str) -> String {
    match owner.rsplit_once(':') {
        Some((process, seq)) => format!("{}:{seq}", process.get(..4).unwrap_or(process)),
        None => owner.to_owned(),
    }
}

/// The row without its trailing empty values (null, 0, "", []): the page reads those as absent.
fn trimmed(mut row: Vec<Value>) -> Value {
    while row.last().is_some_and(|v| match v {
        Value::Null => true,
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }) {
        row.pop();
    }
    Value::Array(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, fields: &[(&str, &str)]) -> TimelineEntry {
        TimelineEntry {
            id: id.into(),
            fields: fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    fn sale(n: i64, instance: &str) -> [TimelineEntry; 2] {
        let owner = format!("abcdef0123:{n}");
        let (enter, exit) = ((n * 10).to_string(), (n * 10 + 5).to_string());
        [
            entry(
                "0-0",
                &[
                    ("kind", "enter"),
                    ("at_us", &enter),
                    ("owner", &owner),
                    ("instance", instance),
                    ("stock", "9"),
                ],
            ),
            entry(
                "0-1",
                &[
                    ("kind", "exit"),
                    ("at_us", &exit),
                    ("owner", &owner),
                    ("instance", instance),
                    ("outcome", "sold"),
                    ("overlaps", "0"),
                ],
            ),
        ]
    }

    #[test]
    fn a_window_holds_the_newest_sections_however_many_happened() {
        let mut window = Window::default();
        for n in 1..=1_000 {
            window.add(&sale(n, if n % 2 == 0 { "app1" } else { "app2" }));
        }
        let drawn: Value = serde_json::from_str(&window.render(100)).unwrap();
        let sections = drawn["sections"].as_array().unwrap();
        assert_eq!(sections.len(), 100);
        assert_eq!(drawn["base_us"], 9_010, "the 901st sale enters first");
        assert_eq!(sections[0], json!(["abcd:901", 0, 0, 5, null, "sold", 9]));
        assert_eq!(sections[99][0], "abcd:1000");
        assert_eq!(window.sections.len(), MAX_DRAWN);
    }

    #[test]
    fn an_exit_in_a_later_batch_closes_its_section() {
        let mut window = Window::default();
        let [enter, exit] = sale(1, "app1");
        window.add(&[enter]);
        let open: Value = serde_json::from_str(&window.render(20)).unwrap();
        assert_eq!(
            open["sections"][0],
            json!(["abcd:1", 0, 0, null, null, null, 9])
        );
        window.add(&[exit]);
        let closed: Value = serde_json::from_str(&window.render(20)).unwrap();
        assert_eq!(
            closed["sections"][0],
            json!(["abcd:1", 0, 0, 5, null, "sold", 9])
        );
    }

    #[test]
    fn a_section_carries_how_long_its_sale_took_to_its_write() {
        let mut window = Window::default();
        let [enter, mut exit] = sale(1, "app1");
        exit.fields.insert("took_us".into(), "1234".into());
        window.add(&[enter, exit]);
        let drawn: Value = serde_json::from_str(&window.render(20)).unwrap();
        assert_eq!(
            drawn["sections"][0],
            json!(["abcd:1", 0, 0, 5, 1.2, "sold", 9])
        );
    }

    #[test]
    fn marks_are_kept_while_a_window_can_draw_them() {
        let mut window = Window::default();
        window.add(&[entry(
            "0-0",
            &[
                ("kind", "deduct"),
                ("at_us", "3"),
                ("instance", "app1"),
                ("stock", "7"),
            ],
        )]);
        let drawn: Value = serde_json::from_str(&window.render(20)).unwrap();
        assert_eq!(drawn["points"], json!([["deduct", 0, 0, "", "7"]]));
        // Sections after it: the mark is older than every section kept, and goes.
        for n in 1..=3 {
            window.add(&sale(n, "app1"));
        }
        assert!(window.points.is_empty());
    }
}
