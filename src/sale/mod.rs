//! The deduct step of `POST /sale`, deliberately the articles' read-check-write:
//! acquire → `GET stock` → business work → `SET stock n-qty` + ledger entry → release.
//!
//! The ground truth is written by the same scripts that read and write the stock
//! (`enter.lua`, `commit.lua`), so it costs no extra round trip: a locked sale is
//! acquire + enter + commit + release, plus whatever the tier's lock itself needs.
//!
//! Round trips are what a waiting buyer waits for, so steps that can ride together do, in the
//! order the articles give them (`lock/riding.rs`), composed into one script per round trip
//! (`composed.rs`): with the lock in the resource store, `lua-release` is acquire + enter
//! (the enter only if the acquire took the lock), commit + release (2 round trips, not 4),
//! and the reentrant tiers acquire + re-entry + enter + nested release, commit + release
//! (2, not 6). Under
//! `wait: cohort` (`lock/cohort.rs`) a holder hands the lock to the next buyer of its instance
//! and that buyer's enter rides behind the holder's commit: one round trip per sale.

mod atomic_deduct;
mod run;

pub use run::run_sale;

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use oversell_api::settings::{Settings, WaitStrategy};
use oversell_api::tier::Tier;
use serde::Serialize;

use crate::composed::{self, Call, Lua};
use crate::error::AppError;
use crate::faults::{self, Fault, FaultKind, FaultPoints};
use crate::keys::Keys;
use crate::lock::cohort::{self, Baton, ReadAhead, ReadReplies, Start, Successor};
use crate::lock::riding;
use crate::lock::{self, Held, Lock, LockCx, LockError, ReleaseSignals};
use crate::lock_store::chaos::HeldReplicas;
use crate::lock_store::{LockStore, LockStoreKind};
use crate::metrics::Metrics;
use crate::redis_pool::{RedisPool, StoreError};

// Kept with their source, so that they can be composed with the lock's steps (`composed.rs`).
static ENTER: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("enter.lua")));
static COMMIT: LazyLock<Lua> = LazyLock::new(|| Lua::new(include_str!("commit.lua")));

/// Most items one order may buy.
pub const MAX_QTY: u32 = 10;
/// Longest buyer id, in bytes.
pub const MAX_BUYER_LEN: usize = 64;

/// One buyer's request, validated by [`Order::new`], the only way to make one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    buyer: String,
    qty: u32,
}

impl Order {
    /// An order of `qty` items (1..=[`MAX_QTY`]) for `buyer` (1..=[`MAX_BUYER_LEN`] bytes).
    pub fn new(buyer: String, qty: u32) -> Result<Order, String> {
        if !(1..=MAX_QTY).contains(&qty) {
            return Err(format!("qty must be 1..={MAX_QTY}, got {qty}"));
        }
        if buyer.is_empty() || buyer.len() > MAX_BUYER_LEN {
            return Err(format!("buyer must be 1..={MAX_BUYER_LEN} bytes"));
        }
        Ok(Order { buyer, qty })
    }
}

/// What a successful sale returns to the buyer.
#[derive(Debug, Clone, Serialize)]
pub struct Sold {
    pub order_id: String,
    pub stock_left: i64,
    pub instance: String,
    pub tier: Tier,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
}

/// The ledger entry, as JSON; the scripts append Redis' clock times to it.
#[derive(Serialize)]
struct LedgerEntry<'a> {
    order_id: &'a str,
    buyer: &'a str,
    qty: u32,
    instance: &'a str,
    tier: Tier,
    fence: Option<u64>,
    /// How many holds the owner had at the write: 2 proves the nested re-entry happened.
    depth: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    enter_us: Option<i64>,
}

/// The order as the JSON the ledger stores.
fn ledger_entry(
    cx: &SaleCx<'_>,
    order: &Order,
    order_id: &str,
    fence: Option<u64>,
    depth: u32,
    enter_us: Option<i64>,
) -> Result<String, AppError> {
    let entry = LedgerEntry {
        order_id,
        buyer: &order.buyer,
        qty: order.qty,
        instance: cx.instance,
        tier: cx.settings.tier,
        fence,
        depth,
        enter_us,
    };
    serde_json::to_string(&entry).map_err(|e| AppError::Internal(e.to_string()))
}

/// What one sale needs from the instance.
pub struct SaleCx<'a> {
    /// The resource store.
    pub redis: &'a RedisPool,
    /// Where the lock lives.
    pub store: &'a LockStore,
    pub keys: &'a Keys,
    pub settings: Settings,
    pub instance: &'a str,
    pub owner: String,
    pub locks: &'a lock::Locks,
    pub signals: &'a ReleaseSignals,
    pub metrics: &'a Metrics,
    /// The faults armed for the room when the sale started.
    pub faults: Arc<[Fault]>,
    /// Whether a claimed lock-store fault had yet to strike when the room was last loaded.
    pub store_fault_pending: bool,
    /// The room's reset generation when the sale began (from the room's settings, reloaded
    /// on every instance at a reset): its write, and what its lock's release records, count
    /// only if no reset came since. Empty when the room has none: then nothing is checked.
    pub generation: String,
    /// The room's own lock, for the `custom` tier.
    pub lab: Option<Arc<crate::lab::LabLock>>,
}

impl SaleCx<'_> {
    fn fault_points(&self) -> FaultPoints<'_> {
        FaultPoints {
            armed: &self.faults,
            redis: self.redis,
            keys: self.keys,
            instance: self.instance,
        }
    }
}

/// The lock's view of a sale; `owner` is the lock's value in Redis (the sale's own owner, or
/// the owner of the cohort that handed the lock to it).
fn lock_cx<'a>(
    cx: &'a SaleCx<'_>,
    owner: &'a str,
    faults: &'a FaultPoints<'a>,
    store_fault: &'a std::sync::Mutex<Option<Fault>>,
    held_replicas: &'a std::sync::Mutex<Option<HeldReplicas>>,
) -> LockCx<'a> {
    LockCx {
        store: cx.store,
        truth: cx.redis,
        keys: cx.keys,
        settings: &cx.settings,
        owner,
        instance: cx.instance,
        signals: cx.signals,
        metrics: cx.metrics,
        faults,
        store_fault,
        held_replicas,
        read: None,
        generation: &cx.generation,
        lab: cx.lab.as_deref(),
    }
}

/// Claims a lock-store fault armed for this sale's acquire, if any (no round trip when none
/// is armed).
///
/// The fault is meant for the next holder. A sale that finds one armed but loses the claim
/// waits until the claimant has struck (or `faults::STORE_FAULT_PENDING` has passed): the claimant spends
/// a few round trips holding the replicas off, and on a busy machine another buyer would
/// otherwise take the lock first, normally replicated, and the fault would strike whoever
/// came after.
async fn claim_store_fault(cx: &SaleCx<'_>, faults: &FaultPoints<'_>) -> Option<Fault> {
    let mut lost = false;
    let store_faults = FaultKind::ALL
        .into_iter()
        .filter(|k| k.strikes_lock_store());
    for kind in store_faults {
        if !faults.is_armed(kind) {
            continue;
        }
        match faults.claim(kind).await {
            // The claim marked it pending, in the same step.
            Some(fault) => return Some(fault),
            None => lost = true,
        }
    }
    // `lost`: this sale tried to claim and another won. Or the claim was already known when
    // the sale began: the claimant's reload reached this instance first.
    if lost || cx.store_fault_pending {
        let until = Instant::now() + faults::STORE_FAULT_PENDING;
        while Instant::now() < until && strike_pending(cx).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    None
}

/// Whether a claimed lock-store fault has yet to strike (a store error counts as no).
async fn strike_pending(cx: &SaleCx<'_>) -> bool {
    let asked = async {
        let mut conn = cx.redis.conn().await?;
        let pending: bool = redis::cmd("EXISTS")
            .arg(cx.keys.store_fault_pending())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(pending)
    };
    asked.await.unwrap_or(false)
}

pub async fn sell(cx: &SaleCx<'_>, order: &Order) -> Result<Sold, AppError> {
    let tier = cx.settings.tier;
    let Some(lock) = cx.locks.get(tier) else {
        return sell_lock_free(cx, order).await;
    };
    if let Some(sold_out) = at_the_door(cx, order).await {
        cx.metrics.turned_away(tier);
        return Err(sold_out);
    }
    let faults = cx.fault_points();
    if let WaitStrategy::Cohort { passes } = cx.settings.wait {
        // `none` has no lock to pass, `local` no lock beyond the instance, and ZooKeeper's
        // queue is already first come first served, its node bound to its owner.
        if !matches!(tier, Tier::None | Tier::Local) && !tier.needs_zookeeper() {
            return sell_in_cohort(cx, lock, &faults, order, passes).await;
        }
    }
    let store_fault = std::sync::Mutex::new(claim_store_fault(cx, &faults).await);
    let held_replicas = std::sync::Mutex::new(None);
    let lcx = lock_cx(cx, &cx.owner, &faults, &store_fault, &held_replicas);
    // Built once: a waiter under pubsub may try several times.
    let plan = ReadPlan::of(cx, lock);
    let read = |lock_owner: &str| plan.calls_behind_acquire(lock_owner);
    let acquiring = LockCx {
        read: Some(&read),
        ..lcx
    };
    let waited = Instant::now();
    let mut held = match lock.acquire(&acquiring).await {
        Ok(held) => held,
        Err(LockError::Timeout) => return Err(lock_timeout(cx).await),
        Err(LockError::HolderDied) => return Err(AppError::HolderDied),
        Err(LockError::Store(err)) => return Err(err.into()),
    };
    cx.metrics.lock_wait(tier, waited.elapsed());
    // The read, when it rode with the acquire.
    let read = held.read.take().map(|read| *read);
    let mut leaving = Leaving::new(held, &|| None, false);
    let result = critical_section(cx, &lcx, lock, &mut leaving, order, read).await;
    match leaving.left() {
        Left::Released => {}
        Left::Holding(held) => release(lock, &lcx, held).await,
        Left::Passing(..) => unreachable!("only a cohort passes the lock"),
    }
    result
}

/// The sold-out sign on the door (`lock/sold_out.rs`): once a locked read here found nothing
/// left, a buyer reads the stock before queueing for the lock, and is turned away at once when
/// too little is left. Never for `none` (no queue to skip) or while faults are armed (a fault
/// must meet a buyer who took the lock). `None`: go on to the lock.
async fn at_the_door(cx: &SaleCx<'_>, order: &Order) -> Option<AppError> {
    let room = cx.keys.room();
    if cx.settings.tier == Tier::None || !cx.faults.is_empty() || !cx.signals.sold_out.seen(room) {
        return None;
    }
    let read = async {
        let mut conn = cx.redis.conn().await?;
        let stock: Option<i64> = redis::cmd("GET")
            .arg(cx.keys.stock())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(stock)
    };
    // No stock key, or no answer: the usual way will say what it is.
    let Ok(Some(stock)) = read.await else {
        return None;
    };
    if stock > 0 {
        cx.signals.sold_out.forget(room);
    }
    (stock < i64::from(order.qty)).then_some(AppError::SoldOut {
        stock_left: stock,
        requested: order.qty,
    })
}

/// A sale under `wait: cohort` (see `lock/cohort.rs`): the same critical section, entered with
/// a lock this sale took in Redis or was handed by the previous sale of its instance (with its
/// read already done, in that sale's last round trip), and left by handing the lock on or
/// releasing it.
async fn sell_in_cohort(
    cx: &SaleCx<'_>,
    lock: &dyn Lock,
    faults: &FaultPoints<'_>,
    order: &Order,
    passes: u32,
) -> Result<Sold, AppError> {
    let waited = Instant::now();
    let deadline = tokio::time::Instant::now() + cx.settings.wait_deadline();
    let queue = cx.signals.cohorts.queue(cx.keys.room(), cx.settings.tier);
    let Ok((turn, start)) = queue
        .turn(deadline, read_ahead(cx, lock), &cx.generation)
        .await
    else {
        return Err(lock_timeout(cx).await);
    };
    let store_fault = std::sync::Mutex::new(None);
    let held_replicas = std::sync::Mutex::new(None);
    let (baton, read) = match start {
        Start::Passed(baton, read) => (baton, read),
        Start::Lead { after_release } => {
            // Only a sale that takes the lock in Redis can meet a lock-store fault.
            *store_fault.lock().unwrap_or_else(|p| p.into_inner()) =
                claim_store_fault(cx, faults).await;
            let plan = ReadPlan::of(cx, lock);
            let read = |lock_owner: &str| plan.calls_behind_acquire(lock_owner);
            let lcx = LockCx {
                read: Some(&read),
                ..lock_cx(cx, &cx.owner, faults, &store_fault, &held_replicas)
            };
            // On an error the turn is dropped, which hands it to the next buyer.
            match cohort::lead(lock, &lcx, after_release, deadline).await {
                Ok(baton) => (baton, None),
                Err(LockError::Timeout) => return Err(lock_timeout(cx).await),
                Err(LockError::HolderDied) => return Err(AppError::HolderDied),
                Err(LockError::Store(err)) => return Err(err.into()),
            }
        }
    };
    cx.metrics.lock_wait(cx.settings.tier, waited.elapsed());
    // Every sale of the cohort acts on the lock under the owner that took it in Redis; the
    // ground truth still names this sale (`cx.owner`).
    let owner = baton.owner().to_owned();
    let lcx = lock_cx(cx, &owner, faults, &store_fault, &held_replicas);
    let (mut held, lease) = baton.into_parts();
    // A lead's read may have ridden with its acquire.
    let read = read.or(held.read.take().map(|read| *read));
    let next = || turn.successor(&lease, passes, cx.settings.ttl());
    let mut leaving = Leaving::new(held, &next, true);
    let result = critical_section(cx, &lcx, lock, &mut leaving, order, read).await;
    let left = leaving.left();
    match left {
        Left::Passing(held, to, read) => {
            match turn.pass(to, Baton::from_parts(held, lease), read) {
                Ok(()) => cx.metrics.lock_passed(cx.settings.tier),
                // The successor's task is gone.
                Err(back) => {
                    let (turn, baton) = *back;
                    cohort::forget_old_release(&lcx);
                    release(lock, &lcx, baton.into_parts().0).await;
                    turn.released();
                }
            }
        }
        Left::Holding(held) => {
            cohort::forget_old_release(&lcx);
            release(lock, &lcx, held).await;
            turn.released();
        }
        Left::Released => turn.released(),
    }
    result
}

/// This sale's read in a form the holder before it can send (a cohort's pass), or `None`
/// when it cannot ride there: a reentrant tier whose lock lives on another server.
fn read_ahead(cx: &SaleCx<'_>, lock: &dyn Lock) -> Option<ReadAhead> {
    if lock.reentrant() && cx.store.kind() != LockStoreKind::Shared {
        return None;
    }
    let plan = ReadPlan::of(cx, lock);
    Some(Box::new(move |lock_owner: &str, fence: Option<u64>| {
        plan.calls(lock_owner, fence)
    }))
}

/// Gives the lock back on its own round trip; a failure leaves it to its lease.
async fn release(lock: &dyn Lock, lcx: &LockCx<'_>, held: Held) {
    if let Err(err) = lock.release(lcx, held).await {
        // The sale's outcome stands; the lock is left to its lease.
        tracing::warn!(%err, tier = %lcx.settings.tier, "release failed");
    }
}

/// Chooses, at the write, the buyer to hand the lock to (a cohort's), if any.
type NextHolder<'a> = &'a (dyn Fn() -> Option<Successor> + Sync);

/// The lock on its way out of a sale. It leaves at the write: handed to a local successor
/// when a cohort has one waiting (the successor's read riding behind the write), else released
/// in the write's round trip when the release can ride with it (`lock/riding.rs`), else
/// released after the sale, on its own.
struct Leaving<'a> {
    /// `None` once released.
    held: Option<Held>,
    fence: Option<u64>,
    depth: u32,
    next: NextHolder<'a>,
    /// Whether this is a cohort's lock, which forgets old release messages before releasing.
    cohort: bool,
    /// The successor chosen at the write, and the replies to its read.
    passing: Option<(Successor, Option<ReadReplies>)>,
}

/// Where the lock is once the sale is over.
enum Left {
    Released,
    /// To be handed to a local successor, with the replies to the read sent for it.
    Passing(Held, Successor, Option<ReadReplies>),
    /// Still held: the sale ended before its write, or the release could not ride with it.
    Holding(Held),
}

impl<'a> Leaving<'a> {
    fn new(held: Held, next: NextHolder<'a>, cohort: bool) -> Self {
        Leaving {
            fence: held.fence,
            depth: held.depth,
            held: Some(held),
            next,
            cohort,
            passing: None,
        }
    }

    /// The holder is dead: the lock stays where it is (no release, no pass), and renewals
    /// stop; an in-process guard goes, as it would with its process.
    fn die(&mut self) {
        drop(self.held.take());
    }

    /// The holder is paused: its lease is no longer renewed.
    fn stop_renewing(&mut self) {
        if let Some(held) = self.held.as_mut() {
            held.stop_renewing();
        }
    }

    fn left(self) -> Left {
        match (self.held, self.passing) {
            (None, _) => Left::Released,
            (Some(held), Some((to, read))) => Left::Passing(held, to, read),
            (Some(held), None) => Left::Holding(held),
        }
    }
}

async fn critical_section(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    leaving: &mut Leaving<'_>,
    order: &Order,
    read_ahead: Option<ReadReplies>,
) -> Result<Sold, AppError> {
    let fence = leaving.fence;
    let (entered, depth) = read(cx, lcx, lock, leaving.depth, fence, read_ahead).await?;
    let Some(Entry {
        stock,
        exits,
        enter_us,
    }) = entered
    else {
        return Err(AppError::LockLost);
    };
    if lcx.faults.claim(FaultKind::CrashHolding).await.is_some() {
        faults::crash("holding the lock");
    }
    // The same death for the room alone: nothing more is sent, the lock is left as it is.
    if lcx.faults.claim(FaultKind::HolderDies).await.is_some() {
        leaving.die();
        return Err(AppError::HolderDied);
    }
    let qty = i64::from(order.qty);
    if stock < qty {
        if stock <= 0 {
            cx.signals.sold_out.saw(cx.keys.room());
        }
        if leave(cx, lcx, leaving, exits, None).await? == "reset" {
            return Err(AppError::RoomReset { read: true });
        }
        return Err(AppError::SoldOut {
            stock_left: stock,
            requested: order.qty,
        });
    }
    // A zero-length sleep would still wait for the timer's next tick (up to 1 ms).
    if cx.settings.business_ms > 0 {
        tokio::time::sleep(cx.settings.business()).await;
    }
    // Read done, write not yet: the articles' GC pause strikes here.
    if let Some(fault) = lcx.faults.claim(FaultKind::Freeze).await {
        faults::freeze(Duration::from_millis(fault.ms));
    }
    // The same pause for the room alone: its renewals stop with it, as a paused process's do.
    if let Some(fault) = lcx.faults.claim(FaultKind::HolderPause).await {
        leaving.stop_renewing();
        tokio::time::sleep(Duration::from_millis(fault.ms)).await;
    }
    let order_id = uuid::Uuid::now_v7().to_string();
    let entry = ledger_entry(cx, order, &order_id, fence, depth, Some(enter_us))?;
    let write = Write {
        new_stock: stock - qty,
        qty: order.qty,
        entry: &entry,
    };
    let outcome = leave(cx, lcx, leaving, exits, Some(write)).await?;
    match outcome.as_str() {
        "sold" => Ok(Sold {
            order_id,
            stock_left: stock - qty,
            instance: cx.instance.to_owned(),
            tier: cx.settings.tier,
            fence,
        }),
        "stale" => Err(AppError::LockLost),
        "reset" => Err(AppError::RoomReset { read: true }),
        other => Err(AppError::Internal(format!("commit returned {other}"))),
    }
}

/// What the read gives: the stock, the exits so far (the overlap clock) and Redis' time in µs.
struct Entry {
    stock: i64,
    exits: i64,
    enter_us: i64,
}

/// The read, or `None` when the fencing token is already stale.
type Entered = Option<Entry>;

/// A sale's read in owned form: enough for another sale to send it (a cohort's pass).
struct ReadPlan {
    keys: Keys,
    instance: String,
    /// The sale's owner, for the ground truth.
    owner: String,
    tier: Tier,
    ttl_ms: u64,
    reentrant: bool,
    /// The room's reset generation when the sale began.
    generation: String,
}

impl ReadPlan {
    fn of(cx: &SaleCx<'_>, lock: &dyn Lock) -> ReadPlan {
        ReadPlan {
            keys: cx.keys.clone(),
            instance: cx.instance.to_owned(),
            owner: cx.owner.clone(),
            tier: cx.settings.tier,
            ttl_ms: cx.settings.ttl_ms,
            reentrant: lock.reentrant(),
            generation: cx.generation.clone(),
        }
    }

    /// The read's calls, for one round trip: `enter.lua`, and for the reentrant tiers the
    /// nested re-entry before it and the nested release after it, under the lock's owner.
    fn calls(&self, lock_owner: &str, fence: Option<u64>) -> Vec<Call> {
        self.calls_with_token(lock_owner, token_arg(fence))
    }

    /// The read's calls to send behind the acquire that takes the lock, in its script
    /// (`lock/riding.rs`): a fenced read carries the token that acquire takes.
    fn calls_behind_acquire(&self, lock_owner: &str) -> Vec<Call> {
        let token = match self.tier {
            Tier::Fenced => composed::ACQUIRED.to_owned(),
            _ => String::new(),
        };
        self.calls_with_token(lock_owner, token)
    }

    fn calls_with_token(&self, lock_owner: &str, token: String) -> Vec<Call> {
        let read = enter(
            &self.keys,
            &self.instance,
            &self.owner,
            token,
            &self.generation,
        );
        if !self.reentrant {
            return vec![read];
        }
        let (again, back) = riding::reentry(&self.keys, self.tier, self.ttl_ms, lock_owner);
        vec![again, read, back]
    }
}

/// The read, with the reentrant tiers' nested step around it: the lock is taken again by the
/// same owner, as a sale calling a helper that locks too would (with a non-reentrant lock this
/// would wait for itself), and the nested hold is given back after the read. One round trip
/// when the steps can ride together; none when the previous holder sent it (`ahead`). Returns
/// the read and the hold depth at it (2 proves the re-entry).
async fn read(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    depth: u32,
    fence: Option<u64>,
    ahead: Option<ReadReplies>,
) -> Result<(Entered, u32), AppError> {
    let replies = match ahead {
        Some(replies) => replies,
        None if !lock.reentrant() || riding::rides_with_sale(lcx) => {
            let calls = ReadPlan::of(cx, lock).calls(lcx.owner, fence);
            let calls: Vec<&Call> = calls.iter().collect();
            let mut conn = cx.redis.conn().await?;
            composed::run_in_order(&mut conn, &calls).await
        }
        None => return read_one_by_one(cx, lcx, lock, fence).await,
    };
    let mut replies = replies.map_err(StoreError::from)?.into_iter();
    let mut next = || {
        replies
            .next()
            .ok_or_else(|| AppError::Internal("a read gave fewer replies than calls".into()))
    };
    if !lock.reentrant() {
        return Ok((entered(next()?, fence)?, depth));
    }
    let (again, read, back) = (next()?, next()?, next()?);
    let Some(depth) = riding::reentered(again).map_err(StoreError::from)? else {
        // Someone else holds the lock: this owner lost it before its read. Its release will
        // find that out and record it.
        return Err(AppError::LockLost);
    };
    riding::released(lcx, back).await?;
    Ok((entered(read, fence)?, depth))
}

/// The reentrant read when the lock lives on another server than the stock: re-entry, read
/// and nested release one after the other.
async fn read_one_by_one(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    fence: Option<u64>,
) -> Result<(Entered, u32), AppError> {
    let nested = lock.acquire(lcx).await.map_err(|err| match err {
        LockError::Timeout => AppError::Internal("re-entry timed out".into()),
        LockError::HolderDied => AppError::HolderDied,
        LockError::Store(err) => err.into(),
    })?;
    let depth = nested.depth;
    let mut conn = cx.redis.conn().await?;
    let read = enter(
        cx.keys,
        cx.instance,
        &cx.owner,
        token_arg(fence),
        &cx.generation,
    )
    .invoke(&mut conn)
    .await;
    lock.release(lcx, nested).await?;
    Ok((entered(read, fence)?, depth))
}

/// Reads the stock and notes the overlap clock (`enter.lua`), for the sale of `owner`.
/// A fencing token as the scripts take it: `''` for the unfenced tiers.
fn token_arg(fence: Option<u64>) -> String {
    fence.map(|f| f.to_string()).unwrap_or_default()
}

/// `token`: the fencing token ([`token_arg`]), or [`composed::ACQUIRED`]; `generation`: the
/// room's reset generation when the sale began.
fn enter(keys: &Keys, instance: &str, owner: &str, token: String, generation: &str) -> Call {
    ENTER
        .call()
        .key(keys.stock())
        .key(keys.exits())
        .key(keys.fence_seen())
        .key(keys.stale_writes_rejected())
        .key(keys.timeline())
        .key(keys.generation())
        .arg(token)
        .arg(instance)
        .arg(owner)
        .arg(generation)
}

/// `enter.lua`'s reply; `None` when the fencing token is already stale.
fn entered(
    reply: redis::RedisResult<redis::Value>,
    fence: Option<u64>,
) -> Result<Entered, StoreError> {
    let (stock, exits, enter_us): (i64, i64, i64) = composed::reply(reply)?;
    let stale = stock < 0 && fence.is_some();
    Ok((!stale).then_some(Entry {
        stock,
        exits,
        enter_us,
    }))
}

/// The write a sale makes on its way out of the critical section.
struct Write<'a> {
    new_stock: i64,
    qty: u32,
    entry: &'a str,
}

/// Leaves the critical section, making the write when there is one, and lets the lock go as
/// [`Leaving`] says. Returns `commit.lua`'s outcome.
async fn leave(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    leaving: &mut Leaving<'_>,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
) -> Result<String, StoreError> {
    let commit = commit(cx, exits_at_enter, write, leaving.fence);
    let mut conn = cx.redis.conn().await?;
    if let Some(mut to) = (leaving.next)() {
        // A pass: the successor's read rides right behind this write.
        let mut calls = vec![commit];
        calls.extend(to.read(lcx.owner, leaving.fence));
        let sent_ahead = calls.len() > 1;
        let refs: Vec<&Call> = calls.iter().collect();
        let replies = composed::run_in_order(&mut conn, &refs).await;
        let (mine, theirs) = match replies {
            Ok(mut replies) => {
                let mine = replies.remove(0);
                (Ok(mine), Ok(replies))
            }
            Err(err) => (Err(err.clone()), Err(err)),
        };
        leaving.passing = Some((to, sent_ahead.then_some(theirs)));
        return outcome(mine?);
    }
    let release = match riding::rides_with_sale(lcx) {
        true => riding::release(lcx),
        false => None,
    };
    let Some(release) = release else {
        return outcome(commit.invoke(&mut conn).await);
    };
    if leaving.cohort {
        cohort::forget_old_release(lcx);
    }
    // Stop renewing before giving the lock back, as the tier's own release does.
    drop(leaving.held.take());
    let replies = composed::run_in_order(&mut conn, &[&commit, &release]).await?;
    let [committed, released] = <[_; 2]>::try_from(replies)
        .map_err(|_| StoreError::Unavailable("a composed script of 2 gave another count".into()))?;
    if let Err(err) = riding::released(lcx, released).await {
        // The sale's outcome stands; the lock is left to its lease.
        tracing::warn!(%err, tier = %lcx.settings.tier, "release failed");
    }
    outcome(committed)
}

fn outcome(reply: redis::RedisResult<redis::Value>) -> Result<String, StoreError> {
    let (outcome, _overlaps): (String, i64) = composed::reply(reply)?;
    Ok(outcome)
}

/// The write and the overlap count on the way out (`commit.lua`).
fn commit(
    cx: &SaleCx<'_>,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
    fence: Option<u64>,
) -> Call {
    COMMIT
        .call()
        .key(cx.keys.stock())
        .key(cx.keys.ledger())
        .key(cx.keys.items_sold())
        .key(cx.keys.exits())
        .key(cx.keys.overlaps())
        .key(cx.keys.fence_seen())
        .key(cx.keys.stale_writes_rejected())
        .key(cx.keys.timeline())
        .key(cx.keys.generation())
        .arg(exits_at_enter)
        .arg(
            write
                .as_ref()
                .map(|w| w.new_stock.to_string())
                .unwrap_or_default(),
        )
        .arg(write.as_ref().map_or(0, |w| w.qty))
        .arg(write.as_ref().map_or("", |w| w.entry))
        .arg(fence.map(|f| f.to_string()).unwrap_or_default())
        .arg(cx.instance)
        .arg(&cx.owner)
        .arg(&cx.generation)
}

async fn sell_lock_free(cx: &SaleCx<'_>, order: &Order) -> Result<Sold, AppError> {
    let order_id = uuid::Uuid::now_v7().to_string();
    let entry = ledger_entry(cx, order, &order_id, None, 0, None)?;
    match atomic_deduct::sell(cx.redis, cx.keys, order.qty, &entry, cx.instance).await? {
        Ok(stock_left) => Ok(Sold {
            order_id,
            stock_left,
            instance: cx.instance.to_owned(),
            tier: cx.settings.tier,
            fence: None,
        }),
        Err(stock) => Err(AppError::SoldOut {
            stock_left: stock,
            requested: order.qty,
        }),
    }
}

/// A buyer who gave up on the lock: counted (best effort, the 503 goes out regardless).
async fn lock_timeout(cx: &SaleCx<'_>) -> AppError {
    let result = async {
        let mut conn = cx.redis.conn().await?;
        let _: i64 = redis::cmd("INCR")
            .arg(cx.keys.lock_timeouts())
            .query_async(&mut conn)
            .await?;
        Ok::<_, StoreError>(())
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(%err, "could not count a lock timeout");
    }
    AppError::LockTimeout {
        deadline_ms: cx.settings.wait_deadline_ms,
    }
}
