//! Tracing set up once per process. `RUST_LOG` overrides the default filter.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("oversell=info,tower_http=warn"));
    // A second init (tests start many apps in one process) is not an error.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .try_init();
}
