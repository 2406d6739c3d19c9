//! `oversell up`: the design's topology, "several instances behind nginx share a Redis", as
//! local processes, for a machine without Docker.
//!
//! It starts a private `redis-server` (the resource store: an append-only file every write
//! reaches before its reply unless `--resource-persistence` says otherwise, in the run dir unless
//! `--redis-dir`), the lock store's Redis nodes and Sentinels
//! when asked for, N `oversell serve` processes
//! on free ports (`app1`, `app2`, …) and nginx on `--port`, with the config rendered from the
//! same template as `deploy/nginx.conf`. It supervises the instances and every Redis like
//! `restart: unless-stopped`, and Ctrl-C or SIGTERM takes everything down.
//!
//! Faults (crash, freeze) are not done here: an instance crashes or freezes *itself* when the
//! admin API asks it through Redis, so they work the same under docker-compose. `up` only
//! restarts whatever exits, and never mistakes a frozen process for a dead one.
//!
//! Its parts: [`args`] (the flags, and the fleet they ask for), [`token_files`] (the admin
//! token and a class's room tokens, in files only their owner may read) and [`banner`] (what
//! it prints once ready, naming those files rather than printing the tokens).

mod args;
mod banner;
mod token_files;

use anyhow::Context;

use crate::launch::local_fleet::Fleet;
pub use crate::launch::netns::NetworkKind;
use crate::launch::process;
pub use args::UpArgs;
use banner::{pid, print_banner, Secrets};

/// How often a dead nginx is started again, with a doubling pause between tries, before `up`
/// gives up and stops the fleet (nginx that cannot start: a port taken meanwhile, a broken
/// install).
const NGINX_RESTARTS: u32 = 5;

/// Runs the fleet until Ctrl-C or SIGTERM, then takes it down. A dead nginx is started again,
/// as every other child is.
pub async fn run(args: UpArgs) -> anyhow::Result<()> {
    let config = args.config()?;
    let tier = config.tier;
    let mut fleet = tokio::select! {
        fleet = Fleet::start(config) => fleet?,
        // Dropping a half-started fleet kills what it had started.
        _ = crate::startup::shutdown_signal() => return Ok(()),
    };
    let secrets = match write_secrets(&fleet, args.class).await {
        Ok(secrets) => secrets,
        Err(err) => {
            fleet.stop().await;
            return Err(err.context("the fleet is stopped"));
        }
    };
    print_banner(
        &fleet,
        tier,
        args.redis_dir.as_deref(),
        secrets.class.as_ref(),
        &Secrets {
            admin_token_file: &secrets.admin_token_file,
            room_tokens_file: secrets.room_tokens_file.as_deref(),
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
    process::say("stopped: every process reaped, run dir removed");
    outcome
}

/// The secrets of a fleet just started, written to their files.
struct Written {
    admin_token_file: std::path::PathBuf,
    /// The class made at start (`--class`) and the file of its rooms' tokens.
    class: Option<crate::class_setup::MadeClass>,
    room_tokens_file: Option<std::path::PathBuf>,
}

/// Writes the admin token to its file in the run dir and, with `--class N`, makes the class
/// and writes its rooms' tokens beside it.
async fn write_secrets(fleet: &Fleet, students: Option<u16>) -> anyhow::Result<Written> {
    let dir = fleet.run_dir();
    let admin_token_file = token_files::write_admin_token(dir, fleet.admin_token())?;
    let Some(students) = students else {
        return Ok(Written {
            admin_token_file,
            class: None,
            room_tokens_file: None,
        });
    };
    let class = crate::class_setup::make_class(fleet.url(), fleet.admin_token(), students, None)
        .await
        .context("the class could not be made")?;
    let room_tokens_file = token_files::write_room_tokens(dir, &class)?;
    Ok(Written {
        admin_token_file,
        class: Some(class),
        room_tokens_file: Some(room_tokens_file),
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
