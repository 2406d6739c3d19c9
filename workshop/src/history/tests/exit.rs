//! `loadtest check`'s exit codes, through the command itself on files.

use std::path::PathBuf;

use super::build::sales;
use crate::history::command::{run, CheckArgs, Exit};
use crate::history::Lang;

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oversell-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn code(path: PathBuf, svg: Option<PathBuf>) -> u8 {
    let args = CheckArgs {
        file: path,
        json: false,
        svg,
        html: None,
        beside: None,
        lang: Lang::En,
    };
    match run(args) {
        Ok(_) => 0,
        Err(e) => e.downcast_ref::<Exit>().expect("an exit of its own").code,
    }
}

#[test]
fn the_exit_codes_say_holds_violated_not_a_history_unknown_and_not_written() {
    assert_eq!(code(file("good.jsonl", &sales(2, 2).to_jsonl()), None), 0);

    let fenced = super::exclusion::fenced_as_designed().to_jsonl();
    assert_eq!(code(file("fenced.jsonl", &fenced), None), 0);

    let mut twice = sales(2, 2);
    twice.requests[1].stock_left = Some(1);
    let twice = file("twice.jsonl", &twice.to_jsonl());
    assert_eq!(code(twice.clone(), None), 1);

    let mut backwards = sales(2, 2);
    backwards.requests[0].return_us = -1;
    assert_eq!(
        code(file("backwards.jsonl", &backwards.to_jsonl()), None),
        2
    );

    let mut unsettled = sales(2, 1);
    unsettled
        .requests
        .push(super::build::request("t", 100, 190, 0, None));
    unsettled.cuts.push(oversell_api::history::Cut {
        what: "section".into(),
        reason: "test".into(),
    });
    assert_eq!(
        code(file("unsettled.jsonl", &unsettled.to_jsonl()), None),
        3
    );

    // A violated run whose picture cannot be written: 4, never 1.
    let nowhere = std::env::temp_dir().join("oversell-no-such-dir/x/first.svg");
    assert_eq!(code(twice, Some(nowhere)), 4);
}
