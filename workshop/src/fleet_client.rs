//! What the service takes from the load generator: the targets a chapter's or a burst's buyers
//! go to, the admin client, the one-shot `fetch`, the HTTP pool the chapters reuse, and free
//! ports for the launcher's children. Named here once, so the service stands on the workshop
//! and never names the generator's crate.

pub use loadtest::http::{fetch, preflight, Pool};
pub use loadtest::ports::{free_port, free_ports};
pub use loadtest::{burst, AdminClient, BurstOptions, RunStats, Targets};
