//! What one step of a schedule did, as data, and in words: English, and Chinese for the
//! class's reveal and the book.

use serde::Serialize;

/// A language of the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub fn parse(s: &str) -> Option<Lang> {
        match s {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
}

/// What an acquire step's reply made of the buyer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Took {
    Busy,
    GoesOn,
    Holds { token: Option<u64> },
}

/// Where a buyer was when it died.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Died {
    Holding,
    BetweenAcquireSteps,
    BetweenReleaseSteps,
    Elsewhere,
}

/// One step of a schedule. `who` is a buyer (`A`, `B`), `step` a step's name (`acquire-1`),
/// `reply` the reply as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Acquire {
        who: String,
        step: String,
        again: bool,
        reply: String,
        took: Took,
    },
    Fails {
        who: String,
        step: String,
        message: String,
    },
    GivesUp {
        who: String,
    },
    ReadRefused {
        who: String,
        token: u64,
        seen: u64,
    },
    Reads {
        who: String,
        stock: i64,
    },
    SoldOut {
        who: String,
    },
    WriteRefused {
        who: String,
        stock: i64,
        token: u64,
        seen: u64,
    },
    Writes {
        who: String,
        stock: i64,
    },
    /// A release step; `deleted`: whose lock it deleted, when another's; `not_mine`: it
    /// stopped on a lock gone or someone else's.
    Release {
        who: String,
        step: String,
        reply: String,
        deleted: Option<String>,
        not_mine: bool,
    },
    Renew {
        who: String,
        step: String,
        reply: String,
        renewed: bool,
    },
    RenewFails {
        who: String,
        step: String,
        message: String,
    },
    Passes {
        by: u64,
        to: u64,
        lock_gone: bool,
    },
    Pauses {
        who: String,
    },
    Wakes {
        who: String,
    },
    Dies {
        who: String,
        at: Died,
    },
    Replicates,
    FailsOver,
    ClockJumps {
        by: u64,
    },
    Nothing {
        who: String,
    },
}

impl Said {
    pub fn words(&self, lang: Lang) -> String {
        match lang {
            Lang::En => self.en(),
            Lang::Zh => self.zh(),
        }
    }

    fn en(&self) -> String {
        match self {
            Said::Acquire {
                who,
                step,
                again,
                reply,
                took,
            } => {
                let again = if *again { " (again)" } else { "" };
                let then = match took {
                    Took::Busy => "busy".to_owned(),
                    Took::GoesOn => "goes on".to_owned(),
                    Took::Holds { token: None } => "holds the lock".to_owned(),
                    Took::Holds { token: Some(t) } => format!("holds the lock, token {t}"),
                };
                format!("{who} {step}{again} → {reply}: {then}")
            }
            Said::Fails { who, step, message } => format!("{who} {step} fails: {message}"),
            Said::GivesUp { who } => format!("{who} gives up waiting (503)"),
            Said::ReadRefused { who, token, seen } => {
                format!("{who} reads with token {token}: refused, stale (seen {seen})")
            }
            Said::Reads { who, stock } => format!("{who} reads stock {stock}"),
            Said::SoldOut { who } => format!("{who} finds it sold out, writes nothing"),
            Said::WriteRefused {
                who,
                stock,
                token,
                seen,
            } => {
                format!("{who} writes {stock} with token {token}: refused, stale (seen {seen})")
            }
            Said::Writes { who, stock } => format!("{who} writes stock {stock}: sold"),
            Said::Release {
                who,
                step,
                reply,
                deleted,
                not_mine,
            } => {
                let then = match (deleted, not_mine) {
                    (Some(of), _) => format!(": deletes {of}'s lock"),
                    (None, true) => ": not mine any more".to_owned(),
                    (None, false) => String::new(),
                };
                format!("{who} {step} → {reply}{then}")
            }
            Said::Renew {
                who,
                step,
                reply,
                renewed: true,
            } => {
                format!("{who}'s watchdog {step} → {reply}: lease starts over")
            }
            Said::Renew {
                who,
                step,
                reply,
                renewed: false,
            } => {
                format!("{who}'s watchdog {step} → {reply}: gone, renewals stop")
            }
            Said::RenewFails { who, step, message } => {
                format!("{who}'s watchdog {step} fails: {message}")
            }
            Said::Passes { by, to, lock_gone } => {
                let gone = if *lock_gone { ": the lock is gone" } else { "" };
                format!("{by} ms pass (t = {to} ms){gone}")
            }
            Said::Pauses { who } => format!("{who} pauses (its renewals too)"),
            Said::Wakes { who } => format!("{who} wakes"),
            Said::Dies { who, at } => {
                let at = match at {
                    Died::Holding => " holding the lock",
                    Died::BetweenAcquireSteps => " between two acquire steps",
                    Died::BetweenReleaseSteps => " between two release steps",
                    Died::Elsewhere => "",
                };
                format!("{who} dies{at}")
            }
            Said::Replicates => "the replica copies the lock store".to_owned(),
            Said::FailsOver => {
                "the lock store fails over: the replica, without the writes not copied, is promoted"
                    .to_owned()
            }
            Said::ClockJumps { by } => format!("the lock store's clock jumps {by} ms ahead"),
            Said::Nothing { who } => format!("{who} has nothing to do"),
        }
    }

    fn zh(&self) -> String {
        match self {
            Said::Acquire {
                who,
                step,
                again,
                reply,
                took,
            } => {
                let again = if *again { "（重试）" } else { "" };
                let then = match took {
                    Took::Busy => "锁被占用".to_owned(),
                    Took::GoesOn => "继续下一步".to_owned(),
                    Took::Holds { token: None } => "拿到锁".to_owned(),
                    Took::Holds { token: Some(t) } => format!("拿到锁，令牌 {t}"),
                };
                format!("{who} 执行 {step}{again} → {reply}：{then}")
            }
            Said::Fails { who, step, message } => format!("{who} 的 {step} 出错：{message}"),
            Said::GivesUp { who } => format!("{who} 等不到锁，放弃（503）"),
            Said::ReadRefused { who, token, seen } => {
                format!("{who} 带令牌 {token} 读库存：被拒，令牌过期（已见 {seen}）")
            }
            Said::Reads { who, stock } => format!("{who} 读到库存 {stock}"),
            Said::SoldOut { who } => format!("{who} 发现已售罄，不写入"),
            Said::WriteRefused {
                who,
                stock,
                token,
                seen,
            } => {
                format!("{who} 带令牌 {token} 写入 {stock}：被拒，令牌过期（已见 {seen}）")
            }
            Said::Writes { who, stock } => format!("{who} 写入库存 {stock}：卖出"),
            Said::Release {
                who,
                step,
                reply,
                deleted,
                not_mine,
            } => {
                let then = match (deleted, not_mine) {
                    (Some(of), _) => format!("：删掉了 {of} 的锁"),
                    (None, true) => "：锁已不是自己的".to_owned(),
                    (None, false) => String::new(),
                };
                format!("{who} 执行 {step} → {reply}{then}")
            }
            Said::Renew {
                who,
                step,
                reply,
                renewed: true,
            } => {
                format!("{who} 的看门狗执行 {step} → {reply}：租约重新计时")
            }
            Said::Renew {
                who,
                step,
                reply,
                renewed: false,
            } => {
                format!("{who} 的看门狗执行 {step} → {reply}：锁已不在，停止续期")
            }
            Said::RenewFails { who, step, message } => {
                format!("{who} 的看门狗 {step} 出错：{message}")
            }
            Said::Passes { by, to, lock_gone } => {
                let gone = if *lock_gone {
                    "：锁已过期消失"
                } else {
                    ""
                };
                format!("过了 {by} 毫秒（t = {to} 毫秒）{gone}")
            }
            Said::Pauses { who } => format!("{who} 暂停（续期也停了）"),
            Said::Wakes { who } => format!("{who} 恢复运行"),
            Said::Dies { who, at } => {
                let at = match at {
                    Died::Holding => "，死时持有锁",
                    Died::BetweenAcquireSteps => "，死在两个加锁步骤之间",
                    Died::BetweenReleaseSteps => "，死在两个解锁步骤之间",
                    Died::Elsewhere => "",
                };
                format!("{who} 崩溃{at}")
            }
            Said::Replicates => "副本同步了锁存储".to_owned(),
            Said::FailsOver => "锁存储故障切换：没同步到最新写入的副本被提升为主".to_owned(),
            Said::ClockJumps { by } => format!("锁存储的时钟向前跳了 {by} 毫秒"),
            Said::Nothing { who } => format!("{who} 无事可做"),
        }
    }
}
