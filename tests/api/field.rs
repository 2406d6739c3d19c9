//! The chapters from the field (`workshop/src/scenario/catalog/field.rs`) on real fleets:
//! three instances behind nginx on one Redis, and the Redlock chapter's on five masters, each
//! chapter judged from the resource store.

use oversell::lock_store::{LockStoreKind, Persistence};

use crate::lock_store::{group_chapters, passes_on};
use crate::scenarios::{start_fleet, start_fleet_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chapter_from_the_field_on_one_redis_shows_its_expected_outcome() {
    let ids = group_chapters("field", None);
    assert!(ids
        .iter()
        .all(|id| !workshop::scenario::find(id).unwrap().store.is_special()));
    let fleet = start_fleet(3).await;
    passes_on(fleet, &ids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redlock_chapter_from_the_field_shows_its_expected_outcome() {
    let ids = group_chapters("field", Some(LockStoreKind::Redlock));
    assert!(!ids.is_empty());
    let fleet = start_fleet_with(3, LockStoreKind::Redlock, Persistence::None).await;
    passes_on(fleet, &ids).await;
}

/// The outage chapters: the lock store a Redis of its own that writes its append-only file
/// before every reply, so the lock survives the restart and only the renewal is at stake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_renewal_outage_chapters_from_the_field_show_their_expected_outcome() {
    let ids = group_chapters("field", Some(LockStoreKind::Single));
    assert_eq!(ids.len(), 2, "{ids:?}");
    let fleet = start_fleet_with(3, LockStoreKind::Single, Persistence::Always).await;
    passes_on(fleet, &ids).await;
}
