//! One call of a Lua script as data — its script, keys and arguments — built by the sale and
//! the lock's steps, and sent on its own ([`Call::invoke`]) or composed with others into one
//! round trip (`composed/mod.rs`).

use redis::{RedisResult, Script, ToRedisArgs};

/// A Lua script kept with its source, so that it can be composed with others.
pub struct Lua {
    pub(super) source: &'static str,
    pub(super) script: Script,
}

impl Lua {
    pub fn new(source: &'static str) -> Lua {
        Lua {
            source,
            script: Script::new(source),
        }
    }

    /// A call of this script, to which keys and arguments are added in order.
    pub fn call(&'static self) -> Call {
        Call {
            lua: self,
            keys: Vec::new(),
            args: Vec::new(),
        }
    }
}

/// One call of a script: its keys and arguments.
#[derive(Clone)]
pub struct Call {
    pub(super) lua: &'static Lua,
    pub(super) keys: Vec<Vec<u8>>,
    pub(super) args: Vec<Vec<u8>>,
}

impl Call {
    pub fn key(mut self, key: impl ToRedisArgs) -> Self {
        self.keys.extend(key.to_redis_args());
        self
    }

    pub fn arg(mut self, arg: impl ToRedisArgs) -> Self {
        self.args.extend(arg.to_redis_args());
        self
    }

    /// This call with every argument that is exactly [`ACQUIRED`] given as `token`.
    pub(super) fn given(&self, token: &str) -> Call {
        let args = self
            .args
            .iter()
            .map(|arg| match arg.as_slice() == ACQUIRED.as_bytes() {
                true => token.as_bytes().to_vec(),
                false => arg.clone(),
            });
        Call {
            lua: self.lua,
            keys: self.keys.clone(),
            args: args.collect(),
        }
    }

    /// This call's script run inside `lua` (made by [`super::wrapped`]), with the same keys
    /// and arguments, to which more are added in order.
    pub fn inside(&self, lua: &'static Lua) -> Call {
        Call {
            lua,
            keys: self.keys.clone(),
            args: self.args.clone(),
        }
    }

    /// The script this call runs.
    pub fn lua(&self) -> &'static Lua {
        self.lua
    }

    /// The script's source, as it is sent.
    pub fn source(&self) -> &'static str {
        self.lua.source
    }

    /// The call's first key (a lock step's: the lock), if it has one.
    pub fn first_key(&self) -> Option<&[u8]> {
        self.keys.first().map(Vec::as_slice)
    }

    /// Runs the call on its own: `EVALSHA`, loading the script when the server lacks it.
    pub async fn invoke<T, C>(&self, conn: &mut C) -> RedisResult<T>
    where
        T: redis::FromRedisValue,
        C: redis::aio::ConnectionLike,
    {
        let mut invocation = self.lua.script.prepare_invoke();
        for key in &self.keys {
            invocation.key(key.as_slice());
        }
        for arg in &self.args {
            invocation.arg(arg.as_slice());
        }
        invocation.invoke_async(conn).await
    }
}

/// An argument the lock gives the fencing token it holds: [`run_if_first_takes`] the token
/// the first call took, [`run_holding`] the token of a lock already held. The same string as
/// `composed.lua`'s. It starts with a NUL byte, which no argument of the sale's has.
///
/// [`run_if_first_takes`]: super::run_if_first_takes
/// [`run_holding`]: super::run_holding
pub const ACQUIRED: &str = "\0acquired[2]";
