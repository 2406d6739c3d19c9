//! What one search covers: how many buyers, how many tries each, the lease, the faults the
//! adversary may spend, and where it stops looking.

use serde::Serialize;

use crate::said::Lang;
use crate::world::FaultKind;

/// When time may pass while a live buyer is in the middle of the lock (mid-acquire, holding,
/// mid-release): the grader's attacks each allow one such gap; the search's own default
/// allows every one (a round trip or a business step may take any time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimePasses {
    /// Whenever: any step may be slow.
    Freely,
    /// Only while no live buyer is in the middle of the lock: work is shorter than the lease
    /// (time still passes under a dead or paused one).
    Calmly,
    /// Also while a holder does its business work (between the read and the write).
    InBusiness,
    /// Also between a buyer's first and second release step.
    InReleaseGap,
}

/// Where a crash may strike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrashAt {
    /// Between any two of a buyer's steps.
    Anywhere,
    /// Only a buyer that holds the lock.
    InSection,
    /// Only between two acquire steps.
    BetweenAcquireSteps,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bounds {
    /// Buyers, each after one unit (the stock holds one per buyer).
    pub clients: usize,
    /// How many faults the adversary may spend.
    pub budget: u32,
    /// Which kinds.
    pub faults: Vec<FaultKind>,
    /// How many acquire attempts a buyer makes before its wait gives up (1: no retry).
    pub attempts: u32,
    /// The lease every step is sent (`ARGV[2]`), ms; the watchdog renews every third of it.
    pub lease_ms: u64,
    /// How much longer a buyer will wait, ms (`ARGV[4]`).
    pub wait_ms: u64,
    /// The longest schedule looked at.
    pub max_depth: usize,
    /// The most states kept: past it the search ends with "bound reached", never an OOM.
    pub max_states: usize,
    /// The longest the search may run, ms (`None`: as long as the other bounds let it): past
    /// it the search ends with "bound reached", as at the state bound. What a server that
    /// searches on a student's press needs, whatever the lock.
    pub time_budget_ms: Option<u64>,
    pub time: TimePasses,
    pub crash_at: CrashAt,
}

impl Default for Bounds {
    /// The default bounds: two buyers, one fault (a pause or a crash, the faults the grader's
    /// rung-telling attacks use), one retry each.
    fn default() -> Self {
        Bounds {
            clients: 2,
            budget: 1,
            faults: vec![FaultKind::Pause, FaultKind::Crash],
            attempts: 2,
            lease_ms: 300,
            wait_ms: 1_000,
            max_depth: 60,
            max_states: 2_000_000,
            time_budget_ms: None,
            time: TimePasses::Freely,
            crash_at: CrashAt::Anywhere,
        }
    }
}

impl Bounds {
    pub fn allows(&self, kind: FaultKind) -> bool {
        self.budget > 0 && self.faults.contains(&kind)
    }

    /// The renewal period: a third of the lease, as the service's watchdog.
    pub fn renew_every(&self) -> u64 {
        (self.lease_ms / 3).max(1)
    }

    /// The bounds in words, for the answer.
    pub fn words(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let faults: Vec<&str> = self.faults.iter().map(|f| f.id()).collect();
        let faults = match (self.budget == 0 || faults.is_empty(), zh) {
            (true, false) => "no fault".to_owned(),
            (true, true) => "没有故障".to_owned(),
            (false, false) => format!("{} fault(s) of {}", self.budget, faults.join(", ")),
            (false, true) => format!("至多 {} 次故障（{}）", self.budget, faults.join(", ")),
        };
        let time = match (self.time, zh) {
            (TimePasses::Freely, _) => "",
            (TimePasses::Calmly, false) => ", time passing only while nobody live is mid-lock",
            (TimePasses::Calmly, true) => "，只在没有活着的买家处于锁中时才流逝时间",
            (TimePasses::InBusiness, false) => ", time passing mid-lock only in the business work",
            (TimePasses::InBusiness, true) => "，锁中只有业务处理时才流逝时间",
            (TimePasses::InReleaseGap, false) => {
                ", time passing mid-lock only between the release steps"
            }
            (TimePasses::InReleaseGap, true) => "，锁中只有两个解锁步骤之间才流逝时间",
        };
        let (c, a, l, d, n) = (
            self.clients,
            self.attempts,
            self.lease_ms,
            self.max_depth,
            self.max_states,
        );
        let budget = match (self.time_budget_ms, zh) {
            (None, _) => String::new(),
            (Some(ms), false) => format!(", time ≤ {ms} ms"),
            (Some(ms), true) => format!("，用时 ≤ {ms} 毫秒"),
        };
        match zh {
            false => format!(
                "{c} clients, {a} acquire attempt(s) each, lease {l} ms, {faults}{time}, depth ≤ {d}, states ≤ {n}{budget}"
            ),
            true => format!(
                "{c} 个买家，每人至多 {a} 次加锁尝试，租约 {l} 毫秒，{faults}{time}，深度 ≤ {d}，状态 ≤ {n}{budget}"
            ),
        }
    }
}
