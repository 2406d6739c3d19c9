//! A lease renewed on the watchdog's schedule, every lease/3, until the hold ends (the value
//! is dropped) or a renewal says the lock is no longer ours: Redisson's watchdog, shared by
//! the reentrant tiers and a lab lock's renew step.

use std::future::Future;
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio::time::MissedTickBehavior;

/// The renewal task of one hold; aborted on drop.
pub struct Renewals(AbortHandle);

impl Renewals {
    /// Calls `renew` every `ttl_ms / 3` (the first one period after the acquire, whose lease
    /// is fresh) until it answers `false`.
    pub fn every_third_of<F, Fut>(ttl_ms: u64, mut renew: F) -> Renewals
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = bool> + Send,
    {
        let period = Duration::from_millis((ttl_ms / 3).max(1));
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
            ticks.tick().await; // the first tick fires at once
            loop {
                ticks.tick().await;
                if !renew().await {
                    break;
                }
            }
        });
        Renewals(task.abort_handle())
    }
}

impl Drop for Renewals {
    fn drop(&mut self) {
        self.0.abort();
    }
}
