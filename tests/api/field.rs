//! The chapters from the field (`loadtest/src/scenario/catalog/field.rs`) on a real fleet:
//! three instances behind nginx on one Redis, each chapter judged from the resource store.

use loadtest::scenario::GROUPS;

use crate::lock_store::run_scenarios;
use crate::scenarios::start_fleet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chapter_from_the_field_shows_its_expected_outcome() {
    let (_, chapters) = GROUPS
        .iter()
        .find(|(name, _)| *name == "field")
        .expect("a field group");
    let ids: Vec<&str> = chapters.iter().map(|s| s.id).collect();
    let fleet = start_fleet(3).await;
    let failures = run_scenarios(&fleet, &ids).await;
    fleet.stop().await;
    assert!(
        failures.is_empty(),
        "chapters failed:\n{}",
        failures.join("\n")
    );
}
