//! The ZooKeeper lock recipe (`oversell::zookeeper_recipe`) against real ZooKeeper servers, started
//! from `oversell::launch::zookeeper_servers`' specs: Debian's JVM server, standalone or a 3-node
//! ensemble, killed for real. These are the facts the ZooKeeper tiers will stand on: the line is
//! first come first served, a waiter that gives up leaves nothing behind, a dead or paused holder
//! loses its node only when its session ends, and a lost quorum is an error within the deadline,
//! not a hang.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use oversell::launch::process;
use oversell::launch::supervisor::{ChildSpec, Supervisor};
use oversell::launch::zookeeper_servers::{self as servers, ZooKeeperMode, ZooKeeperPlan};
use oversell::zookeeper_recipe::{self as zk, Released, ZkError, ZkSession};
use oversell_client::ports::free_ports;
use tokio::process::Child;
use tokio::time::Instant;

use crate::helpers::poll_until;

const READY: Duration = Duration::from_secs(30);
const SESSION: Duration = Duration::from_secs(4);

/// Real ZooKeeper servers, killed when dropped.
struct Servers {
    plan: ZooKeeperPlan,
    children: Vec<Option<Child>>,
    _dir: tempfile::TempDir,
}

impl Servers {
    async fn start(nodes: usize) -> Servers {
        let dir = tempfile::tempdir().expect("temp dir");
        let ports = free_ports(ZooKeeperPlan::ports_needed(nodes)).expect("free ports");
        let plan = ZooKeeperPlan::new(nodes, dir.path(), &mut ports.into_iter()).expect("plan");
        let started = Instant::now();
        let mut children = Vec::new();
        for spec in &plan.servers {
            let mut command = spec.command().await.expect("zookeeper installed");
            let mut child = process::supervised(&mut command)
                .spawn()
                .expect("java starts");
            process::prefix_output(&mut child, &spec.id);
            children.push(Some(child));
        }
        servers::wait_ready(&plan.endpoints(), READY)
            .await
            .expect("zookeeper ready");
        eprintln!(
            "{nodes} ZooKeeper server(s) ready in {:?}",
            started.elapsed()
        );
        Servers {
            plan,
            children,
            _dir: dir,
        }
    }

    fn connect_string(&self) -> String {
        self.plan.connect_string()
    }

    async fn session(&self) -> Arc<ZkSession> {
        Arc::new(
            zk::connect(&self.connect_string(), SESSION)
                .await
                .expect("session"),
        )
    }

    /// Kills the server that leads now (SIGKILL), and says which it was.
    async fn kill_leader(&mut self) -> usize {
        for (i, spec) in self.plan.servers.iter().enumerate() {
            if self.children[i].is_some()
                && servers::mode(spec.client_addr()).await == Some(ZooKeeperMode::Leader)
            {
                let mut child = self.children[i].take().unwrap();
                child.kill().await.expect("kill");
                return i;
            }
        }
        panic!("no leader among the servers still running");
    }
}

impl Servers {
    /// Waits until the servers hold `n` watches in all (`mntr`'s `zk_watch_count`, summed).
    async fn watches_reach(&self, n: u64) {
        let held = poll_until(
            Duration::from_secs(5),
            || async {
                let mut total = 0;
                for spec in &self.plan.servers {
                    let mntr = servers::four_letter(spec.client_addr(), "mntr").await;
                    total += mntr
                        .as_deref()
                        .and_then(|m| m.lines().find_map(|l| l.strip_prefix("zk_watch_count")))
                        .and_then(|n| n.trim().parse::<u64>().ok())
                        .unwrap_or(0);
                }
                total
            },
            |total| *total == n,
        )
        .await;
        assert_eq!(held, n, "the servers' watches never reached {n}");
    }
}

fn in_secs(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

/// Waits until the room's queue has `n` nodes.
async fn queue_reaches(session: &ZkSession, room: &str, n: usize) -> Vec<zk::ZkNode> {
    let queue = poll_until(
        Duration::from_secs(5),
        || async { session.queue(room).await.expect("queue") },
        |queue| queue.len() == n,
    )
    .await;
    assert_eq!(queue.len(), n, "queue never reached {n}: {queue:?}");
    queue
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zk_waiters_get_in_one_at_a_time_in_arrival_order() {
    let servers = Servers::start(1).await;
    let (a, b, c) = (
        servers.session().await,
        servers.session().await,
        servers.session().await,
    );
    let room = "order";
    let held_a = a.lock(room, "a", in_secs(5)).await.expect("a locks");

    let waiter = |session: Arc<ZkSession>, owner: &'static str| {
        tokio::spawn(async move { session.lock(room, owner, in_secs(20)).await })
    };
    let b_waits = waiter(b.clone(), "b");
    queue_reaches(&a, room, 2).await;
    let c_waits = waiter(c.clone(), "c");
    let queue = queue_reaches(&a, room, 3).await;

    let owners: Vec<&str> = queue.iter().map(|n| n.owner.as_str()).collect();
    assert_eq!(owners, ["a", "b", "c"], "holder first, then arrival order");
    assert!(queue.windows(2).all(|w| w[0].sequence < w[1].sequence));
    assert!(queue.windows(2).all(|w| w[0].czxid < w[1].czxid));
    assert_eq!(queue[0].path, held_a.path);
    assert_eq!(queue[0].session, a.session_id().await);

    // Each waiter has looked at the line and watches the node just ahead: from here only that
    // node's deletion would let it in, so a waiter finished now got in while a held the lock.
    servers.watches_reach(2).await;
    assert!(!b_waits.is_finished(), "b got in while a held the lock");
    assert!(!c_waits.is_finished(), "c got in while a held the lock");

    assert_eq!(a.release(&held_a).await.unwrap(), Released::Deleted);
    let held_b = tokio::time::timeout(Duration::from_secs(2), b_waits)
        .await
        .expect("b gets in soon after a's release")
        .unwrap()
        .expect("b locks");
    assert!(held_b.sequence > held_a.sequence && held_b.czxid > held_a.czxid);
    // b's watch fired with a's release; c's, on b's node, is the one left, so c has looked
    // at the line again if a's release woke it too.
    servers.watches_reach(1).await;
    assert!(!c_waits.is_finished(), "c got in while b held the lock");

    assert_eq!(b.release(&held_b).await.unwrap(), Released::Deleted);
    let held_c = tokio::time::timeout(Duration::from_secs(2), c_waits)
        .await
        .expect("c gets in soon after b's release")
        .unwrap()
        .expect("c locks");
    assert!(held_c.sequence > held_b.sequence && held_c.czxid > held_b.czxid);
    assert_eq!(c.release(&held_c).await.unwrap(), Released::Deleted);
    assert!(a.queue(room).await.unwrap().is_empty());
    // A second release finds nothing: the node is gone.
    assert_eq!(c.release(&held_c).await.unwrap(), Released::Lost);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zk_a_waiter_past_its_deadline_leaves_no_node_behind() {
    let servers = Servers::start(1).await;
    let (a, b) = (servers.session().await, servers.session().await);
    let room = "deadline";
    let held = a.lock(room, "a", in_secs(5)).await.expect("a locks");

    // Cancelled in line, after its node was created.
    let started = Instant::now();
    let waited = b
        .lock(room, "b", Instant::now() + Duration::from_millis(300))
        .await;
    assert!(matches!(waited, Err(ZkError::Timeout)), "{waited:?}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );

    // Cancelled while its create is in flight or just answered: the case the crate's own
    // `Client::lock` leaves a node behind in.
    for i in 0..20u64 {
        let deadline = Instant::now() + Duration::from_micros(i * 250);
        let waited = b.lock(room, "b", deadline).await;
        assert!(waited.is_err(), "b cannot get in while a holds: {waited:?}");
    }

    // The clean-ups run in the background: only a's node stays.
    let queue = queue_reaches(&a, room, 1).await;
    assert_eq!(queue[0].path, held.path);
    // ZooKeeper runs one session's requests in the order they were sent: once a request of
    // b's is answered, every create b's cancelled calls sent before it has landed.
    b.queue(room).await.expect("a round trip on b's session");
    assert_eq!(a.queue(room).await.unwrap().len(), 1, "a node came back");

    // And nothing stray stands in line (a stray node of a live session would hold the room
    // for good): the next buyer gets in after the release.
    assert_eq!(a.release(&held).await.unwrap(), Released::Deleted);
    let next = b
        .lock(room, "b", in_secs(2))
        .await
        .expect("no stray node blocks the room");
    assert!(
        next.sequence > held.sequence + 20,
        "every cancelled call took a number"
    );
    b.release(&next).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zk_a_closed_session_frees_the_lock_at_once() {
    let servers = Servers::start(1).await;
    let (a, b) = (servers.session().await, servers.session().await);
    let room = "closed";
    let held_a = a.lock(room, "a", in_secs(5)).await.expect("a locks");
    let b_waits = tokio::spawn({
        let b = b.clone();
        async move { b.lock(room, "b", in_secs(20)).await }
    });
    queue_reaches(&b, room, 2).await;

    // The holder's process ends cleanly: its client closes the session, ZooKeeper deletes
    // its nodes then and there, with no timeout to wait out.
    let closed = Instant::now();
    drop(a);
    let held_b = tokio::time::timeout(Duration::from_secs(2), b_waits)
        .await
        .expect("b gets in well before a session timeout")
        .unwrap()
        .expect("b locks");
    assert!(closed.elapsed() < SESSION / 2, "{:?}", closed.elapsed());
    assert!(held_b.czxid > held_a.czxid);
    assert_eq!(b.release(&held_b).await.unwrap(), Released::Deleted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zk_a_paused_holder_loses_its_node_when_its_session_expires() {
    let servers = Servers::start(1).await;
    let connect = servers.connect_string();
    let room = "pause";
    let holder_session = Duration::from_secs(2);
    let pause = Duration::from_secs(6);

    // The holder runs on a runtime of its own, on its own thread, and that thread stops
    // dead for `pause` (a stop-the-world GC, a SIGSTOP): no pings, no reads, nothing.
    let awake = Arc::new(AtomicBool::new(true));
    let (held_tx, held_rx) = tokio::sync::oneshot::channel();
    let holder = std::thread::spawn({
        let awake = awake.clone();
        move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let a = zk::connect(&connect, holder_session)
                    .await
                    .expect("session");
                let held = a.lock(room, "a", in_secs(5)).await.expect("a locks");
                assert!(a.still_held(&held).await.unwrap());
                awake.store(false, Ordering::SeqCst);
                held_tx.send(held.clone()).unwrap();
                std::thread::sleep(pause);
                awake.store(true, Ordering::SeqCst);
                // Awake again, and still sure it holds the lock: does it?
                let still = a.still_held(&held).await.unwrap();
                let released = a.release(&held).await.unwrap();
                (held, still, released)
            })
        }
    });
    let held_a = held_rx.await.expect("a took the lock");
    let paused = Instant::now();

    let b = servers.session().await;
    let held_b = b.lock(room, "b", in_secs(20)).await.expect("b locks");
    let waited = paused.elapsed();
    assert!(
        !awake.load(Ordering::SeqCst),
        "b got in only after a woke up ({waited:?}): no overlap shown"
    );
    assert!(
        waited >= holder_session - Duration::from_millis(500),
        "b got in before a's session could expire: {waited:?}"
    );
    eprintln!("a paused; its session expired and b got in after {waited:?}");

    let (_, still, released) = tokio::task::spawn_blocking(move || holder.join().unwrap())
        .await
        .unwrap();
    assert!(!still, "a's node survived its session");
    assert_eq!(released, Released::Lost, "a's release found its node");
    // While both believed they held the lock, the token told them apart: the newer is larger.
    assert!(held_b.czxid > held_a.czxid && held_b.sequence > held_a.sequence);
    assert_eq!(b.release(&held_b).await.unwrap(), Released::Deleted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zk_a_killed_server_comes_back_under_its_supervisor_with_the_lock_intact() {
    let dir = tempfile::tempdir().unwrap();
    let plan = ZooKeeperPlan::new(1, dir.path(), &mut free_ports(1).unwrap().into_iter()).unwrap();
    let spec = plan.servers[0].clone();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let supervisor = Supervisor::start(spec.clone(), stop_rx);
    servers::wait_ready(&plan.endpoints(), READY).await.unwrap();

    let a = zk::connect(&plan.connect_string(), SESSION).await.unwrap();
    let b = zk::connect(&plan.connect_string(), SESSION).await.unwrap();
    let held = a.lock("crash", "a", in_secs(5)).await.unwrap();

    let pid = supervisor.instance().pid.expect("running");
    process::signal_group(pid, libc::SIGKILL);
    let killed = Instant::now();
    let restarts = poll_until(
        READY,
        || async { supervisor.instance().restarts },
        |restarts| *restarts > 0,
    )
    .await;
    assert!(restarts > 0, "the supervisor never saw the kill");
    servers::wait_ready(&plan.endpoints(), READY).await.unwrap();
    let back = killed.elapsed();
    assert_eq!(supervisor.instance().restarts, 1);
    eprintln!("killed ZooKeeper was serving again after {back:?}");

    // The lock was written to the transaction log before it was granted, and the session
    // outlived the restart: a still holds, b still waits. (Each client reconnects on its own
    // schedule; a request made meanwhile waits for it.)
    assert!(
        a.still_held(&held).await.unwrap(),
        "the lock did not survive the restart"
    );
    assert_eq!(b.queue("crash").await.unwrap().len(), 1);
    let waited = b
        .lock("crash", "b", Instant::now() + Duration::from_millis(500))
        .await;
    assert!(matches!(waited, Err(ZkError::Timeout)), "{waited:?}");
    assert_eq!(a.release(&held).await.unwrap(), Released::Deleted);
    let next = b.lock("crash", "b", in_secs(5)).await.unwrap();
    assert!(next.czxid > held.czxid);
    b.release(&next).await.unwrap();

    stop_tx.send(true).unwrap();
    supervisor.join().await;
    assert!(servers::mode(spec.client_addr()).await.is_none(), "stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zk_an_ensemble_locks_with_one_server_down_and_refuses_without_quorum() {
    let mut servers = Servers::start(3).await;
    let session = servers.session().await;
    let room = "quorum";
    let first = session.lock(room, "a", in_secs(5)).await.expect("3 of 3");
    session.release(&first).await.unwrap();

    // The leader dies: the other two elect one of themselves and go on.
    let killed = servers.kill_leader().await;
    let started = Instant::now();
    let second = session
        .lock(room, "a", in_secs(15))
        .await
        .expect("2 of 3 is a quorum");
    eprintln!(
        "zk{} (leader) killed; the next lock took {:?}",
        killed + 1,
        started.elapsed()
    );
    assert!(
        second.czxid > first.czxid,
        "a new leader's zxids are larger"
    );
    assert_eq!(session.release(&second).await.unwrap(), Released::Deleted);

    // The new leader dies too: one server alone is no quorum, and it says so by refusing
    // clients. The buyer hears it within its deadline.
    servers.kill_leader().await;
    let deadline = Duration::from_secs(3);
    let started = Instant::now();
    let refused = session.lock(room, "a", Instant::now() + deadline).await;
    let took = started.elapsed();
    assert!(
        matches!(refused, Err(ZkError::Unreachable(_))),
        "{refused:?}"
    );
    assert!(took < deadline + Duration::from_secs(1), "{took:?}");
    eprintln!("no quorum: lock answered {refused:?} after {took:?}");

    // A new session is refused as well, and at once.
    let started = Instant::now();
    let opened = zk::connect(&servers.connect_string(), SESSION).await;
    assert!(matches!(opened, Err(ZkError::Unreachable(_))));
    assert!(started.elapsed() < SESSION);
}
