//! What `up` prints once its fleet is ready: every process with its address and pid, where
//! the stores keep their data, where the secrets are, what to try next, then `ready: <url>`.
//! Harnesses read it line by line (`name: value`), so a line's name is part of its contract.
//!
//! No token is printed unless `--show-tokens` asks: the terminal is often the projected one.

use std::path::Path;

use oversell_api::tier::Tier;

use crate::class_setup::{MadeClass, OpenClass};
use crate::config::ResourceStoreKind;
use crate::launch::local_fleet::Fleet;
use crate::launch::process;
use crate::launch::supervisor::Instance;
use crate::lock_store::Persistence;

/// Where the fleet's secrets and its class are, and whether to print the tokens too.
pub(super) struct Secrets<'a> {
    /// The file holding the admin token.
    pub admin_token_file: &'a Path,
    /// The class made at start (`--class N`).
    pub class: Option<&'a MadeClass>,
    /// The class reopened from the class dir (no `--class`).
    pub reopened: Option<OpenClass>,
    /// The file holding the rooms' tokens, when there is a class.
    pub room_tokens_file: Option<&'a Path>,
    /// The class's join slips to print, when there is a class.
    pub slips_file: Option<&'a Path>,
    /// Where the class is kept across runs; `None`: in the run dir.
    pub class_dir: Option<&'a Path>,
    /// `--show-tokens`: print the tokens as well as their files.
    pub show: bool,
}

pub(super) fn print_banner(fleet: &Fleet, tier: Tier, redis_dir: Option<&Path>, secrets: &Secrets) {
    let url = fleet.url();
    let instances = fleet.instances();
    let mut out = String::new();
    let sharing = match fleet.resource_store() {
        ResourceStoreKind::Single => "one redis",
        ResourceStoreKind::Cluster => "a redis cluster",
    };
    out += &format!(
        "oversell up: {} instances behind nginx sharing {sharing}, lock tier {tier}\n",
        instances.len()
    );
    out += &format!(
        "nginx: {url} pid={} (round robin; dashboard at /)\n",
        pid(fleet.nginx_pid())
    );
    if !fleet.host().is_loopback() {
        out += &format!(
            "listening on {}:{} too: students use this machine's address; the admin token \
             is the fleet's key: keep it off the projector\n",
            fleet.host(),
            fleet.port()
        );
    }
    for instance in &instances {
        out += &format!(
            "{}: http://{}:{} pid={}\n",
            instance.id,
            instance.ip,
            instance.port,
            pid(instance.pid)
        );
    }
    let kept = match redis_dir {
        Some(dir) => format!("in {}, across runs", dir.display()),
        None => "in the run dir".into(),
    };
    if let (Some(url), Some(redis)) = (fleet.redis_url(), fleet.redis_process()) {
        out += &format!(
            "redis: {url} pid={} (resource store: stock, ledger, ground truth; {} {kept})\n",
            pid(redis.pid),
            persistence_words(fleet.resource_persistence())
        );
    }
    // One line per store process: `id: ip:port pid=N (what it is)`.
    let line = |process: &Instance, what: &str| {
        format!(
            "{}: {}:{} pid={} ({what})\n",
            process.id,
            process.ip,
            process.port,
            pid(process.pid)
        )
    };
    let lock_store = match fleet.resource_store() {
        ResourceStoreKind::Single => format!("lock store: {}", fleet.lock_store()),
        ResourceStoreKind::Cluster => {
            format!(
                "resource store: a room's stock, ledger and lock on its slot's master; {}",
                persistence_words(fleet.resource_persistence())
            )
        }
    };
    for process in fleet.lock_store_processes() {
        out += &line(&process, &lock_store);
    }
    for process in fleet.zookeeper_processes() {
        out += &line(&process, "ZooKeeper, for the zookeeper tiers");
    }
    if let Some(process) = fleet.postgres_process() {
        out += &line(
            &process,
            "PostgreSQL, for the postgres tiers; user oversell, database postgres",
        );
    }
    if let Some(network) = fleet.network() {
        out += &format!(
            "network: a namespace per process on {}/24 (resource store and nginx at {}, never \
             cut off); cut links with POST /admin/partition {{\"isolate\": [\"{}\"], \
             \"ms\": 5000}}\n",
            network.gateway,
            network.gateway,
            network.members.first().map_or("app1", |m| m.id.as_str())
        );
    }
    let admin_file = secrets.admin_token_file.display();
    out += &format!(
        "admin token file: {admin_file} (readable by you alone; keep it off the projector: \
         the admin token drives the whole fleet{})\n",
        if secrets.show {
            ""
        } else {
            "; --show-tokens prints it here"
        }
    );
    if secrets.show {
        out += &format!("admin token: {}\n", fleet.admin_token());
    }
    out += &format!(
        "run dir: {} (nginx.conf, access.log)\n",
        fleet.run_dir().display()
    );
    let json = "-H 'content-type: application/json'";
    out += &format!(
        "next: put 100 items on sale and buy one (or open {url}/; Ctrl-C stops everything): \
         curl -s {json} -H \"authorization: Bearer $(cat '{admin_file}')\" \
         -d '{{\"stock\":100}}' {url}/admin/reset \
         && curl -s {json} -d '{{\"buyer\":\"me\"}}' {url}/sale\n"
    );
    out += &match secrets.class_dir {
        Some(dir) if fleet.resource_store() == ResourceStoreKind::Cluster => format!(
            "class dir: {} (the admin token and room tokens files only: a cluster's nodes keep \
             the rooms and the stock in the run dir, so a restart starts them afresh)\n",
            dir.display()
        ),
        Some(dir) => format!(
            "class dir: {} (kept across runs: the rooms, their tokens, the votes, the stock and \
             the admin token; up started again with this directory reopens them, revoking \
             nothing; remove it for a fresh start)\n",
            dir.display()
        ),
        None => "class dir: none (with --port 0 the class lives in the run dir and goes with \
                 it; give --class-dir to keep it)\n"
            .into(),
    };
    if let Some(class) = secrets.class {
        // With a tokens file the printed tokens are not the only copy.
        out += &class.summary(secrets.show && secrets.room_tokens_file.is_none());
    }
    if let Some(open) = secrets.reopened {
        out += &format!(
            "class: reopened from the class dir, {} rooms, {} with a token (a restart revokes \
             none; the class page /class issues new ones)\n",
            open.rooms, open.with_token
        );
    }
    if let Some(file) = secrets.room_tokens_file {
        let since = match secrets.reopened {
            Some(_) => {
                "; as the class was made: a token issued on the class page since is not in it"
            }
            None => "",
        };
        out += &crate::class_setup::room_tokens_line(file, since);
    }
    if let Some(file) = secrets.slips_file {
        let join_page = secrets
            .class
            .and_then(MadeClass::join_page)
            .unwrap_or_else(|| crate::class_setup::join_page(url));
        out += &crate::class_setup::slips_line(file, &join_page);
    }
    if secrets.show {
        match (secrets.class, secrets.reopened, secrets.room_tokens_file) {
            (Some(class), _, _) => out += &class.table(),
            // The table as the class was made, from its file.
            (None, Some(_), Some(file)) => {
                out += &std::fs::read_to_string(file)
                    .unwrap_or_else(|err| format!("(cannot read {}: {err})\n", file.display()))
            }
            _ => {}
        }
    }
    out += &format!("ready: {url}");
    process::say(&out);
}

pub(super) fn pid(pid: Option<u32>) -> String {
    pid.map_or_else(|| "-".into(), |p| p.to_string())
}

/// How the banner names a store's persistence.
fn persistence_words(persistence: Persistence) -> String {
    match persistence {
        Persistence::Everysec | Persistence::Always => format!("appendfsync {persistence}"),
        Persistence::Written => "append-only file, written before each reply".into(),
        Persistence::Rdb => "RDB snapshots".into(),
        Persistence::None => "nothing on disk".into(),
    }
}
