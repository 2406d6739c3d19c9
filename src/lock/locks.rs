//! The lock each tier's rooms take on this instance ([`Locks`]): one object per tier, built
//! from the tier files (`tiers/`), and, for the lab, a room's own made of the steps it
//! submitted; for a room with faults armed, either wrapped in the fault layer (`faulty/`)
//! for the sale ([`Locks::in_room`]).

use oversell_api::tier::{Tier, LAB_LOCK};

use super::engine::Stepped;
use super::faulty::{FaultLayer, TokenSlots};
use super::hook::StepHook;
use super::tiers::tier_locks;
use super::{Bare, Lock, TierLock};
use crate::fleet_sync::RoomConfig;
use crate::lock_store::LockStore;

/// The lock a sale in one room takes ([`Locks::in_room`]), and where it lives.
pub struct RoomLock<'a> {
    lock: Layered<'a>,
    store: &'a LockStore,
}

/// The room's lock bare, or in the fault layer.
enum Layered<'a> {
    Bare(Bare<'a>),
    Faulty(Box<FaultLayer<'a>>),
}

impl<'a> RoomLock<'a> {
    /// The lock store the lock lives in.
    pub fn store(&self) -> &'a LockStore {
        self.store
    }

    /// What acts between the lock's steps: the fault layer, or nothing.
    pub fn hook(&self) -> Option<&dyn StepHook> {
        match &self.lock {
            Layered::Faulty(layer) => Some(&**layer),
            Layered::Bare(_) => None,
        }
    }
}

impl<'a> std::ops::Deref for RoomLock<'a> {
    type Target = dyn Lock + 'a;

    fn deref(&self) -> &Self::Target {
        match &self.lock {
            Layered::Bare(bare) => &**bare,
            Layered::Faulty(layer) => &**layer,
        }
    }
}

/// One lock object per tier for this instance (the `local` tier keeps its mutexes here), by
/// [`Tier::index`]; none for a tier that takes no lock (`atomic-deduct`).
pub struct Locks {
    by_tier: Vec<Option<Box<dyn Lock>>>,
    /// The one owner token per room of the `token-per-instance` fault, shared by every sale
    /// of this instance as a library's lock object shares its own between tasks.
    slots: TokenSlots,
    /// The steps of the tiers the engine runs as built-in step lists, for the tests.
    #[cfg(test)]
    techniques: Vec<Option<&'static dyn super::steps::Technique>>,
}

impl Default for Locks {
    fn default() -> Self {
        let mut by_tier: Vec<Option<Box<dyn Lock>>> = Tier::ALL.iter().map(|_| None).collect();
        #[cfg(test)]
        let mut techniques = vec![None; Tier::ALL.len()];
        for (tier, lock) in tier_locks() {
            by_tier[tier.index()] = Some(match lock {
                TierLock::Steps(technique) => {
                    #[cfg(test)]
                    {
                        techniques[tier.index()] = Some(technique);
                    }
                    Box::new(Stepped(technique))
                }
                TierLock::Own(lock) => lock,
            });
        }
        Locks {
            by_tier,
            slots: TokenSlots::default(),
            #[cfg(test)]
            techniques,
        }
    }
}

impl Locks {
    /// The lock of a tier; `None` for a tier that takes none (`atomic-deduct`).
    pub(super) fn get(&self, tier: Tier) -> Option<&dyn Lock> {
        self.by_tier[tier.index()].as_deref()
    }

    /// The lock a sale in `room` takes, in `store`: its tier's, or, for the lab, the room's own
    /// made of the steps it submitted; in the fault layer when the room has faults armed.
    /// `None` for a tier that takes none.
    pub fn in_room<'a>(
        &'a self,
        room: &'a RoomConfig,
        store: &'a LockStore,
    ) -> Option<RoomLock<'a>> {
        let tier = room.settings.tier;
        let lock = self.get(tier)?;
        // Only the lab's tier has a lock of each room's own.
        let own = match tier == LAB_LOCK {
            true => lock.in_room(room.lab.as_deref()),
            false => None,
        };
        let bare = match own {
            Some(own) => Bare::Own(own),
            None => Bare::Tier(lock),
        };
        // Nothing to strike: the lock bare, with no hook at all.
        let lock = match room.faults.is_empty() && !room.store_fault_pending {
            true => Layered::Bare(bare),
            false => Layered::Faulty(Box::new(FaultLayer::around(bare, room, &self.slots))),
        };
        Some(RoomLock { lock, store })
    }

    /// The steps of a tier the engine runs as a built-in step list (`steps.rs`).
    #[cfg(test)]
    pub(super) fn technique(&self, tier: Tier) -> Option<&'static dyn super::steps::Technique> {
        self.techniques[tier.index()]
    }
}
