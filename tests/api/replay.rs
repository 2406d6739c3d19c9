//! `loadtest explore --replay`: the search's shortest break run on a real fleet (a private
//! redis-server, two `oversell serve` processes, nginx), the fleet's history checked.

use serde_json::Value;
use workshop::history::command::Exit;

use crate::scenarios::{start_fleet, TOKEN};

/// The command's stdout and its exit status (0 when it answered `Ok`).
async fn explore(args: &[&str]) -> (u8, String, String) {
    let argv = ["loadtest", "explore"].iter().chain(args);
    match workshop::run_cli(argv.copied()).await {
        Ok(out) => (0, out, String::new()),
        Err(err) => match err.downcast_ref::<Exit>() {
            Some(exit) => (exit.code, exit.stdout.clone(), exit.message.clone()),
            None => panic!("not an exit status: {err:#}"),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lua_releases_sale_sold_twice_is_made_on_the_fleet_and_the_checker_agrees() {
    let fleet = start_fleet(2).await;
    let url = fleet.url().to_owned();
    let args = [
        "--tier",
        "lua-release",
        "--replay",
        "--url",
        &url,
        "--token",
        TOKEN,
        "--json",
    ];
    let (code, out, message) = explore(&args).await;
    let both: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let replay = &both["replay"];
    assert_eq!(code, 0, "{message}: {replay:#}");
    assert_eq!(replay["property"], "sold-twice", "{replay:#}");
    assert_eq!(replay["fault"]["kind"], "holder-pause", "{replay:#}");
    assert_eq!(replay["fault"]["ms"], 900, "three leases of 300 ms");
    assert_eq!(replay["reproduced"], true, "{replay:#}");
    // The checker read the fleet's own history and found the break the model predicted.
    let checker = replay["checker"].as_str().unwrap();
    assert!(checker.starts_with("broke: mutual exclusion"), "{checker}");
    assert!(replay["figures"]["lost_updates"].as_f64().unwrap() >= 1.0);

    // The words say it too.
    let (code, out, message) = explore(&args[..7]).await;
    assert_eq!(code, 0, "{message}: {out}");
    assert!(out.contains("fault: holder-pause (900 ms)"), "{out}");
    assert!(
        out.contains("the model predicted it; the fleet did it"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_to_replay_and_bad_input_are_each_said_with_their_status() {
    let fleet = start_fleet(1).await;
    let url = fleet.url().to_owned();
    // fenced: no break within the bounds, so the fleet has nothing to make (1).
    let (code, _, message) = explore(&[
        "--tier", "fenced", "--replay", "--url", &url, "--token", TOKEN,
    ])
    .await;
    assert_eq!(
        (code, message.as_str()),
        (
            1,
            "nothing to replay: the model found no break within these bounds"
        )
    );
    // A lab lock, and no token: bad input (2).
    let (code, _, message) = explore(&[
        "--acquire",
        "x.lua",
        "--release",
        "y.lua",
        "--replay",
        "--url",
        &url,
    ])
    .await;
    assert_eq!(code, 2, "{message}");
    assert!(message.contains("--tier"), "{message}");
    let (code, _, message) = explore(&["--tier", "lua-release", "--replay", "--url", &url]).await;
    assert_eq!(code, 2, "{message}");
    assert!(message.contains("OVERSELL_ADMIN_TOKEN"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rung_the_model_breaks_the_fleet_breaks_with_the_fault_it_names() {
    let fleet = start_fleet(2).await;
    let url = fleet.url().to_owned();
    // The rung, the break replayed, its fault, and what the checker says of the history.
    let rungs = [
        ("setnx", "deadlock", "holder-dies", "all hold"),
        (
            "setnx-expire",
            "sold-twice",
            "holder-pause",
            "broke: mutual exclusion",
        ),
        (
            "atomic-expiry",
            "sold-twice",
            "holder-pause",
            "broke: mutual exclusion",
        ),
        (
            "uuid-owner",
            "sold-twice",
            "holder-pause",
            "broke: mutual exclusion",
        ),
        (
            "reentrant-watchdog",
            "sold-twice",
            "holder-pause",
            "broke: mutual exclusion",
        ),
        (
            "fair",
            "sold-twice",
            "holder-pause",
            "broke: mutual exclusion",
        ),
    ];
    for (tier, property, fault, checker) in rungs {
        let args = [
            "--tier", tier, "--replay", "--url", &url, "--token", TOKEN, "--json",
        ];
        let (code, out, message) = explore(&args).await;
        let both: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let replay = &both["replay"];
        assert_eq!(code, 0, "{tier}: {message}: {replay:#}");
        assert_eq!(replay["property"], property, "{tier}: {replay:#}");
        assert_eq!(replay["fault"]["kind"], fault, "{tier}: {replay:#}");
        let said = replay["checker"].as_str().unwrap();
        assert!(said.starts_with(checker), "{tier}: {said}");
    }
}
