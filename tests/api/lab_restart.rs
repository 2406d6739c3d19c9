//! A restart of the instance that grades a room (SIGTERM, as `docker restart` or a rolling
//! update sends it), against a real fleet: the grading must neither hold the stopping
//! instance open nor leave the student waiting in silence.

use std::time::Duration;

use oversell::lock_store::{LockStoreKind, Persistence};
use oversell_api::tier::Tier;
use reqwest::StatusCode;
use serde_json::{json, Value};

use oversell::launch::local_fleet::Fleet;
use oversell::launch::supervisor::Instance;
use tokio::task::JoinHandle;

use crate::helpers::poll_until;
use crate::lab::{ladder_lock, send, submit};
use crate::scenarios::{start_fleet_with, TOKEN};

/// How long a dead instance's slot may take to lapse for a look: its lease (15 s), with room
/// for a busy machine; a bound on waiting, not a measure.
const LAPSED_WITHIN: Duration = Duration::from_secs(60);

/// How long a stopped instance may take to be serving again before the test gives up on it:
/// a bound on waiting, far above the drain's few seconds, not a measure of speed.
const BACK_WITHIN: Duration = Duration::from_secs(90);

/// The press answers (202 with where the room stands, or `grading_lost`) rather than holding
/// the instance's drain for a whole grading; the room's grading ends as `grading_lost` at once
/// instead of after its place lapses; the instance is restarted and serves; a press again on
/// the fleet gets the card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_restarted_mid_grading_tells_the_room_and_serves_again() {
    let (fleet, path) = fleet_with_a_lab_lock("restarted").await;

    let (struck, old_pid, press, job) = grading_on_first_instance(&fleet, &path).await;
    let rc = unsafe { libc::kill(old_pid as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "SIGTERM to {old_pid}");
    let (status, answer) = tokio::time::timeout(BACK_WITHIN, press)
        .await
        .expect("the press held the stopping instance open")
        .expect("the press's task")
        .expect("the press is answered, not cut");
    let lost = |status: StatusCode, v: &Value| {
        status == StatusCode::SERVICE_UNAVAILABLE && v["error"] == "grading_lost"
    };
    assert!(
        status == StatusCode::ACCEPTED || lost(status, &answer),
        "the press on the stopping instance: {status} {answer}"
    );

    // The room hears it now, from the instance that stays.
    let heard = poll_until(
        Duration::from_secs(30),
        || send(&fleet, reqwest::Method::GET, &path, TOKEN, None),
        |(status, v)| lost(*status, v),
    )
    .await;
    assert!(lost(heard.0, &heard.1), "job {job}: {heard:?}");

    // Restarted by its supervisor, and serving.
    let back = poll_until(
        BACK_WITHIN,
        || async {
            let now = fleet.instances()[0].clone();
            let Some(pid) = now.pid.filter(|pid| *pid != old_pid) else {
                return false;
            };
            let health = format!("http://{}:{}/health", now.ip, now.port);
            let ok = reqwest::get(health)
                .await
                .is_ok_and(|r| r.status().is_success());
            ok && pid != old_pid
        },
        |back| *back,
    )
    .await;
    assert!(
        back,
        "{} not serving again: {:?}",
        struck.id,
        fleet.instances()[0]
    );

    // Pressed again: graded, by whichever instance takes it.
    graded_on_press_again(&fleet, &path, &job).await;
    fleet.stop().await;
}

/// A press of "grade" on the fleet's first instance itself, so that it is the one driving the
/// grading, once the grading runs: the instance, its pid, the press (answered when the
/// grading is, `None` if cut) and the job.
async fn grading_on_first_instance(
    fleet: &Fleet,
    path: &str,
) -> (
    Instance,
    u32,
    JoinHandle<Option<(StatusCode, Value)>>,
    Value,
) {
    let struck = fleet.instances()[0].clone();
    let old_pid = struck.pid.expect("the instance runs");
    let press = tokio::spawn({
        let url = format!("http://{}:{}{path}", struck.ip, struck.port);
        async move {
            // `None`: the press was cut (its instance killed).
            let resp = crate::helpers::http_client()
                .post(url)
                .bearer_auth(TOKEN)
                .send()
                .await
                .ok()?;
            let status = resp.status();
            Some((status, resp.json::<Value>().await.unwrap_or(Value::Null)))
        }
    });
    let running = poll_until(
        Duration::from_secs(60),
        || send(fleet, reqwest::Method::GET, path, TOKEN, None),
        |(_, v)| v["state"] == "running",
    )
    .await;
    assert_eq!(running.1["state"], "running", "never graded: {running:?}");
    (struck, old_pid, press, running.1["job"].clone())
}

/// The instance driving the room's only grading is SIGKILLed: nothing is given back, and no
/// other grading runs to let its slot lapse. The room must not look graded for ever: a look
/// at the job hears `grading_lost` once the slot's lease is past, and a press again grades.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_grading_leaves_its_room_free_to_grade_again() {
    let (fleet, path) = fleet_with_a_lab_lock("killed").await;
    let (_, old_pid, press, job) = grading_on_first_instance(&fleet, &path).await;

    let rc = unsafe { libc::kill(old_pid as libc::pid_t, libc::SIGKILL) };
    assert_eq!(rc, 0, "SIGKILL to {old_pid}");
    let _ = press.await;
    let look = format!("{path}&job={job}");
    let heard = poll_until(
        LAPSED_WITHIN,
        || send(&fleet, reqwest::Method::GET, &look, TOKEN, None),
        |(status, _)| *status != StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(
        heard.0,
        StatusCode::SERVICE_UNAVAILABLE,
        "job {job}: {heard:?}"
    );
    assert_eq!(heard.1["error"], "grading_lost", "job {job}: {heard:?}");
    // A job the room was never given is no lost grading: it is not found.
    for never in [0, job.as_u64().expect("a job number") + 1] {
        let asked = send(
            &fleet,
            reqwest::Method::GET,
            &format!("{path}&job={never}"),
            TOKEN,
            None,
        )
        .await;
        assert_eq!(asked.0, StatusCode::NOT_FOUND, "job {never}: {asked:?}");
        assert_eq!(asked.1["error"], "not_found", "job {never}: {asked:?}");
    }

    graded_on_press_again(&fleet, &path, &job).await;
    fleet.stop().await;
}

/// A fleet of two instances whose room `room` has submitted the `setnx` rung's own lock; the
/// room's grading path.
async fn fleet_with_a_lab_lock(room: &str) -> (Fleet, String) {
    let fleet = start_fleet_with(2, LockStoreKind::Single, Persistence::None).await;
    let (lock, _) = ladder_lock(Tier::Setnx);
    let (status, body) = submit(&fleet, room, &lock).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (fleet, format!("/admin/lab/grade?room={room}"))
}

/// "Grade" pressed again after the job `old` was lost: a new grading, by whichever instance
/// takes it, and its card.
async fn graded_on_press_again(fleet: &Fleet, path: &str, old: &Value) {
    let only = Some(json!({ "only": "contention" }));
    let (status, pressed) = send(fleet, reqwest::Method::POST, path, TOKEN, only).await;
    let card = match status {
        StatusCode::OK => pressed,
        StatusCode::ACCEPTED => {
            assert_ne!(
                &pressed["job"], old,
                "pressed again, the old job: {pressed}"
            );
            let again = format!("{path}&job={}", pressed["job"]);
            poll_until(
                Duration::from_secs(120),
                || send(fleet, reqwest::Method::GET, &again, TOKEN, None),
                |(status, _)| *status != StatusCode::ACCEPTED,
            )
            .await
            .1
        }
        other => panic!("pressed again: {other} {pressed}"),
    };
    assert!(card["attacks"].is_array(), "pressed again: {card}");
}
