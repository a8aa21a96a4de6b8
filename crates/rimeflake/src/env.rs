//! The names of the `RIMEFLAKE_*` environment variables that `settings` reads, in the bottom
//! layer so that any layer can name one in a message (`settings` re-exports them).

/// The environment variable with the layout: a preset name or a layout spec.
pub const LAYOUT_ENV: &str = "RIMEFLAKE_LAYOUT";
/// The environment variable with the backend: `local`, `memory` or a server's URL.
pub const BACKEND_ENV: &str = "RIMEFLAKE_BACKEND";
/// The environment variable with a fixed worker ID (or `ordinal`, a Kubernetes pod's).
pub const WORKER_ID_ENV: &str = "RIMEFLAKE_WORKER_ID";
/// The environment variable with the state directory.
pub const STATE_DIR_ENV: &str = "RIMEFLAKE_STATE_DIR";
/// The environment variable with the lease TTL of a server backend, in milliseconds.
pub const LEASE_TTL_ENV: &str = "RIMEFLAKE_LEASE_TTL_MS";

/// Set to `1` to quiet the warnings about a server backend's durability settings (Redis's
/// `appendonly`, `appendfsync` and `maxmemory-policy`, PostgreSQL's `fsync` and
/// `synchronous_commit`), for a development server; `0` or unset keeps them.
pub const NO_DURABILITY_WARNING_ENV: &str = "RIMEFLAKE_NO_DURABILITY_WARNING";

/// Set to `1` to have every start on a server backend stay above what a lost holder may have
/// issued, even when the server has the worker ID's state (as
/// [`Builder::wait_at_takeover`](crate::Builder::wait_at_takeover)): for servers restored from
/// backups, whose older states the server alone cannot tell from the truth. `0` or unset: off.
pub const WAIT_AT_TAKEOVER_ENV: &str = "RIMEFLAKE_WAIT_AT_TAKEOVER";
