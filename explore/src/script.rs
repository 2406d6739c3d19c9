//! The real Lua steps, run on the model as Redis runs them: Lua 5.1, one script at a time and
//! whole (nothing else touches the store while it runs), `redis.call`/`redis.pcall` answered by
//! the model's commands, and Redis's own conversions both ways:
//!
//! - to Lua: an integer is a number, a bulk string a string, nil is `false`, a status is
//!   `{ok = …}`, an error `{err = …}` (raised by `redis.call`, returned by `redis.pcall`), an
//!   array a table (its nils `false`);
//! - from Lua: a number is an integer (truncated), `true` is 1 and `false` nil, a table with
//!   `ok` or `err` a status or an error, any other table an array cut at its first nil.
//!
//! A script that runs past [`INSTRUCTION_BUDGET`] instructions is cut (Redis would answer
//! `BUSY` to everyone); a Lua error names its step and line (`acquire-1:5: …`); a command
//! outside the model ends the script, refused, whatever `pcall` it ran under. As in Redis, what
//! a failing script wrote before it failed stays written.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value as LuaValue, VmState};

use crate::commands::{self, NotModelled};
use crate::store::{Reply, Store};

/// How many Lua instructions one script may run: far more than any lock needs (the ladder's
/// longest step runs a few hundred), far fewer than a loop that never ends.
pub const INSTRUCTION_BUDGET: u64 = 1_000_000;

/// How much memory the Lua state may hold, all steps together: a lock needs kilobytes, and a
/// step that builds a gigabyte string (`string.rep`) is stopped by it, as the instruction
/// budget stops a loop (one C call is one instruction).
pub const MEMORY_LIMIT: usize = 64 << 20;

/// The hook looks at the count every this many instructions.
const HOOK_EVERY: u32 = 1_000;

/// What running one script came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// Its reply, as Redis would send it.
    Reply(Reply),
    /// The script failed: a Lua error (with its step and line), a `redis.call` that Redis
    /// refused, or the instruction budget spent.
    Failed(String),
    /// It called a command the model does not know.
    Refused(NotModelled),
}

/// A compiled step.
#[derive(Clone)]
pub struct Script {
    pub name: String,
    function: Function,
}

/// One Lua state for a whole search: the steps are compiled once, and each call gets a fresh
/// environment, so that nothing a script leaves in a global reaches the next one (Redis
/// refuses global writes for the same reason).
pub struct Engine {
    lua: Lua,
    /// The store the running script sees: moved in for one call and out again. An `Rc`
    /// because `redis.call`'s closure, owned by Lua, holds it too; one thread, no lock.
    store: Rc<RefCell<Store>>,
    refused: Rc<RefCell<Option<NotModelled>>>,
    spent: Rc<Cell<u64>>,
    /// What a step's globals read through to: the libraries, each behind a read-only proxy,
    /// and no `_G`, `getfenv` or `setfenv`, so no step can change what the next one finds.
    base: Table,
    /// `math.randomseed`, called with 0 before every step: Redis reseeds the generator before
    /// each script, so `math.random` answers the same in every schedule.
    reseed: Function,
}

/// A read-only view of `table`: reads go through, a write is Redis's error, and its
/// metatable cannot be reached.
fn readonly(lua: &Lua, table: Table) -> mlua::Result<Table> {
    let proxy = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.set("__index", table)?;
    meta.set(
        "__newindex",
        lua.create_function(|lua, _: mlua::MultiValue| {
            Err::<(), _>(lua_err(format!(
                "{}: Attempt to modify a readonly table",
                here(lua)
            )))
        })?,
    )?;
    meta.set("__metatable", false)?;
    proxy.set_metatable(Some(meta));
    Ok(proxy)
}

fn lua_err(message: String) -> mlua::Error {
    mlua::Error::RuntimeError(message)
}

/// Where the running Lua code is: `step:line`.
fn here(lua: &Lua) -> String {
    lua.inspect_stack(1)
        .map(|d| {
            let src = d
                .source()
                .short_src
                .map(|s| s.into_owned())
                .unwrap_or_default();
            format!("{src}:{}", d.curr_line())
        })
        .unwrap_or_default()
}

/// A number as Redis passes it to a command: an integer without a fraction.
fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

impl Engine {
    pub fn new() -> mlua::Result<Engine> {
        // Redis's libraries, less `cjson`, `struct`, `cmsgpack` and `bit` (no ladder step uses
        // them): base, table, string, math. No `io`, `os`, `package`: a student's step runs
        // on the machine that searches it.
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::default(),
        )?;
        lua.set_memory_limit(MEMORY_LIMIT)?;
        let globals = lua.globals();
        for unsafe_name in [
            "dofile",
            "loadfile",
            "load",
            "loadstring",
            "module",
            "require",
        ] {
            globals.set(unsafe_name, LuaValue::Nil)?;
        }
        let math: Table = globals.get("math")?;
        let mut engine = Engine {
            store: Rc::new(RefCell::new(Store::default())),
            refused: Rc::new(RefCell::new(None)),
            spent: Rc::new(Cell::new(0)),
            base: globals.clone(),
            reseed: math.get("randomseed")?,
            lua,
        };
        engine.install_redis()?;
        let base = engine.lua.create_table()?;
        for pair in globals.pairs::<String, LuaValue>() {
            let (name, value) = pair?;
            if matches!(name.as_str(), "_G" | "getfenv" | "setfenv") {
                continue;
            }
            match value {
                LuaValue::Table(t) => base.raw_set(name, readonly(&engine.lua, t)?)?,
                other => base.raw_set(name, other)?,
            }
        }
        engine.base = base;
        let spent = engine.spent.clone();
        engine.lua.set_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| {
                spent.set(spent.get() + u64::from(HOOK_EVERY));
                if spent.get() > INSTRUCTION_BUDGET {
                    return Err(lua_err(format!(
                        "cut after {INSTRUCTION_BUDGET} instructions: a loop that does not end?"
                    )));
                }
                Ok(VmState::Continue)
            },
        );
        Ok(engine)
    }

    fn install_redis(&self) -> mlua::Result<()> {
        let redis = self.lua.create_table()?;
        for (name, raises) in [("call", true), ("pcall", false)] {
            let store = self.store.clone();
            let refused = self.refused.clone();
            let f = self
                .lua
                .create_function(move |lua, args: mlua::MultiValue| {
                    let mut words = Vec::with_capacity(args.len());
                    for arg in args.iter() {
                        match arg {
                            LuaValue::String(s) => words.push(s.to_string_lossy().to_string()),
                            LuaValue::Integer(i) => words.push(i.to_string()),
                            LuaValue::Number(n) => words.push(number_text(*n)),
                            _ => {
                                return Err(lua_err(format!(
                                "{}: Lua redis lib command arguments must be strings or integers",
                                here(lua)
                            )))
                            }
                        }
                    }
                    let reply = match commands::run(&mut store.borrow_mut(), &words) {
                        Ok(reply) => reply,
                        Err(not_modelled) => {
                            let message = format!("{}: {not_modelled}", here(lua));
                            *refused.borrow_mut() = Some(not_modelled);
                            return Err(lua_err(message));
                        }
                    };
                    if let (true, Reply::Error(e)) = (raises, &reply) {
                        return Err(lua_err(format!("{}: {e}", here(lua))));
                    }
                    to_lua(lua, &reply)
                })?;
            redis.set(name, f)?;
        }
        let status = self.lua.create_function(|lua, s: String| {
            let t = lua.create_table()?;
            t.set("ok", s)?;
            Ok(t)
        })?;
        let error = self.lua.create_function(|lua, s: String| {
            let t = lua.create_table()?;
            t.set("err", s)?;
            Ok(t)
        })?;
        redis.set("status_reply", status)?;
        redis.set("error_reply", error)?;
        redis.set(
            "log",
            self.lua.create_function(|_, _: mlua::MultiValue| Ok(()))?,
        )?;
        for (level, n) in [
            ("LOG_DEBUG", 0),
            ("LOG_VERBOSE", 1),
            ("LOG_NOTICE", 2),
            ("LOG_WARNING", 3),
        ] {
            redis.set(level, n)?;
        }
        self.lua.globals().set("redis", redis)
    }

    /// Compiles a step; a syntax error names its line.
    pub fn compile(&self, name: &str, source: &str) -> Result<Script, String> {
        let function = self
            .lua
            .load(source)
            .set_name(format!("={name}"))
            .into_function()
            .map_err(|e| message(&e))?;
        Ok(Script {
            name: name.to_owned(),
            function,
        })
    }

    /// Runs `script` on `store` with `keys` and `argv`, whole.
    pub fn run(&self, script: &Script, store: &mut Store, keys: &[String], argv: &[String]) -> Ran {
        std::mem::swap(&mut *self.store.borrow_mut(), store);
        *self.refused.borrow_mut() = None;
        self.spent.set(0);
        let result = self.call(script, keys, argv);
        std::mem::swap(&mut *self.store.borrow_mut(), store);
        if let Some(not_modelled) = self.refused.borrow_mut().take() {
            return Ran::Refused(not_modelled);
        }
        match result {
            Ok(value) => Ran::Reply(to_reply(&value)),
            Err(e) => Ran::Failed(message(&e)),
        }
    }

    fn call(&self, script: &Script, keys: &[String], argv: &[String]) -> mlua::Result<LuaValue> {
        let env = self.lua.create_table()?;
        env.set("KEYS", self.lua.create_sequence_from(keys.iter().cloned())?)?;
        env.set("ARGV", self.lua.create_sequence_from(argv.iter().cloned())?)?;
        let meta = self.lua.create_table()?;
        meta.set("__index", self.base.clone())?;
        let readonly = self.lua.create_function(|lua, (_, name): (Table, LuaValue)| {
            let name = match name {
                LuaValue::String(s) => s.to_string_lossy().to_string(),
                _ => "?".into(),
            };
            Err::<(), _>(lua_err(format!(
                "{}: Attempt to modify a readonly table: script attempted to create global variable '{name}'",
                here(lua)
            )))
        })?;
        meta.set("__newindex", readonly)?;
        meta.set("__metatable", false)?;
        env.set_metatable(Some(meta));
        self.reseed.call::<()>(0)?;
        script.function.set_environment(env)?;
        script.function.call(())
    }
}

/// A reply as Redis hands it to Lua.
fn to_lua(lua: &Lua, reply: &Reply) -> mlua::Result<LuaValue> {
    Ok(match reply {
        Reply::Nil => LuaValue::Boolean(false),
        Reply::Int(n) => LuaValue::Number(*n as f64),
        Reply::Bulk(s) => LuaValue::String(lua.create_string(s)?),
        Reply::Status(s) => {
            let t = lua.create_table()?;
            t.set("ok", s.as_str())?;
            LuaValue::Table(t)
        }
        Reply::Error(e) => {
            let t = lua.create_table()?;
            t.set("err", e.as_str())?;
            LuaValue::Table(t)
        }
        Reply::Array(items) => {
            let t = lua.create_table()?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            LuaValue::Table(t)
        }
    })
}

/// A script's return value as Redis turns it into a reply.
fn to_reply(value: &LuaValue) -> Reply {
    match value {
        LuaValue::Boolean(true) => Reply::Int(1),
        LuaValue::Integer(n) => Reply::Int(*n),
        LuaValue::Number(n) => Reply::Int(n.trunc() as i64),
        LuaValue::String(s) => Reply::Bulk(s.to_string_lossy().to_string()),
        LuaValue::Table(t) => {
            let text = |field: &str| match t.raw_get::<LuaValue>(field) {
                Ok(LuaValue::String(s)) => Some(s.to_string_lossy().to_string()),
                _ => None,
            };
            if let Some(e) = text("err") {
                return Reply::Error(e);
            }
            if let Some(s) = text("ok") {
                return Reply::Status(s);
            }
            let mut items = Vec::new();
            for i in 1.. {
                match t.raw_get::<LuaValue>(i) {
                    Ok(LuaValue::Nil) | Err(_) => break,
                    Ok(v) => items.push(to_reply(&v)),
                }
            }
            Reply::Array(items)
        }
        _ => Reply::Nil,
    }
}

/// An mlua error as one line: the Lua message with its step and line, without the traceback.
fn message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::RuntimeError(m) => m.lines().next().unwrap_or_default().to_owned(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::MemoryError(_) => format!(
            "out of memory: past the {} MiB a lock's steps may hold",
            MEMORY_LIMIT >> 20
        ),
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str) -> Ran {
        let engine = Engine::new().unwrap();
        let script = engine.compile("step", source).unwrap();
        let mut store = Store::new(0);
        let keys = vec!["lock".to_owned()];
        let argv = vec!["a".to_owned(), "300".to_owned()];
        engine.run(&script, &mut store, &keys, &argv)
    }

    #[test]
    fn replies_convert_as_redis_converts_them() {
        assert_eq!(run("return 3.9"), Ran::Reply(Reply::Int(3)));
        assert_eq!(run("return -3.9"), Ran::Reply(Reply::Int(-3)));
        assert_eq!(run("return false"), Ran::Reply(Reply::Nil));
        assert_eq!(run("return true"), Ran::Reply(Reply::Int(1)));
        assert_eq!(
            run("return {1, 'x', nil, 4}"),
            Ran::Reply(Reply::Array(vec![Reply::Int(1), Reply::Bulk("x".into())]))
        );
        assert_eq!(
            run("return {ok = 'FINE'}"),
            Ran::Reply(Reply::Status("FINE".into()))
        );
        assert_eq!(
            run("return redis.error_reply('NOSTOCK gone')"),
            Ran::Reply(Reply::Error("NOSTOCK gone".into()))
        );
    }

    #[test]
    fn a_missing_key_is_false_in_lua_and_a_status_a_table() {
        assert_eq!(
            run("return {redis.call('GET', KEYS[1]) == false, redis.call('SET', KEYS[1], ARGV[1])['ok']}"),
            Ran::Reply(Reply::Array(vec![Reply::Int(1), Reply::Bulk("OK".into())]))
        );
    }

    #[test]
    fn numbers_reach_commands_as_integers() {
        assert_eq!(
            run("redis.call('SET', KEYS[1], 'x', 'PX', tonumber(ARGV[2]) * 2) return redis.call('PTTL', KEYS[1])"),
            Ran::Reply(Reply::Int(600))
        );
    }

    #[test]
    fn a_lua_error_names_its_step_and_line() {
        let Ran::Failed(message) = run("local a = 1\nreturn nil + a") else {
            panic!("the script should fail");
        };
        assert!(message.starts_with("step:2:"), "{message}");
        let Ran::Failed(message) =
            run("redis.call('SET', KEYS[1], 'x')\nreturn redis.call('INCR', KEYS[1])")
        else {
            panic!("the script should fail");
        };
        assert_eq!(
            message,
            "step:2: ERR value is not an integer or out of range"
        );
    }

    #[test]
    fn pcall_returns_the_error_as_a_table() {
        assert_eq!(
            run("redis.call('HSET', KEYS[1], 'f', 1) return redis.pcall('GET', KEYS[1])['err']"),
            Ran::Reply(Reply::Bulk(crate::store::WRONGTYPE.into()))
        );
    }

    #[test]
    fn a_command_outside_the_model_is_refused_even_under_pcall() {
        assert_eq!(
            run("return redis.pcall('OBJECT', 'ENCODING', KEYS[1])"),
            Ran::Refused(NotModelled("OBJECT".into()))
        );
    }

    #[test]
    fn a_loop_that_does_not_end_is_cut() {
        let Ran::Failed(message) = run("while true do end") else {
            panic!("the loop should be cut");
        };
        assert!(message.contains("cut after"), "{message}");
    }

    #[test]
    fn a_step_that_builds_a_huge_string_is_stopped_by_the_memory_limit() {
        let engine = Engine::new().unwrap();
        let huge = engine
            .compile("huge", "return #string.rep('x', 1e9)")
            .unwrap();
        let one = engine.compile("one", "return 1").unwrap();
        let mut store = Store::new(0);
        let Ran::Failed(message) = engine.run(&huge, &mut store, &[], &[]) else {
            panic!("the allocation should fail");
        };
        assert!(message.contains("out of memory"), "{message}");
        // The same state runs the next step as before.
        assert_eq!(
            engine.run(&one, &mut store, &[], &[]),
            Ran::Reply(Reply::Int(1))
        );
    }

    #[test]
    fn no_step_can_change_the_libraries_or_the_random_numbers_the_next_one_sees() {
        let engine = Engine::new().unwrap();
        let mut store = Store::new(0);
        let mut run = |source: &str| {
            let script = engine.compile("step", source).unwrap();
            engine.run(&script, &mut store, &[], &[])
        };
        let Ran::Failed(message) = run("redis.call = nil return 1") else {
            panic!("the redis table is read-only");
        };
        assert!(message.contains("readonly table"), "{message}");
        assert!(matches!(run("string.rep = nil return 1"), Ran::Failed(_)));
        assert_eq!(run("return getfenv"), Ran::Reply(Reply::Nil));
        assert_eq!(run("return #string.rep('x', 3)"), Ran::Reply(Reply::Int(3)));
        let first = run("return math.random(1000000)");
        assert_eq!(run("return math.random(1000000)"), first);
    }

    #[test]
    fn a_global_written_by_one_script_never_reaches_the_next() {
        let Ran::Failed(message) = run("counter = 1 return 1") else {
            panic!("a global write should fail");
        };
        assert!(message.contains("global variable 'counter'"), "{message}");
    }
}
