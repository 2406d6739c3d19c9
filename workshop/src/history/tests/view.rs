//! The viewer's file: `loadtest check --html` writes one page that needs nothing else, holding
//! every operation of the run and the stores' state before and after each, as the walk saw
//! them; `--beside` adds a second run without touching the exit status.

use std::path::PathBuf;

use serde_json::Value;

use super::build::sales;
use crate::history::command::{run, CheckArgs, Exit};
use crate::history::view::walk::{states, Span};
use crate::history::{parse, Lang};

const SLOW: &str = include_str!("../../../tests/histories/lua-release-slow-business.jsonl");
const FENCED: &str = include_str!("../../../tests/histories/clean-fenced.jsonl");

fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oversell-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `loadtest check FILE --html OUT [--beside F2]`: the exit code and the page written.
fn check_html(text: &str, beside: Option<&str>, name: &str) -> (u8, String) {
    let dir = dir();
    let file = dir.join(format!("{name}.jsonl"));
    std::fs::write(&file, text).unwrap();
    let beside = beside.map(|b| {
        let path = dir.join(format!("{name}-beside.jsonl"));
        std::fs::write(&path, b).unwrap();
        path
    });
    let out = dir.join(format!("{name}.html"));
    let args = CheckArgs {
        file,
        json: false,
        svg: None,
        html: Some(out.clone()),
        beside,
        lang: Lang::En,
    };
    let code = match run(args) {
        Ok(_) => 0,
        Err(e) => e.downcast_ref::<Exit>().expect("an exit of its own").code,
    };
    (code, std::fs::read_to_string(out).unwrap_or_default())
}

/// The JSON the page carries for its script.
fn data_of(html: &str) -> Value {
    let open = r#"<script type="application/json" id="viewer-data">"#;
    let start = html.find(open).expect("a data block") + open.len();
    let len = html[start..].find("</script>").expect("the block ends");
    serde_json::from_str(&html[start..start + len]).expect("the block is JSON")
}

fn op<'v>(run: &'v Value, id: &str) -> &'v Value {
    run["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no op {id}"))
}

#[test]
fn the_page_carries_every_operation_of_the_history_and_needs_no_network() {
    let (code, html) = check_html(SLOW, None, "slow");
    assert_eq!(code, 1, "the slow-business run is violated");
    // Everything inline: no file or address to fetch.
    for outside in ["src=", "href=", "http://", "https://", "@import"] {
        let inline = html.replace("http://www.w3.org/2000/svg", "");
        assert!(!inline.contains(outside), "the page reaches out: {outside}");
    }
    assert!(html.contains(
        include_str!("../../../../static/viewer.js")
            .lines()
            .nth(1)
            .unwrap()
    ));
    let data = data_of(&html);
    let view = &data["runs"][0];
    let history = parse(SLOW).unwrap();
    let ops = view["ops"].as_array().unwrap();
    let total = history.requests.len()
        + history.sections.len()
        + history.leases.len()
        + history.faults.len();
    assert_eq!(ops.len(), total);
    for (i, r) in history.requests.iter().enumerate() {
        let line = &op(view, &format!("r{i}"))["line"];
        assert_eq!(line["buyer"], r.buyer.as_str());
        assert_eq!(line["call_us"], r.call_us);
        assert_eq!(line["status"], r.status);
    }
    for (i, s) in history.sections.iter().enumerate() {
        let line = &op(view, &format!("s{i}"))["line"];
        assert_eq!(line["owner"], s.owner.as_str());
        assert_eq!(line["enter_us"], s.enter_us);
    }
    for (i, l) in history.leases.iter().enumerate() {
        assert_eq!(
            op(view, &format!("l{i}"))["line"]["owner"],
            l.owner.as_str()
        );
    }
}

#[test]
fn each_operation_carries_the_stores_state_before_and_after_it() {
    let (_, html) = check_html(SLOW, None, "states");
    let view = &data_of(&html)["runs"][0];
    // B (app2:1) comes in while A (app1:1) still works: the store says B holds, A believes it
    // does; both write 4 over the 5 they read.
    let b = op(view, "s1");
    assert_eq!(b["before"]["holders"], serde_json::json!(["app2:1"]));
    assert_eq!(b["before"]["believers"], serde_json::json!(["app1:1"]));
    assert_eq!(b["before"]["stock"], 5);
    assert_eq!(b["after"]["stock"], 4);
    assert_eq!(b["after"]["holders"], serde_json::json!([]));
    // The first violation is that pair, named by the ids the page draws.
    let first = view["first_violation"].as_u64().expect("a first violation") as usize;
    let finding = &view["findings"][first];
    assert_eq!(finding["class"], "violation");
    assert_eq!(finding["ops"], serde_json::json!(["s0", "s1"]));
    assert_eq!(view["exit_code"], 1);
}

#[test]
fn the_highest_fence_rises_as_each_holder_reads() {
    let history = parse(FENCED).unwrap();
    let spans: Vec<Span> = history
        .sections
        .iter()
        .map(|s| Span {
            from_us: s.enter_us,
            to_us: s.exit_us,
        })
        .collect();
    let walked = states(&history, &spans);
    let fences: Vec<_> = walked.iter().map(|(b, a)| (b.fence, a.fence)).collect();
    assert_eq!(
        fences,
        [
            (None, Some(1)),
            (Some(1), Some(2)),
            (Some(2), Some(3)),
            (Some(3), Some(3))
        ]
    );
    let stock: Vec<_> = walked.iter().map(|(b, a)| (b.stock, a.stock)).collect();
    assert_eq!(stock, [(3, 2), (2, 1), (1, 0), (0, 0)]);
}

#[test]
fn a_second_run_beside_never_changes_the_exit_status() {
    let (code, html) = check_html(FENCED, Some(SLOW), "fenced-beside");
    assert_eq!(code, 0, "the fenced run holds, whatever runs beside it");
    let data = data_of(&html);
    assert_eq!(data["runs"].as_array().unwrap().len(), 2);
    assert_eq!(data["runs"][1]["exit_code"], 1);
    let (code, _) = check_html(SLOW, Some(FENCED), "slow-beside");
    assert_eq!(code, 1);
    let (code, _) = check_html(FENCED, Some("not a history"), "bad-beside");
    assert_eq!(
        code, 2,
        "a second file that is not a history is said as such"
    );
}

#[test]
fn a_name_that_would_end_the_data_block_stays_inside_it() {
    let mut history = sales(2, 2);
    history.requests[0].buyer = "</script><script>alert(1)</script>".into();
    let (_, html) = check_html(&history.to_jsonl(), None, "escape");
    assert!(!html.contains("<script>alert"));
    assert_eq!(
        data_of(&html)["runs"][0]["ops"][0]["line"]["buyer"],
        "</script><script>alert(1)</script>"
    );
}

#[test]
fn a_run_too_long_to_draw_keeps_the_window_around_its_first_violation() {
    use crate::history::check;
    use crate::history::view::View;
    let history = parse(SLOW).unwrap();
    let report = check(&history);
    let all = View::of(&history, &report);
    // Five operations run across the first violation's moment; two of them are the pair it
    // names, kept first.
    for max in [2, 4] {
        let window = View::at_most(&history, &report, max);
        assert_eq!(window.total_ops, all.ops.len());
        assert_eq!(window.ops.len(), max);
        for id in ["s0", "s1"] {
            assert!(window.ops.iter().any(|o| o.id == id), "{id} in {max}");
        }
    }
    let window = View::at_most(&history, &report, 6);
    // The overlap's two sections are inside the window, with the states the whole walk gave.
    for id in ["s0", "s1"] {
        let kept = window.ops.iter().find(|o| o.id == id).expect(id);
        let whole = all.ops.iter().find(|o| o.id == id).unwrap();
        assert_eq!((&kept.before, &kept.after), (&whole.before, &whole.after));
    }
    assert!(
        window.ops.iter().all(|o| o.id != "r2"),
        "b3's call, long after, is left out"
    );
}
