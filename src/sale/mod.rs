//! The deduct step of `POST /sale`, deliberately the articles' read-check-write:
//! acquire → `GET stock` → business work → `SET stock n-qty` + ledger entry → release.
//!
//! The ground truth is written by the same scripts that read and write the stock
//! (`enter.lua`, `commit.lua`), so it costs no extra round trip: a locked sale is
//! acquire + enter + commit + release, plus whatever the tier's lock itself needs.

mod atomic_deduct;
mod run;

pub use run::run_sale;

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use redis::Script;
use serde::Serialize;

use crate::error::AppError;
use crate::faults::{self, Fault, FaultKind, FaultPoints};
use crate::keys::Keys;
use crate::lock::{self, Held, Lock, LockCx, LockError, ReleaseSignals};
use crate::lock_store::chaos::HeldReplicas;
use crate::lock_store::LockStore;
use crate::metrics::Metrics;
use crate::redis_pool::{RedisPool, StoreError};
use crate::settings::Settings;
use crate::tier::Tier;

static ENTER: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("enter.lua")));
static COMMIT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("commit.lua")));

/// Most items one order may buy.
pub const MAX_QTY: u32 = 10;
/// Longest buyer id, in bytes.
pub const MAX_BUYER_LEN: usize = 64;

/// One buyer's request, validated by [`Order::new`], the only way to make one.
#[derive(Debug, Clone)]
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

    pub fn buyer(&self) -> &str {
        &self.buyer
    }

    pub fn qty(&self) -> u32 {
        self.qty
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

fn lock_cx<'a>(
    cx: &'a SaleCx<'_>,
    faults: &'a FaultPoints<'a>,
    store_fault: &'a std::sync::Mutex<Option<Fault>>,
    held_replicas: &'a std::sync::Mutex<Option<HeldReplicas>>,
) -> LockCx<'a> {
    LockCx {
        store: cx.store,
        truth: cx.redis,
        keys: cx.keys,
        settings: &cx.settings,
        owner: &cx.owner,
        instance: cx.instance,
        signals: cx.signals,
        faults,
        store_fault,
        held_replicas,
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
    let faults = cx.fault_points();
    let store_fault = std::sync::Mutex::new(claim_store_fault(cx, &faults).await);
    let held_replicas = std::sync::Mutex::new(None);
    let lcx = lock_cx(cx, &faults, &store_fault, &held_replicas);
    let waited = Instant::now();
    let held = match lock.acquire(&lcx).await {
        Ok(held) => held,
        Err(LockError::Timeout) => {
            count_timeout(cx).await;
            return Err(AppError::LockTimeout {
                deadline_ms: cx.settings.wait_deadline_ms,
            });
        }
        Err(LockError::Store(err)) => return Err(err.into()),
    };
    cx.metrics.lock_wait(tier, waited.elapsed());
    let result = critical_section(cx, &lcx, lock, &held, order).await;
    if let Err(err) = lock.release(&lcx, held).await {
        // The sale's outcome stands; the lock is left to its lease.
        tracing::warn!(%err, %tier, "release failed");
    }
    result
}

async fn critical_section(
    cx: &SaleCx<'_>,
    lcx: &LockCx<'_>,
    lock: &dyn Lock,
    held: &Held,
    order: &Order,
) -> Result<Sold, AppError> {
    // The nested step: a reentrant lock is taken again by the same owner, as a sale calling a
    // helper that locks too would. With a non-reentrant lock this would wait for itself.
    let nested = match lock.reentrant() {
        true => Some(lock.acquire(lcx).await.map_err(|err| match err {
            LockError::Timeout => AppError::Internal("re-entry timed out".into()),
            LockError::Store(err) => err.into(),
        })?),
        false => None,
    };
    let depth = nested.as_ref().map_or(held.depth, |n| n.depth);
    let entered = enter(cx, held.fence).await;
    if let Some(nested) = nested {
        lock.release(lcx, nested).await?;
    }
    let entered = entered?;
    let Some((stock, exits, enter_us)) = entered else {
        return Err(AppError::LockLost);
    };
    if lcx.faults.claim(FaultKind::CrashHolding).await.is_some() {
        faults::crash("holding the lock");
    }
    let qty = i64::from(order.qty);
    if stock < qty {
        commit(cx, exits, None, held.fence).await?;
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
    let order_id = uuid::Uuid::now_v7().to_string();
    let entry = ledger_entry(cx, order, &order_id, held.fence, depth, Some(enter_us))?;
    let write = Write {
        new_stock: stock - qty,
        qty: order.qty,
        entry: &entry,
    };
    let outcome = commit(cx, exits, Some(write), held.fence).await?;
    match outcome.as_str() {
        "sold" => Ok(Sold {
            order_id,
            stock_left: stock - qty,
            instance: cx.instance.to_owned(),
            tier: cx.settings.tier,
            fence: held.fence,
        }),
        "stale" => Err(AppError::LockLost),
        other => Err(AppError::Internal(format!("commit returned {other}"))),
    }
}

/// Reads the stock; `None` when the fencing token is already stale.
async fn enter(cx: &SaleCx<'_>, fence: Option<u64>) -> Result<Option<(i64, i64, i64)>, StoreError> {
    let mut conn = cx.redis.conn().await?;
    let (stock, exits, now): (i64, i64, i64) = ENTER
        .key(cx.keys.stock())
        .key(cx.keys.exits())
        .key(cx.keys.fence_seen())
        .key(cx.keys.stale_writes_rejected())
        .key(cx.keys.timeline())
        .arg(fence.map(|f| f.to_string()).unwrap_or_default())
        .arg(cx.instance)
        .arg(&cx.owner)
        .invoke_async(&mut conn)
        .await?;
    Ok((stock >= 0 || fence.is_none()).then_some((stock, exits, now)))
}

/// The write a sale makes on its way out of the critical section.
struct Write<'a> {
    new_stock: i64,
    qty: u32,
    entry: &'a str,
}

/// Leaves the critical section, making the write when there is one.
async fn commit(
    cx: &SaleCx<'_>,
    exits_at_enter: i64,
    write: Option<Write<'_>>,
    fence: Option<u64>,
) -> Result<String, StoreError> {
    let mut conn = cx.redis.conn().await?;
    let (outcome, _overlaps): (String, i64) = COMMIT
        .key(cx.keys.stock())
        .key(cx.keys.ledger())
        .key(cx.keys.items_sold())
        .key(cx.keys.exits())
        .key(cx.keys.overlaps())
        .key(cx.keys.fence_seen())
        .key(cx.keys.stale_writes_rejected())
        .key(cx.keys.timeline())
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
        .invoke_async(&mut conn)
        .await?;
    Ok(outcome)
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

/// Counts a buyer who gave up on the lock; best effort, the 503 goes out regardless.
async fn count_timeout(cx: &SaleCx<'_>) {
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
}
