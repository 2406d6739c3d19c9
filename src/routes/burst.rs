//! `POST /admin/burst`: fire N buyers from the server side, for the dashboard and for scenarios
//! that need every buyer on one instance. Browsers cap their connections; this load is real:
//! N concurrent sales, released together, each the same code path as `POST /sale`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::Json;
use oversell_api::burst::MAX_BURST_BUYERS;
use oversell_api::{BurstReport, BurstRequest, Via};
use oversell_client::http::preflight;
use oversell_client::Targets;

use super::extract::{required_json, Body, RoomAdmin};

use crate::error::AppError;
use crate::keys::Keys;
use crate::sale::{run_sale, Order};
use crate::state::AppState;

/// `POST /admin/burst {"buyers": N, "qty"?, "via"?}`: N buyers at once, through the fleet
/// (default) or served by this instance alone (`"via": "instance"`).
#[utoipa::path(
    post,
    path = "/admin/burst",
    tag = "admin",
    params(super::openapi::RoomParam),
    request_body = BurstRequest,
    security(("admin_token" = []), ("room_token" = [])),
    responses(
        (status = 200, description = "What the buyers saw, by outcome", body = BurstReport),
        (status = 409, description = "A burst already runs in the room on this instance, or the instance runs its most buyers", body = super::openapi::ErrorBody),
        (status = 502, description = "The fleet's front did not answer as expected (`fleet_error`)", body = super::openapi::ErrorBody),
    )
)]
pub async fn burst(
    RoomAdmin { keys, .. }: RoomAdmin,
    State(state): State<AppState>,
    Body(body): Body,
) -> Result<Json<BurstReport>, AppError> {
    let body: BurstRequest = required_json(&body, r#"{"buyers": 200}"#)?;
    if !(1..=MAX_BURST_BUYERS).contains(&body.buyers) {
        return Err(AppError::BadRequest(format!(
            "buyers must be 1..={MAX_BURST_BUYERS}"
        )));
    }
    // Held until the burst ends: one burst per room on this instance …
    let _room = RoomBurst::take(&state, keys.room())?;
    // … and refused at once, not queued, when other bursts on this instance already have too
    // many buyers out.
    let _buyers = state
        .burst_buyers
        .clone()
        .try_acquire_many_owned(body.buyers as u32)
        .map_err(|_| AppError::BurstsBusy {
            max: MAX_BURST_BUYERS,
        })?;
    let qty = body.qty.unwrap_or(1);
    // Every buyer's order is made the same way: check it once, up front.
    Order::new("burst".into(), qty).map_err(AppError::BadRequest)?;
    // Fail fast with a clear 503 instead of N identical ones.
    let room = state.fleet.room(&keys).await?;
    if body.via.unwrap_or_default() == Via::Fleet {
        let deadline = room.settings.wait_deadline() + room.settings.business();
        return through_fleet(&state, &keys, body.buyers, qty, deadline)
            .await
            .map(Json);
    }
    let release = Arc::new(tokio::sync::Barrier::new(body.buyers + 1));
    let mut buyers = tokio::task::JoinSet::new();
    for i in 0..body.buyers {
        let (state, keys, release) = (state.clone(), keys.clone(), release.clone());
        buyers.spawn(async move {
            release.wait().await;
            let order = Order::new(format!("burst-{}-{i}", state.instance), qty)
                .map_err(AppError::BadRequest)?;
            run_sale(&state, keys, order).await
        });
    }
    release.wait().await;
    let started = Instant::now();
    let mut report = BurstReport {
        buyers: body.buyers,
        ..Default::default()
    };
    while let Some(result) = buyers.join_next().await {
        match result {
            Ok(Ok(_)) => report.ok += 1,
            Ok(Err(AppError::SoldOut { .. })) => report.sold_out += 1,
            Ok(Err(err)) if err.status().as_u16() == 503 => report.unavailable += 1,
            _ => report.errors += 1,
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    report.elapsed_ms = elapsed * 1000.0;
    report.throughput_rps = body.buyers as f64 / elapsed.max(1e-9);
    Ok(Json(report))
}

/// N real HTTP buyers through the fleet URL, released together (the loadtest's burst model).
async fn through_fleet(
    state: &AppState,
    keys: &Keys,
    buyers: usize,
    qty: u32,
    deadline: Duration,
) -> Result<BurstReport, AppError> {
    let targets = Targets::parse(&[state.fleet_url.as_str()], Some(keys.room()))
        .map_err(|e| AppError::Fleet(format!("{}: {e:#}", state.fleet_url)))?;
    preflight(&targets, Duration::from_secs(2))
        .await
        .map_err(|e| AppError::Fleet(format!("{e:#}")))?;
    workshop::burst::through_fleet(&targets, buyers, qty, deadline + Duration::from_secs(30))
        .await
        .map_err(|e| AppError::Burst(format!("{e:#}")))
}

/// The room's running burst on this instance; the room may fire another once it is dropped.
struct RoomBurst {
    state: AppState,
    room: String,
}

impl RoomBurst {
    fn take(state: &AppState, room: &str) -> Result<RoomBurst, AppError> {
        let mut running = state.burst_rooms.lock().unwrap_or_else(|p| p.into_inner());
        if !running.insert(room.to_owned()) {
            return Err(AppError::BurstRunning {
                room: room.to_owned(),
            });
        }
        Ok(RoomBurst {
            state: state.clone(),
            room: room.to_owned(),
        })
    }
}

impl Drop for RoomBurst {
    fn drop(&mut self) {
        let mut running = self
            .state
            .burst_rooms
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        running.remove(&self.room);
    }
}
