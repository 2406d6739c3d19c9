//! Every built-in rung's steps run on the model and on a real `redis-server`, side by side,
//! through the same scripted sequences (two holders, busy answers, re-entry, renewals, a lease
//! that ends, releases of one's own lock and of another's): the replies and whose lock the
//! key holds after each step must be the same. A lease's end is a `DEL` of the lock on both
//! sides: real time cannot be stepped, and to the scripts a key gone is a key gone.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use explore::lock::{self, Arg, LockSource, StepSource, CHANNEL};
use explore::script::{Engine, Ran};
use explore::store::{Reply, Store};

/// A `redis-server` of this test's own on a free port, killed and reaped on drop.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    fn start() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is installed (apt-get install redis-server)");
        let server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut conn) = server.conn() {
                if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                    return server;
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING in 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn conn(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))?.get_connection()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn from_redis(value: redis::RedisResult<redis::Value>) -> Reply {
    use redis::Value as V;
    fn convert(v: V) -> Reply {
        match v {
            V::Nil => Reply::Nil,
            V::Int(n) => Reply::Int(n),
            V::BulkString(b) => Reply::Bulk(String::from_utf8_lossy(&b).into_owned()),
            V::Okay => Reply::ok(),
            V::SimpleString(s) => Reply::Status(s),
            V::Array(items) => Reply::Array(items.into_iter().map(convert).collect()),
            other => panic!("a RESP2 script reply, not {other:?}"),
        }
    }
    match value {
        Ok(v) => convert(v),
        Err(e) => Reply::Error(e.to_string()),
    }
}

/// The same reply, where a lease left (an integer of 1000 or more: the test's lease is a
/// minute) may differ by the milliseconds the real server's clock moved between steps, and an
/// error is an error whatever its words.
fn same(model: &Reply, real: &Reply) -> bool {
    match (model, real) {
        (Reply::Int(a), Reply::Int(b)) if *a >= 1_000 && *b >= 1_000 => (a - b).abs() <= 1_000,
        (Reply::Error(_), Reply::Error(_)) => true,
        (Reply::Array(a), Reply::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (a, b) => a == b,
    }
}

const LEASE_MS: u64 = 60_000;
const HOLDER: &str = include_str!("../../src/lock/holder.lua");

struct SideBySide {
    engine: Engine,
    model: Store,
    real: redis::Connection,
    holder: explore::script::Script,
}

impl SideBySide {
    fn new(server: &RedisServer) -> SideBySide {
        let mut real = server.conn().unwrap();
        let _: () = redis::cmd("FLUSHALL").query(&mut real).unwrap();
        let engine = Engine::new().unwrap();
        let holder = engine.compile("holder", HOLDER).unwrap();
        SideBySide {
            engine,
            model: Store::new(0),
            real,
            holder,
        }
    }

    fn run(&mut self, what: &str, step: &StepSource, owner: &str) {
        let keys: Vec<String> = step.keys.iter().map(|k| k.name().to_owned()).collect();
        let argv: Vec<String> = step
            .args
            .iter()
            .map(|a| match a {
                Arg::Owner => owner.to_owned(),
                Arg::LeaseMs => LEASE_MS.to_string(),
                Arg::Channel => CHANNEL.to_owned(),
                Arg::WaitMs => "1000".to_owned(),
            })
            .collect();
        let script = self.engine.compile(&step.name, &step.source).unwrap();
        let model = match self.engine.run(&script, &mut self.model, &keys, &argv) {
            Ran::Reply(r) => r,
            Ran::Failed(e) => Reply::Error(e),
            Ran::Refused(n) => panic!("{what}: {n}"),
        };
        let real = from_redis(
            redis::cmd("EVAL")
                .arg(&step.source)
                .arg(keys.len())
                .arg(&keys)
                .arg(&argv)
                .query(&mut self.real),
        );
        assert!(
            same(&model, &real),
            "{what} ({owner} {}): model {model:?}, redis {real:?}",
            step.name
        );
        let lock = vec!["lock".to_owned()];
        let model_holder = self.engine.run(&self.holder, &mut self.model, &lock, &[]);
        let real_holder = from_redis(
            redis::cmd("EVAL")
                .arg(HOLDER)
                .arg(1)
                .arg("lock")
                .query(&mut self.real),
        );
        assert_eq!(
            model_holder,
            Ran::Reply(real_holder),
            "{what}: whose lock after {}",
            step.name
        );
        assert_eq!(
            Reply::Bulk(self.model.holder("lock")),
            match &model_holder {
                Ran::Reply(Reply::Nil) => Reply::Bulk(String::new()),
                Ran::Reply(r) => r.clone(),
                other => panic!("{other:?}"),
            },
            "{what}: the model's own reading of holder.lua"
        );
    }

    /// The lease ends: the lock is gone on both sides.
    fn lease_ends(&mut self) {
        self.model.remove("lock");
        let _: () = redis::cmd("DEL").arg("lock").query(&mut self.real).unwrap();
    }
}

fn acquire(s: &mut SideBySide, lock: &LockSource, owner: &str) {
    for step in &lock.acquire {
        s.run(&lock.name, step, owner);
    }
}

fn release(s: &mut SideBySide, lock: &LockSource, owner: &str) {
    for step in &lock.release {
        s.run(&lock.name, step, owner);
    }
}

#[test]
fn every_rungs_steps_answer_on_the_model_as_on_redis() {
    let server = RedisServer::start();
    for tier in lock::RUNGS {
        let lock = lock::rung(tier).unwrap();
        let mut s = SideBySide::new(&server);
        // A takes it; B finds it busy; A renews and takes it again (re-entry where allowed).
        acquire(&mut s, &lock, "A");
        s.run(&lock.name, &lock.acquire[0], "B");
        if let Some(renew) = &lock.renew {
            s.run(&lock.name, renew, "A");
            s.run(&lock.name, renew, "B");
        }
        s.run(&lock.name, &lock.acquire[0], "A");
        // A gives it back (twice over for a re-entered hold); B takes it.
        release(&mut s, &lock, "A");
        release(&mut s, &lock, "A");
        acquire(&mut s, &lock, "B");
        // B's lease ends; A takes it; B's late release meets A's lock.
        s.lease_ends();
        acquire(&mut s, &lock, "A");
        release(&mut s, &lock, "B");
        release(&mut s, &lock, "A");
        // Nothing held: a release and a renewal of nothing.
        release(&mut s, &lock, "A");
        if let Some(renew) = &lock.renew {
            s.run(&lock.name, renew, "A");
        }
    }
}

#[test]
fn lua_replies_convert_on_the_model_as_on_redis() {
    let server = RedisServer::start();
    let mut s = SideBySide::new(&server);
    let scripts = [
        "return {1, 'x', nil, 4}",
        "return 3.9",
        "return -2.5",
        "return false",
        "return true",
        "return {ok = 'FINE'}",
        "return redis.status_reply('FINE')",
        "return redis.call('TYPE', KEYS[1])",
        "redis.call('HSET', KEYS[1], 'a', 1, 'b', 2) return redis.call('HKEYS', KEYS[1])",
        "return redis.pcall('INCR', KEYS[1])",
        "return {redis.call('GET', 'nothing'), 1}",
        "return redis.call('HGETALL', KEYS[1])",
        "return redis.call('INCR', KEYS[1])",
        "return {redis.call('SET', 'x', 'v', 'PX', ARGV[2], 'NX'), redis.call('SET', 'x', 'v', 'PX', ARGV[2], 'NX')}",
        "return redis.call('TIME')[3]",
    ];
    for (i, source) in scripts.iter().enumerate() {
        let step = StepSource {
            name: format!("script-{}", i + 1),
            source: source.to_string(),
            keys: vec![lock::Key::Lock],
            args: vec![Arg::Owner, Arg::LeaseMs],
        };
        s.run("conversions", &step, "A");
    }
}
