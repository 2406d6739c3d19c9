//! The PostgreSQL server for the database tiers: Debian's `postgresql` binaries, a cluster of
//! our own in the run dir, supervised like every other store (a killed server is restarted
//! with the same port and data dir).
//!
//! Nothing of the package's service set-up is used (no `pg_ctlcluster`, no
//! `/etc/postgresql`): `initdb` makes the data dir at the first start, then `postgres` runs in
//! the foreground with its settings on the command line. PostgreSQL refuses to run as root, so
//! when `up` runs as root the server runs as the package's `postgres` user, which owns its
//! dir.
//!
//! Settings that matter: `max_connections` leaves room for every instance's sessions
//! (`pg_store::SESSIONS_PER_INSTANCE` each, since a waiter in the database's queue holds one);
//! durability is off (`fsync`, `synchronous_commit`): the lock lives in memory — a session's
//! lock dies with its server whatever is on disk — and nothing else is kept there.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::bail;
use async_trait::async_trait;
use tokio::process::Command;

use super::netns::Place;
use super::supervisor::ChildSpec;

/// The role and database every instance connects as (trust authentication on the fleet's
/// own addresses).
pub const USER: &str = "oversell";
const INSTALL_HINT: &str = "install it with: sudo apt-get install -y postgresql";
/// The most instances a fleet runs, times their sessions each, and a few for `psql`.
const MAX_CONNECTIONS: usize = 9 * crate::pg_store::SESSIONS_PER_INSTANCE + 10;
/// The server's process id, written in its dir at every start, for a test that stops it.
pub const PID_FILE: &str = "postgres.pid";

/// Debian's server binaries (`/usr/lib/postgresql/<version>/bin`), the newest version there.
pub fn installation() -> io::Result<PathBuf> {
    let missing = || {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("PostgreSQL's server not found under /usr/lib/postgresql; {INSTALL_HINT}"),
        )
    };
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| missing())?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(missing)
}

/// The user the server runs as: the package's `postgres` when we are root, else ourselves.
fn run_as() -> io::Result<Option<(u32, u32)>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new("postgres").expect("no NUL in a literal");
    // SAFETY: getpwnam takes a NUL-terminated name and returns a pointer into static storage
    // (or null), read at once, before any other call could overwrite it.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("PostgreSQL refuses to run as root, and there is no `postgres` user to run it as; {INSTALL_HINT}"),
        ));
    }
    // SAFETY: checked non-null above.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    Ok(Some((uid, gid)))
}

/// The one PostgreSQL server of a fleet.
#[derive(Debug, Clone)]
pub struct PostgresSpec {
    pub port: u16,
    /// Its `data/` and pid file.
    pub dir: PathBuf,
    pub place: Place,
}

impl PostgresSpec {
    pub fn new(run_dir: &Path, port: u16, place: Place) -> Self {
        PostgresSpec {
            port,
            dir: run_dir.join("postgres"),
            place,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.place.addr(self.port)
    }

    /// What an instance is given as `--postgres`.
    pub fn url(&self) -> String {
        format!("postgres://{USER}@{}/postgres", self.addr())
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Makes the cluster at the first start: `initdb` with trust authentication for the
    /// fleet's own addresses, as the server's user, in a dir that user owns.
    async fn init_once(&self, bin: &Path, user: Option<(u32, u32)>) -> io::Result<()> {
        if self.data_dir().join("PG_VERSION").is_file() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&self.dir, Some(uid), Some(gid))?;
            // The run dir is root's and private: the server's user must be able to pass.
            if let Some(run_dir) = self.dir.parent() {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(run_dir, std::fs::Permissions::from_mode(0o711))?;
            }
        }
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(self.data_dir())
            .args([
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
        if let Some((uid, gid)) = user {
            initdb.uid(uid).gid(gid);
        }
        let out = initdb.output().await?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        // Under `--network netns` the instances connect from their own namespaces' addresses,
        // on the fleet's private bridge (the server listens on its own address only).
        let mut hba = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data_dir().join("pg_hba.conf"))?;
        std::io::Write::write_all(
            &mut hba,
            format!("host all {USER} 0.0.0.0/0 trust\n").as_bytes(),
        )?;
        Ok(())
    }
}

#[async_trait]
impl ChildSpec for PostgresSpec {
    fn id(&self) -> &str {
        "postgres"
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn place(&self) -> Place {
        self.place.clone()
    }

    async fn command(&self) -> io::Result<Command> {
        let bin = installation()?;
        let user = run_as()?;
        self.init_once(&bin, user).await?;
        super::supervisor::stay_down(&self.dir).await;
        // `sh` writes its pid, then becomes the server (same pid), as ZooKeeper's does. As
        // root it becomes the server through `setpriv`, which drops to the server's user: the
        // user must change after the supervisor has put the child in its namespace (entering
        // one takes root), so not with the command's own `uid`, which is set before that.
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join(PID_FILE));
        if let Some((uid, gid)) = user {
            command.args([
                "setpriv".to_owned(),
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_owned(),
            ]);
        }
        command
            .arg(bin.join("postgres"))
            .arg("-D")
            .arg(self.data_dir())
            .arg("-p")
            .arg(self.port.to_string());
        for setting in [
            format!("listen_addresses={}", self.place.ip),
            "unix_socket_directories=".into(),
            format!("max_connections={MAX_CONNECTIONS}"),
            "shared_buffers=32MB".into(),
            "fsync=off".into(),
            "synchronous_commit=off".into(),
            "full_page_writes=off".into(),
            // The sessions the server ends (a timeout, a client gone) are the lesson: logged.
            "log_min_messages=warning".into(),
            "log_line_prefix=".into(),
        ] {
            command.arg("-c").arg(setting);
        }
        Ok(command)
    }
}

/// Waits until the server accepts connections as [`USER`]; the error says where it stands.
pub async fn wait_ready(spec: &PostgresSpec, within: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + within;
    let url = spec.url();
    loop {
        let tried = tokio::time::timeout(
            Duration::from_secs(2),
            tokio_postgres::connect(&url, tokio_postgres::NoTls),
        )
        .await;
        let why = match tried {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(err)) => err.to_string(),
            Err(_) => "no answer".into(),
        };
        if Instant::now() >= deadline {
            bail!(
                "PostgreSQL at {} was not ready within {within:?}: {why}",
                spec.addr()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_connects_as_the_fleet_user() {
        let spec = PostgresSpec::new(Path::new("/run/x"), 5544, Place::LOOPBACK);
        assert_eq!(spec.url(), "postgres://oversell@127.0.0.1:5544/postgres");
        assert_eq!(spec.dir, Path::new("/run/x/postgres"));
    }
}
