//! The class vote's runs of its chapter: in one room for the reveal's figures (the instructor's
//! unless named), and, when the presenter asks for every room, in each of the class's rooms
//! after it, as the class page's "Run in every room" does.
//!
//! The rooms run in the background, after the reveal has answered: a class of 30 running a
//! chapter of ten seconds two at a time takes minutes, longer than a request may last, and the
//! projector shows the first room's figures at once while the tally of the rooms fills in
//! (each room's outcome is kept with the poll and told over its channel). Two rooms at a time,
//! as the class page runs them, so that the verdicts still measure locks and not a saturated
//! fleet; one at a time when the chapter's fault strikes beyond its room (an instance, the lock
//! store), else one room's crash would land in another room's run. The rooms stop when the vote
//! moves on (another chapter, the chapter opened again, the class closed): the rooms left are
//! counted as not run, never as landed. When the instance running them stops (a restart, a
//! scale-down), each room left without an outcome is kept as failed, saying why, before the
//! instance exits: otherwise the projector would count it "not run yet" for good, with nobody
//! left to run it. An instance killed outright says nothing: the runner holds a lease it
//! renews (`poll::room_run_lease`), and once that lapses another instance takes the rooms left
//! and runs them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::StreamExt;
use workshop::scenario::{self, question, Scenario};

use super::scenario::FleetRunner;
use crate::error::AppError;
use crate::keys::Keys;
use crate::poll::ballot_box::{self, Overwrite, RoomRun, RunRecord};
use crate::poll::room_run_lease::{self, Claimed};
use crate::scenario_guard::ScenarioGuard;
use crate::state::AppState;

/// Rooms run at once in the background, as the class page runs a scenario in every room.
const ROOMS_AT_ONCE: usize = 2;

/// What to do once the room's scenario guard is held and before the run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BeforeTheRun {
    /// The reveal's own run: the vote closes once the run is sure to start (nobody votes
    /// while the projector shows the figures), unless it moved on to another chapter.
    CloseTheVote,
    /// A room's run after the reveal.
    Nothing,
}

/// Runs `chapter` in `room` through the fleet, as `POST /admin/scenario` does.
pub(super) async fn run_chapter(
    state: &AppState,
    chapter: &str,
    room: &str,
    before: BeforeTheRun,
) -> Result<RunRecord, AppError> {
    // The poll is keyed by its question; the chapter run is the question's (an article's
    // claim is answered by a chapter of its own).
    let question = question(chapter);
    let (Some(scenario), Some(question)) =
        (question.and_then(|q| scenario::find(q.chapter)), question)
    else {
        return Err(AppError::BadRequest(format!(
            "chapter {chapter} is no longer in the catalog: it cannot run"
        )));
    };
    let keys = Keys::for_room(room);
    let fleet = FleetRunner::new(state, &keys).await?;
    let runner = fleet.runner(state);
    let misfit = runner
        .misfit(scenario)
        .await
        .map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    if let Some(why) = misfit {
        return Err(AppError::BadRequest(format!("chapter {chapter}: {why}")));
    }
    let holder = format!("{}:{}", state.instance, state.next_owner());
    let running = ScenarioGuard::try_take(&state.resource, &keys, &holder)
        .await?
        .ok_or(AppError::Busy)?;
    if before == BeforeTheRun::CloseTheVote {
        if ballot_box::close(&state.resource).await?.as_deref() != Some(chapter) {
            running.release().await;
            return Err(moved(chapter));
        }
        state.poll.changed();
    }
    let run = runner.run(scenario).await;
    running.release().await;
    let run = run.map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    let kept = super::scenario::keep_history(state, &keys, &run).await;
    tracing::info!(
        chapter,
        room,
        passed = run.passed,
        "class vote: the chapter ran"
    );
    // The reveal's picture: the run's first violation, drawn from its history.
    let svg =
        run.history.as_ref().ok().and_then(|lines| {
            workshop::recorder::violation_svg(lines, workshop::history::Lang::En)
        });
    Ok(RunRecord {
        id: holder,
        room: room.to_owned(),
        svg,
        history: kept.then(|| run.run_id.clone()),
        landed: question.landed(&run.figures),
        passed: run.passed,
        // JSON has no NaN; a figure the run did not measure reads the same to the rules.
        figures: run
            .figures
            .into_iter()
            .filter(|(_, value)| value.is_finite())
            .collect::<BTreeMap<_, _>>(),
        every_room: Vec::new(),
    })
}

/// The vote moved on while a run of `chapter` ran.
pub(super) fn moved(chapter: &str) -> AppError {
    AppError::Poll {
        code: "poll_moved",
        message: format!(
            "the vote moved on from {chapter} (another chapter was opened, or the class \
             closed) before this finished"
        ),
    }
}

/// Runs the revealed `run`'s chapter in each of its `every_room` rooms, in the background, as
/// work the instance lets finish before it exits ([`AppState::background`]), under the rooms'
/// lease: should another instance hold it already, the rooms are that one's.
pub(super) fn spawn_every_room(state: AppState, chapter: String, run: &RunRecord) {
    let run_id = run.id.clone();
    let background = state.background.clone();
    background.spawn(async move {
        let holder = format!("{}:{}", state.instance, state.next_owner());
        match room_run_lease::claim(&state.resource, Some(&chapter), Some(&run_id), &holder).await {
            Ok(Some(claimed)) => run_claimed(&state, claimed).await,
            Ok(None) => {}
            // No lease was taken: an instance looking for rooms left takes them.
            Err(err) => tracing::warn!(%err, chapter, "class vote: the rooms' lease not taken"),
        }
    });
}

/// Every instance, until it stops: looks for rooms of a reveal in every room whose runner's
/// lease lapsed (its instance was killed), takes them and runs them.
pub fn spawn_room_run_watch(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut stopping = state.stopping.subscribe();
        let mut every = tokio::time::interval(room_run_lease::LOOK_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                _ = stopping.wait_for(|stop| *stop) => return,
            }
            let holder = format!("{}:{}", state.instance, state.next_owner());
            match room_run_lease::claim(&state.resource, None, None, &holder).await {
                Ok(Some(claimed)) => {
                    tracing::info!(
                        chapter = claimed.chapter,
                        rooms = claimed.rooms.len(),
                        "class vote: the rooms' runner is gone (its lease lapsed); running the rooms left"
                    );
                    let state = state.clone();
                    state
                        .background
                        .clone()
                        .spawn(async move { run_claimed(&state, claimed).await });
                }
                Ok(None) => {}
                // The store is down: the runs cannot be kept either; look again next tick.
                Err(err) => tracing::debug!(%err, "class vote: no look at the rooms' lease"),
            }
        }
    })
}

/// Runs the rooms of `claimed` while renewing its lease, then gives the lease back. A lease
/// found lost (this instance stopped longer than it lasts, and another took the rooms) ends
/// the runs here: the rooms are the new holder's.
async fn run_claimed(state: &AppState, claimed: Claimed) {
    let Some(scenario) = question(&claimed.chapter).and_then(|q| scenario::find(q.chapter)) else {
        room_run_lease::release(&state.resource, &claimed).await;
        return;
    };
    let (chapter, run_id, rooms) = (&claimed.chapter, &claimed.run_id, &claimed.rooms);
    let mut stopping = state.stopping.subscribe();
    let stops = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    tokio::select! {
        () = run_every_room(state, chapter, run_id, rooms, scenario) => {
            tracing::info!(chapter, "class vote: the runs in every room ended");
        }
        () = stops => {
            // The runs under way end here, with the instance: they are rooms left too.
            tracing::info!(chapter, "class vote: the instance stops, so do the runs in every room");
            leave_unrun(state, chapter, run_id, rooms).await;
        }
        () = renew_until_lost(state, &claimed) => {
            tracing::warn!(chapter, "class vote: the rooms' lease was lost to another instance; it runs them");
        }
    }
    room_run_lease::release(&state.resource, &claimed).await;
}

/// Renews the lease every [`room_run_lease::RENEW_EVERY`]; returns once it is lost.
async fn renew_until_lost(state: &AppState, claimed: &Claimed) {
    let mut every = tokio::time::interval(room_run_lease::RENEW_EVERY);
    every.tick().await;
    loop {
        every.tick().await;
        match room_run_lease::renew(&state.resource, claimed).await {
            Ok(true) => {}
            Ok(false) => return,
            // The store is down: the rooms' runs fail on their own; try again next tick.
            Err(err) => tracing::warn!(%err, "class vote: the rooms' lease not renewed"),
        }
    }
}

/// The runs themselves, [`ROOMS_AT_ONCE`] at a time (or one), until one says to stop.
async fn run_every_room(
    state: &AppState,
    chapter: &str,
    run_id: &str,
    rooms: &[String],
    scenario: &Scenario,
) {
    let stop = AtomicBool::new(false);
    futures_util::stream::iter(rooms)
        .for_each_concurrent(rooms_at_once(scenario), |room| {
            let stop = &stop;
            async move {
                if !stop.load(Ordering::Relaxed) && !run_in_room(state, chapter, run_id, room).await
                {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        })
        .await;
}

/// Keeps, for each room in `rooms` that has no outcome yet, that it failed because this
/// instance stopped, while the reveal is still the poll's.
async fn leave_unrun(state: &AppState, chapter: &str, run_id: &str, rooms: &[String]) {
    let stopped = RoomRun::Failed {
        error: format!(
            "the instance running the class's rooms ({}) stopped before this room's run ended; \
             run & reveal in every room again to run it",
            state.instance
        ),
    };
    for room in rooms {
        match ballot_box::record_room_run(
            &state.resource,
            chapter,
            run_id,
            room,
            &stopped,
            Overwrite::No,
        )
        .await
        {
            Ok(true) => state.poll.changed(),
            // The vote moved on: the rooms left answer a question no longer asked.
            Ok(false) => return,
            Err(err) => {
                tracing::warn!(%err, chapter, room, "class vote: a room left unrun was not kept");
                return;
            }
        }
    }
}

/// One room at a time when the chapter's fault strikes beyond the room.
fn rooms_at_once(scenario: &Scenario) -> usize {
    match &scenario.fault {
        Some(fault) if !fault.kind.strikes_room_only() => 1,
        _ => ROOMS_AT_ONCE,
    }
}

/// Runs the chapter in `room` and keeps how it ended; `false` when the rooms should stop (the
/// vote moved on, the store cannot be reached).
async fn run_in_room(state: &AppState, chapter: &str, run_id: &str, room: &str) -> bool {
    match ballot_box::reveal_is_current(&state.resource, chapter, run_id).await {
        Ok(true) => {}
        Ok(false) => return false,
        Err(err) => {
            tracing::warn!(%err, chapter, "class vote: the runs in every room stop");
            return false;
        }
    }
    let outcome = match run_chapter(state, chapter, room, BeforeTheRun::Nothing).await {
        Ok(run) => RoomRun::Ran {
            landed: run.landed,
            passed: run.passed,
        },
        Err(err) => {
            tracing::warn!(?err, chapter, room, "class vote: a room's run failed");
            // The message the API would answer (an internal error's detail stays in the log).
            RoomRun::Failed {
                error: err.to_string(),
            }
        }
    };
    match ballot_box::record_room_run(
        &state.resource,
        chapter,
        run_id,
        room,
        &outcome,
        Overwrite::Yes,
    )
    .await
    {
        Ok(kept) => {
            state.poll.changed();
            kept
        }
        Err(err) => {
            tracing::warn!(%err, chapter, room, "class vote: a room's run was not kept");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_beyond_the_room_runs_the_rooms_one_at_a_time() {
        let at_once = |id| rooms_at_once(scenario::find(id).unwrap());
        assert_eq!(at_once("none-race"), ROOMS_AT_ONCE);
        assert_eq!(at_once("uuid-owner-release-gap"), ROOMS_AT_ONCE);
        assert_eq!(at_once("setnx-crash"), 1);
    }
}
