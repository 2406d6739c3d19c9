//! `loadtest`: see `loadtest --help`. Everything lives in the library; this only parses the
//! flags, runs the command, and prints.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = workshop::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(workshop::execute(cli)) {
        Ok(report) => {
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = std::io::stdout().write_all(report.as_bytes());
            ExitCode::SUCCESS
        }
        // A command that has a report to print and a status of its own (`check`: 1 on a
        // violation, 2 on a bad file).
        Err(err) => match err.downcast_ref::<workshop::history::command::Exit>() {
            Some(exit) => {
                let _ = std::io::stdout().write_all(exit.stdout.as_bytes());
                if !exit.message.is_empty() {
                    eprintln!("error: {}", exit.message);
                }
                ExitCode::from(exit.code)
            }
            None => {
                eprintln!("error: {err:#}");
                ExitCode::FAILURE
            }
        },
    }
}
