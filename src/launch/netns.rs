//! The fleet's own network, for `oversell up --network netns`: every Redis node, Sentinel,
//! ZooKeeper server and instance in a Linux network namespace of its own, each with one
//! address on a bridge the fleet creates (in a namespace of its own, joined to the host), so
//! that the links between them can be cut for real (the `partition` fault) while the resource
//! store and nginx, on the gateway address in the host's namespace, are never cut off from
//! anything. This file makes it, takes it down, and starts a child inside it ([`Place`]); the
//! network as a value, and the cuts, are the service's (`crate::member::network`,
//! `crate::member::cut`): an instance reads the network it is handed, and cuts it.
//!
//! A switch: a namespace `<run>-switch` holding a bridge, joined to the host by a veth pair
//! (the host's end `<run>h` has the gateway address). Per member a namespace `<run>-<id>`, a
//! veth pair (one end on the switch's bridge, `eth0` inside) and, inside, an empty `nft`
//! table [`cut::TABLE`] whose drop set the `partition` fault fills. Deleting a namespace
//! deletes its veth pairs and its table, so taking the network down is deleting the
//! namespaces (and, not to wait for the kernel to do it, the host's end).
//!
//! Why the bridge is not in the host's namespace: there, frames between two members go
//! through the host's firewall (`br_netfilter`), and a host running Docker sets its FORWARD
//! policy to DROP — members would reach the host but not each other. In a namespace of its
//! own the bridge meets an empty firewall, whatever the host runs.
//!
//! Nothing may be left behind, however `up` ends: a clean stop takes it down itself; after a
//! `kill -9` a watcher process (its own process group, no parent-death signal) sees `up`'s
//! pid gone and does it; and a later `up` removes what a watcher could not (the machine
//! rebooted into the same names is impossible: namespaces do not survive a reboot).

use std::io::Write;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};

use anyhow::{bail, Context};

use crate::member::cut;
use crate::member::network::{Member, Network};

/// Where the fleet's processes talk to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NetworkKind {
    Loopback,
    Netns,
}

/// The first two octets of every fleet network: a /16 of the private range, one /24 per run.
const SUBNET: [u8; 2] = [10, 231];
/// Prefix of every name a fleet network takes: `o<pid>x<n>`, the `n`th network of process
/// `pid` (tests start several fleets in one process). Short: a link name has 15 bytes.
const PREFIX: &str = "o";

/// Networks this process made so far, for the next name.
static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Where `ip netns` keeps a namespace's handle.
pub fn netns_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new("/run/netns").join(name)
}

/// Why this process cannot make a fleet network, as one line: not root, or no `ip` / `nft`.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(
            "--network netns needs root (it makes network namespaces, veth pairs and nft \
             rules): run `sudo oversell up --network netns …`"
                .into(),
        );
    }
    for (tool, package) in [("ip", "iproute2"), ("nft", "nftables")] {
        let found = Command::new(tool)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Some(format!(
                "--network netns needs `{tool}`; install it with: sudo apt-get install -y \
                 {package}"
            ));
        }
    }
    None
}

/// Where a child process runs: on the host's loopback, or in a namespace of the fleet's with
/// an address of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub ip: Ipv4Addr,
    pub netns: Option<String>,
}

impl Place {
    pub const LOOPBACK: Place = Place {
        ip: Ipv4Addr::LOCALHOST,
        netns: None,
    };

    /// `ip:port`.
    pub fn addr(&self, port: u16) -> std::net::SocketAddr {
        std::net::SocketAddr::from((self.ip, port))
    }

    /// Makes `command` start inside this place's namespace (nothing for loopback). The
    /// namespace is entered in the child between fork and exec, with `setns`.
    pub fn enter(&self, command: &mut tokio::process::Command) -> std::io::Result<()> {
        let Some(netns) = &self.netns else {
            return Ok(());
        };
        let file = std::fs::File::open(netns_path(netns)).map_err(|err| {
            std::io::Error::new(err.kind(), format!("network namespace {netns}: {err}"))
        })?;
        // SAFETY: the closure runs in the forked child before exec and only calls setns
        // (async-signal-safe). It owns the file, so the descriptor stays open until then.
        unsafe {
            command.pre_exec(move || {
                if libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }
}

/// A fleet network, taken down when dropped.
pub struct FleetNetwork {
    network: Network,
    /// The networks of earlier `up`s, killed before they could clean up, removed now.
    removed_stale: Vec<String>,
    /// Removes the network if `up` dies without dropping this (`kill -9`).
    watcher: Option<std::process::Child>,
}

impl FleetNetwork {
    /// Makes a network with one namespace per id, in order, for the process `owner` (`up`).
    pub fn create(ids: &[String]) -> anyhow::Result<FleetNetwork> {
        let removed_stale = remove_stale();
        let owner = std::process::id();
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 100;
        let run = format!("{PREFIX}{owner}x{n}");
        let third = free_third_octet(owner)?;
        let gateway = Ipv4Addr::new(SUBNET[0], SUBNET[1], third, 1);
        let members: Vec<Member> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| Member {
                id: id.clone(),
                addr: Ipv4Addr::new(SUBNET[0], SUBNET[1], third, 2 + i as u8),
            })
            .collect();
        if members.len() > 250 {
            bail!("a fleet network holds at most 250 members");
        }
        let network = Network {
            run,
            gateway,
            members,
        };
        let mut made = FleetNetwork {
            watcher: watcher(owner, &network),
            network,
            removed_stale,
        };
        made.build().context("cannot make the fleet's network")?;
        Ok(made)
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    /// Where member `id` runs; `None` if it is not one.
    pub fn place(&self, id: &str) -> Option<Place> {
        self.network.member(id).map(|m| Place {
            ip: m.addr,
            netns: Some(self.network.namespace(id)),
        })
    }

    /// The run names of stale networks this one's making removed.
    pub fn removed_stale(&self) -> &[String] {
        &self.removed_stale
    }

    fn build(&mut self) -> anyhow::Result<()> {
        let net = &self.network;
        let (switch, uplink) = (switch_namespace(&net.run), uplink_name(&net.run));
        let mut host = format!(
            "netns add {switch}\nlink add {uplink} type veth peer name uplink netns {switch}\n\
             addr add {}/24 dev {uplink}\nlink set {uplink} up\n",
            net.gateway
        );
        let mut on_switch =
            "link set lo up\nlink add name fleet type bridge\nlink set fleet up\nlink set uplink master fleet up\n"
                .to_owned();
        for (n, member) in net.members.iter().enumerate() {
            let ns = net.namespace(&member.id);
            host += &format!("netns add {ns}\n");
            on_switch += &format!(
                "link add name v{n} type veth peer name eth0 netns {ns}\nlink set v{n} master fleet up\n"
            );
        }
        run_with_input(Command::new("ip").args(["-batch", "-"]), &host)?;
        run_with_input(
            Command::new("ip").args(["-n", &switch, "-batch", "-"]),
            &on_switch,
        )?;
        for member in &net.members {
            let ns = net.namespace(&member.id);
            let inside = format!(
                "addr add {}/24 dev eth0\nlink set eth0 up\nlink set lo up\n",
                member.addr
            );
            run_with_input(Command::new("ip").args(["-n", &ns, "-batch", "-"]), &inside)?;
            run_with_input(
                Command::new("ip").args(["netns", "exec", &ns, "nft", "-f", "-"]),
                &cut::table(),
            )?;
        }
        Ok(())
    }
}

impl Drop for FleetNetwork {
    fn drop(&mut self) {
        remove(&self.network.run);
        if let Some(mut watcher) = self.watcher.take() {
            let _ = watcher.kill();
            let _ = watcher.wait();
        }
    }
}

/// The namespace holding the fleet's bridge.
fn switch_namespace(run: &str) -> String {
    format!("{run}-switch")
}

/// The host's end of the veth pair to the switch, with the gateway address (at most 15
/// bytes: `o` + 7 pid digits + `x` + 2 + `h`).
pub fn uplink_name(run: &str) -> String {
    format!("{run}h")
}

/// The shell commands that remove a run's network: its namespaces (their veth pairs, tables
/// and the bridge go with them) and the host's end of the uplink, deleted at once rather than
/// when the kernel gets round to the switch's. Errors are ignored: whatever is already gone
/// is gone.
fn removal_script(run: &str) -> String {
    format!(
        "for ns in $(ip netns list | cut -d' ' -f1 | grep '^{run}-'); do ip netns del \"$ns\"; \
         done; ip link del {uplink} 2>/dev/null; true",
        uplink = uplink_name(run)
    )
}

fn remove(run: &str) {
    let _ = Command::new("sh")
        .args(["-c", &removal_script(run)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// A `sh` that waits for `owner` to exit and then removes the network: after a clean stop it
/// is killed first; after a `kill -9` of `up` it is what cleans up.
fn watcher(owner: u32, network: &Network) -> Option<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let script = format!(
        "while kill -0 {owner} 2>/dev/null; do sleep 0.5; done; {}",
        removal_script(&network.run)
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .inspect_err(|err| tracing::warn!(%err, "no watcher for the fleet network"))
        .ok()
}

/// Removes the networks of earlier `up`s whose process is gone (their watcher was killed
/// too, or the network outlived it); returns their run names.
fn remove_stale() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return vec![];
    };
    let listing = String::from_utf8_lossy(&out.stdout);
    let mut runs: Vec<String> = listing
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter_map(|ns| ns.split_once('-').map(|(run, _)| run.to_owned()))
        .filter(|run| run_owner(run).is_some_and(|pid| !alive(pid)))
        .collect();
    runs.sort();
    runs.dedup();
    for run in &runs {
        remove(run);
    }
    runs
}

/// The pid of the `up` a run name belongs to.
fn run_owner(run: &str) -> Option<i32> {
    run.strip_prefix(PREFIX)?.split_once('x')?.0.parse().ok()
}

fn alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// A third octet no address on this machine uses yet, starting from one the pid picks.
fn free_third_octet(owner: u32) -> anyhow::Result<u8> {
    let out = Command::new("ip")
        .args(["-4", "-o", "addr", "show"])
        .output()
        .context("cannot run `ip`")?;
    let used = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = (owner % 250) as u8;
    (0..250u8)
        .map(|i| 1 + (start + i) % 250)
        .find(|third| !used.contains(&format!("{}.{}.{third}.", SUBNET[0], SUBNET[1])))
        .context("no free /24 left in 10.231.0.0/16 for a fleet network")
}

/// Runs `command` with `input` on its stdin; an error carries its stderr.
fn run_with_input(command: &mut Command, input: &str) -> anyhow::Result<()> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {command:?}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}
