//! The lock each tier's rooms take on this instance ([`Locks`]): one object per tier, built
//! from the tier files (`tiers/`), and, for the lab, a room's own made of the steps it
//! submitted ([`Locks::in_room`]).

use oversell_api::tier::{Tier, LAB_LOCK};

use super::engine::Stepped;
use super::tiers::tier_locks;
use super::{Lock, TierLock};
use crate::lab::LabLock;

/// The lock a sale in one room takes ([`Locks::in_room`]): its tier's, or the room's own.
pub enum RoomLock<'a> {
    Tier(&'a dyn Lock),
    Own(Box<dyn Lock + 'a>),
}

impl<'a> std::ops::Deref for RoomLock<'a> {
    type Target = dyn Lock + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            RoomLock::Tier(lock) => *lock,
            RoomLock::Own(lock) => lock.as_ref(),
        }
    }
}

/// One lock object per tier for this instance (the `local` tier keeps its mutexes here), by
/// [`Tier::index`]; none for a tier that takes no lock (`atomic-deduct`).
pub struct Locks {
    by_tier: Vec<Option<Box<dyn Lock>>>,
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

    /// The lock a sale in a room of `tier` takes: the tier's, or, for the lab, the room's own
    /// made of the steps it submitted (`lab`); `None` for a tier that takes none.
    pub fn in_room<'a>(&'a self, tier: Tier, lab: Option<&'a LabLock>) -> Option<RoomLock<'a>> {
        let lock = self.get(tier)?;
        // Only the lab's tier has a lock of each room's own.
        if tier != LAB_LOCK {
            return Some(RoomLock::Tier(lock));
        }
        Some(match lock.in_room(lab) {
            Some(own) => RoomLock::Own(own),
            None => RoomLock::Tier(lock),
        })
    }

    /// The steps of a tier the engine runs as a built-in step list (`steps.rs`).
    #[cfg(test)]
    pub(super) fn technique(&self, tier: Tier) -> Option<&'static dyn super::steps::Technique> {
        self.techniques[tier.index()]
    }
}
