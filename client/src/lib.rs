//! How oversell's programs reach a fleet or one of its members over HTTP, apart from the load
//! generator: the service (a member's fault call, `POST /admin/burst`'s preflight, a chapter's
//! admin calls), the launcher and `oversell class` stand on this crate, and so does the
//! generator, which adds its own lean wire for the buyers on top.
//!
//! - [`target`]: the base URLs, resolved once; connections are dealt round robin over them.
//! - [`http`]: a one-shot [`http::fetch`], the keep-alive [`http::Pool`] and
//!   [`http::preflight`].
//! - [`admin`]: a small client for `/admin/*` and `GET /state`, the ground truth.
//! - [`ports`]: free ports for children that bind them by number, the one way the course, the
//!   launcher (`oversell up`) and the tests pick them.

pub mod admin;
pub mod http;
pub mod ports;
pub mod target;

pub use admin::AdminClient;
pub use target::{Target, Targets};
