//! `oversell up` as a real process, with a real redis-server and nginx: sales through nginx
//! reach every instance, a killed instance comes back, a frozen one is not mistaken for dead,
//! and stopping `up` leaves no process and no temp dir behind.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use oversell_client::ports::free_port;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::eventually;

const SALES: usize = 300;

/// A running `oversell up`; killed if a test panics before stopping it.
pub(crate) struct Up {
    child: Child,
    /// Every line it printed so far, stdout and stderr (readers keep draining both pipes, so
    /// the fleet never blocks on a full one).
    lines: Arc<Mutex<Vec<String>>>,
    /// Its `XDG_STATE_HOME`, where its class dir is by default: the test's own, so no test
    /// leaves a class in the home directory or finds another's (a test may give its own).
    _state_home: tempfile::TempDir,
}

impl Up {
    pub(crate) fn spawn(args: &[&str]) -> Up {
        Up::spawn_with_env(args, &[])
    }

    /// As `spawn`, with more variables for up and every instance (`RUST_LOG` among them).
    pub(crate) fn spawn_with_env(args: &[&str], vars: &[(&str, &str)]) -> Up {
        let state_home = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_oversell"))
            .arg("up")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("ADMIN_TOKEN")
            .env_remove("LOCK_TIER")
            .env("XDG_STATE_HOME", state_home.path())
            .env("RUST_LOG", "oversell=warn")
            // Read by every instance: a busy CI machine must not turn a lock wait into a 503.
            .env("WAIT_DEADLINE_MS", "60000")
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn oversell up");
        let lines = Arc::new(Mutex::new(Vec::new()));
        drain(child.stdout.take().unwrap(), lines.clone());
        drain(child.stderr.take().unwrap(), lines.clone());
        Up {
            child,
            lines,
            _state_home: state_home,
        }
    }

    /// Waits for the process to end, and reaps it: until then a killed `up` is a zombie,
    /// which `kill -0` (how its watchers tell it is gone) still finds.
    pub(crate) fn reap(&mut self) {
        let _ = self.child.wait();
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn output(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The first line starting with `prefix`, waiting up to `limit` for it.
    pub(crate) async fn line(&self, prefix: &str, limit: Duration) -> String {
        let found = || self.output().into_iter().find(|l| l.starts_with(prefix));
        let lines = self.lines.clone();
        let waited = tokio::time::timeout(limit, async {
            loop {
                if let Some(line) = found() {
                    return line;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        waited.unwrap_or_else(|_| {
            let all = lines.lock().unwrap().join("\n");
            panic!("no line starting with `{prefix}` within {limit:?}; output:\n{all}")
        })
    }

    /// `value` of the banner line `name: value` (`name: value pid=N` gives `value`).
    pub(crate) async fn banner(&self, name: &str) -> (String, Option<u32>) {
        let line = self
            .line(&format!("{name}: "), Duration::from_secs(5))
            .await;
        let rest = &line[name.len() + 2..];
        let mut words = rest.split_whitespace();
        let value = words.next().unwrap_or("").to_owned();
        let pid = words
            .find_map(|w| w.strip_prefix("pid="))
            .and_then(|p| p.parse().ok());
        (value, pid)
    }

    /// The admin token, read from the file the banner names (`admin token file: <path>`).
    pub(crate) async fn admin_token(&self) -> String {
        let file = self.banner("admin token file").await.0;
        std::fs::read_to_string(&file).unwrap_or_else(|err| panic!("{file}: {err}"))
    }

    /// The rows of the room tokens file the banner names (`room tokens file: <path>`):
    /// room, token, join link (the join code after them is left out).
    pub(crate) async fn room_tokens(&self) -> Vec<[String; 3]> {
        let file = self.banner("room tokens file").await.0;
        let text = std::fs::read_to_string(&file).unwrap_or_else(|err| panic!("{file}: {err}"));
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let row: Vec<String> = l.split_whitespace().take(3).map(str::to_owned).collect();
                row.try_into()
                    .unwrap_or_else(|row| panic!("not room, token, link: {row:?}"))
            })
            .collect()
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        // A failed test must not leave a fleet running: SIGTERM tears it all down.
        if matches!(self.child.try_wait(), Ok(None)) {
            signal(self.child.id(), libc::SIGTERM);
            let _ = self.child.wait();
        }
    }
}

fn drain(from: impl Read + Send + 'static, into: Arc<Mutex<Vec<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if std::env::var_os("TEST_LOG").is_some() {
                eprintln!("up | {line}");
            }
            into.lock().unwrap().push(line);
        }
    });
}

pub(crate) fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal})");
}

/// A process as /proc shows it: parent, state letter and start time (which tells a reused
/// pid apart).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Proc {
    ppid: u32,
    state: char,
    start: u64,
    name: String,
}

fn proc(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses, so split at the last ')'.
    let (head, tail) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_owned();
    let fields: Vec<&str> = tail.split_whitespace().collect();
    Some(Proc {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        name,
    })
}

/// Every live descendant of `root`: children, grandchildren (nginx workers), …
fn descendants(root: u32) -> BTreeMap<u32, Proc> {
    let all: BTreeMap<u32, Proc> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(|pid| Some((pid, proc(pid)?)))
        .collect();
    let mut found = BTreeMap::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, p) in all.iter().filter(|(_, p)| p.ppid == parent) {
            if found.insert(*pid, p.clone()).is_none() {
                frontier.push(*pid);
            }
        }
    }
    found
}

/// True while `pid` is the same process as `seen` and has not exited.
fn still_running(pid: u32, seen: &Proc) -> bool {
    proc(pid).is_some_and(|now| now.start == seen.start && now.state != 'Z' && now.state != 'X')
}

fn client() -> reqwest::Client {
    crate::helpers::http_client_builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn get(client: &reqwest::Client, url: String) -> Option<Value> {
    let resp = client.get(url).send().await.ok()?;
    if resp.status() != StatusCode::OK {
        return None;
    }
    resp.json().await.ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_serves_sales_on_every_instance_restarts_a_killed_one_and_leaves_nothing_behind() {
    let port = free_port().unwrap();
    let up = Up::spawn(&["--instances", "3", "--port", &port.to_string()]);
    let url = format!("http://127.0.0.1:{port}");
    up.line(&format!("ready: {url}"), Duration::from_secs(60))
        .await;

    // The banner names every process; /proc agrees they are up's children.
    let token = up.admin_token().await;
    let run_dir = PathBuf::from(up.banner("run dir").await.0);
    let class_dir = PathBuf::from(up.banner("class dir").await.0);
    let (_, redis_pid) = up.banner("redis").await;
    let redis_dir = std::fs::read_link(format!("/proc/{}/cwd", redis_pid.unwrap())).unwrap();
    let mut apps = BTreeMap::new();
    for id in ["app1", "app2", "app3"] {
        let (app_url, pid) = up.banner(id).await;
        apps.insert(id, (app_url, pid.expect("pid in banner")));
    }
    let mut seen = descendants(up.pid());
    for (id, (_, pid)) in &apps {
        assert_eq!(
            seen.get(pid).map(|p| p.ppid),
            Some(up.pid()),
            "{id} is a child of up"
        );
    }
    // Each instance is given its share of the cores, not a thread per core each.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (id, (_, pid)) in &apps {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        let given: Vec<&[u8]> = environ
            .split(|b| *b == 0)
            .filter(|var| var.starts_with(b"WORKER_THREADS="))
            .collect();
        let share = format!("WORKER_THREADS={}", cores.div_ceil(3));
        assert_eq!(given, [share.as_bytes()], "{id}");
    }
    assert!(
        seen.values().any(|p| p.name == "nginx"),
        "nginx runs: {seen:?}"
    );
    assert!(run_dir.join("nginx.conf").is_file());

    // A few hundred sales through nginx; the ledger says which instance sold each.
    let client = client();
    let reset = client
        .post(format!("{url}/admin/reset"))
        .bearer_auth(&token)
        .json(&json!({ "stock": 1000 }))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);
    let statuses: Vec<StatusCode> = futures_util::stream::iter(0..SALES)
        .map(|i| {
            let client = client.clone();
            let url = url.clone();
            async move {
                let resp = client
                    .post(format!("{url}/sale"))
                    .json(&json!({ "buyer": format!("buyer-{i}") }))
                    .send()
                    .await
                    .unwrap();
                resp.status()
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(
        statuses.iter().all(|s| *s == StatusCode::OK),
        "{statuses:?}"
    );
    let ledger = get(&client, format!("{url}/ledger?limit=10000"))
        .await
        .unwrap();
    let orders = ledger["orders"].as_array().unwrap();
    assert_eq!(orders.len(), SALES);
    let sellers: BTreeSet<&str> = orders
        .iter()
        .filter_map(|o| o["instance"].as_str())
        .collect();
    assert_eq!(sellers, BTreeSet::from(["app1", "app2", "app3"]));

    // Freeze app1 (a real SIGSTOP), then kill app2: app2 comes back on its port with a new
    // pid; app1, stopped all along, is left alone.
    let (app1_url, app1_pid) = apps["app1"].clone();
    let (app2_url, app2_pid) = apps["app2"].clone();
    signal(app1_pid, libc::SIGSTOP);
    eventually(Duration::from_secs(5), || async {
        proc(app1_pid).is_some_and(|p| p.state == 'T')
    })
    .await;
    signal(app2_pid, libc::SIGKILL);
    up.line(
        "restart: app2 exited (signal 9), restarting",
        Duration::from_secs(10),
    )
    .await;
    let back = up
        .line("restart: app2 is back: ", Duration::from_secs(10))
        .await;
    assert!(
        back.contains(&format!("{app2_url} pid=")),
        "same port: {back}"
    );
    let new_pid: u32 = back.rsplit("pid=").next().unwrap().parse().unwrap();
    assert_ne!(new_pid, app2_pid);
    eventually(Duration::from_secs(10), || async {
        get(&client, format!("{app2_url}/health"))
            .await
            .is_some_and(|h| h["instance"] == "app2")
    })
    .await;
    assert!(
        still_running(app1_pid, &seen[&app1_pid]),
        "the frozen app1 is the same process"
    );
    assert!(
        !up.output().iter().any(|l| l.starts_with("restart: app1")),
        "a stopped process is not a dead one"
    );
    signal(app1_pid, libc::SIGCONT);
    assert!(get(&client, format!("{app1_url}/health")).await.is_some());

    // Through nginx, the restarted instance answers again.
    eventually(Duration::from_secs(20), || async {
        get(&client, format!("{url}/state"))
            .await
            .is_some_and(|s| s["instance"] == "app2")
    })
    .await;

    // nginx killed outright, its run dir wiped first: its workers go with it (they would
    // keep serving the port, unsupervised), and it comes back on the same port.
    let (nginx_pid, _) = descendants(up.pid())
        .into_iter()
        .find(|(_, p)| p.name == "nginx" && p.ppid == up.pid())
        .expect("nginx's master is a child of up");
    let workers = descendants(nginx_pid);
    assert!(!workers.is_empty(), "nginx has workers");
    std::fs::remove_dir_all(&run_dir).unwrap();
    signal(nginx_pid, libc::SIGKILL);
    up.line(
        "restart: nginx exited (signal 9), restarting",
        Duration::from_secs(10),
    )
    .await;
    let back = up
        .line("restart: nginx is back: ", Duration::from_secs(20))
        .await;
    assert!(
        back.contains(&format!("{url} pid=")),
        "same address: {back}"
    );
    eventually(Duration::from_secs(5), || async {
        workers.iter().all(|(pid, p)| !still_running(*pid, p))
    })
    .await;
    assert!(get(&client, format!("{url}/health")).await.is_some());

    // Freeze app3 and stop `up`: it resumes and stops app3 too, then everything is gone.
    let app3_pid = apps["app3"].1;
    signal(app3_pid, libc::SIGSTOP);
    eventually(Duration::from_secs(5), || async {
        proc(app3_pid).is_some_and(|p| p.state == 'T')
    })
    .await;
    seen.extend(descendants(up.pid()));
    assert!(seen.contains_key(&new_pid));
    signal(up.pid(), libc::SIGTERM);
    let up_pid = up.pid();
    let up = Mutex::new(up);
    eventually(Duration::from_secs(30), || async {
        matches!(up.lock().unwrap().child.try_wait(), Ok(Some(_)))
    })
    .await;
    let mut up = up.into_inner().unwrap();
    let status = up.child.wait().unwrap();
    assert!(status.success(), "up exited with {status}");
    let left: Vec<_> = seen
        .iter()
        .filter(|(pid, p)| still_running(**pid, p))
        .collect();
    assert!(
        left.is_empty(),
        "left running after up {up_pid} stopped: {left:?}"
    );
    assert!(!run_dir.exists(), "{} removed", run_dir.display());
    // The resource store's data is the class's, kept in the class dir for the next start.
    assert!(
        redis_dir.starts_with(&class_dir) && redis_dir.is_dir(),
        "{} kept in {}",
        redis_dir.display(),
        class_dir.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_names_a_port_in_use_and_exits_non_zero() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let state_home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oversell"))
        .args(["up", "--port", &port.to_string()])
        .env("XDG_STATE_HOME", state_home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!("error: port {port} is in use (nginx --port); pick another with --port")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_without_redis_server_says_how_to_install_it_in_one_line() {
    let sbin = ["/usr/sbin", "/usr/local/sbin", "/sbin"];
    if sbin
        .iter()
        .any(|dir| Path::new(dir).join("redis-server").exists())
    {
        return; // `up` also looks in sbin directories, so it would find this one
    }
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oversell"))
        .args(["up", "--port", "0"])
        .env("PATH", empty.path())
        .env("XDG_STATE_HOME", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "error: redis-server not found; install it with: sudo apt-get install -y redis-server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_with_a_host_beyond_loopback_listens_there_with_the_given_token() {
    let port = free_port().unwrap();
    let up = Up::spawn(&[
        "--instances",
        "1",
        "--port",
        &port.to_string(),
        "--host",
        "0.0.0.0",
        "--admin-token",
        "class-secret",
    ]);
    let url = format!("http://127.0.0.1:{port}");
    up.line(&format!("ready: {url}"), Duration::from_secs(60))
        .await;
    let listening = up
        .line("listening on 0.0.0.0:", Duration::from_secs(1))
        .await;
    assert!(listening.contains(&port.to_string()), "{listening}");
    assert_eq!(up.admin_token().await, "class-secret");
    // nginx listens on every interface: the wildcard address is taken.
    assert!(std::net::TcpListener::bind(("0.0.0.0", port)).is_err());

    // The token is on no line; the `next:` line, pasted into a shell, reads it from its file.
    let output = up.output();
    assert!(
        !output.iter().any(|l| l.contains("class-secret")),
        "{output:?}"
    );
    let next = up.line("next: ", Duration::from_secs(1)).await;
    let (_, typed) = next.split_once("Ctrl-C stops everything): ").unwrap();
    let ran = Command::new("bash").args(["-c", typed]).output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let state = get(&client(), format!("{url}/state")).await.unwrap();
    assert_eq!(state["stock"], 99, "reset to 100, one sold: {state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_up_leaves_no_process_and_frees_the_port() {
    let port = free_port().unwrap();
    // A temp dir of this test's own: every `up` sweeps the run dirs dead ones left in its temp
    // dir, so another test's `up` starting meanwhile must not find this one's.
    let tmp = tempfile::tempdir().unwrap();
    let tmpdir = [("TMPDIR", tmp.path().to_str().unwrap())];
    let mut up = Up::spawn_with_env(&["--instances", "2", "--port", &port.to_string()], &tmpdir);
    up.line(
        &format!("ready: http://127.0.0.1:{port}"),
        Duration::from_secs(60),
    )
    .await;
    let seen = descendants(up.pid());
    assert!(seen.values().any(|p| p.name == "nginx"), "{seen:?}");
    assert!(seen.values().any(|p| p.name == "redis-server"), "{seen:?}");
    signal(up.pid(), libc::SIGKILL);
    let _ = up.child.wait();
    // Instances and Redis die with their parent (PR_SET_PDEATHSIG); nginx's workers, which
    // are nginx's children, are killed by the reaper `up` left watching for its death.
    eventually(Duration::from_secs(10), || async {
        seen.iter().all(|(pid, p)| !still_running(*pid, p))
    })
    .await;
    eventually(Duration::from_secs(10), || async {
        std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
    })
    .await;
    // Its run dir is left behind; the next `up` removes it and says so.
    let run_dir = up
        .output()
        .iter()
        .find_map(|l| l.strip_prefix("run dir: "))
        .and_then(|rest| rest.split_whitespace().next())
        .map(PathBuf::from)
        .expect("run dir in the banner");
    assert!(run_dir.exists());
    let next = Up::spawn_with_env(&["--instances", "1", "--port", "0"], &tmpdir);
    next.line("ready: ", Duration::from_secs(60)).await;
    assert!(!run_dir.exists(), "{} removed", run_dir.display());
    assert!(next
        .output()
        .iter()
        .any(|l| l.starts_with(&format!("removed {}", run_dir.display()))));
}

/// A fleet dropped without being stopped (a test that panics halfway, an early return) takes
/// nginx's workers with it: they are not our children, and killing the master alone left them
/// serving a dead fleet's port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_dropped_without_stop_leaves_no_nginx_worker() {
    let fleet = crate::scenarios::start_fleet(1).await;
    let master = fleet.nginx_pid().expect("nginx runs");
    let workers = descendants(master);
    assert!(!workers.is_empty(), "nginx has workers");
    drop(fleet);
    eventually(Duration::from_secs(5), || async {
        workers.iter().all(|(pid, seen)| !still_running(*pid, seen))
    })
    .await;
}
