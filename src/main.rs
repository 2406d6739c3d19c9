use clap::{Parser, Subcommand};

use oversell::config::ServeArgs;
use oversell::startup::Application;

/// oversell: an inventory sale guarded by sixteen lock tiers (Redis, ZooKeeper, PostgreSQL),
/// measured against the resource store's own ground truth.
#[derive(Parser)]
#[command(name = "oversell", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one instance of the sale service.
    Serve(Box<ServeArgs>),
    /// Run the whole topology locally: redis-server, N instances, nginx in front.
    Up(oversell::launch::up::UpArgs),
    /// Make a class on a running fleet (compose's `class` service): rooms student-01…N, each
    /// with a token of its own, written with the slips to files in --out that it names.
    Class(oversell::class_setup::ClassArgs),
    /// Run a store of the compose fleet (Redis, Sentinel, ZooKeeper) and restart it when it
    /// exits; serve the faults' acts on it (kill, pause, clock, cut) to the admin token.
    Member(oversell::launch::member_supervisor::MemberArgs),
    /// Say what this machine has and lacks for `up` (Rust, redis-server, nginx, ZooKeeper,
    /// PostgreSQL, the network tools), with the line that installs each missing one; exit 1
    /// when redis-server or nginx is missing.
    Doctor,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => err.exit(), // --help, --version
        Err(err) => {
            // One line naming the flag, not a page of usage.
            let text = err.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let mut line = lines.next().unwrap_or("invalid arguments").to_owned();
            // "…were not provided:" names the flag on the next line.
            if line.ends_with(':') {
                line = format!("{line} {}", lines.next().unwrap_or_default());
            }
            // A bad value of an enum flag: the valid ones on the same line.
            if let Some(valid) = lines.find(|l| l.starts_with("[possible values:")) {
                line = format!("{line} {valid}");
            }
            eprintln!("{line}");
            std::process::exit(2);
        }
    };
    let checked = match &cli.command {
        Command::Up(args) => args.validate(),
        Command::Serve(args) => args.validate(),
        // Nothing to serve: no runtime, no telemetry.
        Command::Doctor => std::process::exit(oversell::launch::doctor::run()),
        Command::Class(_) | Command::Member(_) => Ok(()),
    };
    if let Err(line) = checked {
        eprintln!("{line}");
        std::process::exit(2);
    }
    oversell::telemetry::init();
    let worker_threads = match &cli.command {
        Command::Serve(args) => args.worker_threads,
        _ => None,
    };
    let runtime = match oversell::startup::runtime(worker_threads) {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => Application::build(&args).await?.run_until_stopped().await,
            Command::Up(args) => oversell::launch::up::run(args).await,
            Command::Class(args) => oversell::class_setup::run(args).await,
            Command::Member(args) => oversell::launch::member_supervisor::run(args).await,
            Command::Doctor => unreachable!("doctor exits before the runtime starts"),
        }
    });
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
