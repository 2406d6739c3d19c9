//! A buyer as the sale runs it, one round trip a step: the acquire steps in order (a busy
//! answer sends it to the wait loop, which tries again or gives up), the read, the business
//! work and the write with the hold's token, the release steps in order, and, while it holds,
//! the watchdog's renew every lease/3. Replies are read by the lab's contract as the engine
//! reads them (`src/lock/replies.rs`: `StepReply`, `hold`, `Released`).
//!
//! The resource store's two scripts are kept here in Rust, rule for rule: the read
//! (`sale/enter.lua`) refuses a token below the highest seen and raises it; the write
//! (`sale/commit.lua`) writes nothing on a sold-out read, refuses a stale token, else sets the
//! stock to read − 1 and appends the order. Their timeline and overlap counters are the
//! fleet's measurement, not the sale's logic, and are left out.

use crate::bounds::Bounds;
use crate::commands::NotModelled;
use crate::lock::{Arg, Key, LockSource, StepSource, CHANNEL};
use crate::script::{Engine, Ran, Script};
use crate::store::{Reply, Store};
use crate::world::{End, Phase, World};

/// A step compiled, with what it is sent.
struct Compiled {
    script: Script,
    source: StepSource,
}

/// The lock's steps compiled on one Lua state, and the bounds they run under.
pub struct Machine {
    engine: Engine,
    acquire: Vec<Compiled>,
    release: Vec<Compiled>,
    renew: Option<Compiled>,
    pub bounds: Bounds,
    pub lock_name: String,
    /// Whether states are hashed with their absolute instants (a step reads `TIME`).
    pub absolute_time: bool,
}

/// How a reply reads by the lab's contract: go on, or stop (busy, not mine, gone).
fn goes_on(reply: &Reply) -> bool {
    match reply {
        Reply::Int(n) => *n > 0,
        Reply::Status(_) => true,
        Reply::Bulk(s) => !s.is_empty() && s != "0",
        Reply::Array(items) => items.first().is_some_and(goes_on),
        Reply::Nil | Reply::Error(_) => false,
    }
}

/// The fencing token of a held acquire's `{depth, token}`, when above 0.
fn token(reply: &Reply) -> Option<u64> {
    match reply {
        Reply::Array(items) => match items.get(1) {
            Some(Reply::Int(t)) if *t > 0 => Some(*t as u64),
            _ => None,
        },
        _ => None,
    }
}

/// What one step did, for the schedule.
pub use crate::said::Said as Note;
use crate::said::{Said, Took};

impl Machine {
    pub fn new(lock: &LockSource, bounds: Bounds) -> Result<Machine, String> {
        let engine = Engine::new().map_err(|e| format!("cannot start Lua: {e}"))?;
        let compile = |s: &StepSource| -> Result<Compiled, String> {
            Ok(Compiled {
                script: engine.compile(&s.name, &s.source)?,
                source: s.clone(),
            })
        };
        let acquire = lock.acquire.iter().map(compile).collect::<Result<_, _>>()?;
        let release = lock.release.iter().map(compile).collect::<Result<_, _>>()?;
        let renew = lock.renew.as_ref().map(compile).transpose()?;
        Ok(Machine {
            acquire,
            release,
            renew,
            engine,
            bounds,
            lock_name: lock.name.clone(),
            absolute_time: lock.reads_the_clock(),
        })
    }

    pub fn renews(&self) -> bool {
        self.renew.is_some()
    }

    /// Runs one step for `owner` on `store`.
    fn send(&self, step: &Compiled, store: &mut Store, owner: &str) -> Result<Ran, NotModelled> {
        let keys: Vec<String> = step
            .source
            .keys
            .iter()
            .map(|k| k.name().to_owned())
            .collect();
        let argv: Vec<String> = step
            .source
            .args
            .iter()
            .map(|a| match a {
                Arg::Owner => owner.to_owned(),
                Arg::LeaseMs => self.bounds.lease_ms.to_string(),
                Arg::Channel => CHANNEL.to_owned(),
                Arg::WaitMs => self.bounds.wait_ms.to_string(),
            })
            .collect();
        let ran = self.engine.run(&step.script, store, &keys, &argv);
        store.published.clear();
        match ran {
            Ran::Refused(not_modelled) => Err(not_modelled),
            ran => Ok(ran),
        }
    }

    /// Client `i` takes its next step.
    pub fn step(&self, w: &mut World, i: usize) -> Result<Note, NotModelled> {
        let owner = World::owner(i);
        match w.clients[i].phase.clone() {
            Phase::Acquire { step, attempt } => self.acquire_step(w, i, step, attempt),
            Phase::Waiting { attempt } if attempt < self.bounds.attempts => {
                self.acquire_step(w, i, 0, attempt + 1)
            }
            Phase::Waiting { .. } => {
                let c = &mut w.clients[i];
                c.phase = Phase::Done;
                c.end = Some(End::GaveUp);
                Ok(Said::GivesUp { who: owner })
            }
            Phase::Read => Ok(self.read(w, i)),
            Phase::Write => Ok(self.write(w, i)),
            Phase::Release { step } => self.release_step(w, i, step),
            Phase::Done => Ok(Said::Nothing { who: owner }),
        }
    }

    fn acquire_step(
        &self,
        w: &mut World,
        i: usize,
        step: usize,
        attempt: u32,
    ) -> Result<Note, NotModelled> {
        let owner = World::owner(i);
        let compiled = &self.acquire[step];
        let ran = self.send(compiled, &mut w.store, &owner)?;
        let step_name = compiled.source.name.clone();
        let reply = match ran {
            Ran::Reply(reply) => reply,
            Ran::Failed(message) => return Ok(self.fail(w, i, step_name, message)),
            Ran::Refused(_) => unreachable!("send returns a refusal as an error"),
        };
        let said = |took| Said::Acquire {
            who: owner.clone(),
            step: step_name.clone(),
            again: step == 0 && attempt > 1,
            reply: reply.brief(),
            took,
        };
        let c = &mut w.clients[i];
        if !goes_on(&reply) {
            c.phase = Phase::Waiting { attempt };
            return Ok(said(Took::Busy));
        }
        if step + 1 < self.acquire.len() {
            c.phase = Phase::Acquire {
                step: step + 1,
                attempt,
            };
            return Ok(said(Took::GoesOn));
        }
        c.phase = Phase::Read;
        c.token = token(&reply);
        c.renewal = self
            .renew
            .as_ref()
            .map(|_| w.now + self.bounds.renew_every());
        Ok(said(Took::Holds { token: c.token }))
    }

    fn fail(&self, w: &mut World, i: usize, step: String, message: String) -> Note {
        let c = &mut w.clients[i];
        c.phase = Phase::Done;
        c.end = Some(End::Failed);
        c.renewal = None;
        w.failed.get_or_insert(message.clone());
        Said::Fails {
            who: World::owner(i),
            step,
            message,
        }
    }

    /// `enter.lua`'s rules: a token below the highest seen is refused, else raises it.
    fn read(&self, w: &mut World, i: usize) -> Note {
        let owner = World::owner(i);
        let c = &mut w.clients[i];
        if let Some(t) = c.token {
            if t < w.stock.highest_token {
                w.stock.stale += 1;
                c.end = Some(End::Stale);
                c.phase = Phase::Release { step: 0 };
                return Said::ReadRefused {
                    who: owner,
                    token: t,
                    seen: w.stock.highest_token,
                };
            }
            w.stock.highest_token = t;
        }
        c.read = Some(w.stock.left);
        c.phase = Phase::Write;
        Said::Reads {
            who: owner,
            stock: w.stock.left,
        }
    }

    /// `commit.lua`'s rules: nothing on a sold-out read, a stale token refused, else read − 1.
    fn write(&self, w: &mut World, i: usize) -> Note {
        let owner = World::owner(i);
        let c = &mut w.clients[i];
        c.phase = Phase::Release { step: 0 };
        let read = c.read.unwrap_or(0);
        if read <= 0 {
            c.end = Some(End::SoldOut);
            return Said::SoldOut { who: owner };
        }
        if let Some(t) = c.token {
            if t < w.stock.highest_token {
                w.stock.stale += 1;
                c.end = Some(End::Stale);
                return Said::WriteRefused {
                    who: owner,
                    stock: read - 1,
                    token: t,
                    seen: w.stock.highest_token,
                };
            }
            w.stock.highest_token = t;
        }
        w.stock.left = read - 1;
        w.stock.orders += 1;
        c.end = Some(End::Sold);
        Said::Writes {
            who: owner,
            stock: read - 1,
        }
    }

    fn release_step(&self, w: &mut World, i: usize, step: usize) -> Result<Note, NotModelled> {
        let owner = World::owner(i);
        // Renewals stop before the release starts (the engine drops the hold first).
        w.clients[i].renewal = None;
        let compiled = &self.release[step];
        let step_name = compiled.source.name.clone();
        let before = w.store.holder(Key::Lock.name());
        let ran = self.send(compiled, &mut w.store, &owner)?;
        let after = w.store.holder(Key::Lock.name());
        let reply = match ran {
            Ran::Reply(reply) => reply,
            Ran::Failed(message) => return Ok(self.fail(w, i, step_name, message)),
            Ran::Refused(_) => unreachable!("send returns a refusal as an error"),
        };
        // As `replies::Released::took_anothers` (`src/lock/replies.rs`): the key held another's lock, and not after.
        let foreign = !before.is_empty() && before != owner && after != before;
        if foreign {
            w.foreign_release = true;
        }
        let c = &mut w.clients[i];
        if goes_on(&reply) && step + 1 < self.release.len() {
            c.phase = Phase::Release { step: step + 1 };
        } else {
            c.phase = Phase::Done;
        }
        Ok(Said::Release {
            who: owner,
            step: step_name,
            reply: reply.brief(),
            not_mine: !goes_on(&reply) && !foreign,
            deleted: foreign.then_some(before),
        })
    }

    /// Client `i`'s watchdog renews.
    pub fn renew(&self, w: &mut World, i: usize) -> Result<Note, NotModelled> {
        let owner = World::owner(i);
        let Some(compiled) = &self.renew else {
            return Ok(Said::Nothing { who: owner });
        };
        let ran = self.send(compiled, &mut w.store, &owner)?;
        let step = compiled.source.name.clone();
        let c = &mut w.clients[i];
        match ran {
            Ran::Reply(reply) => {
                let renewed = goes_on(&reply);
                c.renewal = renewed.then(|| w.now + self.bounds.renew_every());
                Ok(Said::Renew {
                    who: owner,
                    step,
                    reply: reply.brief(),
                    renewed,
                })
            }
            Ran::Failed(message) => {
                c.renewal = None;
                w.failed.get_or_insert(message.clone());
                Ok(Said::RenewFails {
                    who: owner,
                    step,
                    message,
                })
            }
            Ran::Refused(_) => unreachable!("send returns a refusal as an error"),
        }
    }

    /// Whether a new buyer's first acquire step, run on this store now, finds the lock busy
    /// and leaves the store as it was: then retrying changes nothing either.
    pub fn newcomer_is_refused(&self, store: &Store) -> Result<bool, NotModelled> {
        let mut probe = store.clone();
        let ran = self.send(&self.acquire[0], &mut probe, "newcomer")?;
        Ok(matches!(ran, Ran::Reply(ref r) if !goes_on(r)) && probe == *store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock;
    use crate::said::Lang;
    use crate::search::start;
    use oversell_api::tier::Tier;

    #[test]
    fn the_stock_refuses_a_token_below_the_highest_seen_and_accepts_an_equal_one() {
        let m = Machine::new(&lock::rung(Tier::Fenced).unwrap(), Bounds::default()).unwrap();
        let mut w = start(&m);
        m.step(&mut w, 0).unwrap();
        assert_eq!(w.clients[0].token, Some(1));
        assert_eq!(
            m.step(&mut w, 0).unwrap().words(Lang::En),
            "A reads stock 2"
        );
        // A newer holder's read raised the highest token seen: A's write is refused.
        w.stock.highest_token = 2;
        let note = m.step(&mut w, 0).unwrap().words(Lang::En);
        assert_eq!(note, "A writes 1 with token 1: refused, stale (seen 2)");
        assert_eq!((w.stock.left, w.stock.orders, w.stock.stale), (2, 0, 1));
        // An equal token is its own: accepted.
        let mut w = start(&m);
        m.step(&mut w, 0).unwrap();
        m.step(&mut w, 0).unwrap();
        w.stock.highest_token = 1;
        assert_eq!(
            m.step(&mut w, 0).unwrap().words(Lang::En),
            "A writes stock 1: sold"
        );
    }

    #[test]
    fn contract_replies_go_on_or_stop_as_the_lab_reads_them() {
        assert!(goes_on(&Reply::Int(1)));
        assert!(goes_on(&Reply::ok()));
        assert!(goes_on(&Reply::Array(vec![Reply::Int(2), Reply::Int(7)])));
        assert!(!goes_on(&Reply::Array(vec![
            Reply::Int(0),
            Reply::Int(150)
        ])));
        assert!(!goes_on(&Reply::Bulk("0".into())));
        assert!(!goes_on(&Reply::Nil));
        assert_eq!(
            token(&Reply::Array(vec![Reply::Int(1), Reply::Int(7)])),
            Some(7)
        );
        assert_eq!(
            token(&Reply::Array(vec![Reply::Int(1), Reply::Int(0)])),
            None
        );
    }
}
