//! The lab's grader: a fixed suite of attacks, each a scenario of the curriculum's kind run
//! against the room's `custom` tier, judged from the resource store's ground truth as every
//! scenario is; then a report card: what the lock guaranteed, where it broke, which rung of
//! the ladder it matches, and the article that discusses each hole.
//!
//! Every attack's fault strikes the room alone (a holder that dies or pauses without its
//! instance, a pause between release steps), so a class of students can grade at once without
//! taking instances down under each other. To Redis a dead holder is one that stops sending,
//! and a paused one is one whose renewals stop: what the lock sees is the same.
//!
//! The grader is calibrated against the ladder: [`LADDER`] says what each built-in tier's
//! outcome is per attack, and a test runs the built-in tiers and the ladder's own scripts
//! submitted as custom locks through the same suite and requires the three to agree.

#[cfg(feature = "cli")]
pub mod command;

use serde::Serialize;

use oversell_api::{Fault, FaultKind, Tier, WaitStrategy};

use crate::scenario::{Expect, Runner, Scenario, ScenarioRun, StoreSetup};

pub use oversell_api::grade::{Outcome, RungOutcomes, RUNG_ATTACKS};

/// How many steps of each kind the lock has: which attacks apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub acquire_steps: usize,
    pub release_steps: usize,
    pub renew: bool,
    /// Whether the lock store can be failed over (Sentinel) and the grader may do it: a
    /// failover strikes every room's locks, so only the admin token grades it.
    #[serde(default)]
    pub failover: bool,
}

/// How an attack's run is read.
#[derive(Debug, Clone, Copy)]
enum Judge {
    /// Overlap (any of oversold, lost updates, overlaps, but overlaps whose stale writes
    /// the stock refused by their fencing token) or held; with `foreign`, a foreign release
    /// is told apart from a plain overlap.
    Figures { foreign: bool },
    /// The run's deadlock checks (`Expect::StallUntilReset`) all held: a deadlock.
    Deadlock,
}

/// What an attack needs of the lock to apply.
#[derive(Debug, Clone, Copy)]
enum Needs {
    Nothing,
    TwoAcquireSteps,
    TwoReleaseSteps,
    Failover,
}

/// One attack of the suite.
pub struct Attack {
    pub scenario: Scenario,
    judge: Judge,
    needs: Needs,
    /// The hole it finds, in English and Chinese, with the article that tells it.
    pub hole_en: &'static str,
    pub hole_zh: &'static str,
}

impl Attack {
    pub fn id(&self) -> &'static str {
        self.scenario.id
    }

    /// Whether the attack applies to a lock of this shape, and why not if it does not.
    pub fn applies(&self, shape: Shape) -> Result<(), &'static str> {
        match self.needs {
            Needs::TwoAcquireSteps if shape.acquire_steps < 2 => {
                Err("one acquire step: there is no gap between steps to die in")
            }
            Needs::TwoReleaseSteps if shape.release_steps < 2 => {
                Err("one release step: there is no gap between steps to pause in")
            }
            Needs::Failover if !shape.failover => Err(
                "needs a lock store that fails over (oversell up --lab --lock-store sentinel), \
                 and the admin token: a failover strikes every room's locks",
            ),
            _ => Ok(()),
        }
    }

    /// The attack's scenario against `tier` (the room's `custom` tier, or a built-in one for
    /// the calibration).
    pub fn against(&self, tier: Tier) -> Scenario {
        Scenario {
            tier,
            ..self.scenario.clone()
        }
    }

    /// Reads the outcome off a run of this attack.
    pub fn judge(&self, run: &ScenarioRun) -> Outcome {
        let figure = |name: &str| run.figures.get(name).copied().unwrap_or(0.0);
        match self.judge {
            Judge::Deadlock if run.passed => Outcome::Deadlock,
            Judge::Deadlock => Outcome::Held,
            Judge::Figures { foreign } => {
                // A fencing token lets the sections overlap and the stock turn the stale
                // holder away: when it did, and nothing was lost, the overlap did no harm.
                let fenced_off = figure("stale_writes_rejected") > 0.0;
                let harm = ["oversold", "lost_updates"].iter().any(|f| figure(f) > 0.0);
                let two_holders = harm || (figure("overlaps") > 0.0 && !fenced_off);
                if foreign && figure("foreign_releases") > 0.0 {
                    Outcome::ForeignRelease
                } else if two_holders {
                    Outcome::Overlap
                } else {
                    Outcome::Held
                }
            }
        }
    }
}

/// What every attack shares: the room's own lock, 100 items, buyers through nginx, the
/// watchdog on when the lock has a renew step; each attack sets its lease, work, wait, fault
/// and load. Timing-sensitive all: the grader's hold rate is measured (BENCHMARKS).
const BASE: Scenario = Scenario {
    tier: oversell_api::tier::LAB_LOCK,
    expect: NO_FIGURES,
    timing_sensitive: true,
    ..crate::scenario::BASE
};

const NO_FIGURES: Expect = Expect::Figures(&[]);

/// The suite, in the order a lock is attacked.
pub static ATTACKS: &[Attack] = &[
    Attack {
        scenario: Scenario {
            id: "contention",
            ..BASE
        },
        judge: Judge::Figures { foreign: false },
        needs: Needs::Nothing,
        hole_en: "Two buyers held the lock at once under plain load: the acquire is not \
                  exclusive: a look and a write in two steps, as 003 lines 6–13 show with GET then \
                  SET, let two buyers both see the lock free.",
        hole_zh: "普通并发下就有两个买家同时持锁：加锁不是互斥的。先看一眼、再写入，分成两步（003 第 6–13 行\
                  的先 GET 后 SET），两个买家都会看到锁是空的。",
    },
    Attack {
        scenario: Scenario {
            id: "holder-dies",
            ttl_ms: 1_000,
            business_ms: 5,
            wait: WaitStrategy::Spin { sleep_ms: 20 },
            wait_deadline_ms: 1_500,
            fault: Some(Fault::new(FaultKind::HolderDies, 0)),
            buyers: 30,
            expect: Expect::StallUntilReset,
            ..BASE
        },
        judge: Judge::Deadlock,
        needs: Needs::Nothing,
        hole_en: "The holder died and its lock stayed forever: deadlock, until a reset (000's \
                  bronze tier: give the lock a lease).",
        hole_zh: "持锁者死掉后锁永远不释放：死锁，只能手动重置（000 青铜方案：锁要有租约）。",
    },
    Attack {
        scenario: Scenario {
            id: "holder-dies-between-steps",
            ttl_ms: 1_000,
            business_ms: 5,
            wait: WaitStrategy::Spin { sleep_ms: 20 },
            wait_deadline_ms: 1_500,
            fault: Some(Fault::new(FaultKind::HolderDiesBetweenSteps, 0)),
            buyers: 30,
            expect: Expect::StallUntilReset,
            ..BASE
        },
        judge: Judge::Deadlock,
        needs: Needs::TwoAcquireSteps,
        hole_en: "The holder died between two acquire steps and left a lock with no lease: \
                  deadlock (000's silver tier: SETNX and EXPIRE must be one command, SET NX PX).",
        hole_zh: "持锁者死在两步加锁之间，留下一把没有租约的锁：死锁（000 白银方案：SETNX 和 EXPIRE \
                  必须合成一条命令 SET NX PX）。",
    },
    Attack {
        scenario: Scenario {
            id: "slow-work",
            ttl_ms: 200,
            business_ms: 500,
            wait: WaitStrategy::Spin { sleep_ms: 5 },
            wait_deadline_ms: 15_000,
            buyers: 8,
            ..BASE
        },
        judge: Judge::Figures { foreign: true },
        needs: Needs::Nothing,
        hole_en: "Work longer than the lease: the lease ran out, a second buyer took the lock, \
                  and (with a foreign release) the first one's release deleted the second's \
                  lock (000's gold tier; 001 and 002: renew the lease while the work runs, \
                  a watchdog, and release only your own lock).",
        hole_zh: "业务时间超过租约：租约到期，第二个买家拿到锁；若出现误删，则是第一个买家释放时删掉了第二个的锁\
                  （000 黄金方案；001、002：处理业务期间由看门狗续期，并且只释放自己的锁）。",
    },
    Attack {
        scenario: Scenario {
            id: "release-gap",
            ttl_ms: 600,
            business_ms: 400,
            wait: WaitStrategy::Spin { sleep_ms: 5 },
            wait_deadline_ms: 10_000,
            fault: Some(Fault::new(FaultKind::ReleaseGap, 450)),
            buyers: 4,
            ..BASE
        },
        judge: Judge::Figures { foreign: true },
        needs: Needs::TwoReleaseSteps,
        hole_en: "The lease ran out between the release's check and its delete: the delete \
                  removed the next holder's lock (000's platinum tier, 002: compare and delete \
                  in one Lua script).",
        hole_zh: "释放时“检查”与“删除”之间租约到期：删除的是下一个持锁者的锁（000 铂金方案、002：\
                  比较和删除要放在同一个 Lua 脚本里）。",
    },
    Attack {
        scenario: Scenario {
            id: "holder-pause",
            ttl_ms: 300,
            business_ms: 5,
            wait: WaitStrategy::Spin { sleep_ms: 10 },
            wait_deadline_ms: 10_000,
            fault: Some(Fault::new(FaultKind::HolderPause, 1_200)),
            buyers: 30,
            ..BASE
        },
        judge: Judge::Figures { foreign: false },
        needs: Needs::Nothing,
        hole_en: "The holder paused past its lease (a GC stop): renewals stopped, a second \
                  holder came, and the first wrote stale data on resuming. No lock alone closes \
                  this: a fencing token checked by the stock does (Kleppmann 2016; the `fenced` \
                  tier; 002 line 656's version numbers are the articles' nearest approach).",
        hole_zh: "持锁者停顿超过租约（GC 停顿）：续期也停了，第二个持锁者进来，第一个恢复后造成陈旧写入。\
                  任何锁本身都堵不上这个洞，要靠库存那一侧检查的围栏令牌（Kleppmann 2016；fenced 方案；\
                  文章里最接近的是 002 第 656 行提到的版本号）。",
    },
    Attack {
        scenario: Scenario {
            id: "failover",
            ttl_ms: 20_000,
            business_ms: 9_000,
            wait_deadline_ms: 15_000,
            fault: Some(Fault::new(FaultKind::Failover, 0)),
            stock: 1,
            buyers: 4,
            store: StoreSetup::sentinel(0),
            ..BASE
        },
        judge: Judge::Figures { foreign: false },
        needs: Needs::Failover,
        hole_en: "The lock was written on the primary, which died before its replica had it \
                  (replication is asynchronous); Sentinel promoted the replica, where no lock \
                  was, and a second buyer took it (001, 002, 003: a failover loses a lock; \
                  WAIT for a replica, Redisson's RLock, narrows it).",
        hole_zh: "锁写在主节点上，主节点在从节点收到之前就挂了（复制是异步的）；哨兵把从节点提升为主节点，\
                  那里没有这把锁，第二个买家又拿到了锁（001、002、003：主从切换会丢锁；\
                  等从节点确认的 WAIT，也就是 Redisson 的 RLock，能缩小这个窗口）。",
    },
];

pub fn find(id: &str) -> Option<&'static Attack> {
    ATTACKS.iter().find(|a| a.id() == id)
}

/// The ladder's tiers as the grader sees them: the rows of the tier table with each one's
/// outcome per attack, in the order of [`ATTACKS`], the first [`RUNG_ATTACKS`] of them (the
/// failover, which needs a fleet of its own, tells no rung from another). The calibration test
/// holds the built-in tiers, and the ladder's scripts submitted as custom locks, to these.
pub static LADDER: std::sync::LazyLock<Vec<(Tier, RungOutcomes)>> =
    std::sync::LazyLock::new(|| {
        Tier::ALL
            .iter()
            .filter_map(|tier| Some((*tier, tier.facts().outcomes?)))
            .collect()
    });

/// The outcomes the ladder says a tier gets: those of the rung its row of the tier table says
/// it is graded as (its own, or a twin's the attacks cannot tell it from: they try a lock's
/// safety, not the order it serves its waiters in), and that rung, which its card names.
pub fn ladder_outcomes(tier: Tier) -> Option<(Tier, &'static RungOutcomes)> {
    let rung = tier.facts().graded_as?;
    Some((rung, rung.facts().outcomes.as_ref()?))
}

/// One attack on the report card.
#[derive(Debug, Clone, Serialize)]
pub struct AttackResult {
    pub attack: &'static str,
    pub outcome: Outcome,
    /// Why it did not apply, or what the lock's scripts said when they failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The hole, when the lock broke.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hole_en: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hole_zh: Option<&'static str>,
    /// The run itself (figures and checks), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<ScenarioRun>,
}

/// The report card.
#[derive(Debug, Clone, Serialize)]
pub struct ReportCard {
    pub shape: Shape,
    pub attacks: Vec<AttackResult>,
    /// The ladder's rung whose outcomes are the same, if one is.
    pub matches: Option<Tier>,
    /// Every attack that applied held, except the pause, which no lock alone survives.
    pub as_good_as_a_lock_gets: bool,
}

impl ReportCard {
    pub fn outcomes(&self) -> Vec<Outcome> {
        self.attacks.iter().map(|a| a.outcome).collect()
    }
}

/// The rung whose outcomes these are (of the whole suite, in its order).
pub fn rung(outcomes: &[Outcome]) -> Option<Tier> {
    let telling = outcomes.get(..RUNG_ATTACKS)?;
    LADDER
        .iter()
        .find(|(_, ladder)| ladder.as_slice() == telling)
        .map(|(tier, _)| *tier)
}

/// Runs the suite against the room's lock (or only the attack `only`, to watch it again on
/// the dashboard's timeline); `failed` says, after a run, whether the lock's own scripts
/// failed during it (and what they said), which the fleet knows and the load does not.
pub async fn grade<F, Fut>(
    runner: &Runner<'_>,
    shape: Shape,
    tier: Tier,
    only: Option<&str>,
    mut failed: F,
) -> anyhow::Result<ReportCard>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Option<String>>>,
{
    let mut attacks = Vec::new();
    for attack in ATTACKS
        .iter()
        .filter(|a| only.is_none_or(|id| id == a.id()))
    {
        if let Err(why) = attack.applies(shape) {
            attacks.push(AttackResult {
                attack: attack.id(),
                outcome: Outcome::NotApplicable,
                note: Some(why.to_owned()),
                hole_en: None,
                hole_zh: None,
                run: None,
            });
            continue;
        }
        let run = runner.run(&attack.against(tier)).await?;
        let error = failed().await?;
        let outcome = match &error {
            Some(_) => Outcome::Failed,
            None => attack.judge(&run),
        };
        let broke = !matches!(outcome, Outcome::Held | Outcome::Failed);
        attacks.push(AttackResult {
            attack: attack.id(),
            outcome,
            note: error,
            hole_en: broke.then_some(attack.hole_en),
            hole_zh: broke.then_some(attack.hole_zh),
            run: Some(run),
        });
    }
    let outcomes: Vec<Outcome> = attacks.iter().map(|a| a.outcome).collect();
    let as_good_as_a_lock_gets = only.is_none()
        && attacks.iter().all(|a| match a.attack {
            "holder-pause" => a.outcome != Outcome::Failed,
            _ => matches!(a.outcome, Outcome::Held | Outcome::NotApplicable),
        });
    Ok(ReportCard {
        shape,
        matches: only.is_none().then(|| rung(&outcomes)).flatten(),
        attacks,
        as_good_as_a_lock_gets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_has_an_outcome_for_every_attack_and_no_two_rungs_alike() {
        assert_eq!(ATTACKS.len(), RUNG_ATTACKS + 1);
        for (i, (a, first)) in LADDER.iter().enumerate() {
            for (b, second) in &LADDER[i + 1..] {
                assert_ne!(first, second, "{a} and {b} cannot be told apart");
            }
        }
    }

    #[test]
    fn an_attack_needing_a_second_step_does_not_apply_to_one() {
        let one = Shape {
            acquire_steps: 1,
            release_steps: 1,
            renew: false,
            failover: false,
        };
        let between = find("holder-dies-between-steps").unwrap();
        assert!(between.applies(one).is_err());
        let two = Shape {
            acquire_steps: 2,
            ..one
        };
        assert!(between.applies(two).is_ok());
        assert!(find("release-gap").unwrap().applies(two).is_err());
    }

    #[test]
    fn a_rung_is_found_by_its_outcomes() {
        let (tier, outcomes) = &LADDER[1];
        let mut whole = outcomes.to_vec();
        whole.push(Outcome::NotApplicable);
        assert_eq!(rung(&whole), Some(*tier));
        assert_eq!(rung(&[Outcome::Overlap; RUNG_ATTACKS + 1]), None);
    }
}
