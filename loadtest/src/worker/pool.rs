//! [`fire`]: the pool of workers, run on one thread per core, each with its own runtime; the
//! tallies collected once every thread is done, a failed run's too.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::load::Load;
use super::plan::Plan;
use super::Worker;
use crate::progress::Progress;
use crate::stats::{RunStats, Tally};
use oversell_client::target::Targets;

/// How often the progress bar is refreshed from the workers' counter.
const PROGRESS_TICK: Duration = Duration::from_millis(100);

/// Runs `load` against `targets` and returns what it measured. Failures to connect or to get
/// an answer are counted, not returned: check the targets first (see [`oversell_client::http::preflight`]).
/// An error means the generator itself failed (a thread or runtime that could not start, a
/// worker that panicked); the run's figures are then lost, and no request of it is still in
/// flight.
pub async fn fire(
    targets: &Targets,
    load: &Load,
    progress: &dyn Progress,
) -> anyhow::Result<RunStats> {
    let workers = load.workers();
    let threads = generator_threads().min(workers).max(1);
    run(Plan::new(targets, load, workers, threads), progress).await
}

/// Runs `plan`'s workers on their threads, one thread per `plan.done` counter.
async fn run(plan: Plan, progress: &dyn Progress) -> anyhow::Result<RunStats> {
    let plan = Arc::new(plan);
    let (workers, threads) = (plan.workers, plan.done.len());
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let mut failure = None;
    for t in 0..threads {
        let (share_plan, done_tx) = (Arc::clone(&plan), done_tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("loadtest-{t}"))
            .spawn(move || {
                let share = catch_unwind(AssertUnwindSafe(|| {
                    run_share(Arc::clone(&share_plan), (t..workers).step_by(threads))
                }))
                .unwrap_or_else(|panic| {
                    Err(anyhow!(
                        "a load generator thread panicked: {}",
                        panic_message(&*panic)
                    ))
                });
                if share.is_err() {
                    share_plan.abort.raise();
                }
                let _ = done_tx.send(share);
            });
        if let Err(e) = spawned {
            failure = Some(anyhow!("cannot start a load generator thread: {e}"));
            plan.abort.raise();
            break;
        }
    }
    drop(done_tx);
    let started = match &plan.release {
        Some(release) => {
            // A failed thread never brings its buyers here: its abort lets everyone go on.
            tokio::select! {
                _ = release.wait() => {}
                () = plan.abort.raised() => {}
            }
            Instant::now()
        }
        None => plan.schedule.start,
    };
    let mut tallies = Vec::with_capacity(workers);
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    // Every thread is waited for, a failed run's too, so none of its requests outlives it.
    loop {
        tokio::select! {
            share = done_rx.recv() => match share {
                Some(Ok(share)) => tallies.extend(share),
                Some(Err(why)) => {
                    failure.get_or_insert(why);
                }
                None => break,
            },
            _ = tick.tick() => progress.set_run(plan.finished()),
        }
    }
    if let Some(why) = failure {
        return Err(why);
    }
    let elapsed = started.elapsed();
    progress.set_run(plan.finished());
    Ok(RunStats::collect(tallies, &plan.recorder, elapsed))
}

/// Threads the workers run on: one per core, like wrk. Each has its own single-threaded
/// runtime, so a worker, its connection and its timers never move between cores, and the
/// caller's runtime (a server, a test) is left alone.
fn generator_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs one thread's share of the workers to the end. A worker that panics ends the share
/// with an error (its thread's other workers are dropped with the runtime).
fn run_share(plan: Arc<Plan>, workers: impl Iterator<Item = usize>) -> anyhow::Result<Vec<Tally>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a load generator runtime")?;
    runtime.block_on(async {
        let mut pool = JoinSet::new();
        for w in workers {
            pool.spawn(Worker::new(Arc::clone(&plan), w).run());
        }
        let mut tallies = Vec::new();
        while let Some(joined) = pool.join_next().await {
            match joined {
                Ok(tally) => tallies.push(tally),
                Err(err) if err.is_panic() => bail!(
                    "a load generator worker panicked: {}",
                    panic_message(&*err.into_panic())
                ),
                Err(_) => {}
            }
        }
        Ok(tallies)
    })
}

/// The text a panic was raised with, when it has one.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(text), _) => text,
        (_, Some(text)) => text,
        _ => "(no message)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Silent;
    use crate::worker::load::tests::load;
    use crate::worker::load::{Model, Stop};

    #[tokio::test]
    async fn a_worker_that_panics_fails_the_run_and_stops_the_others() {
        // Nothing listens on port 1. The burst's other buyers wait at the release, the loop's
        // workers retry for a minute: only the abort ends either run within the limit below.
        let targets = Targets::parse(&["http://127.0.0.1:1"], None).unwrap();
        let minute = Stop::After(Duration::from_secs(60));
        for model in [Model::Burst { buyers: 4 }, Model::Closed { stop: minute }] {
            let mut plan = Plan::new(&targets, &load(model, 4), 4, 2);
            plan.panics = Some(1);
            let limit = Duration::from_secs(10);
            let outcome = tokio::time::timeout(limit, run(plan, &Silent)).await;
            let err = outcome.expect("the other workers stop").unwrap_err();
            assert_eq!(
                err.to_string(),
                "a load generator worker panicked: worker 1 panics, as the test asked"
            );
        }
    }
}
