//! Each rung of the ladder searched with the default bounds (two buyers, one fault: a pause
//! or a crash): broken by exactly the outcomes its row of the tier table gives, no more, no
//! fewer, each with a shortest schedule, within 10 s; and the lab's classic mistakes broken,
//! a command outside the model refused by name.

use std::time::Duration;

use explore::answer::{Answer, Verdict, BROKEN, NO_BREAK};
use explore::bounds::Bounds;
use explore::judge::Property;
use explore::lock;
use explore::said::Lang;
use explore::world::FaultKind;
use oversell_api::grade::Outcome;

fn search(tier: oversell_api::tier::Tier, bounds: Bounds) -> Answer {
    explore::explore(&lock::rung(tier).expect("a Redis rung"), bounds).expect("searchable")
}

/// The outcomes a rung's row gives its attacks, less `held` and `not-applicable`.
fn row(tier: oversell_api::tier::Tier) -> Vec<Outcome> {
    let outcomes = tier.facts().outcomes.expect("a rung has outcomes");
    let order = [
        Outcome::Overlap,
        Outcome::ForeignRelease,
        Outcome::Deadlock,
        Outcome::Failed,
    ];
    order.into_iter().filter(|o| outcomes.contains(o)).collect()
}

#[test]
fn each_rung_is_broken_by_exactly_the_outcomes_its_row_gives_within_ten_seconds() {
    for tier in lock::RUNGS {
        let answer = search(tier, Bounds::default());
        assert_eq!(
            answer.outcomes,
            row(tier),
            "{}:\n{}",
            tier.id(),
            answer.text(Lang::En)
        );
        let expected = if row(tier).is_empty() {
            NO_BREAK
        } else {
            BROKEN
        };
        assert_eq!(answer.exit_code(), expected, "{}", answer.text(Lang::En));
        assert!(
            answer.seconds < Duration::from_secs(10).as_secs_f64(),
            "{} took {} s",
            tier.id(),
            answer.seconds
        );
        for found in &answer.found {
            assert_eq!(found.depth, found.schedule.len());
        }
    }
}

#[test]
fn fenced_lets_two_holders_in_and_sells_nothing_twice() {
    let answer = search(oversell_api::tier::Tier::Fenced, Bounds::default());
    assert_eq!(
        answer.verdict,
        Verdict::NoBreak,
        "{}",
        answer.text(Lang::En)
    );
    let two = answer
        .found(Property::TwoHolders)
        .expect("a pause lets a second holder in");
    assert!(
        two.schedule.iter().any(|s| s.note.contains("pauses")),
        "{}",
        answer.text(Lang::En)
    );
    assert!(answer.found(Property::SoldTwice).is_none());
    assert!(
        answer.text(Lang::En).contains("which is held"),
        "{}",
        answer.text(Lang::En)
    );
}

#[test]
fn uuid_owners_shortest_foreign_release_falls_between_its_two_release_steps() {
    let answer = search(oversell_api::tier::Tier::UuidOwner, Bounds::default());
    let found = answer.found(Property::ForeignRelease).expect("broken");
    let notes: Vec<&str> = found.schedule.iter().map(|s| s.note.as_str()).collect();
    let check = notes
        .iter()
        .position(|n| n.starts_with("A release-1"))
        .expect("A checks");
    let delete = notes
        .iter()
        .position(|n| n.starts_with("A release-2"))
        .expect("A deletes");
    let taken = notes
        .iter()
        .position(|n| n.starts_with("B acquire-1 → 1"))
        .expect("B takes it");
    assert!(check < taken && taken < delete, "{notes:#?}");
    assert!(notes[delete].contains("deletes B's lock"), "{notes:#?}");
}

#[test]
fn without_a_fault_the_watchdog_holds_and_a_setnx_never_deadlocks() {
    let calm = Bounds {
        budget: 0,
        ..Bounds::default()
    };
    let watchdog = search(oversell_api::tier::Tier::ReentrantWatchdog, calm.clone());
    assert_eq!(
        watchdog.verdict,
        Verdict::NoBreak,
        "{}",
        watchdog.text(Lang::En)
    );
    let setnx = search(oversell_api::tier::Tier::Setnx, calm);
    assert_eq!(setnx.verdict, Verdict::NoBreak, "{}", setnx.text(Lang::En));
}

#[test]
fn a_failover_that_loses_the_lock_breaks_even_the_watchdog_and_a_clock_jump_too() {
    for kind in [FaultKind::Failover, FaultKind::ClockJump] {
        let bounds = Bounds {
            faults: vec![kind],
            ..Bounds::default()
        };
        let answer = search(oversell_api::tier::Tier::ReentrantWatchdog, bounds);
        assert_eq!(
            answer.outcomes,
            vec![Outcome::Overlap],
            "{kind:?}:\n{}",
            answer.text(Lang::En)
        );
        let sold = answer.found(Property::SoldTwice).unwrap();
        assert!(
            !sold.schedule.iter().any(|s| s.note.contains("pauses")),
            "{kind:?} needs no pause:\n{}",
            answer.text(Lang::En)
        );
    }
}

#[test]
fn a_bound_met_before_the_end_is_said_as_such() {
    let tight = Bounds {
        max_states: 50,
        budget: 0,
        ..Bounds::default()
    };
    let answer = search(oversell_api::tier::Tier::Fenced, tight);
    assert_eq!(
        answer.verdict,
        Verdict::BoundReached,
        "{}",
        answer.text(Lang::En)
    );
    assert_eq!(answer.exit_code(), explore::answer::BOUND_REACHED);
}

fn lab(acquire: &[&str], release: &[&str]) -> Result<Answer, explore::Refused> {
    let owned = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let lock = lock::lab(&owned(acquire), &owned(release), None).map_err(explore::Refused)?;
    explore::explore(&lock, Bounds::default())
}

#[test]
fn a_lab_lock_that_checks_then_deletes_in_two_steps_deletes_anothers_lock() {
    let answer = lab(
        &["if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"],
        &[
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end return 0",
            "return redis.call('DEL', KEYS[1])",
        ],
    )
    .unwrap();
    assert!(
        answer.outcomes.contains(&Outcome::ForeignRelease),
        "{}",
        answer.text(Lang::En)
    );
    assert_eq!(answer.exit_code(), BROKEN);
}

#[test]
fn a_lab_lock_that_sets_then_expires_in_two_steps_deadlocks_when_its_holder_dies_between() {
    let answer = lab(
        &[
            "return redis.call('SETNX', KEYS[1], ARGV[1])",
            "return redis.call('PEXPIRE', KEYS[1], ARGV[2])",
        ],
        &["return redis.call('DEL', KEYS[1])"],
    )
    .unwrap();
    let deadlock = answer.found(Property::Deadlock).expect("deadlocked");
    assert_eq!(deadlock.depth, 2, "{}", answer.text(Lang::En));
    assert!(deadlock.schedule[1]
        .note
        .contains("between two acquire steps"));
}

#[test]
fn a_lab_lock_calling_a_command_outside_the_model_is_refused_naming_it() {
    let refused = lab(
        &["redis.call('OBJECT', 'ENCODING', KEYS[1]) return 1"],
        &["return redis.call('DEL', KEYS[1])"],
    )
    .unwrap_err();
    assert!(refused.0.contains("not modelled: OBJECT"), "{refused}");
}

#[test]
fn a_lab_step_that_does_not_compile_is_refused_with_its_line() {
    let refused = lab(&["return 1", "local x =\n= 2"], &["return 1"]).unwrap_err();
    assert!(refused.0.contains("acquire-2:2:"), "{refused}");
}

#[test]
fn the_model_grades_every_rung_as_its_row_of_the_tier_table_attack_by_attack() {
    for tier in lock::RUNGS {
        let lock = lock::rung(tier).unwrap();
        let graded = explore::attacks::grade(&lock, &Bounds::default()).unwrap();
        let card = explore::attacks::card(&graded);
        let row = tier.facts().outcomes.unwrap();
        for (i, g) in graded.iter().enumerate() {
            let why = g
                .answer
                .as_ref()
                .map(|a| a.text(Lang::En))
                .unwrap_or_default();
            assert_eq!(card[i], row[i], "{} under {}:\n{why}", tier.id(), g.attack);
        }
    }
}

#[test]
fn the_lab_attacks_on_a_check_then_delete_lock_find_its_release_gap() {
    let owned = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let lock = lock::lab(
        &owned(&["if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"]),
        &owned(&[
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end return 0",
            "return redis.call('DEL', KEYS[1])",
        ]),
        None,
    )
    .unwrap();
    let card = explore::attacks::card(&explore::attacks::grade(&lock, &Bounds::default()).unwrap());
    // As uuid-owner's row: the same mistake, written by a student.
    assert_eq!(
        card,
        oversell_api::tier::Tier::UuidOwner
            .facts()
            .outcomes
            .unwrap()
    );
}

#[test]
fn a_lab_step_that_fails_breaks_the_lock_as_failed_naming_its_step_and_line() {
    let answer = lab(
        &["redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])\nreturn redis.call('INCR', KEYS[1])"],
        &["return redis.call('DEL', KEYS[1])"],
    )
    .unwrap();
    assert_eq!(
        answer.outcomes,
        vec![Outcome::Failed],
        "{}",
        answer.text(Lang::En)
    );
    let failed = answer.found(Property::ScriptFailed).unwrap();
    assert_eq!(failed.depth, 1);
    assert!(
        failed.schedule[0]
            .note
            .contains("acquire-1:2: ERR value is not an integer"),
        "{}",
        answer.text(Lang::En)
    );
}

#[test]
fn the_shortest_break_reads_in_chinese_for_the_class() {
    let answer = search(oversell_api::tier::Tier::LuaRelease, Bounds::default());
    let zh = answer.text(Lang::Zh);
    assert!(
        zh.starts_with("lua-release：在第 7 步被攻破（overlap）"),
        "{zh}"
    );
    assert!(zh.contains("同一件商品卖了两次"), "{zh}");
    assert!(zh.contains("A 读到库存 2"), "{zh}");
    assert!(
        zh.contains("过了 300 毫秒（t = 300 毫秒）：锁已过期消失"),
        "{zh}"
    );
    let sold = answer.found(Property::SoldTwice).unwrap();
    assert!(sold
        .schedule
        .iter()
        .all(|s| !s.note_zh.is_empty() && s.note_zh != s.note));
}

#[test]
fn fair_breaks_and_is_graded_as_the_rung_its_row_names() {
    use oversell_api::tier::Tier;
    // Its steps read TIME, so its states keep their instants: a shallower bound keeps it quick.
    let bounds = Bounds {
        max_depth: 14,
        ..Bounds::default()
    };
    let fair = lock::rung(Tier::Fair).unwrap();
    let twin = Tier::Fair.facts().graded_as.unwrap();
    let card = explore::attacks::card(&explore::attacks::grade(&fair, &bounds).unwrap());
    assert_eq!(card, twin.facts().outcomes.unwrap());
    let answer = explore::explore(&fair, bounds).unwrap();
    assert_eq!(
        answer.outcomes,
        vec![Outcome::Overlap],
        "{}",
        answer.text(Lang::En)
    );
}

#[test]
fn a_lab_lock_kept_under_another_key_than_keys_1_still_deadlocks_when_its_holder_dies() {
    let answer = lab(
        &["return redis.call('SETNX', KEYS[1] .. ':mine', ARGV[1])"],
        &["return redis.call('DEL', KEYS[1] .. ':mine')"],
    )
    .unwrap();
    let deadlock = answer.found(Property::Deadlock).expect("deadlocked");
    assert_eq!(deadlock.depth, 2, "{}", answer.text(Lang::En));
}

/// A fenced lock whose release takes the lease off (`PERSIST`) before it deletes: every attack
/// holds (its one-step acquire has no gap between steps, time between the release steps
/// changes nothing once the lease is gone), but a buyer that dies between the two release
/// steps leaves a lock that never expires. Only the search, crashing anywhere, finds it.
#[test]
fn a_lock_every_attack_leaves_standing_is_broken_by_a_schedule_none_of_them_made() {
    let owned = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let acquire = include_str!("../../static/locks/fenced/acquire-1.lua");
    let renew = include_str!("../../static/locks/fenced/renew.lua");
    let lock = lock::lab(
        &owned(&[acquire]),
        &owned(&[
            "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end \
             redis.call('PERSIST', KEYS[1]) return 1",
            "redis.call('DEL', KEYS[1]) return 1",
        ]),
        Some(renew),
    )
    .unwrap();
    let bounds = Bounds::default();
    let graded = explore::attacks::grade(&lock, &bounds).unwrap();
    let held: Vec<_> = graded.iter().map(|g| (g.attack, g.outcome.id())).collect();
    assert!(
        graded
            .iter()
            .all(|g| matches!(g.outcome, Outcome::Held | Outcome::NotApplicable)),
        "{held:?}"
    );
    let search = explore::explore(&lock, bounds).unwrap();
    let found = explore::attacks::beyond(&graded, &search).expect("the search breaks it");
    assert_eq!(found.property, explore::judge::Property::Deadlock);
    let words = explore::attacks::beyond_words(found, explore::said::Lang::En);
    assert!(
        words.ends_with("a schedule none of the attacks made"),
        "{words}"
    );
    assert!(
        found
            .schedule
            .iter()
            .any(|s| s.note.contains("dies between two release steps")),
        "{:?}",
        found.schedule
    );
    // A rung an attack breaks: the card says it, not this.
    let uuid = lock::rung(oversell_api::tier::Tier::UuidOwner).unwrap();
    let graded = explore::attacks::grade(&uuid, &Bounds::default()).unwrap();
    let search = explore::explore(&uuid, Bounds::default()).unwrap();
    assert!(explore::attacks::beyond(&graded, &search).is_none());
}

#[test]
fn a_search_past_its_time_budget_ends_with_a_bound_reached_and_says_which() {
    let bounds = Bounds {
        time_budget_ms: Some(0),
        ..Bounds::default()
    };
    let fenced = lock::rung(oversell_api::tier::Tier::Fenced).unwrap();
    let answer = explore::explore(&fenced, bounds).unwrap();
    assert_eq!(answer.verdict, Verdict::BoundReached);
    assert_eq!(answer.ended, explore::search::Ended::TimeBound);
    assert!(
        answer.states < 698,
        "cut before fenced's 698 states: {}",
        answer.states
    );
    let words = answer.text(Lang::En);
    assert!(words.contains("cut at its time budget"), "{words}");
    assert!(words.contains("time ≤ 0 ms"), "{words}");
}
