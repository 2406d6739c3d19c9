//! ZooKeeper servers for the ZooKeeper lock tiers: one standalone server or a 3-node ensemble,
//! each a real JVM from Debian's `zookeeper` package, supervised like every Redis of `up` (a
//! killed server is restarted with the same ports and data dir, and rejoins the ensemble).
//!
//! Nothing of the package's service set-up is used: no init script, no `/etc/zookeeper`, no
//! `/var/lib/zookeeper`. Each server gets its own `zoo.cfg`, data dir and log file under its dir
//! in the run dir, and runs in the foreground as
//! `java … org.apache.zookeeper.server.quorum.QuorumPeerMain <dir>/zoo.cfg` (standalone when
//! the config names no peers).
//!
//! Two settings matter for the lessons: [`TICK_MS`] is short so that a session timeout of a
//! couple of seconds is allowed (the server accepts 2 to 20 ticks), which keeps the
//! session-expiry scenarios short; and only the `ruok`, `srvr`, `mntr`, `stat` and `conf`
//! four-letter words are on, which is how [`wait_ready`] learns a server's mode and the
//! `zk-node-down` fault finds a server's dir (and in it, [`PID_FILE`]).

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use tokio::process::Command;

use super::netns::Place;
use super::redis_server;
use super::supervisor::ChildSpec;

/// The server's heartbeat. Sessions may time out after 2 to 20 ticks (1 to 10 s), and a
/// follower that misses `syncLimit` ticks (2.5 s) is dropped by the leader.
pub const TICK_MS: u64 = 500;
/// Debian's jar; its manifest's `Class-Path` names every jar the server needs.
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// A logging backend for the server's slf4j (same Debian package as slf4j itself): without
/// one the server logs nothing at all; with it, it logs to a file in its dir.
const SLF4J_SIMPLE_JAR: &str = "/usr/share/java/slf4j-simple.jar";
const MAIN_CLASS: &str = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
const INSTALL_HINT: &str = "install it with: sudo apt-get install -y zookeeper";
/// A small, quick JVM. Measured on this 2-core machine, start to answering `srvr`: about
/// 300 ms with the JVM's defaults, about 260 ms with these (C1 only and the serial collector
/// do less work at start-up), and 57 MB resident instead of 64. `-XX:-UsePerfData` keeps the
/// JVM from writing its `/tmp/hsperfdata_*` file.
pub const JVM_FLAGS: &[&str] = &[
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-XX:+ExitOnOutOfMemoryError",
];
/// The server's process id, written in its dir at every start (by the shell that then
/// becomes the JVM), for the `zk-node-down` fault.
pub const PID_FILE: &str = crate::zookeeper_recipe::PID_FILE;

/// Where the server's `java` and jars are.
#[derive(Debug, Clone)]
pub struct Installation {
    pub java: PathBuf,
    pub classpath: String,
}

/// Finds `java` and Debian's ZooKeeper jar, or says how to install them.
pub fn installation() -> io::Result<Installation> {
    let missing = |what: &str| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{what} not found; {INSTALL_HINT}"),
        )
    };
    let java = redis_server::find_binary("java").ok_or_else(|| missing("java"))?;
    if !Path::new(ZOOKEEPER_JAR).is_file() {
        return Err(missing(&format!("ZooKeeper ({ZOOKEEPER_JAR})")));
    }
    let mut classpath = ZOOKEEPER_JAR.to_owned();
    if Path::new(SLF4J_SIMPLE_JAR).is_file() {
        classpath = format!("{classpath}:{SLF4J_SIMPLE_JAR}");
    }
    Ok(Installation { java, classpath })
}

/// One server's ports. The quorum port carries followers' traffic to the leader, the election
/// port leader election; both are unused by a standalone server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZooKeeperPorts {
    /// 1-based, unique in the ensemble (ZooKeeper's `myid`).
    pub myid: u32,
    /// The server's address: loopback, or its own in a fleet network.
    pub ip: std::net::Ipv4Addr,
    pub client: u16,
    pub quorum: u16,
    pub election: u16,
}

/// One ZooKeeper server, as the supervisor starts it.
#[derive(Debug, Clone)]
pub struct ZooKeeperSpec {
    /// `zk` for a standalone server, `zk1`…`zk3` in an ensemble.
    pub id: String,
    pub myid: u32,
    pub client_port: u16,
    pub quorum_port: u16,
    pub election_port: u16,
    /// Its `zoo.cfg`, `data/` and `zookeeper.log`.
    pub dir: PathBuf,
    /// Where it runs: loopback, or a namespace of the fleet's network.
    pub place: Place,
    /// Every server of the ensemble, this one included; one entry for a standalone server.
    pub ensemble: Vec<ZooKeeperPorts>,
}

impl ZooKeeperSpec {
    fn ip(&self) -> std::net::Ipv4Addr {
        self.place.ip
    }

    /// Where clients reach this server.
    pub fn client_addr(&self) -> SocketAddr {
        self.place.addr(self.client_port)
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.join("zoo.cfg")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("zookeeper.log")
    }

    /// The `zoo.cfg` of this server.
    pub fn config(&self) -> String {
        let data = self.data_dir();
        let mut cfg = format!(
            "# Written by oversell for {id} at every start.\n\
             tickTime={TICK_MS}\n\
             initLimit=10\n\
             syncLimit=5\n\
             minSessionTimeout={min}\n\
             maxSessionTimeout={max}\n\
             dataDir={data}\n\
             clientPort={client}\n\
             clientPortAddress={ip}\n\
             # Every instance may connect from one address: the default cap of 60 per address\n\
             # would count them all together.\n\
             maxClientCnxns=0\n\
             # The transaction log is preallocated in 64 MB steps by default.\n\
             preAllocSize=4096\n\
             admin.enableServer=false\n\
             4lw.commands.whitelist=ruok,srvr,mntr,stat,conf\n",
            id = self.id,
            min = 2 * TICK_MS,
            max = 20 * TICK_MS,
            data = data.display(),
            client = self.client_port,
            ip = self.ip(),
        );
        if self.ensemble.len() > 1 {
            for peer in &self.ensemble {
                cfg.push_str(&format!(
                    "server.{}={}:{}:{}\n",
                    peer.myid, peer.ip, peer.quorum, peer.election
                ));
            }
        }
        cfg
    }
}

#[async_trait]
impl ChildSpec for ZooKeeperSpec {
    fn id(&self) -> &str {
        &self.id
    }

    fn port(&self) -> u16 {
        self.client_port
    }

    fn place(&self) -> Place {
        self.place.clone()
    }

    /// Rewrites `zoo.cfg` (and `myid`) and keeps the data dir: a restarted server comes back
    /// with its snapshot and log, as a restarted ensemble member must.
    async fn command(&self) -> io::Result<Command> {
        let install = installation()?;
        let data = self.data_dir();
        std::fs::create_dir_all(&data)?;
        std::fs::write(self.config_path(), self.config())?;
        if self.ensemble.len() > 1 {
            std::fs::write(data.join("myid"), format!("{}\n", self.myid))?;
        }
        super::supervisor::stay_down(&self.dir).await;
        // `sh` writes its pid, then becomes the JVM (same pid): the fault that kills a server
        // finds it there.
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join(PID_FILE))
            .arg(install.java)
            .args(JVM_FLAGS)
            .arg(format!(
                "-Dorg.slf4j.simpleLogger.logFile={}",
                self.log_path().display()
            ))
            .arg("-Dorg.slf4j.simpleLogger.showDateTime=true")
            .arg("-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS")
            .arg("-cp")
            .arg(install.classpath)
            .arg(MAIN_CLASS)
            .arg(self.config_path());
        Ok(command)
    }
}

/// The ZooKeeper servers as `oversell up` plans them.
#[derive(Debug, Clone)]
pub struct ZooKeeperPlan {
    pub servers: Vec<ZooKeeperSpec>,
}

impl ZooKeeperPlan {
    /// `nodes` is 1 (standalone) or 3 (an ensemble that survives one server down). Ports are
    /// taken from `ports` (free ones); each server's dir is `run_dir/<id>`.
    pub fn new(
        nodes: usize,
        run_dir: &Path,
        ports: &mut impl Iterator<Item = u16>,
    ) -> anyhow::Result<Self> {
        if nodes != 1 && nodes != 3 {
            bail!("a ZooKeeper of {nodes} nodes: only 1 (standalone) or 3 (an ensemble) are run");
        }
        let mut port = || ports.next().context("not enough free ports");
        let mut ensemble = Vec::with_capacity(nodes);
        for myid in 1..=nodes as u32 {
            let client = port()?;
            // A standalone server listens on its client port only.
            let (quorum, election) = match nodes {
                1 => (0, 0),
                _ => (port()?, port()?),
            };
            ensemble.push(ZooKeeperPorts {
                myid,
                ip: std::net::Ipv4Addr::LOCALHOST,
                client,
                quorum,
                election,
            });
        }
        let servers = ensemble
            .iter()
            .map(|p| {
                let id = match nodes {
                    1 => "zk".to_owned(),
                    _ => format!("zk{}", p.myid),
                };
                ZooKeeperSpec {
                    dir: run_dir.join(&id),
                    place: Place::LOOPBACK,
                    id,
                    myid: p.myid,
                    client_port: p.client,
                    quorum_port: p.quorum,
                    election_port: p.election,
                    ensemble: ensemble.clone(),
                }
            })
            .collect();
        Ok(ZooKeeperPlan { servers })
    }

    /// The servers' ids: what a fleet network gives a namespace each.
    pub fn ids(nodes: usize) -> Vec<String> {
        match nodes {
            1 => vec!["zk".into()],
            n => (1..=n).map(|i| format!("zk{i}")).collect(),
        }
    }

    /// How many free ports a plan of `nodes` servers takes.
    pub fn ports_needed(nodes: usize) -> usize {
        match nodes {
            1 => 1,
            n => 3 * n,
        }
    }

    /// Puts each server where `place_of` says for its id (a fleet network's member).
    pub fn placed(mut self, place_of: impl Fn(&str) -> Place) -> Self {
        let places: Vec<Place> = self.servers.iter().map(|s| place_of(&s.id)).collect();
        for (server, place) in self.servers.iter_mut().zip(&places) {
            for (peer, place) in server.ensemble.iter_mut().zip(&places) {
                peer.ip = place.ip;
            }
            server.place = place.clone();
        }
        self
    }

    /// The client's connect string: `host:p1,host:p2,…`.
    pub fn connect_string(&self) -> String {
        self.servers
            .iter()
            .map(|s| s.client_addr().to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// (`id`, client address) of every server, for [`wait_ready`].
    pub fn endpoints(&self) -> Vec<(String, SocketAddr)> {
        self.servers
            .iter()
            .map(|s| (s.id.clone(), s.client_addr()))
            .collect()
    }
}

/// A server's role as its `srvr` answer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZooKeeperMode {
    Standalone,
    Leader,
    Follower,
    Observer,
}

impl ZooKeeperMode {
    fn parse(srvr: &str) -> Option<Self> {
        let mode = srvr.lines().find_map(|l| l.strip_prefix("Mode: "))?;
        Some(match mode.trim() {
            "standalone" => Self::Standalone,
            "leader" => Self::Leader,
            "follower" => Self::Follower,
            "observer" => Self::Observer,
            _ => return None,
        })
    }
}

/// Asks a four-letter word (`ruok`, `srvr`, `mntr`, `stat`, `conf`) on a client port; `None`
/// if the server does not answer in time.
pub async fn four_letter(addr: SocketAddr, word: &str) -> Option<String> {
    crate::zookeeper_recipe::four_letter(&addr.to_string(), word).await
}

/// The server's mode, or `None` while it does not serve clients (starting, electing, or a
/// member cut off from its quorum: such a server answers `srvr` with "This ZooKeeper instance
/// is not currently serving requests").
pub async fn mode(addr: SocketAddr) -> Option<ZooKeeperMode> {
    ZooKeeperMode::parse(&four_letter(addr, "srvr").await?)
}

/// Waits until every server (`id`, client port) serves clients: standalone, or a leader and
/// its followers. The error names the servers that were not ready by `within`.
pub async fn wait_ready(servers: &[(String, SocketAddr)], within: Duration) -> anyhow::Result<()> {
    installation()?;
    let deadline = Instant::now() + within;
    loop {
        let mut waiting = Vec::new();
        for (id, addr) in servers {
            if mode(*addr).await.is_none() {
                waiting.push(format!("{id} ({addr})"));
            }
        }
        if waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "ZooKeeper was not ready within {within:?}: {} not serving (its log is \
                 zookeeper.log in its dir)",
                waiting.join(", ")
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standalone_plan_takes_one_port_and_names_no_peers() {
        let mut ports = [4000u16].into_iter();
        let plan = ZooKeeperPlan::new(1, Path::new("/run/x"), &mut ports).unwrap();
        assert_eq!(plan.servers.len(), 1);
        assert_eq!(plan.connect_string(), "127.0.0.1:4000");
        assert_eq!(plan.servers[0].id, "zk");
        assert_eq!(plan.servers[0].dir, Path::new("/run/x/zk"));
        let cfg = plan.servers[0].config();
        assert!(cfg.contains("clientPort=4000\n"), "{cfg}");
        assert!(cfg.contains("dataDir=/run/x/zk/data\n"), "{cfg}");
        assert!(!cfg.contains("server."), "standalone: {cfg}");
    }

    #[test]
    fn an_ensemble_plan_gives_every_server_all_peers() {
        let mut ports = 5000u16..;
        let plan = ZooKeeperPlan::new(3, Path::new("/r"), &mut ports).unwrap();
        assert_eq!(ZooKeeperPlan::ports_needed(3), 9);
        assert_eq!(ports.next(), Some(5009), "took exactly ports_needed");
        assert_eq!(
            plan.connect_string(),
            "127.0.0.1:5000,127.0.0.1:5003,127.0.0.1:5006"
        );
        for (i, server) in plan.servers.iter().enumerate() {
            assert_eq!(server.id, format!("zk{}", i + 1));
            assert_eq!(server.myid, i as u32 + 1);
            let cfg = server.config();
            assert!(cfg.contains("server.1=127.0.0.1:5001:5002\n"), "{cfg}");
            assert!(cfg.contains("server.3=127.0.0.1:5007:5008\n"), "{cfg}");
            assert!(cfg.contains(&format!("clientPort={}\n", server.client_port)));
        }
    }

    #[test]
    fn only_one_or_three_nodes() {
        for nodes in [0, 2, 5] {
            let err = ZooKeeperPlan::new(nodes, Path::new("/r"), &mut (6000u16..)).unwrap_err();
            assert!(err.to_string().contains("only 1"), "{err}");
        }
    }

    #[test]
    fn srvr_modes_are_read() {
        let srvr = "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: follower\nNode count: 5\n";
        assert_eq!(ZooKeeperMode::parse(srvr), Some(ZooKeeperMode::Follower));
        let not_serving = "This ZooKeeper instance is not currently serving requests\n";
        assert_eq!(ZooKeeperMode::parse(not_serving), None);
    }
}
