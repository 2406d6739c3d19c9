//! A Redis node whose wall clock can jump, for Redlock's clock-jump fault: the preload
//! library `oversell up` (and a compose store's supervisor) starts such a node under. The
//! offset file it reads is the service's (`crate::member::clock_offset`): the fault writes it.
//!
//! Redlock trusts every node's clock to run at about the same rate: a node whose clock jumps
//! ahead expires a lock early, and a second client can take a majority while the first still
//! holds it. To show that, a node runs under `libclockshift.so` (built from
//! `src/clockshift.c`), which adds an offset to `CLOCK_REALTIME`, read from a file that may
//! change while the node runs. Debian's libfaketime does not do: Debian's `redis-server` 7.0
//! will not start under it.
//!
//! The library is embedded in the binary, so `oversell` stays one self-contained file:
//! [`install_preload`] writes it out next to the node's data.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The preload library, compiled by `build.rs`.
const LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libclockshift.so"));

/// The variable the library reads for the offset file's path.
pub const OFFSET_FILE_VAR: &str = "OVERSELL_CLOCK_OFFSET_FILE";

/// Writes the preload library into `dir` as `libclockshift.so` (mode 0755) and returns its
/// path. Written to a temporary name and renamed, so a process that maps an older copy keeps a
/// whole file.
pub fn install_preload(dir: &Path) -> io::Result<PathBuf> {
    let path = dir.join("libclockshift.so");
    let temp = dir.join(format!(".libclockshift.so.{}", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o755)
        .open(&temp)?;
    file.write_all(LIBRARY)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp, &path)?;
    Ok(path)
}

/// The environment that runs a program under the library `lib` with its wall clock offset by
/// `offset_file`: set both on its `Command`. The file is read once, at start-up: it must exist
/// by then, or the program's clock stays true for its whole life.
pub fn preload_env(lib: &Path, offset_file: &Path) -> [(&'static str, OsString); 2] {
    [
        ("LD_PRELOAD", lib.as_os_str().to_owned()),
        (OFFSET_FILE_VAR, offset_file.as_os_str().to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    use crate::launch::redis_server::find_binary;
    use crate::member::clock_offset::{create_offset_file, offset_file, set_offset};
    use oversell_client::ports::free_port;

    /// A `redis-server` under the preload, killed and reaped on drop.
    struct ShiftedRedis {
        child: Child,
        client: redis::Client,
    }

    impl ShiftedRedis {
        fn start(dir: &Path, offset_file: &Path) -> ShiftedRedis {
            let binary = find_binary("redis-server").expect("redis-server is installed");
            let lib = install_preload(dir).unwrap();
            let port = free_port().unwrap();
            let child = Command::new(binary)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--dir")
                .arg(dir)
                .envs(preload_env(&lib, offset_file))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
            let mut server = ShiftedRedis { child, client };
            server.wait_ready();
            server
        }

        fn wait_ready(&mut self) {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Some(status) = self.child.try_wait().unwrap() {
                    panic!("redis-server under the preload exited at start-up: {status}");
                }
                if let Ok(mut conn) = self.client.get_connection() {
                    if redis::cmd("PING").query::<String>(&mut conn).ok() == Some("PONG".into()) {
                        return;
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            panic!("redis-server under the preload did not answer PING within 10 s");
        }

        fn conn(&self) -> redis::Connection {
            self.client.get_connection().unwrap()
        }
    }

    impl Drop for ShiftedRedis {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// How far the server's `TIME` is ahead of this process's clock, in milliseconds.
    fn skew_ms(conn: &mut redis::Connection) -> i64 {
        let (secs, micros): (i64, i64) = redis::cmd("TIME").query(conn).unwrap();
        let server = secs * 1000 + micros / 1000;
        let ours = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        server - i64::try_from(ours.as_millis()).unwrap()
    }

    fn assert_skew(conn: &mut redis::Connection, expected_ms: i64) {
        let skew = skew_ms(conn);
        assert!(
            (skew - expected_ms).abs() < 2_000,
            "TIME is {skew} ms off our clock, expected about {expected_ms} ms"
        );
    }

    #[test]
    fn redis_clock_jumps_with_the_offset_file_without_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let offset = offset_file(dir.path());
        create_offset_file(&offset).unwrap();
        let server = ShiftedRedis::start(dir.path(), &offset);
        let mut conn = server.conn();
        assert_skew(&mut conn, 0);

        let _: () = redis::cmd("SET")
            .arg("lock")
            .arg("owner")
            .arg("EX")
            .arg(60)
            .query(&mut conn)
            .unwrap();
        let exists: i64 = redis::cmd("EXISTS").arg("lock").query(&mut conn).unwrap();
        assert_eq!(exists, 1);

        set_offset(&offset, 120_000).unwrap();
        assert_skew(&mut conn, 120_000);
        let exists: i64 = redis::cmd("EXISTS").arg("lock").query(&mut conn).unwrap();
        assert_eq!(exists, 0, "a 60 s key outlives a 120 s jump");
        let value: Option<String> = redis::cmd("GET").arg("lock").query(&mut conn).unwrap();
        assert_eq!(value, None);

        set_offset(&offset, 0).unwrap();
        assert_skew(&mut conn, 0);
    }

    #[test]
    fn redis_starts_with_a_true_clock_when_the_offset_file_is_missing_or_short() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-offset");
        let server = ShiftedRedis::start(dir.path(), &missing);
        assert_skew(&mut server.conn(), 0);
        drop(server);

        // Mapping a file shorter than 8 bytes would SIGBUS on the first read: not mapped.
        let short = dir.path().join("short-offset");
        std::fs::write(&short, [0xffu8; 4]).unwrap();
        let server = ShiftedRedis::start(dir.path(), &short);
        assert_skew(&mut server.conn(), 0);
    }
}
