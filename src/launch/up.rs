//! `oversell up`: the design's topology, "several instances behind nginx share a Redis", as
//! local processes, for a machine without Docker.
//!
//! It starts a private `redis-server` (the resource store: an append-only file every write
//! reaches before its reply unless `--resource-persistence` says otherwise, in the class dir
//! unless `--redis-dir`), the lock store's Redis nodes and Sentinels when asked for, N
//! `oversell serve` processes on free ports (`app1`, `app2`, …) and nginx on `--port`, with the config rendered from the
//! same template as `deploy/nginx.conf`. It supervises the instances and every Redis like
//! `restart: unless-stopped`, and Ctrl-C or SIGTERM takes everything down.
//!
//! Faults (crash, freeze) are not done here: an instance crashes or freezes *itself* when the
//! admin API asks it through Redis, so they work the same under docker-compose. `up` only
//! restarts whatever exits, and never mistakes a frozen process for a dead one.
//!
//! Its parts: [`args`] (the flags, and the fleet they ask for), [`class_dir`] (where the class
//! is kept across `up`'s own restarts) and [`banner`] (what it prints once ready, naming the
//! files the secrets are in rather than printing the tokens). The files themselves are
//! [`token_files`]'s, which `oversell class` writes too.

mod args;
mod banner;
mod class_dir;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::class_setup::token_files;
use crate::class_setup::{MadeClass, OpenClass};
use crate::config::ResourceStoreKind;
use crate::launch::local_fleet::Fleet;
pub use crate::launch::netns::NetworkKind;
use crate::launch::process;
pub use args::UpArgs;
use banner::{pid, print_banner, Secrets};
use class_dir::ClassDir;

/// How often a dead nginx is started again, with a doubling pause between tries, before `up`
/// gives up and stops the fleet (nginx that cannot start: a port taken meanwhile, a broken
/// install).
const NGINX_RESTARTS: u32 = 5;

/// Runs the fleet until Ctrl-C or SIGTERM, then takes it down. A dead nginx is started again,
/// as every other child is.
pub async fn run(args: UpArgs) -> anyhow::Result<()> {
    let mut config = args.config()?;
    // Held (its lock too) until `up` returns.
    let class_dir = match args
        .class_dir
        .clone()
        .or_else(|| class_dir::default_path(args.port))
    {
        Some(path) => Some(ClassDir::open(&path)?),
        None => None,
    };
    if let Some(dir) = &class_dir {
        // A cluster's nodes keep their data in the run dir: the class dir keeps its tokens.
        if config.resource_store == ResourceStoreKind::Single && config.redis_dir.is_none() {
            config.redis_dir = Some(dir.redis_dir());
        }
        // The token the class page's tab and the teacher's shell already hold.
        if !args.admin_token_given() {
            if let Some(kept) = dir.existing(token_files::ADMIN_TOKEN_FILE) {
                config.admin_token = token_files::read_admin_token(&kept)?;
            }
        }
    }
    let tier = config.tier;
    let redis_dir = config.redis_dir.clone();
    let mut fleet = tokio::select! {
        fleet = Fleet::start(config) => fleet?,
        // Dropping a half-started fleet kills what it had started.
        _ = crate::startup::shutdown_signal() => return Ok(()),
    };
    let secrets_dir = class_dir
        .as_ref()
        .map_or_else(|| fleet.run_dir().to_owned(), |dir| dir.path().to_owned());
    let secrets = match write_secrets(&fleet, &secrets_dir, args.class).await {
        Ok(secrets) => secrets,
        Err(err) => {
            fleet.stop().await;
            return Err(err.context("the fleet is stopped"));
        }
    };
    print_banner(
        &fleet,
        tier,
        redis_dir.as_deref(),
        &Secrets {
            admin_token_file: &secrets.admin_token_file,
            class: secrets.class.as_ref(),
            reopened: secrets.reopened,
            room_tokens_file: secrets.room_tokens_file.as_deref(),
            slips_file: secrets.slips_file.as_deref(),
            class_dir: class_dir.as_ref().map(ClassDir::path),
            show: args.show_tokens,
        },
    );
    let shutdown = crate::startup::shutdown_signal();
    tokio::pin!(shutdown);
    let outcome = loop {
        let how = tokio::select! {
            _ = &mut shutdown => break Ok(()),
            how = fleet.nginx_exited() => how,
        };
        process::say(&format!("restart: nginx exited ({how}), restarting"));
        let restarted = tokio::select! {
            _ = &mut shutdown => break Ok(()),
            restarted = restart_nginx(&mut fleet) => restarted,
        };
        match restarted {
            Ok(()) => process::say(&format!(
                "restart: nginx is back: {} pid={}",
                fleet.url(),
                pid(fleet.nginx_pid())
            )),
            Err(err) => break Err(err.context("nginx could not be restarted; stopping the fleet")),
        }
    };
    let count = fleet.instances().len();
    process::say(&format!("stopping: nginx, {count} instances, redis"));
    fleet.stop().await;
    match &class_dir {
        Some(dir) => process::say(&format!(
            "stopped: every process reaped, run dir removed; the class kept in {}",
            dir.path().display()
        )),
        None => process::say("stopped: every process reaped, run dir removed"),
    }
    outcome
}

/// The secrets of a fleet just started, written to their files.
struct Written {
    admin_token_file: PathBuf,
    /// The class made at start (`--class`).
    class: Option<MadeClass>,
    /// The class the fleet already had, reopened from the class dir (no `--class`).
    reopened: Option<OpenClass>,
    /// The file of the rooms' tokens: written for a class made now, or kept from the run
    /// that made the class reopened.
    room_tokens_file: Option<PathBuf>,
    /// The class's join slips to print, beside it.
    slips_file: Option<PathBuf>,
}

/// Writes the admin token to its file in `dir` and, with `--class N`, makes the class and
/// writes its rooms' tokens beside it. Without `--class`, a class the fleet kept is reopened
/// as it is: a restart revokes no token.
async fn write_secrets(
    fleet: &Fleet,
    dir: &Path,
    students: Option<u16>,
) -> anyhow::Result<Written> {
    let admin_token_file = token_files::write_admin_token(dir, fleet.admin_token())?;
    let Some(students) = students else {
        let reopened = crate::class_setup::open_class(fleet.url(), fleet.admin_token())
            .await
            .context("the class kept could not be read")?;
        let kept = dir.join(token_files::ROOM_TOKENS_FILE);
        let slips = dir.join(token_files::SLIPS_FILE);
        return Ok(Written {
            admin_token_file,
            class: None,
            reopened,
            room_tokens_file: (reopened.is_some() && kept.is_file()).then_some(kept),
            slips_file: (reopened.is_some() && slips.is_file()).then_some(slips),
        });
    };
    let class = crate::class_setup::make_class(fleet.url(), fleet.admin_token(), students, None)
        .await
        .context("the class could not be made")?;
    let files = token_files::write_class(dir, &class, fleet.url())?;
    Ok(Written {
        admin_token_file,
        class: Some(class),
        reopened: None,
        room_tokens_file: Some(files.room_tokens),
        slips_file: Some(files.slips),
    })
}

/// [`Fleet::restart_nginx`], tried [`NGINX_RESTARTS`] times, 100 ms apart and doubling.
async fn restart_nginx(fleet: &mut Fleet) -> anyhow::Result<()> {
    let mut delay = std::time::Duration::from_millis(100);
    let mut tries = 1;
    loop {
        tokio::time::sleep(delay).await;
        match fleet.restart_nginx().await {
            Ok(()) => return Ok(()),
            Err(err) if tries == NGINX_RESTARTS => return Err(err),
            Err(err) => process::say(&format!("restart: cannot start nginx ({err:#}), retrying")),
        }
        tries += 1;
        delay *= 2;
    }
}
