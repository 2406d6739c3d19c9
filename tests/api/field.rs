//! The chapters from the field (`loadtest/src/scenario/catalog/field.rs`) on real fleets:
//! three instances behind nginx on one Redis, and the Redlock chapter's on five masters, each
//! chapter judged from the resource store.

use loadtest::scenario::{Scenario, GROUPS};
use oversell::lock_store::{LockStoreKind, Persistence};

use crate::lock_store::run_scenarios;
use crate::scenarios::{start_fleet, start_fleet_with};

fn field_chapters(on_redlock: bool) -> Vec<&'static str> {
    let (_, chapters) = GROUPS
        .iter()
        .find(|(name, _)| *name == "field")
        .expect("a field group");
    let redlock = |s: &Scenario| s.store.lock_store == Some(LockStoreKind::Redlock);
    chapters
        .iter()
        .filter(|s| redlock(s) == on_redlock)
        .map(|s| s.id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chapter_from_the_field_on_one_redis_shows_its_expected_outcome() {
    let ids = field_chapters(false);
    assert!(ids
        .iter()
        .all(|id| !loadtest::scenario::find(id).unwrap().store.is_special()));
    let fleet = start_fleet(3).await;
    let failures = run_scenarios(&fleet, &ids).await;
    fleet.stop().await;
    assert!(
        failures.is_empty(),
        "chapters failed:\n{}",
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redlock_chapter_from_the_field_shows_its_expected_outcome() {
    let ids = field_chapters(true);
    assert!(!ids.is_empty());
    let fleet = start_fleet_with(3, LockStoreKind::Redlock, Persistence::None).await;
    let failures = run_scenarios(&fleet, &ids).await;
    fleet.stop().await;
    assert!(
        failures.is_empty(),
        "chapters failed:\n{}",
        failures.join("\n")
    );
}
